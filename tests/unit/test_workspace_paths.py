"""The workspace path rules as text (no disk): escapes, malformed names, bounded patterns, the
tenant folder names, the workspaces root check, scrubbed environments and host-path labels."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from graph.errors import ValidationFailed
from skills import testrun
from skills.config import SkillSettings
from skills.errors import PathInvalid, ToolRefused, WorkspaceInvalid
from skills.paths import MAX_NAME_BYTES, HostPaths, ListPattern, relative_parts, show
from skills.workspace import check_root, workspace_dir_name


@pytest.mark.parametrize(
    ("path", "parts"),
    [
        ("a.py", ("a.py",)),
        ("pkg/a.py", ("pkg", "a.py")),
        ("./pkg//a.py", ("pkg", "a.py")),
        ("pkg\\a.py", ("pkg", "a.py")),
        ("docs/é ü.md", ("docs", "é ü.md")),
        ("a~notes.txt", ("a~notes.txt",)),
    ],
)
def test_relative_paths_become_their_names(path: str, parts: tuple[str, ...]) -> None:
    assert relative_parts(path) == parts


@pytest.mark.parametrize(
    "path",
    ["/etc/passwd", "~/.ssh/id_rsa", "~root/x", "C:/x.txt", "c:x", "\\\\server\\share"],
)
def test_absolute_paths_are_refused_as_escapes(path: str) -> None:
    with pytest.raises(ToolRefused, match="absolute path") as err:
        relative_parts(path)
    assert not isinstance(err.value, PathInvalid)  # an escape is 403, not a typo


@pytest.mark.parametrize("path", ["..", "../x", "a/../b", "a/..", "..\\x", "pkg/../../secret"])
def test_dotdot_anywhere_is_refused(path: str) -> None:
    with pytest.raises(ToolRefused, match=r"'\.\.' may not appear"):
        relative_parts(path)


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("", "empty"),
        ("   ", "empty"),
        (".", "names the workspace folder"),
        ("./", "names the workspace folder"),
        ("a\x00b", "U\\+0000"),
        ("a\x1b]0;owned\x07", "U\\+001B"),
        ("invoice\u202etxt.exe", "U\\+202E"),
        ("zero\u200bwidth", "U\\+200B"),
        ("lone\ud800", "U\\+D800"),
        ("line\nbreak", "U\\+000A"),
        ("x" * 300, "at most 255"),
        ("é" * 128, "256 bytes"),
        ("/".join(["d"] * 33), "33 folders deep"),
        ("/".join(["d" * 200] * 6), "at most 1024"),
    ],
)
def test_malformed_paths_are_invalid(path: str, why: str) -> None:
    with pytest.raises(PathInvalid, match=why) as err:
        relative_parts(path)
    assert isinstance(err.value, ValidationFailed)  # 422 over REST


def test_non_strings_are_invalid() -> None:
    for value in (None, 3, b"a.py", ["a.py"]):
        with pytest.raises(PathInvalid, match="empty"):
            relative_parts(value)


def test_messages_quote_a_shortened_escaped_path() -> None:
    with pytest.raises(PathInvalid) as err:
        relative_parts("a" * 300)
    assert len(str(err.value)) < 200
    assert show("\x1b[2J" + "x" * 100) == "'\\x1b[2J" + "x" * 56 + "...'"
    assert "\u202e" not in show("a\u202eb")


@pytest.mark.parametrize(
    ("pattern", "hits", "misses"),
    [
        ("**/*", ["a.py", "pkg/a.py", "p/q/r/s.txt"], []),
        (None, ["a.py", "pkg/a.py"], []),
        ("**/*.py", ["a.py", "pkg/sub/a.py"], ["a.txt", "pkg/a.pyc"]),
        ("*.py", ["a.py"], ["pkg/a.py"]),
        ("pkg/*.py", ["pkg/a.py"], ["a.py", "pkg/sub/a.py"]),
        ("pkg/**", ["pkg/a", "pkg/x/y"], ["pkg", "other/a"]),
        ("**", ["a", "b/c"], []),
        ("src/**/test_*.py", ["src/test_a.py", "src/x/y/test_b.py"], ["test_a.py", "src/a.py"]),
        ("[ab].md", ["a.md", "b.md"], ["c.md"]),
    ],
)
def test_patterns_match_files(pattern: str | None, hits: list[str], misses: list[str]) -> None:
    parsed = ListPattern.parse(pattern)
    for path in hits:
        assert parsed.matches(tuple(path.split("/"))), path
    for path in misses:
        assert not parsed.matches(tuple(path.split("/"))), path


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        ("a**", "must be a whole name"),
        ("**a/*", "must be a whole name"),
        ("x/b**c", "must be a whole name"),
        ("**/**/**/**/*", "at most one is allowed"),
        ("**/x/**", "at most one is allowed"),
        (".", "matches no file"),
        ("*?" * 9, "too many wildcards"),
        ("a\x00*", "U\\+0000"),
        ("x" * 300, "at most 255"),
    ],
)
def test_bad_patterns_are_invalid(pattern: str, why: str) -> None:
    with pytest.raises(PathInvalid, match=why):
        ListPattern.parse(pattern)


@pytest.mark.parametrize("pattern", ["../*", "/etc/*", "~/*", "a/../../*"])
def test_patterns_cannot_escape(pattern: str) -> None:
    with pytest.raises(ToolRefused):
        ListPattern.parse(pattern)


def test_patterns_prune_the_walk() -> None:
    assert not ListPattern.parse("*.py").may_descend(("pkg",))
    flat = ListPattern.parse("pkg/*.py")
    assert flat.may_descend(("pkg",)) and not flat.may_descend(("lib",))
    assert not flat.may_descend(("pkg", "sub"))
    deep = ListPattern.parse("src/**/*.py")
    assert deep.may_descend(("src",)) and deep.may_descend(("src", "a", "b"))
    assert not deep.may_descend(("lib",))
    assert ListPattern.parse("**/*.py").may_descend(("any", "where"))


NAME = re.compile(r"^[a-z0-9-]{1,32}-[0-9a-f]{24}$")


@pytest.mark.parametrize(
    "namespace",
    ["alice", "Alice", "a/b", "a-b", "../..", "\x00", "é", "", "x" * 500, "a\ud800", "~", "."],
)
def test_workspace_names_are_safe_single_folder_names(namespace: str) -> None:
    name = workspace_dir_name(namespace)
    assert NAME.match(name), name
    assert name == workspace_dir_name(namespace)


def test_workspace_names_never_collide() -> None:
    spaces = ["a/b", "a-b", "A/B", "a b", "a_b", "ab", "alice", "Alice", "alice "]
    names = {workspace_dir_name(ns) for ns in spaces}
    assert len(names) == len(spaces)


CODE = Path("/srv/sheriff")
SKILLS = CODE / "skills"
PYTHON = Path("/opt/python")
PROTECTED = [SKILLS, CODE, PYTHON]


@pytest.mark.parametrize(
    ("root", "home", "why"),
    [
        (SKILLS, None, "contains /srv/sheriff/skills"),
        (SKILLS / "debug", None, "inside /srv/sheriff/skills"),
        (CODE / "api", None, "inside /srv/sheriff"),
        (Path("/srv"), None, "contains /srv/sheriff"),
        (Path("/"), None, "contains"),
        (PYTHON / "lib", None, "inside /opt/python"),
        (Path("/var/lib"), Path("/var/lib/sheriff"), "contains the state folder"),
        (Path("/var/lib/sheriff/neo4j/ws"), Path("/var/lib/sheriff"), "inside the Neo4j folder"),
        (CODE / ".sheriff", CODE / ".sheriff", "contains the state folder"),
    ],
)
def test_unsafe_workspace_roots_are_refused(root: Path, home: Path | None, why: str) -> None:
    with pytest.raises(WorkspaceInvalid, match=why):
        check_root(root, PROTECTED, home)


@pytest.mark.parametrize(
    ("root", "home"),
    [
        (Path("/var/lib/sheriff/workspaces"), Path("/var/lib/sheriff")),
        (CODE / ".sheriff/workspaces", CODE / ".sheriff"),  # a development checkout
        (Path("/srv/workspaces"), None),
    ],
)
def test_safe_workspace_roots_are_accepted(root: Path, home: Path | None) -> None:
    assert check_root(root, PROTECTED, home) == root


def test_test_runs_get_no_service_settings_or_secrets() -> None:
    env = testrun.scrubbed_env(
        {"PATH": "/usr/bin", "HOME": "/home/u", "LANG": "C.UTF-8", "NEO4J_PASSWORD": "pw",
         "NEO4J_URI": "bolt://x", "SHERIFF_HOME": "/var/lib/sheriff", "OPENAI_API_KEY": "sk-x",
         "AWS_SECRET_ACCESS_KEY": "a", "GITHUB_TOKEN": "t", "DB_PASSWD": "p", "MY_API_KEY": "k"}
    )  # fmt: skip
    assert env == {"PATH": "/usr/bin", "HOME": "/home/u", "LANG": "C.UTF-8"}


def test_refused_commands_show_no_interpreter_path() -> None:
    import sys

    with pytest.raises(ToolRefused) as err:
        testrun.test_argv(SkillSettings(), "pytest -q; rm -rf /", None)
    assert sys.executable not in str(err.value) and sys.prefix not in str(err.value)


def test_host_paths_are_replaced_by_labels() -> None:
    paths = HostPaths({"/srv/ws/ab12": ".", "/opt/python": "<python>", "/opt": "<opt>"})
    text = "/srv/ws/ab12/test_a.py:3 in /opt/python/lib/x.py; cwd /srv/ws/ab12; /opt/y"
    assert paths.scrub(text) == "test_a.py:3 in <python>/lib/x.py; cwd .; <opt>/y"


def test_the_name_limit_is_in_bytes() -> None:
    assert relative_parts("é" * (MAX_NAME_BYTES // 2)) == ("é" * 127,)
