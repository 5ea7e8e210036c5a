"""Gold layer: one module per gold table, each a pure builder declared as a `GoldTableSpec`.

Modules read nothing and write nothing: the runner hands `build` the relevant
silver rows of the groups a batch touched and replaces those groups in the table.
Shared pieces: `intervals` (the one SCD2 interval builder), `associations`
(association events of every source in the builder's input shape) and the column
helpers below.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

GROUP = "_group"  # the column `relevant` adds: the recompute unit of a row


def string_map(entries: dict[str, Column], base: Column | None = None) -> Column:
    """map<string,string> of `base` plus the non-null `entries` (an entry replaces a same-named base key)."""
    pairs = F.array(
        *[F.struct(F.lit(k).alias("key"), v.cast("string").alias("value")) for k, v in entries.items()]
    )
    extra = F.map_from_entries(F.filter(pairs, lambda p: p["value"].isNotNull()))
    if base is None:
        return extra
    kept = F.map_filter(
        F.coalesce(base, F.create_map().cast("map<string,string>")), lambda k, _: ~k.isin(*entries.keys())
    )
    return F.map_concat(kept, extra)


def column_names(schema: str) -> tuple[str, ...]:
    """The column names of a DDL schema string (`"a string, b map<string,string>"` -> `("a", "b")`):
    a gold table declares its columns once, as its schema, and derives the names from it."""
    names, depth, start = [], 0, 0
    for index, char in enumerate(schema + ","):
        depth += char in "<(" and 1 or 0
        depth -= char in ">)" and 1 or 0
        if char == "," and depth == 0:
            names.append(schema[start:index].split()[0].strip("`"))
            start = index + 1
    return tuple(names)


def empty_frame(schema: str) -> DataFrame:
    """An empty result for a build that received none of its sources (e.g. the first run)."""
    return SparkSession.active().createDataFrame([], schema)
