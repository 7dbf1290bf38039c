"""The managed local Neo4j: a real Neo4j Community server run from Maven Central jars.

Loopback only. Jars live in the cache folder, database files and logs in the data folder;
`run/server.json` records the running instance so that any later process can find it.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from flowstate.errors import LocalServerError
from flowstate.local import process
from flowstate.local.jars import ensure_classpath
from flowstate.local.java import Java, find_java
from flowstate.local.lines import line_for, version_key
from flowstate.local.probe import bolt_answers, http_get, port_is_free
from flowstate.settings import LocalServerSettings

ADMIN_CLASS = "org.neo4j.cli.AdminTool"


@dataclass(frozen=True)
class ServerInfo:
    """What `status` reports about a running instance."""

    pid: int
    version: str
    bolt_port: int
    http_port: int
    data_dir: str
    auth: bool
    started_at: float

    @property
    def bolt_uri(self) -> str:
        return f"bolt://127.0.0.1:{self.bolt_port}"

    @property
    def browser_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}/browser/"


@dataclass(frozen=True)
class StartResult:
    info: ServerInfo
    already_running: bool
    downloaded: bool
    seconds: float


@dataclass(frozen=True)
class StopResult:
    was_running: bool
    forced: bool
    seconds: float


class LocalServer:
    """Start, stop and inspect the managed local Neo4j."""

    def __init__(self, settings: LocalServerSettings) -> None:
        self.settings = settings
        self.home = settings.server_dir

    # -- paths ---------------------------------------------------------------------------

    @property
    def state_file(self) -> Path:
        return self.home / "run" / "server.json"

    @property
    def console_log(self) -> Path:
        return self.home / "logs" / "console.log"

    @property
    def version_file(self) -> Path:
        """The newest Neo4j version ever launched on this data folder."""
        return self.home / "neo4j-version"

    # -- queries -------------------------------------------------------------------------

    def info(self) -> ServerInfo | None:
        """The running instance, or None. A stale state file (dead pid) is cleaned up."""
        try:
            info = ServerInfo(**json.loads(self.state_file.read_text()))
        except (OSError, ValueError, TypeError):
            return None
        if process.is_our_server(info.pid, self.home):
            return info
        self.state_file.unlink(missing_ok=True)
        return None

    def log_tail(self, lines: int = 50) -> str:
        try:
            text = self.console_log.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    # -- start / stop --------------------------------------------------------------------

    def start(self, password: str | None = None) -> StartResult:
        """Start the server, or find it running; a second process starting the same data
        folder at once waits for the first and finds its server running."""
        began = time.monotonic()
        self.home.mkdir(parents=True, exist_ok=True)
        with (self.home / "start.lock").open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                return self._start(password, began)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _start(self, password: str | None, began: float) -> StartResult:
        running = self.info()
        if running is not None:
            seconds = time.monotonic() - began  # the wait for another process's start, if any
            return StartResult(running, already_running=True, downloaded=False, seconds=seconds)
        self._check_not_a_downgrade()
        java = find_java(line_for(self.settings.neo4j_version), self.settings.java_home)
        self._check_ports_free()
        jars, downloaded = ensure_classpath(self.settings, java.home)
        self._prepare_home(auth=password is not None)
        if password is not None:
            self._set_initial_password(java.executable, jars, password)
        # Recorded before the launch: a newer server may upgrade the store even if it then fails.
        self.version_file.write_text(self.settings.neo4j_version)
        proc = self._launch(java, jars)
        info = ServerInfo(
            pid=proc.pid,
            version=self.settings.neo4j_version,
            bolt_port=self.settings.bolt_port,
            http_port=self.settings.http_port,
            data_dir=str(self.home),
            auth=password is not None,
            started_at=time.time(),
        )
        self.state_file.write_text(json.dumps(asdict(info)))
        self._wait_ready(proc)
        return StartResult(info, False, downloaded, time.monotonic() - began)

    def stop(self, timeout: float = 60.0) -> StopResult:
        began = time.monotonic()
        info = self.info()
        if info is None:
            return StopResult(was_running=False, forced=False, seconds=0.0)
        os.kill(info.pid, signal.SIGTERM)
        forced = not process.wait_gone(info.pid, timeout)
        if forced:
            os.kill(info.pid, signal.SIGKILL)
            if not process.wait_gone(info.pid, 10.0):
                raise LocalServerError(f"Neo4j (pid {info.pid}) survived SIGKILL; stop it by hand.")
        self.state_file.unlink(missing_ok=True)
        return StopResult(was_running=True, forced=forced, seconds=time.monotonic() - began)

    # -- internals -----------------------------------------------------------------------

    def _check_not_a_downgrade(self) -> None:
        """Neo4j upgrades a store in place but cannot read one a newer version wrote."""
        try:
            recorded = self.version_file.read_text().strip()
        except OSError:
            return
        wanted = self.settings.neo4j_version
        if version_key(wanted) < version_key(recorded):
            raise LocalServerError(
                f"The data folder {self.home} was last run by Neo4j {recorded}, and Neo4j "
                f"{wanted} cannot open a store a newer version wrote. Start with --version "
                f"{recorded} (FLOWSTATE_LOCAL_NEO4J_VERSION), or use another data folder "
                "(FLOWSTATE_LOCAL_DATA_DIR)."
            )

    def _check_ports_free(self) -> None:
        for name, port, env in (
            ("Bolt", self.settings.bolt_port, "FLOWSTATE_LOCAL_BOLT_PORT"),
            ("HTTP", self.settings.http_port, "FLOWSTATE_LOCAL_HTTP_PORT"),
        ):
            if not port_is_free(port):
                raise LocalServerError(
                    f"Port {port} ({name}) is already in use by another process. Stop that "
                    f"process, or choose another port with {env} (or --{name.lower()}-port)."
                )

    def _prepare_home(self, auth: bool) -> None:
        for sub in ("conf", "data", "logs", "run", "plugins", "import"):
            (self.home / sub).mkdir(parents=True, exist_ok=True)
        (self.home / "conf" / "neo4j.conf").write_text(self._config(auth))

    def _config(self, auth: bool) -> str:
        s, home = self.settings, self.home
        lines = {
            "server.default_listen_address": "127.0.0.1",
            "server.default_advertised_address": "127.0.0.1",
            "server.bolt.listen_address": f"127.0.0.1:{s.bolt_port}",
            "server.http.listen_address": f"127.0.0.1:{s.http_port}",
            # Advertised too, or the discovery document (which Browser follows) names 7687/7474.
            "server.bolt.advertised_address": f"127.0.0.1:{s.bolt_port}",
            "server.http.advertised_address": f"127.0.0.1:{s.http_port}",
            "server.https.enabled": "false",
            "dbms.security.auth_enabled": str(auth).lower(),
            "dbms.usage_report.enabled": "false",
            "server.memory.pagecache.size": s.pagecache,
            "server.directories.data": str(home / "data"),
            "server.directories.logs": str(home / "logs"),
            "server.directories.run": str(home / "run"),
            "server.directories.plugins": str(home / "plugins"),
            "server.directories.import": str(home / "import"),
        }
        header = "# Written by `flowstate neo4j start` at every start; edit settings instead.\n"
        return header + "".join(f"{k}={v}\n" for k, v in lines.items())

    def _set_initial_password(self, java: Path, jars: list[Path], password: str) -> None:
        # Neo4j applies an initial password only before the system database first exists.
        if (self.home / "data" / "databases" / "system").exists():
            if (self.home / "run" / "auth-initialised").exists():
                return
            raise LocalServerError(
                f"The data folder {self.home} was first started without a password, so Neo4j "
                "would ignore a new one. Start without --password, or use a fresh data folder "
                "(FLOWSTATE_LOCAL_DATA_DIR)."
            )
        env = {**os.environ, "NEO4J_HOME": str(self.home), "NEO4J_CONF": str(self.home / "conf")}
        command = [str(java), "-cp", _classpath(jars), ADMIN_CLASS]
        command += ["dbms", "set-initial-password", password]
        result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            raise LocalServerError(f"Setting the initial password failed: {result.stderr.strip()}")
        (self.home / "run" / "auth-initialised").touch()

    def _launch(self, java: Java, jars: list[Path]) -> subprocess.Popen[bytes]:
        s, line = self.settings, line_for(self.settings.neo4j_version)
        command = [str(java.executable), f"-Xms{s.heap}", f"-Xmx{s.heap}"]
        command += [*line.jvm_flags(java.major), "-cp", _classpath(jars), line.main_class]
        command += [f"--home-dir={self.home}"]
        command += [f"--config-dir={self.home / 'conf'}", "--console-mode"]
        log = self.console_log.open("ab")
        try:
            # A session of its own, so the server outlives this process and ignores its signals.
            return subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                cwd=self.home, start_new_session=True,
            )  # fmt: skip
        except OSError as e:
            raise LocalServerError(f"Could not launch Neo4j with {java.executable}: {e}") from e
        finally:
            log.close()

    def _wait_ready(self, proc: subprocess.Popen[bytes]) -> None:
        deadline = time.monotonic() + self.settings.start_timeout_s
        while time.monotonic() < deadline:
            code = proc.poll()
            if code is not None:
                self.state_file.unlink(missing_ok=True)
                raise LocalServerError(
                    f"Neo4j exited during start (exit code {code}). Last lines of "
                    f"{self.console_log}:\n{self.log_tail(20)}"
                )
            if bolt_answers(self.settings.bolt_port) and http_get(self.settings.http_url):
                return
            time.sleep(0.25)
        proc.kill()
        proc.wait()
        self.state_file.unlink(missing_ok=True)
        raise LocalServerError(
            f"Neo4j did not answer on Bolt port {self.settings.bolt_port} within "
            f"{self.settings.start_timeout_s:.0f}s. Last lines of {self.console_log}:\n"
            f"{self.log_tail(20)}"
        )


def _classpath(jars: list[Path]) -> str:
    return os.pathsep.join(str(j) for j in jars)
