"""`lakehouse timeline URN`: one entity's change history in the shape of DataHub's Timeline API.

DataHub answers `GET /openapi/timeline/v1/{urn}` with a list of change transactions:
`{timestamp, actor, semVer, semVerChange, versionStamp, changeEvents: [{entityUrn,
category, operation, modifier, parameters, auditStamp: {actor, time}, semVerChange,
description}]}`. This serves the same shape from `gold.change_history` for DataHub and
OpenMetadata entities (and DataWorks ones), with these differences:
- complete: no aspect-version retention cuts the history, every entity type is served,
  and schema fields' (or columns') changes are included with their dataset's (table's);
- a transaction is the changes of one actor at one instant (DataHub groups by aspect
  version);
- `semVer` is computed here in order from 0.0.0: MAJOR for a removed or renamed schema
  field or a hard delete, MINOR for an added field or a (re)created entity, PATCH
  otherwise (DataHub computes it per aspect the same spirit); an OpenMetadata change
  also carries the entity's own version as `versionStamp`;
- `--start` / `--end` filter by event time (inclusive / exclusive), `--category` by
  category (OWNER and OWNERSHIP are one).

The rows come from DuckDB (`entity_change_rows`, no JVM: the default on a local warehouse) or
from Spark (`pipelines.query.timeline_spark.entity_changes`); `transactions` builds the same
answer from either.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, TextIO

from pipelines.query.output import table_text

if TYPE_CHECKING:
    from pipelines.query.duckdb_session import DuckDbSession

CHANGE_HISTORY = "gold.change_history"
MAJOR, MINOR, PATCH, NONE = "MAJOR", "MINOR", "PATCH", "NONE"
_RANK = {NONE: 0, PATCH: 1, MINOR: 2, MAJOR: 3}
CHANGE_COLUMNS = (
    "change_id",
    "entity_urn",
    "category",
    "operation",
    "modifier",
    "actor",
    "event_time",
    "details",
)
CATEGORY_ALIASES = {"OWNER": ("OWNER", "OWNERSHIP"), "OWNERSHIP": ("OWNER", "OWNERSHIP")}


def parse_time(text: str | None) -> datetime | None:
    """An ISO date or date-time (UTC when no offset is given)."""
    if text is None:
        return None
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def wanted_categories(categories: Sequence[str]) -> list[str]:
    """The categories asked for, upper case, OWNER and OWNERSHIP standing for both."""
    return sorted({c for name in categories for c in CATEGORY_ALIASES.get(name.upper(), (name.upper(),))})


def entity_change_rows(
    session: DuckDbSession,
    urn: str,
    categories: Sequence[str] = (),
    start: datetime | None = None,
    end: datetime | None = None,
) -> list[dict[str, Any]]:
    """`entity_changes` through DuckDB (no JVM): the same rows, in the same order, as dicts."""
    where, params = ["(entity_urn = ? OR parent_urn = ?)"], [urn, urn]
    if categories:
        wanted = wanted_categories(categories)
        where.append(f"category IN ({', '.join('?' * len(wanted))})")
        params += wanted
    if start is not None:
        where.append("event_time >= ?")
        params.append(start)
    if end is not None:
        where.append("event_time < ?")
        params.append(end)
    if not session.ensure(CHANGE_HISTORY):
        return []
    result = session.connection.execute(
        f"SELECT {', '.join(CHANGE_COLUMNS)} FROM {CHANGE_HISTORY} WHERE {' AND '.join(where)} "
        "ORDER BY event_time NULLS FIRST, change_id NULLS FIRST",  # Spark's ascending order
        params,
    )
    return [dict(zip(CHANGE_COLUMNS, row, strict=True)) for row in result.fetchall()]


def semantic_change(category: str | None, operation: str | None) -> str:
    """How much one change moves the entity's semantic version."""
    if category == "TECHNICAL_SCHEMA" and operation in ("REMOVE", "MODIFY"):
        return MAJOR if operation == "REMOVE" else MINOR
    if category == "TECHNICAL_SCHEMA" and operation == "ADD":
        return MINOR
    if category == "LIFECYCLE" and operation == "HARD_DELETE":
        return MAJOR
    if category == "LIFECYCLE" and operation in ("CREATE", "REINSTATE"):
        return MINOR
    return PATCH


def _bumped(version: tuple[int, int, int], change: str) -> tuple[int, int, int]:
    major, minor, patch = version
    if change == MAJOR:
        return major + 1, 0, 0
    if change == MINOR:
        return major, minor + 1, 0
    if change == PATCH:
        return major, minor, patch + 1
    return version


def _millis(moment: datetime) -> int:
    """Epoch milliseconds; PySpark hands timestamps back naive, in the process's local time,
    which is what `datetime.timestamp` assumes of a naive value."""
    return int(moment.timestamp() * 1000)


def transactions(rows: Iterable[Any]) -> list[dict]:
    """Change rows (oldest first) as change transactions: one per (instant, actor)."""
    out: list[dict] = []
    version = (0, 0, 0)
    for row in rows:
        time = _millis(row["event_time"])
        details = dict(sorted((row["details"] or {}).items()))  # engines return map entries in any order
        change = semantic_change(row["category"], row["operation"])
        if details.get("modificationCategory") == "RENAME":
            change = MAJOR
        event = {
            "entityUrn": row["entity_urn"],
            "category": row["category"],
            "operation": row["operation"],
            "modifier": row["modifier"],
            "parameters": details,
            "auditStamp": {"actor": row["actor"], "time": time},
            "semVerChange": change,
            "description": _description(row),
        }
        if out and out[-1]["timestamp"] == time and out[-1]["actor"] == row["actor"]:
            current = out[-1]
            if _RANK[change] > _RANK[current["semVerChange"]]:
                current["semVerChange"] = change
            current["changeEvents"].append(event)
        else:
            out.append(
                {
                    "timestamp": time,
                    "actor": row["actor"],
                    "semVerChange": change,
                    "versionStamp": details.get("current_version"),
                    "changeEvents": [event],
                }
            )
    for transaction in out:
        version = _bumped(version, transaction["semVerChange"])
        transaction["semVer"] = "{}.{}.{}".format(*version)
    return out


def _description(row: Any) -> str:
    subject = row["modifier"] or ""
    return f"{row['category']} {row['operation']} {subject}".strip() + f" on {row['entity_urn']}"


def print_table(result: list[dict], out: TextIO) -> None:
    """One line per change event, under its transaction's time (UTC, to the millisecond), version
    and actor; columns aligned as `lakehouse sql` aligns them."""
    columns = ["time (UTC)", "semVer", "actor", "category", "operation", "modifier"]
    rows = []
    for transaction in result:
        moment = datetime.fromtimestamp(transaction["timestamp"] / 1000, tz=timezone.utc)
        when = moment.replace(tzinfo=None).isoformat(sep=" ", timespec="milliseconds")
        for event in transaction["changeEvents"]:
            rows.append(
                [
                    when,
                    transaction["semVer"],
                    str(transaction["actor"]),
                    str(event["category"]),
                    str(event["operation"]),
                    event["modifier"] or "",
                ]
            )
    print(table_text(columns, rows), file=out)
    print(f"({len(result)} transactions)", file=out)


def print_json(result: list[dict], out: TextIO) -> None:
    json.dump(result, out, indent=2, default=str)
    out.write("\n")
