"""Issue 10, points 1, 2 and the repo-tool items of 5, through ``POST /v1/tools/{name}`` of the
real app on the real Neo4j, with API keys of two namespaces.

Each attack gets a clear 4xx (or a tool error) and changes nothing on disk: the server's code
(every file hashed before and after), its state folder's password, the other tenant's files.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi.testclient import TestClient

from api.app import create_app
from api.container import Container
from api.settings import Settings
from retrieval.embedding import MiniLMEmbedder
from skills import sandbox
from skills.config import SkillSettings
from skills.workspace import CODE_ROOT
from tests.integration.api_support import api_client, bearer, new_key, tenant_workspace

SKIPPED_DIRS = {".venv", ".sheriff", ".git", "__pycache__", ".pytest_cache", ".mypy_cache",
                ".ruff_cache", "node_modules"}  # fmt: skip
LIST_LIMITS = {"max_list_files": 50, "max_list_entries": 2_000}


def server_tree() -> dict[str, str]:
    """sha256 of every file of the server's code (the folder holding api/, skills/, ...)."""
    digests = {}
    for dirpath, dirnames, filenames in os.walk(CODE_ROOT):
        dirnames[:] = [d for d in dirnames if d not in SKIPPED_DIRS]
        for name in filenames:
            path = Path(dirpath) / name
            digests[str(path.relative_to(CODE_ROOT))] = hashlib.sha256(
                path.read_bytes()
            ).hexdigest()
    return digests


def workspace_tree(root: Path) -> dict[str, str]:
    """Every entry below ``root``, hidden ones included: content digest, link target or dir."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                found[rel] = "-> " + os.readlink(path)
            elif path.is_dir():
                found[rel] = "dir"
            else:
                found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


@pytest.fixture(scope="module")
def password_file(settings: Settings) -> Path:
    path = (settings.home / "neo4j/password").resolve()
    assert path.is_file(), "the managed Neo4j's password file is part of the attack surface"
    return path


@pytest.fixture
def untouched(password_file: Path) -> Iterator[None]:
    """Asserts after the test that the server's code and its password file did not change."""
    before, secret = server_tree(), password_file.read_bytes()
    yield
    assert server_tree() == before
    assert password_file.read_bytes() == secret


@pytest.fixture(scope="module")
def workspaces(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("workspaces")


@pytest.fixture(scope="module")
def client(settings: Settings, embedder: MiniLMEmbedder, workspaces: Path) -> Iterator[TestClient]:
    """The app as shipped (repo tools on, test runs off), with small list limits."""
    with api_client(settings, embedder, workspaces, SkillSettings(**LIST_LIMITS)) as c:
        yield c


@pytest.fixture(scope="module")
def sandboxed(
    settings: Settings, embedder: MiniLMEmbedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestClient]:
    """An operator who enabled test runs for API callers, inside the Landlock sandbox."""
    if sandbox.abi_version() < 1:
        pytest.fail("this kernel has no Landlock: sandboxed test runs cannot be checked")
    ws = tmp_path_factory.mktemp("sandboxed-workspaces")
    skill_settings = SkillSettings(tenant_run_tests="sandboxed", test_timeout_s=60)
    with api_client(settings, embedder, ws, skill_settings) as c:
        yield c


@pytest.fixture
def alice(client: TestClient, namespace: str) -> dict[str, str]:
    return bearer(new_key(client, namespace))


@pytest.fixture
def bob(client: TestClient, other_namespace: str) -> dict[str, str]:
    return bearer(new_key(client, other_namespace))


def call(client: TestClient, auth: dict[str, str], tool: str, **arguments: Any) -> httpx.Response:
    return client.post(f"/v1/tools/{tool}", json={"arguments": arguments}, headers=auth)


def host_paths(*extra: Path) -> list[str]:
    """Paths of this host no answer may show."""
    found = {str(CODE_ROOT), sys.prefix, sys.base_prefix, os.path.realpath(sys.executable),
             os.path.realpath(sys.prefix), *(str(p) for p in extra)}  # fmt: skip
    return sorted(found)


@pytest.mark.usefixtures("untouched")
def test_the_servers_files_are_not_in_a_tenants_workspace(
    client: TestClient, alice: dict[str, str], password_file: Path
) -> None:
    secret = password_file.read_text().strip()
    for path in (".sheriff/neo4j/password", "pyproject.toml", "skills/debug/skill.py",
                 "api/app.py"):  # fmt: skip
        r = call(client, alice, "repo_read_file", path=path)
        assert r.status_code == 422, r.text
        assert r.json()["error"] == "ToolFailed" and "no file" in r.json()["detail"]
    escapes = ["../../pyproject.toml", "../" * 12 + "etc/passwd", str(password_file),
               str(CODE_ROOT / "pyproject.toml"), "~/.bashrc", "..\\..\\pyproject.toml"]  # fmt: skip
    for path in escapes:
        r = call(client, alice, "repo_read_file", path=path)
        assert r.status_code == 403, (path, r.text)
        assert secret not in r.text
    listed = call(client, alice, "repo_list_files", pattern="**/*").json()["output"]
    assert listed == {"files": [], "truncated": False}


@pytest.mark.usefixtures("untouched")
def test_writes_land_in_the_tenants_workspace_and_skills_run_their_installed_code(
    client: TestClient, alice: dict[str, str], namespace: str
) -> None:
    planted = {"skills/write_docs/skill.py": "this is not python (\n",
               "api/zz_probe.py": "PROBE = 1\n", "conftest.py": "raise SystemExit('pwned')\n",
               "app/parser.py": "def parse(text: str) -> list[str]:\n    return [text]\n"}  # fmt: skip
    for path, content in planted.items():
        r = call(client, alice, "repo_write_file", path=path, content=content)
        assert r.status_code == 200, r.text
        assert r.json()["output"]["path"] == path
    ws = tenant_workspace(client, namespace)
    assert (ws / "api/zz_probe.py").read_text() == "PROBE = 1\n"
    assert not (CODE_ROOT / "api/zz_probe.py").exists()
    run = client.post(
        "/v1/skills/run", json={"name": "write_docs", "args": {"target": "parser"}}, headers=alice
    ).json()
    assert run["ok"] is True, run  # the installed write_docs, not the planted text
    assert "SyntaxError" not in json.dumps(run)
    assert "def parse" in (ws / "docs/app.parser.md").read_text()


@pytest.mark.usefixtures("untouched")
def test_test_runs_are_off_for_api_callers_by_default(
    client: TestClient, alice: dict[str, str], tmp_path: Path
) -> None:
    marker = tmp_path / "conftest-ran"
    conftest = f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n"
    assert call(client, alice, "repo_write_file", path="conftest.py", content=conftest).is_success
    offered = [t["name"] for t in client.get("/v1/tools", headers=alice).json()["tools"]]
    assert "repo_read_file" in offered and "repo_run_tests" not in offered
    for arguments in ({"command": "pytest -q"}, {"preset": "pytest"}, {"preset": "compileall"}):
        r = call(client, alice, "repo_run_tests", **arguments)
        assert r.status_code == 403, r.text
        assert "SHERIFF_SKILLS_TENANT_RUN_TESTS" in r.json()["detail"]
    # nor through a skill: repo_refactor renames, then reports its tests as not run
    code = "class Loader:\n    pass\n\n\nLOADER = Loader()\n"
    assert call(client, alice, "repo_write_file", path="store.py", content=code).is_success
    r = client.post(
        "/v1/skills/run",
        json={"name": "repo_refactor", "args": {"old_name": "Loader", "new_name": "Reader"}},
        headers=alice,
    )
    result = r.json()
    assert result["ok"] is True, result
    assert result["output"]["tests"]["skipped"] is True
    assert "SHERIFF_SKILLS_TENANT_RUN_TESTS" in result["output"]["tests"]["note"]
    assert not marker.exists()


@pytest.mark.usefixtures("untouched")
def test_a_sandboxed_test_run_reaches_nothing_but_its_workspace(
    sandboxed: TestClient,
    namespace: str,
    other_namespace: str,
    password_file: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in {"NEO4J_PASSWORD": "pw-in-env", "SHERIFF_PROBE": "1",
                        "OPENAI_API_KEY": "sk-probe"}.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    key = bearer(new_key(sandboxed, namespace))
    theirs = tenant_workspace(sandboxed, other_namespace)
    (theirs / "private.txt").write_text("bob's")
    probe = PROBE.format(
        password=str(password_file), code=str(CODE_ROOT / "pyproject.toml"), theirs=str(theirs),
        outside=str(tmp_path / "planted.txt"), server_pid=os.getpid(),
    )  # fmt: skip
    assert call(sandboxed, key, "repo_write_file", path="conftest.py", content=probe).is_success
    offered = [t["name"] for t in sandboxed.get("/v1/tools", headers=key).json()["tools"]]
    assert "repo_run_tests" in offered
    r = call(sandboxed, key, "repo_run_tests", command="pytest -q")
    assert r.status_code == 200, r.text
    result = r.json()["output"]
    assert result["sandboxed"] is True and result["command"][0] == "python"
    assert result["exit_code"] == 5, result  # no tests: the server's own suite is not there
    for path in host_paths(tenant_workspace(sandboxed, namespace)):
        assert path not in json.dumps(result)
    report = json.loads(
        call(sandboxed, key, "repo_read_file", path="report.json").json()["output"]["content"]
    )
    abi = sandbox.abi_version()
    expected_denied = ["password", "code", "theirs", "write_outside", "proc_environ"]
    expected_denied += ["neo4j"] if abi >= 4 else []
    expected_denied += ["signal_server"] if abi >= 6 else []
    assert {k: report[k] for k in expected_denied} == {k: "denied" for k in expected_denied}, report
    assert report["env"] == []
    assert not (tmp_path / "planted.txt").exists()
    assert (theirs / "private.txt").read_text() == "bob's"


PROBE = """\
import json, os, pathlib, socket

report = {{}}


def attempt(name, action):
    try:
        action()
        report[name] = "allowed"
    except OSError:
        report[name] = "denied"


attempt("password", lambda: open({password!r}).read())
attempt("code", lambda: open({code!r}).read())
attempt("theirs", lambda: os.listdir({theirs!r}))
attempt("write_outside", lambda: open({outside!r}, "w").write("x"))
attempt("neo4j", lambda: socket.create_connection(("127.0.0.1", 7687), timeout=3).close())
attempt("proc_environ", lambda: open("/proc/{server_pid}/environ", "rb").read())
attempt("signal_server", lambda: os.kill({server_pid}, 0))
report["env"] = sorted(k for k in os.environ
                       if k.startswith(("NEO4J", "SHERIFF", "OPENAI")) or "PASSWORD" in k)
pathlib.Path("report.json").write_text(json.dumps(report))
"""


@pytest.mark.usefixtures("untouched")
def test_tenants_do_not_see_each_others_files(
    client: TestClient,
    alice: dict[str, str],
    bob: dict[str, str],
    namespace: str,
) -> None:
    assert call(client, alice, "repo_write_file", path="notes.txt", content="alice's").is_success
    mine = tenant_workspace(client, namespace)
    r = call(client, bob, "repo_read_file", path="notes.txt")
    assert r.status_code == 422 and "alice's" not in r.text
    for path in (f"../{mine.name}/notes.txt", str(mine / "notes.txt")):
        r = call(client, bob, "repo_read_file", path=path)
        assert r.status_code == 403 and "alice's" not in r.text
    assert call(client, bob, "repo_list_files").json()["output"]["files"] == []
    assert call(client, bob, "repo_write_file", path="notes.txt", content="bob's").is_success
    assert (mine / "notes.txt").read_text() == "alice's"


@pytest.mark.usefixtures("untouched")
def test_links_planted_in_a_workspace_lead_nowhere(
    client: TestClient,
    alice: dict[str, str],
    namespace: str,
    other_namespace: str,
    password_file: Path,
    workspaces: Path,
) -> None:
    ws = tenant_workspace(client, namespace)
    theirs = tenant_workspace(client, other_namespace)
    (theirs / "private.txt").write_text("bob's")
    outside = workspaces.parent / f"outside-{namespace}.txt"
    outside.write_text("outside")
    (ws / "pw").symlink_to(password_file)
    (ws / "code").symlink_to(CODE_ROOT)
    (ws / "theirs").symlink_to(theirs)
    (ws / "passwd").symlink_to("/etc/passwd")
    os.link(outside, ws / "hard.txt")  # what a test run could leave behind
    cases = {"pw": "resolves outside", "code/pyproject.toml": "resolves outside",
             "theirs/private.txt": "resolves outside", "passwd": "resolves outside",
             "hard.txt": "hard-linked"}  # fmt: skip
    for path, why in cases.items():
        for r in (call(client, alice, "repo_read_file", path=path),
                  call(client, alice, "repo_write_file", path=path, content="x")):  # fmt: skip
            assert r.status_code == 403, (path, r.text)
            assert why in r.json()["detail"]
    # links are not listed; the hard link is (its name is the tenant's), its content is not read
    assert call(client, alice, "repo_list_files").json()["output"]["files"] == ["hard.txt"]
    assert outside.read_text() == "outside" and (theirs / "private.txt").read_text() == "bob's"


@pytest.mark.usefixtures("untouched")
def test_list_patterns_are_bounded(
    client: TestClient, alice: dict[str, str], namespace: str
) -> None:
    ws = tenant_workspace(client, namespace)
    (ws / ".venv/lib").mkdir(parents=True)
    for i in range(500):  # a large hidden folder is never walked
        (ws / f".venv/lib/m{i}.py").write_text("")
    for i in range(60):
        (ws / f"f{i:02}.txt").write_text("")
    for pattern in ("**/**/**/**/*", "a**", ".", "**x/*", "x" * 300):
        r = call(client, alice, "repo_list_files", pattern=pattern)
        assert r.status_code == 422, (pattern, r.text)
    listed = call(client, alice, "repo_list_files", pattern="**/*").json()["output"]
    assert listed["truncated"] is True and len(listed["files"]) == LIST_LIMITS["max_list_files"]
    assert all(not f.startswith(".venv") for f in listed["files"])
    assert call(client, alice, "repo_list_files", pattern="*.md").json()["output"] == {
        "files": [], "truncated": False,
    }  # fmt: skip


@pytest.mark.usefixtures("untouched")
def test_malformed_paths_are_4xx_and_leave_nothing_behind(
    client: TestClient, alice: dict[str, str], namespace: str
) -> None:
    assert call(client, alice, "repo_write_file", path="README.md", content="# hi\n").is_success
    ws = tenant_workspace(client, namespace)
    before = workspace_tree(ws)
    bad = {"x" * 300: 422, "a/b/" + "y" * 300: 422, "README.md/x": 422, ".": 422,
           "docs/\x1b]0;owned\x07.md": 422, "evil\u202etxt.exe": 422, "a\x00b": 422,
           "/".join(["d"] * 40): 422, "../x": 403}  # fmt: skip
    for path, status in bad.items():
        for r in (call(client, alice, "repo_write_file", path=path, content="leftover"),
                  call(client, alice, "repo_read_file", path=path)):  # fmt: skip
            assert r.status_code == status, (path, r.text)
            assert "\x1b" not in r.text and "\u202e" not in r.json()["detail"]
    raw = b'{"arguments": {"path": "new/s.txt", "content": "lone \\ud800"}}'  # JSON escape
    headers = {**alice, "Content-Type": "application/json"}
    r = client.post("/v1/tools/repo_write_file", content=raw, headers=headers)
    assert r.status_code == 422, r.text
    assert workspace_tree(ws) == before  # no folder, no .sheriff-*.tmp


@pytest.mark.usefixtures("untouched")
def test_no_host_path_in_any_message(
    client: TestClient, sandboxed: TestClient, namespace: str, workspaces: Path
) -> None:
    key, free = bearer(new_key(client, namespace)), bearer(new_key(sandboxed, namespace))
    ws = tenant_workspace(client, namespace)
    (ws / "dir").mkdir()
    attempts = [
        call(client, key, "repo_read_file", path="missing.txt"),
        call(client, key, "repo_read_file", path="dir"),
        call(client, key, "repo_read_file", path=str(CODE_ROOT / "api/app.py")),
        call(client, key, "repo_write_file", path="dir", content="x"),
        call(client, key, "repo_list_files", pattern="a**"),
        call(client, key, "repo_run_tests", command="pytest -q"),
        call(sandboxed, free, "repo_run_tests", command="pytest -q; rm -rf /"),
        call(sandboxed, free, "repo_run_tests", preset="deploy"),
        client.get("/v1/skills", headers=key),
    ]
    for r in attempts:
        for path in host_paths(workspaces, ws):
            assert path not in r.text, (path, r.text)


def test_the_operator_can_turn_the_repo_tools_off(
    settings: Settings,
    embedder: MiniLMEmbedder,
    namespace: str,
    tmp_path: Path,
) -> None:
    off = SkillSettings(tenant_repo_tools=False)
    with api_client(settings, embedder, tmp_path / "workspaces", off) as c:
        key = bearer(new_key(c, namespace))
        names = [t["name"] for t in c.get("/v1/tools", headers=key).json()["tools"]]
        assert "topics_search" in names and not [n for n in names if n.startswith("repo_")]
        r = call(c, key, "repo_read_file", path="README.md")
        assert r.status_code == 403 and "SHERIFF_SKILLS_TENANT_REPO_TOOLS" in r.json()["detail"]
        run = c.post(
            "/v1/skills/run", json={"name": "write_docs", "args": {"target": "x"}}, headers=key
        ).json()
        assert run["ok"] is False and "unavailable" in " ".join(run["tool_calls"])
    assert not (tmp_path / "workspaces").exists()  # no workspace was ever made


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


SLOW_TEST = """\
import pathlib, subprocess, sys, time


def test_slow():
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    pathlib.Path("grandchild.pid").write_text(str(p.pid))
    time.sleep(120)
"""


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def test_a_test_run_stops_when_the_client_goes_away(
    settings: Settings, embedder: MiniLMEmbedder, namespace: str, tmp_path: Path
) -> None:
    """Over a real HTTP server: the client sends the request and hangs up mid-run."""
    skill_settings = SkillSettings(
        tenant_run_tests="sandboxed", test_timeout_s=120, workspaces_dir=tmp_path
    )
    container = Container(settings, skill_settings=skill_settings, embedder=embedder)
    assert container.workspaces is not None
    ws = container.workspaces.for_namespace(namespace)
    (ws / "test_slow.py").write_text(SLOW_TEST)
    app, port = create_app(container), _free_port()
    server = uvicorn.Server(uvicorn.Config(app, port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        while not server.started:
            time.sleep(0.05)
        api_key = app.state.api_keys.create(namespace, None)[1]
        body = json.dumps({"arguments": {"command": "pytest -q"}}).encode()
        request = (
            f"POST /v1/tools/repo_run_tests HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Authorization: Bearer {api_key}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode() + body
        with socket.create_connection(("127.0.0.1", port)) as conn:
            conn.sendall(request)
            grandchild = _wait_for_pid(ws / "grandchild.pid", 60)
            assert _running(grandchild)
        deadline = time.monotonic() + 15  # the client is gone: the run must stop soon
        while _running(grandchild) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _running(grandchild)
    finally:
        server.should_exit = True
        thread.join(30)
        container.close()


def _wait_for_pid(path: Path, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text():
            return int(path.read_text())
        time.sleep(0.1)
    raise AssertionError("the test run never started its grandchild")
