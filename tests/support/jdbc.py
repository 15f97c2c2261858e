"""Where the pgjdbc driver jar is: the newest in the local Maven repository, else Debian's
libpostgresql-jdbc-java (scripts/lib/setup.sh installs that one when neither is there)."""

from __future__ import annotations

import glob
import os


def pgjdbc_jar() -> str | None:
    maven = sorted(glob.glob(os.path.expanduser("~/.m2/repository/org/postgresql/postgresql/*/postgresql-*.jar")),
                   key=lambda p: [int(x) if x.isdigit() else 0 for x in os.path.basename(os.path.dirname(p)).split(".")])
    if maven:
        return maven[-1]
    debian = "/usr/share/java/postgresql.jar"
    return debian if os.path.exists(debian) else None
