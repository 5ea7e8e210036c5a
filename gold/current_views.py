"""SQL over the gold timelines: "current" views per entity and "as of" recipes.

The timelines keep every interval; most questions are "what is on E now" or
"what was on E at T". Both are plain SQL on the interval columns, given here once
so the CLI, notebooks and the docs ask them the same way, in Spark SQL and DuckDB alike.
Wherever the gold tables resolve as `gold.<table>` (e.g. a `gold` database):

    for name, sql in VIEWS.items():
        spark.sql(f"CREATE OR REPLACE VIEW {name} AS {sql}")
    spark.sql(as_of_sql("gold.tag_timeline", "urn:li:dataset:abc", "2026-01-01 12:00:00"))
    spark.sql(state_as_of_sql("2026-01-01 12:00:00"))  # every entity's tags, owners, ... then

The current views leave out the associations of entities whose latest status is deleted (soft
or hard: `gold.entity_status_timeline`), and of the fields of such datasets: a soft delete keeps
an entity's associations open in the timelines, so they come back with a restore.
"""

from __future__ import annotations

import datetime as dt

# timeline table -> its association key columns
TIMELINES: dict[str, tuple[str, ...]] = {
    "gold.tag_timeline": ("tag_urn",),
    "gold.ownership_timeline": ("owner_urn", "owner_type"),
    "gold.glossary_term_timeline": ("term_urn",),
    "gold.domain_timeline": ("domain_urn",),
}
_CURRENT_VIEW_NAMES = {
    "gold.tag_timeline": "gold.current_tags",
    "gold.ownership_timeline": "gold.current_owners",
    "gold.glossary_term_timeline": "gold.current_glossary_terms",
    "gold.domain_timeline": "gold.current_domains",
}


def _columns(table: str) -> str:
    return ", ".join(("source", "entity_urn", "parent_urn", *TIMELINES[table], "valid_from", "added_by"))


STATUS = "gold.entity_status_timeline"
ACTIVE = "ACTIVE"


def current_sql(table: str) -> str:
    """The open associations of a timeline (one row per entity and association), of entities (and
    fields of datasets) whose latest status is not deleted."""
    deleted = (
        f"SELECT 1 FROM {STATUS} s WHERE s.is_current AND s.status <> '{ACTIVE}' "
        "AND s.entity_urn = coalesce(t.parent_urn, t.entity_urn)"
    )
    return f"SELECT {_columns(table)} FROM {table} t WHERE t.is_current AND NOT EXISTS ({deleted})"


VIEWS: dict[str, str] = {view: current_sql(table) for table, view in _CURRENT_VIEW_NAMES.items()}


def _literal(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _timestamp(ts: dt.datetime | str) -> str:
    if isinstance(ts, dt.datetime):
        if ts.tzinfo is not None:
            ts = ts.astimezone(dt.timezone.utc).replace(tzinfo=None)
        ts = ts.isoformat(sep=" ")
    return f"TIMESTAMP {_literal(str(ts))}"


def as_of_sql(table: str, entity_urn: str, ts: dt.datetime | str, include_fields: bool = False) -> str:
    """SQL for the associations of `entity_urn` at `ts` (UTC): valid_from <= ts < valid_to (open-ended
    when current). `include_fields` adds the associations of the entity's schema fields / columns."""
    if table not in TIMELINES:
        raise ValueError(f"as_of_sql: {table!r} is not a timeline; use one of {sorted(TIMELINES)}")
    at = _timestamp(ts)
    entity = _literal(entity_urn)
    who = f"(entity_urn = {entity} OR parent_urn = {entity})" if include_fields else f"entity_urn = {entity}"
    return (
        f"SELECT {_columns(table)}, valid_to, removed_by, end_reason FROM {table} "
        f"WHERE {who} AND valid_from <= {at} AND (valid_to IS NULL OR valid_to > {at})"
    )


# aspect -> (table, value column, detail column)
ASPECTS: dict[str, tuple[str, str, str | None]] = {
    "status": (STATUS, "status", None),
    "domain": ("gold.domain_timeline", "domain_urn", None),
    "owner": ("gold.ownership_timeline", "owner_urn", "owner_type"),
    "glossary_term": ("gold.glossary_term_timeline", "term_urn", None),
    "tag": ("gold.tag_timeline", "tag_urn", None),
}


def state_as_of_sql(ts: dt.datetime | str, entity_urn: str | None = None) -> str:
    """SQL for what held at `ts` (UTC) across catalogs: one row per entity and status, domain, owner,
    glossary term or tag (`aspect`, `value`, `detail`: the owner type), with when it began
    (`since`) and who set it (`set_by`); `entity_urn` narrows it to one entity and its fields."""
    at = _timestamp(ts)
    parts = []
    for aspect, (table, value, detail) in ASPECTS.items():
        parent = "CAST(NULL AS STRING)" if table == STATUS else "parent_urn"
        by = "changed_by" if table == STATUS else "added_by"
        where = f"valid_from <= {at} AND (valid_to IS NULL OR valid_to > {at})"
        if entity_urn is not None:
            entity = _literal(entity_urn)
            who = (
                f"entity_urn = {entity}"
                if table == STATUS
                else f"(entity_urn = {entity} OR parent_urn = {entity})"
            )
            where = f"{who} AND {where}"
        parts.append(
            f"SELECT source, entity_urn, {parent} AS parent_urn, '{aspect}' AS aspect, {value} AS value, "
            f"{detail or 'CAST(NULL AS STRING)'} AS detail, valid_from AS since, {by} AS set_by "
            f"FROM {table} WHERE {where}"
        )
    return " UNION ALL ".join(parts) + " ORDER BY source, entity_urn, aspect, value, detail"
