"""The rename engine on in-memory sources: scopes, imports, re-exports, modules, packages."""

from __future__ import annotations

from skills.repo_refactor.rename import apply_edits, plan_module_rename, plan_symbol_rename

STORAGE = '''"""Storage."""


class Loader:
    """Loads rows."""

    def load(self) -> list[int]:
        return [1]


def make() -> "Loader":
    return Loader()


def shadowed(Loader=None):
    return Loader


def local():
    Loader = 3  # a local of the same name
    return Loader


def uses() -> Loader:
    x: Loader = Loader()
    return [Loader for _ in range(1)][0], x
'''

SOURCES = {
    "app/__init__.py": 'from .storage import Loader\n\n__all__ = ["Loader"]\n',
    "app/storage.py": STORAGE,
    "app/cli.py": (
        "import app.storage\nfrom app import storage as st\nfrom . import storage\n\n\n"
        "def main():\n    from app.storage import Loader\n\n"
        "    return Loader(), app.storage.Loader(), st.Loader(), storage.Loader()\n"
    ),
    "client.py": (
        "from app import Loader\nfrom app.storage import Loader as L\n\n\n"
        "class Sub(Loader):\n    pass\n\n\nx = L  # the Loader alias\n"
    ),
}


def renamed(
    sources: dict[str, str], old: str, new: str, module: str | None = None
) -> dict[str, str]:
    plan = plan_symbol_rename(sources, old, new, module)
    assert plan.problems == []
    return {**sources, **plan.new_sources}


def test_symbol_rename_follows_references_and_leaves_shadowing_names_alone() -> None:
    out = renamed(SOURCES, "Loader", "Reader", "storage")
    storage = out["app/storage.py"]
    assert "class Reader:" in storage and 'def make() -> "Reader":' in storage
    assert "    return Reader()" in storage
    assert "def shadowed(Loader=None):\n    return Loader" in storage
    assert "    Loader = 3  # a local of the same name\n    return Loader" in storage
    assert "def uses() -> Reader:\n    x: Reader = Reader()" in storage
    assert "[Reader for _ in range(1)]" in storage
    assert out["app/__init__.py"] == 'from .storage import Reader\n\n__all__ = ["Reader"]\n'
    assert "    from app.storage import Reader\n" in out["app/cli.py"]
    assert "Reader(), app.storage.Reader(), st.Reader(), storage.Reader()" in out["app/cli.py"]
    assert out["client.py"].startswith(
        "from app import Reader\nfrom app.storage import Reader as L"
    )
    assert (
        "class Sub(Reader):" in out["client.py"] and "x = L  # the Loader alias" in out["client.py"]
    )


def test_mentions_in_comments_and_strings_are_listed_not_edited() -> None:
    plan = plan_symbol_rename(SOURCES, "Loader", "Reader")
    assert "client.py:9: x = L  # the Loader alias" in plan.mentions_left
    assert "# a local of the same name" in plan.new_sources["app/storage.py"]


def test_refuses_collisions_ambiguity_bad_identifiers_and_syntax_errors() -> None:
    collide = {**SOURCES, "client.py": SOURCES["client.py"] + "Reader = 1\n"}
    assert (
        "client.py already binds 'Reader'"
        in plan_symbol_rename(collide, "Loader", "Reader").problems[0]
    )
    twice = {**SOURCES, "other.py": "class Loader:\n    pass\n"}
    assert "say which module" in plan_symbol_rename(twice, "Loader", "Reader").problems[0]
    assert plan_symbol_rename(twice, "Loader", "Reader", "other").defined_in == ["other"]
    assert (
        "not a valid Python identifier"
        in plan_symbol_rename(SOURCES, "Loader", "class").problems[0]
    )
    broken = {**SOURCES, "bad.py": "def (:\n"}
    assert "bad.py does not parse" in plan_symbol_rename(broken, "Loader", "Reader").problems[0]
    assert "not defined at module level" in plan_symbol_rename(SOURCES, "Nope", "X").problems[0]


def test_byte_offsets_survive_non_ascii_text_before_the_name() -> None:
    sources = {"m.py": 'def f():\n    pass\n\n\nx = ("é", f())\n'}
    assert renamed(sources, "f", "g")["m.py"] == 'def g():\n    pass\n\n\nx = ("é", g())\n'


def test_apply_edits_refuses_an_edit_whose_text_moved() -> None:
    from skills.repo_refactor.rename import Edit

    try:
        apply_edits("abc\n", [Edit(1, 1, "x", "y")])
    except ValueError as exc:
        assert "expected 'x'" in str(exc)
    else:
        raise AssertionError("edit at the wrong place was applied")


def test_module_rename_moves_the_file_and_rewrites_every_import_form() -> None:
    plan = plan_module_rename(SOURCES, "storage", "store")
    assert plan.problems == [] and plan.moves == [("app/storage.py", "app/store.py")]
    out = plan.new_sources
    assert out["app/__init__.py"].startswith("from .store import Loader")
    cli = out["app/cli.py"]
    assert cli.startswith("import app.store\nfrom app import store as st\nfrom . import store\n")
    assert "    from app.store import Loader\n" in cli
    assert "app.store.Loader(), st.Loader(), store.Loader()" in cli
    assert out["client.py"].startswith("from app import Loader\nfrom app.store import Loader as L")


def test_top_level_module_rename_renames_the_names_bound_to_it() -> None:
    sources = {
        "util.py": "def helper():\n    return 1\n",
        "main.py": "import util\nimport util as u\n\n\ndef run():\n    return util.helper() + u.helper()\n",
    }
    plan = plan_module_rename(sources, "util.py", "tools")
    assert plan.moves == [("util.py", "tools.py")]
    assert plan.new_sources["main.py"] == (
        "import tools\nimport tools as u\n\n\ndef run():\n    return tools.helper() + u.helper()\n"
    )


def test_package_rename_moves_the_whole_folder() -> None:
    sources = {
        "pkg/__init__.py": "",
        "pkg/old/__init__.py": "from .core import run\n",
        "pkg/old/core.py": "def run():\n    return 1\n",
        "main.py": "from pkg.old.core import run\nimport pkg.old\n\nx = pkg.old.run()\n",
    }
    files = [*sources, "pkg/old/data.json"]
    plan = plan_module_rename(sources, "pkg.old", "new", files)
    assert plan.problems == []
    assert sorted(plan.moves) == [
        ("pkg/old/__init__.py", "pkg/new/__init__.py"),
        ("pkg/old/core.py", "pkg/new/core.py"),
        ("pkg/old/data.json", "pkg/new/data.json"),
    ]
    assert (
        plan.new_sources["main.py"]
        == "from pkg.new.core import run\nimport pkg.new\n\nx = pkg.new.run()\n"
    )
    assert plan_module_rename(sources, "pkg.old", "other.new").problems


def test_module_rename_refuses_an_existing_target() -> None:
    plan = plan_module_rename({"a.py": "", "b.py": ""}, "a", "b")
    assert plan.problems == ["module b already exists"]
