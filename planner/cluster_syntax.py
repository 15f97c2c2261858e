"""Cluster replica statements, read from the dialect's tokens (run by server/adapter/clusters.py).

    CREATE CLUSTER REPLICA cluster.replica (SIZE = 'n')     -- also without parentheses or '='
    DROP CLUSTER REPLICA [IF EXISTS] cluster.replica [, ...]

Slipstream has one compute cluster, `quickstart`, with any number of replicas; a replica's SIZE
is its number of dataflow workers. Creating or dropping whole clusters is refused with 0A000.

>>> from planner.dialect import parse_one_statement
>>> parse_one_statement("CREATE CLUSTER REPLICA quickstart.r2 (SIZE = '2')")
CreateClusterReplica(cluster='quickstart', name='r2', size='2')
>>> parse_one_statement("DROP CLUSTER REPLICA IF EXISTS quickstart.r2")
DropClusterReplica(replicas=(('quickstart', 'r2'),), if_exists=True)
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot.tokens import TokenType

from dataflow.errors import SqlError, SqlState

ONE_CLUSTER_HINT = ("Slipstream has one compute cluster, quickstart; add replicas to it with "
                    "CREATE CLUSTER REPLICA quickstart.<name> (SIZE = '<workers>').")


@dataclass(frozen=True)
class CreateClusterReplica:
    cluster: str
    name: str
    size: str


@dataclass(frozen=True)
class DropClusterReplica:
    replicas: tuple[tuple[str, str], ...]  # (cluster, replica)
    if_exists: bool


CLUSTER_STATEMENTS = (CreateClusterReplica, DropClusterReplica)


def _replica_name(c) -> tuple[str, str]:
    from planner.dialect import syntax_error_at

    name = c.name()
    if len(name) != 2:
        raise SqlError(SqlState.SYNTAX_ERROR, "a cluster replica is named cluster.replica",
                       hint=f'for example quickstart.{name[-1]}') if len(name) == 1 else syntax_error_at(c.peek())
    return name[0], name[1]


def parse_create_cluster(c) -> CreateClusterReplica:
    """After CREATE: CLUSTER REPLICA ... (CLUSTER alone is refused)."""
    from planner.dialect import syntax_error_at

    c.expect("CLUSTER")
    if not c.accept("REPLICA"):
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "CREATE CLUSTER not yet supported", hint=ONE_CLUSTER_HINT)
    cluster, name = _replica_name(c)
    parenthesized = c.accept_type(TokenType.L_PAREN) is not None
    size = None
    while True:
        if not c.accept("SIZE"):
            t = c.peek()
            if t is not None and t.token_type not in (TokenType.R_PAREN, TokenType.COMMA):
                raise SqlError(SqlState.FEATURE_NOT_SUPPORTED,
                               f"cluster replica option {t.text.upper()} not yet supported",
                               hint="Slipstream's replicas take one option, SIZE (a number of workers).")
            raise syntax_error_at(t)
        c.accept_type(TokenType.EQ)
        size = c.value()
        if not c.accept_type(TokenType.COMMA):
            break
    if parenthesized:
        c.expect_type(TokenType.R_PAREN)
    c.expect_end()
    return CreateClusterReplica(cluster, name, size)


def parse_drop_cluster(c) -> DropClusterReplica:
    """After DROP: CLUSTER REPLICA ... (CLUSTER alone is refused)."""
    c.expect("CLUSTER")
    if not c.accept("REPLICA"):
        raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "DROP CLUSTER not yet supported", hint=ONE_CLUSTER_HINT)
    if_exists = c.accept("IF", "EXISTS")
    replicas = [_replica_name(c)]
    while c.accept_type(TokenType.COMMA):
        replicas.append(_replica_name(c))
    c.expect_end()
    return DropClusterReplica(tuple(replicas), bool(if_exists))


def check_cluster(name: str) -> None:
    """`IN CLUSTER name` and the replica statements name the one cluster there is."""
    if name != "quickstart":
        raise SqlError(SqlState.UNDEFINED_OBJECT, f"unknown cluster '{name}'", hint=ONE_CLUSTER_HINT)
