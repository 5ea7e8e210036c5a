"""Which statements DuckDB answers exactly as Spark SQL does, and their text in DuckDB's dialect.

`lakehouse sql` takes Spark SQL. On a local warehouse DuckDB answers in about a second where a
Spark session takes many, so a statement goes to DuckDB when it is certain to give the same
answer, and to Spark SQL otherwise. The decision is conservative, an allow-list over the
statement's syntax tree as `sqlglot` reads Spark SQL:

- only queries (SELECT, WITH, set operations): SHOW, DESCRIBE and EXPLAIN print otherwise;
- only the syntax and functions listed below, whose results are the same in both engines
  (no `collect_set`, no map or struct access, no time travel such as `VERSION AS OF`, no LIKE
  escapes or string escapes: anything else is Spark SQL's);
- only the warehouse's tables and views (`<layer>.<table>`) and the query's own CTEs: an
  unknown name goes to Spark, whose error names it;
- every result column named alike: a column, an alias, `*` over one table, or `count(*)`
  (Spark calls it `count(1)`); any other unnamed expression goes to Spark.

sqlglot writes the query in DuckDB's dialect with Spark's semantics where they differ (nulls
first in ascending order, a Spark TIMESTAMP is DuckDB's TIMESTAMPTZ, CAST never fails). The
DuckDB session adds what is left to the result types (`pipelines.query.auto_session`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

DUCKDB = "DuckDB"
SPARK = "Spark SQL"

# sqlglot expression classes whose meaning is the same in Spark SQL and DuckDB
_STRUCTURE = {
    "Select", "From", "Join", "Where", "Group", "Having", "Order", "Ordered", "Limit", "Offset",
    "Subquery", "With", "CTE", "TableAlias", "Table", "Union", "Except", "Intersect", "Distinct",
    "Alias", "Column", "Identifier", "Star", "Literal", "Boolean", "Null", "Paren", "Exists",
}  # fmt: skip
_OPERATORS = {
    "EQ", "NEQ", "GT", "GTE", "LT", "LTE", "And", "Or", "Not", "Is", "In", "Between", "Like",
    "ILike", "Add", "Sub", "Mul", "Div", "Neg", "Case", "If", "Coalesce", "Nullif",
}  # fmt: skip
_FUNCTIONS = {
    "Count", "Sum", "Min", "Max", "Avg", "Lower", "Upper", "Length", "Trim", "Abs", "Extract",
    "Interval", "Var", "Cast", "TryCast", "DataType", "Window", "RowNumber", "Rank", "DenseRank",
}  # fmt: skip
ALLOWED = _STRUCTURE | _OPERATORS | _FUNCTIONS
ALLOWED_TYPES = {"TEXT", "VARCHAR", "BIGINT", "INT", "SMALLINT", "DOUBLE", "BOOLEAN", "DATE", "TIMESTAMPTZ"}
JOIN_KINDS = {"", "INNER", "OUTER", "CROSS"}
SPARK_COUNT_STAR = "count(1)"  # Spark's name for an unnamed count(*)
QUERY_START = {"select", "with", "("}


@dataclass(frozen=True)
class Translation:
    """A statement in DuckDB's dialect with the tables and views it reads, or, when DuckDB might
    answer otherwise, `sql` None and the reason."""

    sql: str | None
    tables: frozenset[str] = frozenset()
    reason: str = ""


def to_duckdb(statement: str, names: set[str]) -> Translation:
    """`statement` (Spark SQL) as DuckDB SQL when DuckDB gives the same answer, over the
    warehouse's `names` (`layer.table`, lower case)."""
    first = statement.lstrip().split(None, 1)[0].lower() if statement.strip() else ""
    if first not in QUERY_START and not first.startswith("("):
        return Translation(None, reason=f"only queries go to {DUCKDB}; {first.upper()} prints otherwise")
    tree = _parse(statement)
    if tree is None:
        return Translation(None, reason=f"not a query {DUCKDB} reads alike")
    reason = _unsupported(tree) or _unnamed(tree)
    if reason:
        return Translation(None, reason=reason)
    tables, reason = _tables(tree, names)
    if reason:
        return Translation(None, reason=reason)
    return Translation(_named_alike(tree).sql(dialect="duckdb"), frozenset(tables))


def _parse(statement: str):  # -> sqlglot.exp.Expression | None
    import sqlglot
    from sqlglot import exp

    logger = logging.getLogger("sqlglot")
    level = logger.level
    logger.setLevel(logging.CRITICAL)  # what it cannot read is Spark's to answer, not a warning
    try:
        tree = sqlglot.parse_one(statement, read="spark", error_level=sqlglot.ErrorLevel.RAISE)
    except sqlglot.errors.SqlglotError:
        return None
    finally:
        logger.setLevel(level)
    return tree if isinstance(tree, exp.Query) else None


def _unsupported(tree) -> str | None:
    """Why some part of the tree may answer otherwise in DuckDB, or None."""
    from sqlglot import exp

    for node in tree.walk():
        kind = type(node).__name__
        if kind not in ALLOWED:
            return f"{_shown(node)} is Spark SQL's to answer"
        if isinstance(node, exp.Literal) and node.is_string and "\\" in node.this:
            return "a string with a backslash reads otherwise in DuckDB"
        if isinstance(node, exp.DataType) and node.this.name not in ALLOWED_TYPES:
            return f"type {node.sql(dialect='spark')} is Spark SQL's to answer"
        if isinstance(node, exp.Join) and (node.kind or "").upper() not in JOIN_KINDS:
            return f"a {node.kind} JOIN is Spark SQL's to answer"
        if isinstance(node, exp.Window) and node.args.get("spec") is not None:
            return "a window frame is Spark SQL's to answer"
        if isinstance(node, exp.Star) and _star_over_a_join(node):
            return "* over a join names its columns otherwise in DuckDB"
        if isinstance(node, exp.Column) and isinstance(node.this, exp.Star):
            return "t.* is Spark SQL's to answer"
    return None


def _shown(node) -> str:
    text = node.sql(dialect="spark")
    return text if len(text) <= 40 else text[:39] + "…"


def _star_over_a_join(star) -> bool:
    from sqlglot import exp

    select = star.find_ancestor(exp.Select)
    return select is not None and bool(select.args.get("joins"))


def _outermost_select(tree):
    from sqlglot import exp

    while isinstance(tree, exp.SetOperation):
        tree = tree.left
    while isinstance(tree, exp.Subquery):
        tree = tree.this
    return tree if isinstance(tree, exp.Select) else None


def _unnamed(tree) -> str | None:
    """Why a result column might be named otherwise by DuckDB, or None."""
    from sqlglot import exp

    select = _outermost_select(tree)
    if select is None:
        return f"not a query {DUCKDB} names alike"
    for projection in select.expressions:
        if isinstance(projection, (exp.Column, exp.Alias, exp.Star)) or _is_count_star(projection):
            continue
        return (
            f"the result column {_shown(projection)} has no name (AS ...): {DUCKDB} would name it otherwise"
        )
    return None


def _is_count_star(node) -> bool:
    from sqlglot import exp

    return isinstance(node, exp.Count) and isinstance(node.this, exp.Star) and not node.args.get("distinct")


def _named_alike(tree):
    """The tree with an unnamed `count(*)` named as Spark names it."""
    from sqlglot import exp

    tree = tree.copy()
    select = _outermost_select(tree)
    for projection in list(select.expressions):
        if _is_count_star(projection):
            projection.replace(exp.alias_(projection.copy(), SPARK_COUNT_STAR, quoted=True))
    return tree


def _tables(tree, names: set[str]) -> tuple[set[str], str | None]:
    """The warehouse names the query reads, or why one of its tables is not for DuckDB."""
    from sqlglot import exp

    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    found = set()
    for table in tree.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier) or table.args.get("catalog"):
            return found, f"{_shown(table)} is Spark SQL's to read"
        layer, name = table.db.lower(), table.name.lower()
        if not layer and name in ctes:
            continue
        qualified = f"{layer}.{name}"
        if qualified not in names:
            return found, f"{qualified if layer else name} is not a table of the warehouse"
        found.add(qualified)
    return found, None
