"""Cluster and cluster replica statements, read from the dialect's tokens (run by
server/adapter/clusters.py).

    CREATE CLUSTER name (SIZE = 'n' [, REPLICATION FACTOR = k])      -- managed: replicas r1..rk
    CREATE CLUSTER name REPLICAS (r1 (SIZE = 'n'), r2 (SIZE = 'n'))  -- unmanaged
    ALTER CLUSTER [IF EXISTS] name SET (REPLICATION FACTOR = k)
    DROP CLUSTER [IF EXISTS] name [, ...] [CASCADE | RESTRICT]
    CREATE CLUSTER REPLICA cluster.replica (SIZE = 'n')              -- also without parentheses or '='
    DROP CLUSTER REPLICA [IF EXISTS] cluster.replica [, ...]

A replica's SIZE is its number of dataflow workers (checked when the statement runs). Whether a
named cluster exists is also decided then, against the durable cluster list.

>>> from planner.dialect import parse_one_statement
>>> parse_one_statement("CREATE CLUSTER c2 (SIZE = '1', REPLICATION FACTOR = 2)")
CreateCluster(name='c2', size='1', replication_factor=2, replicas=None)
>>> parse_one_statement("CREATE CLUSTER c3 REPLICAS (a (SIZE '1'), b (SIZE = '2'))")
CreateCluster(name='c3', size=None, replication_factor=None, replicas=(('a', '1'), ('b', '2')))
>>> parse_one_statement("DROP CLUSTER IF EXISTS c2 CASCADE")
DropCluster(names=('c2',), if_exists=True, cascade=True)
>>> parse_one_statement("CREATE CLUSTER REPLICA quickstart.r2 (SIZE = '2')")
CreateClusterReplica(cluster='quickstart', name='r2', size='2')
>>> parse_one_statement("DROP CLUSTER REPLICA IF EXISTS quickstart.r2")
DropClusterReplica(replicas=(('quickstart', 'r2'),), if_exists=True)
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot.tokens import TokenType

from dataflow.errors import SqlError, SqlState

_REPLICA_OPTIONS_HINT = "Slipstream's replicas take one option, SIZE (a number of workers)."
_CLUSTER_OPTIONS_HINT = ("Slipstream's clusters take SIZE (a number of workers per replica) and "
                         "REPLICATION FACTOR, or REPLICAS (...).")


@dataclass(frozen=True)
class CreateCluster:
    name: str
    size: str | None  # managed: every replica's size
    replication_factor: int | None  # managed: how many replicas (default 1)
    replicas: tuple[tuple[str, str], ...] | None  # unmanaged: (name, size) per replica


@dataclass(frozen=True)
class DropCluster:
    names: tuple[str, ...]
    if_exists: bool
    cascade: bool


@dataclass(frozen=True)
class AlterCluster:
    name: str
    if_exists: bool
    replication_factor: int


@dataclass(frozen=True)
class CreateClusterReplica:
    cluster: str
    name: str
    size: str


@dataclass(frozen=True)
class DropClusterReplica:
    replicas: tuple[tuple[str, str], ...]  # (cluster, replica)
    if_exists: bool


CLUSTER_STATEMENTS = (CreateCluster, DropCluster, AlterCluster, CreateClusterReplica, DropClusterReplica)


def _replica_name(c) -> tuple[str, str]:
    from planner.dialect import syntax_error_at

    name = c.name()
    if len(name) != 2:
        raise SqlError(SqlState.SYNTAX_ERROR, "a cluster replica is named cluster.replica",
                       hint=f'for example quickstart.{name[-1]}') if len(name) == 1 else syntax_error_at(c.peek())
    return name[0], name[1]


def _options(c, allowed: tuple[str, ...], hint: str) -> dict[str, str]:
    """`[(] NAME [=] value [, ...] [)]` where a NAME is one or two words (REPLICATION FACTOR)."""
    from planner.dialect import syntax_error_at

    parenthesized = c.accept_type(TokenType.L_PAREN) is not None
    found: dict[str, str] = {}
    while True:
        t = c.peek()
        if t is None or t.token_type in (TokenType.R_PAREN, TokenType.COMMA, TokenType.STRING, TokenType.NUMBER):
            raise syntax_error_at(t)
        name = next((o for o in allowed if all(c.is_word(w, k) for k, w in enumerate(o.split()))), None)
        if name is None:
            words = t.text.upper()
            nxt = c.peek(1)
            if nxt is not None and nxt.token_type not in (TokenType.EQ, TokenType.STRING, TokenType.NUMBER,
                                                          TokenType.L_PAREN, TokenType.R_PAREN, TokenType.COMMA):
                words += " " + nxt.text.upper()
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, f"option {words} not yet supported", hint=hint)
        c.accept(*name.split())
        if name in found:
            raise SqlError(SqlState.SYNTAX_ERROR, f"option {name} specified more than once")
        c.accept_type(TokenType.EQ)
        found[name] = c.value()
        if not c.accept_type(TokenType.COMMA):
            break
    if parenthesized:
        c.expect_type(TokenType.R_PAREN)
    return found


def _factor(text: str) -> int:
    if not text.strip().isdigit():
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f"invalid REPLICATION FACTOR: {text}",
                       detail="The replication factor is a number of replicas: 1, 2, ...")
    return int(text)


def parse_create_cluster(c) -> CreateCluster | CreateClusterReplica:
    """After CREATE: CLUSTER [REPLICA] ..."""
    c.expect("CLUSTER")
    if c.accept("REPLICA"):
        cluster, name = _replica_name(c)
        size = _options(c, ("SIZE",), _REPLICA_OPTIONS_HINT).get("SIZE")
        c.expect_end()
        if size is None:
            raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "SIZE option is required")
        return CreateClusterReplica(cluster, name, size)
    name = c.ident()
    if c.accept("REPLICAS"):
        c.expect_type(TokenType.L_PAREN)
        replicas: list[tuple[str, str]] = []
        if c.peek() is not None and c.peek().token_type != TokenType.R_PAREN:
            while True:
                replica = c.ident()
                size = _options(c, ("SIZE",), _REPLICA_OPTIONS_HINT).get("SIZE")
                if size is None:
                    raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "SIZE option is required")
                replicas.append((replica, size))
                if not c.accept_type(TokenType.COMMA):
                    break
        c.expect_type(TokenType.R_PAREN)
        c.expect_end()
        return CreateCluster(name, None, None, tuple(replicas))
    options = _options(c, ("SIZE", "REPLICATION FACTOR"), _CLUSTER_OPTIONS_HINT)
    c.expect_end()
    if "SIZE" not in options:
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "SIZE option is required",
                       hint="CREATE CLUSTER name (SIZE = '<workers>'), or REPLICAS (...) to name each replica.")
    factor = _factor(options["REPLICATION FACTOR"]) if "REPLICATION FACTOR" in options else None
    return CreateCluster(name, options["SIZE"], factor, None)


def parse_alter_cluster(c) -> AlterCluster:
    """After ALTER: CLUSTER [IF EXISTS] name SET (REPLICATION FACTOR = k)."""
    from planner.dialect import syntax_error_at

    c.expect("CLUSTER")
    if_exists = c.accept("IF", "EXISTS")
    name = c.ident()
    if not c.accept("SET"):
        t = c.peek()
        if t is not None and t.text.upper() in ("RENAME", "RESET", "OWNER", "SWAP"):
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, f"ALTER CLUSTER ... {t.text.upper()} not yet supported")
        raise syntax_error_at(t)
    options = _options(c, ("REPLICATION FACTOR", "SIZE"), "ALTER CLUSTER sets REPLICATION FACTOR.")
    c.expect_end()
    if "SIZE" in options:
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "changing a cluster's SIZE not yet supported",
                       hint="Create a cluster of the new size and move the objects to it.")
    return AlterCluster(name, bool(if_exists), _factor(options["REPLICATION FACTOR"]))


def parse_drop_cluster(c) -> DropCluster | DropClusterReplica:
    """After DROP: CLUSTER [REPLICA] ..."""
    c.expect("CLUSTER")
    if c.accept("REPLICA"):
        if_exists = c.accept("IF", "EXISTS")
        replicas = [_replica_name(c)]
        while c.accept_type(TokenType.COMMA):
            replicas.append(_replica_name(c))
        c.expect_end()
        return DropClusterReplica(tuple(replicas), bool(if_exists))
    if_exists = c.accept("IF", "EXISTS")
    names = [c.ident()]
    while c.accept_type(TokenType.COMMA):
        names.append(c.ident())
    cascade = bool(c.accept("CASCADE"))
    if not cascade:
        c.accept("RESTRICT")
    c.expect_end()
    return DropCluster(tuple(names), bool(if_exists), cascade)


def check_cluster(name: str) -> None:
    """`IN CLUSTER name` of a source or sink: sources are ingested by environmentd itself, not
    by a cluster's replicas, and sinks read through quickstart, so the only cluster they name is
    the default one."""
    if name != "quickstart":
        raise SqlError(SqlState.UNDEFINED_OBJECT, f"unknown cluster '{name}'",
                       hint="Sources are ingested by Slipstream itself and sinks read through quickstart; "
                            "their IN CLUSTER may name quickstart or be left out.")
