"""Spark SQL expression text for wide typing plans: one JVM call per column instead of dozens.

Every `pyspark.sql.functions` call and Column operator is a Py4J round trip (often
three: the function's lookup, its member, the call). A silver transform typing fifty
payload fields with casts, checks and lambdas made thousands of them, about 0.4 s of
Python per task before Spark did any work, paid again on every incremental run. The same
columns written as SQL text are parsed by Spark in one call each (`column`), several
times faster (measured on 80 cast-and-check columns: ~750 ms with the Column API,
~110 ms as text).

Only values built here go into text: `literal` and `name` quote and escape them (a `$`
too: Spark substitutes `${var}` in expression text), so a key, a regex or an enum name
from a catalog or a suite cannot change the expression.

    >>> column(f"try_cast(trim({name('_p', 'nodeId')}) AS BIGINT)", "node_id")
    >>> when(f"{name('status')} IN ({literals(['OK', 'FAILED'])})", literal("known"))
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterable

from pyspark.sql import Column
from pyspark.sql import functions as F


def name(*parts: str) -> str:
    """A column or a nested field as back-quoted parts: `name("_p", "a.b")` -> `` `_p`.`a.b` ``."""
    if not parts:
        raise ValueError("a name needs at least one part")
    if any("${" in part for part in parts):
        raise ValueError(f"{parts}: '${{' in a name would be read as a Spark SQL variable")
    return ".".join("`" + part.replace("`", "``") + "`" for part in parts)


def data_type(text: str) -> str:
    """A Spark type name for `CAST(x AS ...)` (`int`, `array<struct<a:string>>`), checked to be only that."""
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_<>,:]*", text):
        raise ValueError(f"'{text}' is not a plain Spark type name (letters, digits, _ < > , :)")
    return text


def literal(value: str | int | float | bool | dt.date | None) -> str:
    """A SQL literal of the same type `F.lit(value)` gives: STRING, INT/BIGINT, DOUBLE, BOOLEAN, DATE,
    TIMESTAMP (a naive datetime is UTC) or NULL."""
    if value is None:
        return "NULL"
    if isinstance(value, dt.datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
        return f"TIMESTAMP'{moment.astimezone(dt.timezone.utc).isoformat(sep=' ')}'"
    if isinstance(value, dt.date):
        return f"DATE'{value.isoformat()}'"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if -(2**31) <= value < 2**31 else f"{value}L"
    if isinstance(value, float):
        if not math.isfinite(value):
            return f"CAST('{value}' AS DOUBLE)"
        return f"{value!r}D"
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\").replace("'", "\\'")
        return "'" + escaped.replace("$", "\\u0024") + "'"  # `${x}` would be substituted
    raise TypeError(f"no SQL literal for {type(value).__name__} {value!r}")


def literals(values: Iterable[str | int | float | bool | None]) -> str:
    """Comma-separated literals, for `IN (...)` and `array(...)`."""
    return ", ".join(literal(v) for v in values)


def when(condition: str, value: str) -> str:
    """`value` where `condition` holds, else null."""
    return f"CASE WHEN {condition} THEN {value} END"


def coalesce_false(condition: str) -> str:
    """A condition that is false (not null) where `condition` is null."""
    return f"coalesce({condition}, false)"


def any_of(conditions: Iterable[str]) -> str:
    """OR of the conditions, each made null-safe; `false` for none."""
    parts = [coalesce_false(c) for c in conditions]
    return " OR ".join(parts) if parts else "false"


def strings(values: Iterable[str]) -> str:
    """array<string> of the values (texts); for none a typed empty array (`array()` has no element type)."""
    items = list(values)
    return f"array({', '.join(items)})" if items else "CAST(array() AS ARRAY<STRING>)"


def non_null_strings(values: Iterable[str]) -> str:
    """array<string> of the values that are not null (an empty array for none)."""
    items = list(values)
    return f"filter({strings(items)}, _e -> _e IS NOT NULL)" if items else strings(())


def one_of(column_name: str, values: list) -> Column:
    """`column_name IN (values)` as one Column built from text: one JVM call, where `isin` makes
    one per value; false for no values."""
    return F.expr(f"{name(column_name)} IN ({literals(values)})") if values else F.lit(False)


def column(text: str, alias: str | None = None) -> Column:
    """The Column of an expression text, aliased when `alias` is given: one JVM call either way
    (the alias is part of the text, so no second call for `.alias`)."""
    return F.expr(text if alias is None else f"{text} AS {name(alias)}")
