"""SQL over the gold timelines: "current" views per entity and an "as of" recipe.

The timelines keep every interval; most questions are "what is on E now" or
"what was on E at T". Both are plain SQL on the interval columns, given here once
so the CLI, notebooks and the docs ask them the same way. Wherever the gold
tables resolve as `gold.<table>` (e.g. a `gold` database):

    for name, sql in VIEWS.items():
        spark.sql(f"CREATE OR REPLACE VIEW {name} AS {sql}")
    spark.sql(as_of_sql("gold.tag_timeline", "urn:li:dataset:abc", "2026-01-01 12:00:00"))
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


def current_sql(table: str) -> str:
    """The open associations of a timeline (one row per entity and association)."""
    return f"SELECT {_columns(table)} FROM {table} WHERE is_current"


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
