"""Throw-away TLS material for tests, made with the openssl CLI: a CA and a server certificate
for `localhost` / 127.0.0.1 signed by it (RSA 2048, SHA-256, valid two days).

    certs = make_certs(tmp_path)      # Certs(ca=.../ca.crt, cert=.../server.crt, key=.../server.key)
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Certs:
    ca: Path
    cert: Path
    key: Path


def openssl_available() -> bool:
    return shutil.which("openssl") is not None


def make_certs(directory: Path, hostname: str = "localhost") -> Certs:
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)

    def run(*argv: str) -> None:
        subprocess.run(["openssl", *argv], cwd=d, check=True, capture_output=True, timeout=60)

    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-sha256",
        "-subj", "/CN=Slipstream test CA", "-keyout", "ca.key", "-out", "ca.crt")
    run("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={hostname}",
        "-keyout", "server.key", "-out", "server.csr")
    (d / "ext.cnf").write_text(f"subjectAltName=DNS:{hostname},IP:127.0.0.1\n"
                               "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n"
                               "extendedKeyUsage=serverAuth\n")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
        "-days", "2", "-sha256", "-extfile", "ext.cnf", "-out", "server.crt")
    os.chmod(d / "server.key", 0o600)
    return Certs(ca=d / "ca.crt", cert=d / "server.crt", key=d / "server.key")
