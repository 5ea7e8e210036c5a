"""How the delta-spark engine's commits carry their metadata without a session setting.

Each silver and gold commit records the source versions it reflects in its commit's
`userMetadata`. Databricks serverless refuses the session setting
`spark.databricks.delta.commitInfo.userMetadata`; Delta's writer option `userMetadata` works on
every compute and for every save mode, with three gaps closed here:
- a write that creates its table commits as CREATE TABLE AS SELECT, which ignores the option,
  while a creating overwrite (CREATE OR REPLACE TABLE AS SELECT) records it: a creation that
  carries metadata is written as an overwrite (`save_mode`);
- Delta does not record a write that adds no file (unless the session setting
  `skipRecordingEmptyCommits` is off): a commit that must be recorded (a watermark moved past
  input holding nothing for its table) carries Delta's idempotent-write options `txnAppId` and
  `txnVersion`, whose transaction action makes it a commit (`recorded_options`). The version
  given is the one the commit gets, so it grows with every commit, as Delta requires;
- `MERGE` and the other SQL commands take no writer option: gold replaces its groups with a
  `replaceWhere` overwrite instead (`replace_groups`), and a command that must record metadata
  all the same uses the session setting where the compute allows it (`command_settings`).
  On a table recording its change data, such an overwrite records the rows it deleted and the
  rows it wrote, not the rows it copied out of the files it rewrote: a reader of the table's new
  rows reads the replacing rows alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame

from pipelines.runtime.compute_rules import rules_of
from pipelines.runtime.sql_expressions import literals, name

if TYPE_CHECKING:
    from pipelines.store.delta_spark import DeltaSparkEngine
    from pipelines.store.engine import TableRef

USER_METADATA = "spark.databricks.delta.commitInfo.userMetadata"  # the session setting
USER_METADATA_OPTION = "userMetadata"  # the writer option
TRANSACTION_APP = "catalog-lakehouse"  # `txnAppId` of the commits `recorded_options` forces
# Keys of the rows replacing groups, up to this many, are named in the replaceWhere predicate
# (beside the groups); more rewrite the whole table instead of parsing a predicate that long.
KEY_VALUES = 20_000
# Groups the caller did not collect are collected here, up to this many, for the same predicate.
GROUP_VALUES = 20_000


class CommitMetadataRefused(RuntimeError):
    """A SQL command asked to record commit metadata on compute that refuses the session setting."""


def save_mode(mode: str, exists: bool, metadata: str | None) -> str:
    """The save mode that records `metadata` with the commit: an append that creates its table
    becomes an overwrite (CREATE OR REPLACE TABLE AS SELECT, which takes `userMetadata`)."""
    return "overwrite" if metadata is not None and mode == "append" and not exists else mode


def metadata_options(metadata: str | None) -> dict[str, str]:
    return {} if metadata is None else {USER_METADATA_OPTION: metadata}


def recorded_options(version: int | None) -> dict[str, str]:
    """Writer options that make Delta record a write even when it adds no file: a transaction
    identifier whose version is the commit's own (the table's next version)."""
    return {"txnAppId": TRANSACTION_APP, "txnVersion": str(-1 if version is None else version + 1)}


def command_settings(spark: Any, metadata: str | None) -> dict[str, str]:
    """The session settings that give a SQL command's commit `metadata` (commands take no writer
    option); `CommitMetadataRefused` where the compute refuses them (serverless)."""
    if metadata is None:
        return {}
    rules = rules_of(spark)
    if not rules.may_set(USER_METADATA):
        raise CommitMetadataRefused(
            f"a Delta SQL command cannot record commit metadata on {rules.name} compute "
            f"({USER_METADATA} is refused there); write through a DataFrame writer instead"
        )
    return {USER_METADATA: metadata}


def values_predicate(column: str, values: list) -> str:
    """SQL text selecting the rows whose `column` is one of `values` (null included)."""
    quoted = name(column)
    known = [v for v in values if v is not None]
    parts = [f"{quoted} IN ({literals(known)})"] if known else []
    if len(known) < len(values):
        parts.append(f"{quoted} IS NULL")
    return " OR ".join(parts) or "false"


def _literal_values(values: list | None) -> bool:
    return values is not None and all(isinstance(v, (str, int, float, bool)) for v in values if v is not None)


def replace_groups(
    engine: DeltaSparkEngine,
    df: DataFrame,
    ref: TableRef,
    group_key: str,
    groups: DataFrame,
    keys: list[str],
    metadata: str | None,
    group_values: list | None = None,
    rows: int | None = None,
) -> int:
    """`Engine.replace_groups` as one overwrite carrying `metadata`. With the groups as values
    (`group_values`, the incremental case, else collected here up to `GROUP_VALUES`) a
    `replaceWhere` on them, which rewrites only the files holding their rows: the predicate also
    names the keys of `df` where a key may have moved from another group (the group column is not
    part of the key; one key column, up to `KEY_VALUES` rows). Delta's change data of that commit
    holds the rows deleted and `df`, not the rows copied unchanged out of the rewritten files, so
    a table reading this one's new rows reads `df` alone. Otherwise the table's other rows and
    `df` are written over the whole table, and a reader of its new rows reads the whole table
    (which rebuilds whatever it touches, as a full build would)."""
    count = rows if rows is not None else df.count()
    if not engine.exists(ref):
        engine.append(df, ref, [], metadata, count)
        return count
    options = recorded_options(engine.version(ref))  # recorded even when nothing moves
    if group_values is None:
        found = groups.select(group_key).distinct().limit(GROUP_VALUES + 1).collect()
        group_values = [row[0] for row in found] if len(found) <= GROUP_VALUES else None
    predicate = None
    if _literal_values(group_values):
        predicate = values_predicate(group_key, group_values)
        if group_key not in keys:
            key_values = (
                [r[0] for r in df.select(keys[0]).collect()]
                if len(keys) == 1 and count <= KEY_VALUES
                else None
            )
            predicate = (
                f"({predicate}) OR ({values_predicate(keys[0], key_values)})"
                if _literal_values(key_values)
                else None
            )
    if predicate is not None:
        options["replaceWhere"] = predicate
        written = df
    else:
        others = engine.read(ref).join(groups.select(group_key).distinct(), group_key, "left_anti")
        if group_key not in keys:
            others = others.join(df.select(*keys), keys, "left_anti")
        written = df.unionByName(others, allowMissingColumns=True)
    engine._save(written, ref, "overwrite", [], metadata, options)
    return count
