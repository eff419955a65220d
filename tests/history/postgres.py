"""A throw-away PostgreSQL server for the history tests and benchmark: Debian's (or any)
PostgreSQL binaries, a fresh cluster in a temporary folder, a free port on 127.0.0.1.

PostgreSQL refuses to run as root, so as root the cluster belongs to the `postgres` user
(Debian's package creates it) and every server command runs through `runuser`; any other
user runs them as itself. Durability is switched off: the data dies with the test run.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

SERVER_USER = "postgres"


def bindir() -> Path | None:
    """Where initdb and pg_ctl are: PATH first, else the newest Debian version folder."""
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    versions = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0,
    )
    return Path(versions[-1]).parent if versions else None


def unavailable() -> str | None:
    """Why no server can be started here, or None when one can."""
    if bindir() is None:
        if os.geteuid() == 0:
            return None  # root could have installed it: the caller fails instead of skipping
        return "no PostgreSQL binaries (initdb) and not root to install them (.ci/run does)"
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def server() -> Iterator[str]:
    """Start a cluster; yield the URL of its `postgres` database; stop and delete it."""
    folder = bindir()
    if folder is None:
        raise RuntimeError(
            "PostgreSQL is not installed: apt-get install postgresql-15 (or postgresql)"
        )
    root = Path(tempfile.mkdtemp(prefix="infx-pg-"))
    prefix: list[str] = []
    if os.geteuid() == 0:
        shutil.chown(root, SERVER_USER, SERVER_USER)
        prefix = ["runuser", "-u", SERVER_USER, "--"]
    data, log = root / "data", root / "server.log"

    def run(*args: str) -> None:
        done = subprocess.run([*prefix, *args], capture_output=True, text=True, cwd=root)
        if done.returncode != 0:
            detail = done.stderr.strip() or done.stdout.strip()
            if log.exists():
                detail += "\n" + log.read_text()[-2000:]
            raise RuntimeError(f"{Path(args[0]).name} failed: {detail}")

    try:
        run(
            str(folder / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres",
            "-E", "UTF8", "--no-sync", "--locale=C",
        )  # fmt: skip
        port = _free_port()
        options = (
            f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
            " -c synchronous_commit=off -c full_page_writes=off -c max_connections=50"
        )
        run(str(folder / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-o", options, "start")
        try:
            yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
        finally:
            run(str(folder / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def create_database(url: str, name: str) -> str:
    """A new empty database on the server at `url`; its URL."""
    import psycopg

    base = url.rsplit("/", 1)[0]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{base}/{name}"
