"""A local Neo4j Community server (2026.08.1 by default), assembled from Maven Central and run without Docker.

Why hand-written: Neo4j publishes no distribution tarball on Maven Central and these machines cannot
reach neo4j.com or a Docker engine, so the server home is assembled from the ``org.neo4j:neo4j`` and
``org.neo4j.client:neo4j-browser`` jars with ``mvn dependency:copy-dependencies`` and the JVM is
launched directly on ``org.neo4j.server.CommunityEntryPoint`` (one process, so ``stop`` leaves no
Java behind). Layout under ``home``::

    lib/        jars (Neo4j, Browser and their dependencies)
    conf/       neo4j.conf (loopback only, auth on)
    data/ logs/ run/ plugins/ import/
    password    the generated password of user neo4j, mode 0600
    neo4j.pid   pid of the running server
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

from graph.errors import Neo4jUnavailable
from graph.server_java import find_java, is_calendar_version
from graph.server_store import mark_store, prepare_store, refuse_downgrade, store_version

log = logging.getLogger(__name__)

# The default; SHERIFF_NEO4J_VERSION picks another. 2025.01+ is required by the schema (Cypher 25,
# vector indexes filtered by namespace: cypher/schema/022); a 5.26 store is upgraded on the first
# start, backed up (graph/server_store.py, docs/neo4j.md).
NEO4J_VERSION = "2026.08.1"
BROWSER_VERSION = "5.24.0"
# The server's main class, as the neo4j jar names it in its service file (5.x:
# CommunityEntryPoint; 2025+: Neo4jCommunity); the first is the fallback.
ENTRY_POINTS = ("org.neo4j.server.CommunityEntryPoint", "org.neo4j.server.Neo4jCommunity")
_ENTRY_POINT_SERVICE = "META-INF/services/org.neo4j.server.startup.EntryPoint"
ADMIN_ENTRY_POINT = "org.neo4j.server.startup.Neo4jAdminCommand"
JVM_FLAGS = (
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Dfile.encoding=UTF-8",
)

_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.sheriff</groupId><artifactId>neo4j-home</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.neo4j</groupId><artifactId>neo4j</artifactId>
      <version>{neo4j}</version></dependency>
    <dependency><groupId>org.neo4j.client</groupId><artifactId>neo4j-browser</artifactId>
      <version>{browser}</version></dependency>
  </dependencies>
</project>
"""


MIN_REPLAN_INTERVAL = "10m"  # how long a Cypher plan stands before the statistics may replace it
# Settings only the calendar versions (2025.01+) know (5.x refuses unknown keys): no Fleet
# Manager reporting and no discovery broadcasts from a local, loopback-only server.
_CALENDAR_ONLY = ("dbms.fleet_manager.enabled=false", "server.fleet_discovery.enabled=false")


@dataclass(frozen=True)
class ServerConfig:
    """Where the managed server lives and how it listens."""

    home: Path
    version: str = NEO4J_VERSION
    bolt_port: int = 7687
    http_port: int = 7474
    heap: str = "1g"
    pagecache: str = "256m"
    start_timeout_s: float = 180.0

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.bolt_port}"


class LocalNeo4j:
    """Assemble, configure, start, stop and query the state of the managed server."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.home = config.home.resolve()

    # -- paths ---------------------------------------------------------------------------------
    @property
    def pid_file(self) -> Path:
        return self.home / "neo4j.pid"

    @property
    def password_file(self) -> Path:
        return self.home / "password"

    @property
    def console_log(self) -> Path:
        return self.home / "logs" / "console.log"

    # -- public operations ---------------------------------------------------------------------
    def start(self) -> bool:
        """Start the server unless it already runs; return True when this call started it."""
        if self.running_pid() is not None:
            running = store_version(self.home)
            if running is not None and running != self.config.version:
                raise Neo4jUnavailable(
                    f"Neo4j {running} is running on {self.home}; stop it (`sheriff neo4j stop`) "
                    f"to start {self.config.version} there"
                )
            self.wait_ready(self.config.start_timeout_s)
            return False
        self._check_ports_free()
        refuse_downgrade(self.home, self.config.version)
        self.assemble()
        self._write_config()
        self._ensure_password()
        backup = prepare_store(self.home, self.config.version, self._database_info)
        proc = self._launch()
        try:
            self.wait_ready(self.config.start_timeout_s, proc)
        except Neo4jUnavailable as exc:
            self.stop()
            if backup is not None:
                raise Neo4jUnavailable(f"{exc}\nthe store before the upgrade: {backup}") from exc
            raise
        mark_store(self.home, self.config.version)
        return True

    def stop(self, timeout_s: float = 60.0) -> bool:
        """Stop the server with SIGTERM (SIGKILL after ``timeout_s``); True if one was running."""
        pid = self.running_pid()
        if pid is None:
            self.pid_file.unlink(missing_ok=True)
            return False
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGTERM)
        if not _wait_gone(pid, timeout_s):
            log.warning("neo4j pid %s ignored SIGTERM; killing", pid)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            _wait_gone(pid, 10.0)
        self.pid_file.unlink(missing_ok=True)
        return True

    def running_pid(self) -> int | None:
        """The pid from the pid file if that process is alive and is our JVM; else clean up."""
        try:
            pid = int(self.pid_file.read_text().strip())
        except (FileNotFoundError, ValueError):
            return None
        if _is_our_jvm(pid, self.home):
            return pid
        log.info("removing stale pid file %s (pid %s is gone)", self.pid_file, pid)
        self.pid_file.unlink(missing_ok=True)
        return None

    def bolt_answers(self, timeout_s: float = 5.0) -> bool:
        """True when a Bolt handshake with the stored credentials succeeds."""
        from neo4j import GraphDatabase  # local import: the CLI's --help should not pay for it

        try:
            with GraphDatabase.driver(
                self.config.uri, auth=("neo4j", self.password()), connection_timeout=timeout_s
            ) as driver:
                driver.verify_connectivity()
            return True
        except Exception:  # any failure means "not answering"
            return False

    def password(self) -> str:
        try:
            return self.password_file.read_text().strip()
        except FileNotFoundError as exc:
            raise Neo4jUnavailable(
                f"no password file at {self.password_file}; run `sheriff neo4j start` first"
            ) from exc

    def wait_ready(self, timeout_s: float, proc: subprocess.Popen[bytes] | None = None) -> None:
        """Block until Bolt answers; raise with the log's relevant lines on failure or timeout."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if proc is not None and proc.poll() is not None:
                raise Neo4jUnavailable(
                    f"neo4j exited with code {proc.returncode} during start-up\n{self.log_excerpt()}"
                )
            if _port_open(self.config.bolt_port) and self.bolt_answers():
                return
            time.sleep(1.0)
        raise Neo4jUnavailable(
            f"neo4j did not answer on {self.config.uri} within {timeout_s:.0f}s\n{self.log_excerpt()}"
        )

    def log_excerpt(self, lines: int = 30) -> str:
        """The lines of the server logs that explain a failure (errors first, then the tail)."""
        texts: list[str] = []
        for path in (self.console_log, self.home / "logs" / "neo4j.log"):
            if path.exists():
                texts.extend(path.read_text(errors="replace").splitlines())
        errors = [t for t in texts if any(w in t for w in ("ERROR", "Exception", "Caused by"))]
        picked = (errors[-lines // 2 :] if errors else []) + texts[-lines // 2 :]
        return "\n".join(picked) if picked else f"(no log yet under {self.home / 'logs'})"

    # -- assembly and configuration ------------------------------------------------------------
    def assemble(self) -> None:
        """Fetch the jars from Maven Central into ``lib/`` unless they are there already."""
        lib = self.home / "lib"
        version = self.config.version
        marker = lib / f"neo4j-{version}.jar"
        if marker.exists() and (lib / f"neo4j-browser-{BROWSER_VERSION}.jar").exists():
            return
        mvn = shutil.which("mvn")
        if mvn is None:
            raise Neo4jUnavailable("Maven (mvn) is needed to fetch Neo4j from Maven Central")
        build = self.home / "build"
        build.mkdir(parents=True, exist_ok=True)
        (build / "pom.xml").write_text(_POM.format(neo4j=version, browser=BROWSER_VERSION))
        tmp_lib = self.home / "lib.partial"
        shutil.rmtree(tmp_lib, ignore_errors=True)
        log.info("fetching Neo4j %s from Maven Central into %s", version, lib)
        result = _fetch_jars(mvn, build, tmp_lib)
        if result.returncode != 0:
            raise Neo4jUnavailable(f"mvn failed to fetch Neo4j:\n{result.stdout[-3000:]}")
        if lib.is_symlink():  # jars shared with another home (tests): leave the target alone
            lib.unlink()
        shutil.rmtree(lib, ignore_errors=True)
        tmp_lib.rename(lib)  # atomic: a half-downloaded lib/ never looks complete

    def _write_config(self) -> None:
        for sub in ("conf", "data", "logs", "run", "plugins", "import"):
            (self.home / sub).mkdir(parents=True, exist_ok=True)
        home = self.home
        conf = "\n".join(
            [
                "# written by `sheriff neo4j start`; edits are overwritten",
                "server.default_listen_address=127.0.0.1",
                f"server.bolt.listen_address=127.0.0.1:{self.config.bolt_port}",
                f"server.http.listen_address=127.0.0.1:{self.config.http_port}",
                "server.https.enabled=false",
                "dbms.security.auth_enabled=true",
                f"server.directories.data={home / 'data'}",
                f"server.directories.logs={home / 'logs'}",
                f"server.directories.run={home / 'run'}",
                f"server.directories.plugins={home / 'plugins'}",
                f"server.directories.import={home / 'import'}",
                "server.memory.heap.initial_size=512m",
                f"server.memory.heap.max_size={self.config.heap}",
                f"server.memory.pagecache.size={self.config.pagecache}",
                "dbms.usage_report.enabled=false",
                # a young database's statistics change by more than the divergence threshold
                # within seconds (every new namespace adds to few nodes), and at the default 10 s
                # Cypher replanned the sleep's queries over and over: half of the server's CPU
                # during a LongMemEval ingest went to planning and to compiling the new plans
                # (docs/evaluation.md). Plans still follow the statistics, ten minutes apart.
                f"dbms.cypher.min_replan_interval={MIN_REPLAN_INTERVAL}",
                *(_CALENDAR_ONLY if is_calendar_version(self.config.version) else ()),
                "",
            ]
        )
        (home / "conf" / "neo4j.conf").write_text(conf)

    def _admin(self, *args: str) -> subprocess.CompletedProcess[str]:
        """One ``neo4j-admin`` command, run with the server's Java and configuration."""
        return subprocess.run(
            [*self._java_cmd(ADMIN_ENTRY_POINT), *args],
            env=self._env(),
            capture_output=True,
            text=True,
            check=False,
        )

    def _database_info(self) -> str:
        """``neo4j-admin database info`` over every database (the server must be stopped)."""
        result = self._admin("database", "info")
        if result.returncode != 0:
            raise Neo4jUnavailable(f"neo4j-admin database info failed:\n{result.stderr[-2000:]}")
        return result.stdout

    def _ensure_password(self) -> None:
        """Generate the password once, before the first start (Neo4j only accepts it then)."""
        if self.password_file.exists():
            return
        if any((self.home / "data").glob("databases/*")):
            raise Neo4jUnavailable(
                f"{self.home / 'data'} holds a database but {self.password_file} is missing; "
                "remove the data folder or restore the password file"
            )
        # Hex only: a urlsafe token can start with "-", which neo4j-admin reads as an option
        # (about one start in 64 failed with "Missing required parameter: '<password>'").
        password = secrets.token_hex(24)
        result = self._admin("dbms", "set-initial-password", password)
        if result.returncode != 0:
            raise Neo4jUnavailable(f"set-initial-password failed:\n{result.stdout}{result.stderr}")
        fd = os.open(self.password_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(password + "\n")

    def _launch(self) -> subprocess.Popen[bytes]:
        self.console_log.parent.mkdir(parents=True, exist_ok=True)
        with self.console_log.open("ab") as out:
            proc = subprocess.Popen(
                [
                    *self._java_cmd(self._entry_point(), server=True),
                    f"--home-dir={self.home}",
                    f"--config-dir={self.home / 'conf'}",
                    "--console-mode",
                ],
                env=self._env(),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # own process group: survives the CLI, killable as a group
                cwd=self.home,
            )
        self.pid_file.write_text(f"{proc.pid}\n")
        return proc

    def _entry_point(self) -> str:
        jar = self.home / "lib" / f"neo4j-{self.config.version}.jar"
        try:
            with zipfile.ZipFile(jar) as archive:
                names = archive.read(_ENTRY_POINT_SERVICE).decode().split()
        except (OSError, KeyError, zipfile.BadZipFile):
            return ENTRY_POINTS[0]
        return names[0] if names else ENTRY_POINTS[0]

    def _java_cmd(self, main: str, server: bool = False) -> list[str]:
        java = find_java(self.config.version)
        classpath = f"{self.home / 'conf'}/*:{self.home / 'lib'}/*"
        heap = ["-Xms512m", f"-Xmx{self.config.heap}"] if server else []
        return [str(java), "-cp", classpath, *JVM_FLAGS, *heap, main]

    def _env(self) -> dict[str, str]:
        java_home = str(find_java(self.config.version).parent.parent)
        return {
            **os.environ,
            "JAVA_HOME": java_home,
            "NEO4J_HOME": str(self.home),
            "NEO4J_CONF": str(self.home / "conf"),
        }

    def _check_ports_free(self) -> None:
        for port in (self.config.bolt_port, self.config.http_port):
            if _port_open(port):
                raise Neo4jUnavailable(
                    f"port {port} on 127.0.0.1 is taken by another process; stop it, or set "
                    "SHERIFF_NEO4J_BOLT_PORT / SHERIFF_NEO4J_HTTP_PORT, or point NEO4J_URI at it"
                )


def _port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _is_our_jvm(pid: int, home: Path) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return False
    return any(e in cmdline for e in ENTRY_POINTS) and f"--home-dir={home}" in cmdline


def _wait_gone(pid: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # reap if we are the parent (tests start and stop)
        if not Path(f"/proc/{pid}").exists() or _is_zombie(pid):
            return True
        time.sleep(0.25)
    return False


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except (FileNotFoundError, IndexError):
        return True


FETCH_ATTEMPTS = 3


def _fetch_jars(
    mvn: str, build: Path, out: Path, attempts: int = FETCH_ATTEMPTS, pause: float = 5.0
) -> subprocess.CompletedProcess[str]:
    """``mvn dependency:copy-dependencies`` into ``out``, retried on a failed run.

    Each HTTP request is retried by Maven itself (``retryHandler``); a run that still fails (a
    dropped connection mid-file) is run again, and what it already fetched is in ``~/.m2``, so
    a retry only fetches the rest."""
    command = [
        mvn,
        "-q",
        "-B",
        "-Dmaven.wagon.http.retryHandler.count=5",
        "-Dmaven.wagon.http.retryHandler.requestSentEnabled=true",
        "dependency:copy-dependencies",
        f"-DoutputDirectory={out}",
    ]
    result = subprocess.run(command, cwd=build, capture_output=True, text=True, check=False)
    for attempt in range(2, attempts + 1):
        if result.returncode == 0:
            break
        log.warning("mvn could not fetch Neo4j (attempt %d of %d); retrying", attempt - 1, attempts)
        time.sleep(pause * attempt)
        shutil.rmtree(out, ignore_errors=True)
        result = subprocess.run(command, cwd=build, capture_output=True, text=True, check=False)
    return result
