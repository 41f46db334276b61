"""`sheriff neo4j ...` end to end: a second managed server on its own ports and home.

The jars are shared with the main managed home when it exists (a symlink), so this does not
download Neo4j again; otherwise the CLI fetches them from Maven Central.
"""

from __future__ import annotations

import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from graph.db import connect
from graph.server import NEO4J_VERSION
from tests.integration.neo4j_homes import private_home_env

BOLT, HTTP = 17687, 17474
SHERIFF = [sys.executable, "-c", "from api.cli import main; main()"]


def run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*SHERIFF, *args], env=env, capture_output=True, text=True, timeout=300, check=False
    )


def java_processes_for(home: Path) -> list[str]:
    out = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines() if f"--home-dir={home}" in line]


@pytest.fixture
def cli_env(tmp_path: Path) -> dict[str, str]:
    return private_home_env(tmp_path, BOLT, HTTP)


def test_start_twice_stop_and_data_survives_restart(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    home = (tmp_path / "neo4j").resolve()
    try:
        first = run(["neo4j", "start"], cli_env)
        assert first.returncode == 0, first.stderr
        assert "started" in first.stderr
        second = run(["neo4j", "start"], cli_env)
        assert second.returncode == 0 and "already running" in second.stderr
        assert run(["neo4j", "status"], cli_env).returncode == 0
        password_file = home / "password"
        assert password_file.stat().st_mode & 0o777 == 0o600
        env_out = run(["neo4j", "env"], cli_env).stdout
        assert f"export NEO4J_URI=bolt://127.0.0.1:{BOLT}" in env_out
        assert "export NEO4J_PASSWORD=" in env_out
        conf = (home / "conf" / "neo4j.conf").read_text()
        assert "server.default_listen_address=127.0.0.1" in conf
        assert "dbms.security.auth_enabled=true" in conf
        assert "dbms.cypher.min_replan_interval=10m" in conf  # plans outlive a young database
        # 2025+ settings, written for the calendar versions only (5.26 refuses unknown keys)
        assert "dbms.fleet_manager.enabled=false" in conf
        assert "server.fleet_discovery.enabled=false" in conf
        assert (home / "store-version").read_text().strip() == NEO4J_VERSION

        with urllib.request.urlopen(f"http://127.0.0.1:{HTTP}/browser/", timeout=10) as page:
            assert page.status == 200 and b"Neo4j Browser" in page.read()
        password = password_file.read_text().strip()
        with connect(f"bolt://127.0.0.1:{BOLT}", "neo4j", password) as drv:
            drv.execute_query("CREATE (:Probe {value: 'kept across restarts'})")

        stopped = run(["neo4j", "stop"], cli_env)
        assert stopped.returncode == 0 and "stopped" in stopped.stderr
        assert java_processes_for(home) == []
        assert run(["neo4j", "status"], cli_env).returncode != 0

        (home / "neo4j.pid").write_text("999999\n")  # stale pid file from a crash
        again = run(["neo4j", "start"], cli_env)
        assert again.returncode == 0, again.stderr
        with connect(f"bolt://127.0.0.1:{BOLT}", "neo4j", password) as drv:
            records, _, _ = drv.execute_query("MATCH (p:Probe) RETURN p.value AS v")
        assert [r["v"] for r in records] == ["kept across restarts"]
    finally:
        run(["neo4j", "stop"], cli_env)
        assert java_processes_for(home) == []


def test_start_fails_clearly_when_the_port_is_taken(cli_env: dict[str, str]) -> None:
    import socket

    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # the port may be in TIME_WAIT
        sock.bind(("127.0.0.1", BOLT))
        sock.listen()
        result = run(["neo4j", "start"], cli_env)
    assert result.returncode != 0
    assert f"port {BOLT}" in result.stderr


def test_external_server_is_used_when_neo4j_uri_is_set(cli_env: dict[str, str]) -> None:
    env = {**cli_env, "NEO4J_URI": "bolt://127.0.0.1:1", "NEO4J_PASSWORD": "x"}
    result = run(["neo4j", "start"], env)
    assert result.returncode == 0 and "NEO4J_URI is set" in result.stderr
    assert run(["neo4j", "status"], env).returncode != 0  # nothing answers on port 1
    assert "export NEO4J_URI=bolt://127.0.0.1:1" in run(["neo4j", "env"], env).stdout


def test_a_failed_jar_fetch_is_run_again(tmp_path: Path) -> None:
    # A stand-in for mvn that fails on its first run (as on a dropped connection) and then
    # writes its output directory: the fetch retries and succeeds, and a third run is not needed.
    from graph import server

    runs = tmp_path / "runs"
    fake = tmp_path / "mvn"
    fake.write_text(
        "#!/bin/sh\n"
        f'echo run >> "{runs}"\n'
        f'[ "$(wc -l < "{runs}")" -ge 2 ] || {{ echo "Connection reset"; exit 1; }}\n'
        'for arg in "$@"; do case "$arg" in -DoutputDirectory=*) mkdir -p "${arg#*=}";; esac; done\n'
    )
    fake.chmod(0o755)
    out = tmp_path / "lib.partial"
    result = server._fetch_jars(str(fake), tmp_path, out, attempts=3, pause=0.0)
    assert result.returncode == 0
    assert runs.read_text().count("run") == 2
    assert out.is_dir()

    runs.unlink()
    fake.write_text('#!/bin/sh\necho "Connection reset"\nexit 1\n')
    failed = server._fetch_jars(str(fake), tmp_path, out, attempts=2, pause=0.0)
    assert failed.returncode == 1 and "Connection reset" in failed.stdout
