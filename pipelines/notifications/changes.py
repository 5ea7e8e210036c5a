"""What to send: the notices that follow from what changed since the last run.

Why this reads little: a run reads (1) the rows of `gold.governance_violations` its group
replacements wrote since the version the last run read, (2) the rows whose `opened_at` or
`resolved_at` passed between the last run's event clock and this one's (a violation opens when
its condition has lasted long enough, which moves no row: it follows from the clock), read
through file statistics, (3) the entities of `gold.change_history` rows added since the last
run, to find which violations said to be open may have been withdrawn, and (4) the
`ops.dq_results` rows validated since the last run began (an hour's overlap), through file
statistics. None of it grows with the violations or outcomes ever recorded.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from gold.event_clock import CHANGE_HISTORY, event_clock
from pipelines.notifications.notices import Notice, check_notice, violation_notice
from pipelines.notifications.open_conditions import Watermark
from pipelines.store.pruning import AtLeast, In

VIOLATIONS = "gold.governance_violations"
DQ_RESULTS = "ops.dq_results"
FEED_TABLES = "feeds."  # feed checks are ops.dq_results rows of table feeds.<source>
TIMES = ("condition_since", "opened_at", "resolved_at")
ISO = "yyyy-MM-dd'T'HH:mm:ss.SSSSSS"
DQ_OVERLAP = dt.timedelta(hours=1)  # ops.dq_results rows read again behind the last run's start


@dataclass
class Findings:
    notices: list[Notice] = field(default_factory=list)
    opened: list[dict] = field(default_factory=list)  # rows of ops.notification_open to add
    closed: list[str] = field(default_factory=list)  # condition ids to remove
    watermark: Watermark = field(default_factory=Watermark)


def find(store, last: Watermark | None, open_now: dict[str, dict]) -> Findings:
    """The notices since `last` (None: the first run, which reads the current state once),
    given the conditions notified as open."""
    clock = event_clock(store)
    findings = Findings()
    violations_version = _violations(store, last, clock, open_now, findings)
    dq_version = _checks(store, last, open_now, findings)
    findings.watermark = Watermark(
        event_clock=clock.isoformat() if clock else (last.event_clock if last else None),
        violations_version=violations_version,
        change_history_version=store.version(CHANGE_HISTORY) if store.exists(CHANGE_HISTORY) else None,
        dq_version=dq_version,
    )
    return findings


def _utc(text: str | None) -> dt.datetime | None:
    if text is None:
        return None
    return dt.datetime.fromisoformat(text).replace(tzinfo=dt.timezone.utc)


def _collect(frame: DataFrame) -> list[dict]:
    """Rows as dicts, timestamps as ISO text in UTC (the session's time zone is UTC)."""
    frame = frame.select(*[F.date_format(c, ISO).alias(c) if c in TIMES else F.col(c) for c in frame.columns])
    return [row.asDict(recursive=True) for row in frame.toLocalIterator()]


def _violations(store, last, clock, open_now, findings: Findings) -> int | None:
    if not store.exists(VIOLATIONS):
        return last.violations_version if last else None
    version = store.version(VIOLATIONS)
    since = dt.datetime.fromisoformat(last.event_clock) if last and last.event_clock else None
    rows: dict[str, dict] = {}
    if last is None or last.violations_version is None:
        frames = [store.read(VIOLATIONS, version)]
    else:
        frames = []
        if version > last.violations_version:
            frames.append(store.read_added_since(VIOLATIONS, last.violations_version, version))
        if since is not None and clock is not None and clock > since:
            passed = [[AtLeast("opened_at", since)], [AtLeast("resolved_at", since)]]
            frames.append(store.read_any(VIOLATIONS, passed, version))
    for frame in frames:
        for row in _collect(frame):
            rows[row["violation_id"]] = row
    if clock is not None:
        _judge(rows, clock, since, open_now, findings)
    _withdrawn(store, last, rows, open_now, findings, clock)
    return version


def _judge(rows, clock, since, open_now, findings: Findings) -> None:
    """Each changed row's state at the clock against what was said of it."""
    at = clock.isoformat()
    for violation_id, row in sorted(rows.items()):
        opened, resolved = _utc(row["opened_at"]), _utc(row["resolved_at"])
        is_open = opened is not None and opened <= clock and (resolved is None or resolved > clock)
        was_violation = opened is not None and resolved is not None and opened <= resolved <= clock
        known = violation_id in open_now
        if is_open and not known:
            findings.notices.append(violation_notice("opened", row, row["opened_at"]))
            findings.opened.append(_open_row(violation_id, "violation", row))
        elif was_violation and (known or since is None or resolved > since):
            findings.notices.append(violation_notice("resolved", row, row["resolved_at"]))
            if known:
                findings.closed.append(violation_id)
        elif known and not is_open:
            findings.notices.append(violation_notice("withdrawn", row, at))
            findings.closed.append(violation_id)


def _open_row(condition_id: str, kind: str, row: dict, notice: Notice | None = None) -> dict:
    if notice is None:
        notice = violation_notice("opened", row, row.get("opened_at") or "")
    return {
        "condition_id": condition_id,
        "kind": kind,
        "entity_urn": row.get("entity_urn"),
        "notice": notice.to_json(),
    }


def _withdrawn(store, last, rows, open_now, findings: Findings, clock) -> None:
    """Violations said to be open that their entity's new events removed from the table."""
    if last is None or not store.exists(CHANGE_HISTORY):
        return
    since = last.change_history_version  # None: the table is new since the last run
    if since is not None and store.version(CHANGE_HISTORY) <= since:
        return
    watched = {cid: r for cid, r in open_now.items() if r["kind"] == "violation" and cid not in rows}
    if not watched:
        return
    touched = {
        r["entity_urn"]
        for r in store.read_added_since(CHANGE_HISTORY, since)
        .select("entity_urn")
        .distinct()
        .toLocalIterator()
    }
    suspects = sorted(cid for cid, r in watched.items() if r["entity_urn"] in touched)
    if not suspects:
        return
    present = {
        r["violation_id"]
        for r in store.read_rows(VIOLATIONS, ["violation_id"], selections=[[In("violation_id", suspects)]])
    }
    at = clock.isoformat() if clock else ""
    for cid in suspects:
        if cid not in present:
            opening = Notice.from_json(watched[cid]["notice"])
            findings.notices.append(_withdrawal(opening, at))
            findings.closed.append(cid)


def _withdrawal(opening: Notice, at: str) -> Notice:
    key = opening.key.replace("violation:opened:", "violation:withdrawn:", 1)
    title = opening.title.rsplit(":", 1)[0] + ": withdrawn (later events show it never happened)"
    return Notice(
        key=key,
        kind="violation",
        event="withdrawn",
        severity=opening.severity,
        title=title,
        at=at,
        responsible=opening.responsible,
        fields=dict(opening.fields),
    )


def _checks(store, last, open_now, findings: Findings) -> int | None:
    """Failed `fail` expectations and feed checks of each table's latest run, and those that
    pass again; one notice per condition until it passes."""
    if not store.exists(DQ_RESULTS):
        return last.dq_version if last else None
    version = store.version(DQ_RESULTS)
    since = last.dq_version if last else None
    if since is not None and version <= since:
        return version
    if since is None or not (last and last.recorded_at):
        frame = store.read(DQ_RESULTS, version)  # the first run: the latest run of each table
    else:
        # the rows validated since the last run began, less an hour: read by file statistics on
        # either engine (ops tables keep no change data feed); a row met twice changes nothing,
        # since a condition is told only when it changes (failed, or passing again)
        after = dt.datetime.fromisoformat(last.recorded_at) - DQ_OVERLAP
        frame = store.read(DQ_RESULTS, version, where=[AtLeast("validated_at", after)])
    frame = frame.where(F.col("table").startswith(FEED_TABLES) | (F.col("severity") == "fail"))
    frame = frame.withColumn("validated_at", F.concat(F.date_format("validated_at", ISO), F.lit("+00:00")))
    rows = [r.asDict() for r in frame.toLocalIterator()]
    latest: dict[str, tuple] = {}
    for row in rows:
        mark = (row["validated_at"], row["run_id"])
        if row["table"] not in latest or mark > latest[row["table"]]:
            latest[row["table"]] = mark
    for row in sorted(rows, key=lambda r: (r["table"], r["expectation"])):
        if (row["validated_at"], row["run_id"]) != latest[row["table"]]:
            continue
        kind = "feed" if row["table"].startswith(FEED_TABLES) else "data_quality"
        condition_id = f"{kind}:{row['table']}:{row['expectation']}"
        if not row["success"] and condition_id not in open_now:
            notice = check_notice(kind, "failed", row)
            findings.notices.append(notice)
            findings.opened.append(
                {"condition_id": condition_id, "kind": kind, "entity_urn": None, "notice": notice.to_json()}
            )
        elif row["success"] and condition_id in open_now:
            findings.notices.append(check_notice(kind, "recovered", row))
            findings.closed.append(condition_id)
    return version
