"""write_docs on small sample workspaces, run in-process through a local context."""

from __future__ import annotations

from pathlib import Path

from skills.testing import local_context
from skills.write_docs.skill import END, START, run

SKILL_DIR = Path(__file__).resolve().parents[1]

PARSER = '''"""Parse tiny config files."""

__all__ = ["parse", "Parser", "MAX_DEPTH"]

MAX_DEPTH = 8


def parse(text: str, strict: bool = False) -> dict[str, str]:
    """Parse ``key = value`` lines into a dict."""
    return Parser(strict).feed(text)


def _helper() -> None:
    pass


class Parser:
    """A line-oriented parser."""

    def __init__(self, strict: bool) -> None:
        self.strict = strict

    def feed(self, text: str) -> dict[str, str]:
        """Consume text and return the pairs."""
        return {}

    async def close(self) -> None:
        pass
'''


def workspace(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def test_writes_docs_naming_every_public_function_class_and_method(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"app/__init__.py": "", "app/parser.py": PARSER})
    out = run(local_context(SKILL_DIR, ws), {"target": "parser"})
    assert out["ok"] and out["created"] and out["docs_path"] == "docs/app.parser.md"
    assert out["functions"] == ["parse"] and out["classes"] == ["Parser"]
    text = (ws / "docs/app.parser.md").read_text()
    assert text.startswith("# `app.parser`")
    assert "`parse(text: str, strict: bool = False) -> dict[str, str]`" in text
    assert "Parse ``key = value`` lines into a dict." in text
    assert "`Parser.feed(self, text: str) -> dict[str, str]`" in text
    assert "async def close(self) -> None" in text
    assert "`MAX_DEPTH = 8`" in text
    assert "_helper" not in text  # private and not in __all__
    assert "*Defined in `app/parser.py`, line 8.*" in text


def test_follows_existing_docs_conventions(tmp_path: Path) -> None:
    existing = "# utils\n\n### helper(x)\n\n```py\nhelper(x)\n```\n"
    ws = workspace(tmp_path, {"parser.py": PARSER, "docs/api/utils.md": existing})
    out = run(local_context(SKILL_DIR, ws), {"target": "parser.py"})
    assert out["docs_path"] == "docs/api/parser.md"
    assert out["conventions"]["fence"] == "py" and out["conventions"]["code_names"] is False
    text = (ws / "docs/api/parser.md").read_text()
    assert "### parse(text: str, strict: bool = False)" in text
    assert "```py\ndef parse(" in text


def test_update_replaces_the_generated_block_and_keeps_hand_written_text(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"parser.py": PARSER})
    ctx = local_context(SKILL_DIR, ws)
    run(ctx, {"target": "parser"})
    doc = ws / "docs/parser.md"
    doc.write_text(doc.read_text() + "\n## Notes\n\nHand-written notes.\n")
    (ws / "parser.py").write_text(
        PARSER.replace("def parse(", "def parse_text(").replace('"parse"', '"parse_text"')
    )
    out = run(ctx, {"target": "parser"})
    text = doc.read_text()
    assert out["created"] is False and out["functions"] == ["parse_text"]
    assert "Hand-written notes." in text and "`parse_text(" in text and "`parse(" not in text
    assert text.count(START) == 1 and text.count(END) == 1


def test_documents_a_package_module_by_module(tmp_path: Path) -> None:
    ws = workspace(
        tmp_path,
        {
            "store/__init__.py": '"""Storage."""\n',
            "store/disk.py": "def save(path: str) -> None:\n    '''Save.'''\n",
            "store/tests/test_disk.py": "def test_x():\n    pass\n",
        },
    )
    out = run(local_context(SKILL_DIR, ws), {"target": "store"})
    assert out["files"] == ["store/__init__.py", "store/disk.py"]
    text = (ws / "docs/store.md").read_text()
    assert "## `store.disk`" in text and "`save(path: str) -> None`" in text


def test_unknown_target_is_reported_with_the_modules_there_are(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"parser.py": PARSER})
    out = run(local_context(SKILL_DIR, ws), {"target": "lexer"})
    assert out["ok"] is False and "lexer" in out["error"] and out["alternatives"] == ["parser"]


class _FakeLLM:
    def __init__(self) -> None:
        self.prompts: list[str] = []

    def complete(self, prompt: str, instructions: str, effort: str) -> str:
        self.prompts.append(prompt)
        return "The parser turns config text into pairs."


def test_adds_an_overview_when_an_llm_is_configured(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"parser.py": PARSER})
    llm = _FakeLLM()
    out = run(local_context(SKILL_DIR, ws, llm=llm), {"target": "parser"})
    assert out["used_llm"] is True and "parse(text: str" in llm.prompts[0]
    assert (
        "## Overview\n\nThe parser turns config text into pairs."
        in (ws / "docs/parser.md").read_text()
    )
