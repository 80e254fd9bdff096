"""Real servers for the serving tests, started by the tests on 127.0.0.1 and stopped by pid:
Postgres (Debian's package: ``initdb`` and ``postgres``) and ``git daemon``.

    with Postgres(folder) as pg:           # pg.url("db"), pg.create("db"), pg.restart()
    with GitDaemon(folder) as daemon:      # daemon.base ("git://127.0.0.1:PORT/"), daemon.repos

Postgres refuses to run as root; as root the tests run it as the ``postgres`` user (made by
Debian's package) through ``runuser``. ``missing()`` says what is not installed, for a skip
with a message (``.ci/run`` installs both, so there they run).
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, seconds: float = 20.0, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        with socket.socket() as s:
            s.settimeout(0.2)
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {seconds:g} s")


def pg_bin() -> Path | None:
    """The folder of Postgres's server programs, or None."""
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    folders = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
    return Path(folders[-1]) if folders and (Path(folders[-1]) / "initdb").exists() else None


def missing() -> str | None:
    """What the serving tests need and this machine lacks, or None."""
    if pg_bin() is None:
        return "Postgres is not installed (apt-get install postgresql; .ci/run does)"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root needs runuser to start Postgres as another user"
    if subprocess.run(["git", "daemon", "--help"], capture_output=True).returncode not in (0, 1, 129):
        return "git daemon is not installed"
    try:
        import procrastinate  # noqa: F401
        import psycopg  # noqa: F401
    except ImportError:
        return 'the serving extra is not installed (pip install -e ".[server]")'
    return None


class Postgres:
    """A throwaway Postgres cluster in a folder of its own, on a free port of 127.0.0.1."""

    def __init__(self):
        self.folder = Path(tempfile.mkdtemp(prefix="scene-pg-"))
        os.chmod(self.folder, 0o777)      # the postgres user writes its cluster here
        self.data = self.folder / "data"
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self._as = (["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else [])

    def __enter__(self) -> Postgres:
        binary = pg_bin()
        assert binary is not None, missing()
        subprocess.run([*self._as, str(binary / "initdb"), "-D", str(self.data), "-U",
                        "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"],
                       check=True, capture_output=True)
        self.start()
        return self

    def start(self) -> None:
        binary = pg_bin()
        log = open(self.folder / "log", "a")   # noqa: SIM115 (the server writes it while it runs)
        self.proc = subprocess.Popen(
            [*self._as, str(binary / "postgres"), "-D", str(self.data), "-k", str(self.folder),
             "-h", "127.0.0.1", "-p", str(self.port), "-c", "fsync=off",
             "-c", "synchronous_commit=off", "-c", "max_connections=200"],
            stdout=log, stderr=log, start_new_session=True)
        _wait_port(self.port, proc=self.proc)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:     # listening is not yet accepting
            if subprocess.run(["pg_isready", "-q", "-h", "127.0.0.1", "-p", str(self.port)]
                              ).returncode == 0:
                return
            time.sleep(0.1)

    def stop(self, fast: bool = True) -> None:
        if self.proc is None:
            return
        pid = self._postmaster_pid()
        if pid:
            os.kill(pid, signal.SIGINT if fast else signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def _postmaster_pid(self) -> int | None:
        try:
            return int((self.data / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def create(self, database: str) -> str:
        """A new empty database; returns its address."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{database}"')
        return self.url(database)

    def __exit__(self, *exc) -> None:
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


class GitDaemon:
    """``git daemon`` serving the bare repositories under ``repos`` on 127.0.0.1, pushes on."""

    def __init__(self, folder: Path):
        self.repos = Path(folder) / "repos"
        self.repos.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def base(self) -> str:
        return f"git://127.0.0.1:{self.port}/"

    def __enter__(self) -> GitDaemon:
        self.start()
        return self

    def start(self) -> None:
        self.proc = subprocess.Popen(
            ["git", "daemon", "--reuseaddr", f"--base-path={self.repos}", "--export-all",
             "--enable=receive-pack", "--listen=127.0.0.1", f"--port={self.port}",
             str(self.repos)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        _wait_port(self.port, proc=self.proc)

    def stop(self) -> None:
        if self.proc is not None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=10)
            self.proc = None

    def __exit__(self, *exc) -> None:
        self.stop()
