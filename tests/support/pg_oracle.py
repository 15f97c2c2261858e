"""A real, throw-away PostgreSQL 15 server: the oracle the end-to-end tests compare against.

initdb refuses to run as root, so when the tests run as root the cluster is created and started
as the unprivileged `postgres` user (created with useradd if missing) through runuser/su.

    oracle = PgOracle.start()          # initdb + pg_ctl start on a free loopback port, fsync=off
    oracle.dsn                          # 'postgresql://postgres@127.0.0.1:54321/postgres'
    oracle.stop()
"""

from __future__ import annotations

import glob
import os
import pwd
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.support.ports import free_port

SERVICE_USER = "postgres"


def find_pg_bin(name: str) -> str:
    """A PostgreSQL binary on PATH or under /usr/lib/postgresql/<version>/bin (newest first)."""
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
                        key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0,
                        reverse=True)
    if candidates:
        return candidates[0]
    raise FileNotFoundError(f"PostgreSQL binary {name!r} not found on PATH or in "
                            "/usr/lib/postgresql/*/bin; run scripts/test (it installs it)")


def _ensure_service_user() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(SERVICE_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/bin/sh",
                        SERVICE_USER], check=True)
        return pwd.getpwnam(SERVICE_USER)


def _as_service_user(argv: list[str]) -> list[str]:
    """Wrap a command so that it runs unprivileged when we are root."""
    if os.geteuid() != 0:
        return argv
    if shutil.which("runuser"):
        return ["runuser", "-u", SERVICE_USER, "--", *argv]
    return ["su", SERVICE_USER, "-s", "/bin/sh", "-c", shlex.join(argv)]


@dataclass
class PgOracle:
    host: str
    port: int
    data_dir: Path
    log_file: Path
    user: str
    database: str = "postgres"

    @property
    def dsn(self) -> str:
        return f"postgresql://{self.user}@{self.host}:{self.port}/{self.database}"

    @classmethod
    def start(cls) -> "PgOracle":
        # Its own directory under /tmp (not pytest's 0700 tree), so the service user can own it.
        base_dir = Path(tempfile.mkdtemp(prefix="slipstream-pg-oracle-"))
        data_dir = base_dir / "pgdata"
        log_file = base_dir / "postgres.log"
        user = pwd.getpwuid(os.geteuid()).pw_name
        if os.geteuid() == 0:
            svc = _ensure_service_user()
            user = SERVICE_USER
            os.chown(base_dir, svc.pw_uid, svc.pw_gid)
        subprocess.run(
            _as_service_user([find_pg_bin("initdb"), "-D", str(data_dir), "-U", user,
                              "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"]),
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        port = free_port()
        options = (f"-c listen_addresses=127.0.0.1 -c port={port} -c fsync=off "
                   f"-c synchronous_commit=off -c full_page_writes=off "
                   f"-c unix_socket_directories={base_dir} -c max_connections=100")
        result = subprocess.run(
            _as_service_user([find_pg_bin("pg_ctl"), "-D", str(data_dir), "-l", str(log_file),
                              "-o", options, "-w", "-t", "60", "start"]),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if result.returncode != 0:
            log = log_file.read_text() if log_file.exists() else ""
            raise RuntimeError(f"pg_ctl start failed:\n{result.stdout}\n{log}")
        return cls(host="127.0.0.1", port=port, data_dir=data_dir, log_file=log_file, user=user)

    def stop(self) -> None:
        subprocess.run(
            _as_service_user([find_pg_bin("pg_ctl"), "-D", str(self.data_dir), "-m", "immediate",
                              "-w", "stop"]),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(self.data_dir.parent, ignore_errors=True)
