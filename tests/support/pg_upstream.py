"""A real PostgreSQL 15 with logical replication on: the upstream of the PostgreSQL-source tests
and benchmark (Slipstream ingests its changes through a replication slot).

Started like the oracle (tests/support/pg_oracle.py: initdb, unprivileged when root), with
wal_level=logical and room for slots and WAL senders. `password_auth()` switches TCP logins to
SCRAM-SHA-256 (or md5) after creating a password role, so the tests exercise the source's own
authentication code; `restart()` stops and starts it on the same port and data directory.

    pg = PgUpstream.start()
    pg.password_auth("repl", "s3cret")     # TCP logins now need the password
    pg.restart()
    pg.stop()
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.support.pg_oracle import SERVICE_USER, _as_service_user, _ensure_service_user, find_pg_bin
from tests.support.ports import free_port


@dataclass
class PgUpstream:
    host: str
    port: int
    data_dir: Path
    log_file: Path
    user: str
    database: str = "postgres"

    @property
    def dsn(self) -> str:
        return f"postgresql://{self.user}@{self.host}:{self.port}/{self.database}"

    def _options(self) -> str:
        return (f"-c listen_addresses=127.0.0.1 -c port={self.port} -c fsync=off "
                f"-c full_page_writes=off -c unix_socket_directories={self.data_dir.parent} "
                f"-c max_connections=100 -c wal_level=logical -c max_replication_slots=10 "
                f"-c max_wal_senders=10 -c wal_sender_timeout=60s")

    @classmethod
    def start(cls) -> "PgUpstream":
        base_dir = Path(tempfile.mkdtemp(prefix="slipstream-pg-upstream-"))
        data_dir = base_dir / "pgdata"
        user = pwd.getpwuid(os.geteuid()).pw_name
        if os.geteuid() == 0:
            svc = _ensure_service_user()
            user = SERVICE_USER
            os.chown(base_dir, svc.pw_uid, svc.pw_gid)
        subprocess.run(
            _as_service_user([find_pg_bin("initdb"), "-D", str(data_dir), "-U", user,
                              "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"]),
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        pg = cls("127.0.0.1", free_port(), data_dir, base_dir / "postgres.log", user)
        pg.start_server()
        return pg

    def start_server(self) -> None:
        result = subprocess.run(
            _as_service_user([find_pg_bin("pg_ctl"), "-D", str(self.data_dir), "-l", str(self.log_file),
                              "-o", self._options(), "-w", "-t", "60", "start"]),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if result.returncode != 0:
            log = self.log_file.read_text() if self.log_file.exists() else ""
            raise RuntimeError(f"pg_ctl start failed:\n{result.stdout}\n{log}")

    def stop_server(self, mode: str = "fast") -> None:
        subprocess.run(_as_service_user([find_pg_bin("pg_ctl"), "-D", str(self.data_dir), "-m", mode,
                                         "-w", "stop"]), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def restart(self, mode: str = "fast") -> None:
        self.stop_server(mode)
        self.start_server()

    def password_auth(self, role: str, password: str, method: str = "scram-sha-256") -> None:
        """Create a replication role with a password and require `method` for TCP logins (the
        superuser keeps trust over the Unix socket and loopback for the tests' own queries)."""
        import psycopg
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute(f"SET password_encryption = '{'md5' if method == 'md5' else 'scram-sha-256'}'")
            conn.execute(f"CREATE ROLE {role} LOGIN REPLICATION SUPERUSER PASSWORD '{password}'")
        hba = self.data_dir / "pg_hba.conf"
        lines = [f"local all all trust", f"host all {self.user} 127.0.0.1/32 trust",
                 f"host replication {self.user} 127.0.0.1/32 trust",
                 f"host all all 127.0.0.1/32 {method}", f"host replication all 127.0.0.1/32 {method}"]
        subprocess.run(_as_service_user(["sh", "-c", f"cat > {hba}"]), input="\n".join(lines) + "\n",
                       text=True, check=True)
        subprocess.run(_as_service_user([find_pg_bin("pg_ctl"), "-D", str(self.data_dir), "reload"]),
                       check=True, stdout=subprocess.DEVNULL)

    def stop(self) -> None:
        self.stop_server("immediate")
        shutil.rmtree(self.data_dir.parent, ignore_errors=True)
