"""SQL to dataflow plans: a sqlglot dialect, name resolution and typing, lowering, EXPLAIN.

    from planner import parse, plan_statement, describe_statement
    stmt = parse("SELECT a, count(*) FROM t GROUP BY a")[0]
    plan = plan_statement(catalog, stmt)        # -> planner.statements.SelectPlan
"""

from planner.parse import Statement, parse
from planner.planning import describe_statement, plan_statement, result_columns
from planner.show import show_columns

__all__ = ["Statement", "parse", "plan_statement", "describe_statement", "result_columns",
           "show_columns"]
