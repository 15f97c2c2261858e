"""StartupMessage parameters -> session user, database and variables.

`options` carries command-line style settings (`-c name=value`, `--name=value`; backslash
escapes a space), as libpq's PGOPTIONS does. `_pq_.*` names are protocol extensions we do not
support: they are reported back in NegotiateProtocolVersion.

>>> parse_options(r"-c search_path=a,b --cluster=quickstart -c application_name=my\\ app")
{'search_path': 'a,b', 'cluster': 'quickstart', 'application_name': 'my app'}
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dataflow.errors import SqlError
from server.pgwire.protocol import BodyReader, ProtocolViolation

# We speak only UTF-8 and ISO dates, whatever the client asked for at startup.
_FIXED_VARS = {"client_encoding": "UTF8", "datestyle": "ISO, MDY"}


@dataclass
class StartupParameters:
    user: str
    database: str
    vars: dict[str, str]
    unrecognized: list[str] = field(default_factory=list)


def _split_options(s: str) -> list[str]:
    words: list[str] = []
    cur: list[str] = []
    escaped = False
    for ch in s:
        if escaped:
            cur.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch.isspace():
            if cur:
                words.append("".join(cur))
                cur = []
        else:
            cur.append(ch)
    if cur:
        words.append("".join(cur))
    return words


def parse_options(s: str) -> dict[str, str]:
    out: dict[str, str] = {}
    words = _split_options(s)
    i = 0
    while i < len(words):
        w = words[i]
        setting = None
        if w == "-c" and i + 1 < len(words):
            setting = words[i + 1]
            i += 1
        elif w.startswith("-c") and len(w) > 2:
            setting = w[2:]
        elif w.startswith("--"):
            setting = w[2:]
        if setting is None or "=" not in setting:
            raise SqlError("42601", f"invalid command-line argument for server process: {w}",
                           hint="Use -c name=value or --name=value.", severity="FATAL")
        name, value = setting.split("=", 1)
        out[name.strip().lower().replace("-", "_")] = value
        i += 1
    return out


def parse_startup_parameters(body: BodyReader) -> StartupParameters:
    vars: dict[str, str] = {}
    unrecognized: list[str] = []
    options: dict[str, str] = {}
    while True:
        if body.remaining() == 0:
            raise ProtocolViolation("invalid startup packet layout: expected terminator as last byte")
        name = body.cstring()
        if name == "":
            break
        value = body.cstring()
        low = name.lower()
        if low.startswith("_pq_."):
            unrecognized.append(name)
        elif low == "options":
            options = parse_options(value)
        else:
            vars[low] = value
    vars.update(options)
    user = vars.get("user", "")
    if not user:
        raise SqlError("28000", "no PostgreSQL user name specified in startup packet", severity="FATAL")
    vars.setdefault("database", user)
    database = vars["database"] or user
    vars["database"] = database
    for name, value in _FIXED_VARS.items():
        vars[name] = value
    return StartupParameters(user, database, vars, unrecognized)
