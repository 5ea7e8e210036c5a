"""What the governance report plots, aggregated by Spark so that only the plotted points reach
the driver.

Every series is a `Timeline`: one value per bucket of time, the buckets days up to a year of
data, weeks up to five years, months beyond (`step_for`), so a chart never has more than a few
hundred points however long the warehouse's history. A state (coverage, requests open,
violations open) takes its value at the end of each bucket; a flow (events landed) sums over it.

Counts of what is open at a day's end come from intervals (a start and an optional end), as the
difference of starts and ends up to that day (`open_per_day`): one aggregate over the rows, not
a row per interval and day. "Open" follows `gold.governance_violations`'s rule: open at T when
`start <= T` and the end is missing or later than T; T is the end of each day, and the
warehouse's event clock on the clock's own day.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass, field

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

COVERAGE = "gold.governance_coverage_daily"
BACKLOG = "gold.review_backlog_daily"
PROPOSALS = "gold.proposals"
VIOLATIONS = "gold.governance_violations"
FEED_VOLUME = "gold.feed_volume_daily"
FEED_TABLE_PREFIX = "feeds."
# coverage counts a dataset's schema fields and columns as entities of their own: left out of the
# report's shares, which are of datasets, tables and the other entities people own and describe
FIELD_TYPES = ("schemaField", "column")
COVERAGE_METRICS = {
    "with_owner": "owner",
    "with_glossary_term": "glossary term",
    "with_domain": "domain",
    "with_description": "description",
    "with_tag": "tag",
}
# the domains with the most live entities get a line each; the others share one
TOP_DOMAINS = 8
DAY_LIMIT, WEEK_LIMIT = 366, 5 * 366


@dataclass(frozen=True)
class Timeline:
    """Values per bucket (`days`: each bucket's first day), a list per series name."""

    step: str
    days: list[dt.date]
    series: dict[str, list[float | None]] = field(default_factory=dict)


def step_for(first: dt.date, last: dt.date) -> str:
    """`day` for up to a year between first and last, `week` up to five years, `month` beyond."""
    span = (last - first).days
    return "day" if span <= DAY_LIMIT else "week" if span <= WEEK_LIMIT else "month"


def bucket_start(day: dt.date, step: str) -> dt.date:
    if step == "week":
        return day - dt.timedelta(days=day.weekday())
    if step == "month":
        return day.replace(day=1)
    return day


def axis(first: dt.date, last: dt.date, step: str) -> list[dt.date]:
    """Every bucket from the one holding `first` to the one holding `last`."""
    day, end, out = bucket_start(first, step), bucket_start(last, step), []
    while day <= end:
        out.append(day)
        if step == "month":
            day = (day.replace(day=28) + dt.timedelta(days=4)).replace(day=1)
        else:
            day += dt.timedelta(days=7 if step == "week" else 1)
    return out


def _bucket(day: Column, step: str) -> Column:
    return day if step == "day" else F.to_date(F.date_trunc(step, day))


def _before(ts: Column) -> Column:
    """The day of the instant just before `ts`: the first day at whose end `ts` has passed."""
    return F.to_date(F.timestamp_micros(F.unix_micros(ts) - F.lit(1)))


def _span(df: DataFrame, day: str) -> tuple[dt.date, dt.date] | None:
    row = df.agg(F.min(day).alias("first"), F.max(day).alias("last")).first()
    return None if row is None or row["first"] is None else (row["first"], row["last"])


def _states(
    df: DataFrame, day: str, key: str, values: list[str], first: dt.date, last: dt.date, fill=None
) -> dict[str, Timeline]:
    """Per key, each value column at the last day of each bucket that has rows, carried forward
    over buckets without rows; `fill` before the key's first row."""
    step = step_for(first, last)
    ranked = df.withColumn("_bucket", _bucket(F.col(day), step)).withColumn(
        "_rank", F.row_number().over(Window.partitionBy("_bucket", key).orderBy(F.desc(day)))
    )
    rows = ranked.where(F.col("_rank") == 1).select("_bucket", key, *values).collect()
    days = axis(first, last, step)
    index = {d: i for i, d in enumerate(days)}
    found: dict[str, dict[str, list]] = defaultdict(lambda: {v: [None] * len(days) for v in values})
    for row in rows:
        for v in values:
            found[row[key]][v][index[row["_bucket"]]] = row[v]
    out = {}
    for name, by_value in sorted(found.items(), key=lambda kv: str(kv[0])):
        for points in by_value.values():
            last_seen = fill
            for i, point in enumerate(points):
                if point is None:
                    points[i] = last_seen
                else:
                    last_seen = point
        out[name] = Timeline(step, days, dict(by_value))
    return out


def _share(part: str) -> Column:
    live = F.sum("live_entities")
    return F.when(live > 0, F.round(100.0 * F.sum(part) / live, 2)).alias(part)


def coverage_per_catalog(coverage: DataFrame) -> dict[str, Timeline]:
    """Per catalog, the share (%) of its live entities with an owner, a glossary term, a domain, a
    description and a tag, at each bucket's end (schema fields and columns left out)."""
    entities = coverage.where(~F.col("entity_type").isin(*FIELD_TYPES))
    span = _span(entities, "day")
    if span is None:
        return {}
    daily = entities.groupBy("day", "source").agg(*(_share(c) for c in COVERAGE_METRICS))
    found = _states(daily, "day", "source", list(COVERAGE_METRICS), *span)
    return {
        source: Timeline(t.step, t.days, {COVERAGE_METRICS[c]: v for c, v in t.series.items()})
        for source, t in found.items()
    }


def domain_label(urn: str | None) -> str:
    """A domain's readable name: the last part of its URN; `no domain` for entities in none."""
    if urn is None:
        return "no domain"
    return urn.rstrip(")").split(":")[-1] or urn


def coverage_per_domain(coverage: DataFrame, metric: str = "with_owner") -> Timeline | None:
    """The share (%) of each domain's live entities with `metric` (an owner by default), at each
    bucket's end: the `TOP_DOMAINS` largest domains (by live entities on the last day) each a
    series, the others together."""
    entities = coverage.where(~F.col("entity_type").isin(*FIELD_TYPES))
    span = _span(entities, "day")
    if span is None:
        return None
    largest = [
        row["domain_urn"]
        for row in entities.where(F.col("day") == F.lit(span[1]))
        .groupBy("domain_urn")
        .agg(F.sum("live_entities").alias("live"))
        .orderBy(F.desc("live"), F.col("domain_urn").asc_nulls_first())
        .limit(TOP_DOMAINS)
        .collect()
    ]
    named = [u for u in largest if u is not None]
    domain = F.coalesce(F.col("domain_urn"), F.lit("\x00none"))
    label = F.when(F.col("domain_urn").isNull(), F.lit("\x00none"))
    if named:
        label = label.when(F.col("domain_urn").isin(*named), domain)
    daily = (
        entities.withColumn("domain", label.otherwise(F.lit("\x00other")))
        .groupBy("day", "domain")
        .agg(_share(metric).alias("share"))
    )
    found = _states(daily, "day", "domain", ["share"], *span)
    names = {"\x00none": "no domain", "\x00other": "other domains"}
    days = next(iter(found.values())).days if found else []
    step = next(iter(found.values())).step if found else "day"
    series = {names.get(k, domain_label(k)): t.series["share"] for k, t in found.items()}
    return Timeline(step, days, series)


def open_per_day(
    intervals: DataFrame, start: str, end: str, key: Column, clock: dt.datetime | None
) -> Timeline | None:
    """How many intervals were open at each day's end, per `key`: an interval is open at T when
    `start <= T` and `end` is null or later than T. The last day is the clock's, counted at the
    clock; intervals starting after the clock are not counted (not yet open), and ends after it
    not applied. Without a clock, the last day is that of the last start or end."""
    rows = intervals.where(F.col(start).isNotNull()).withColumn("_key", key)
    if clock is not None:
        at = F.lit(clock).cast("timestamp")
        rows = rows.where(F.col(start) <= at).withColumn(end, F.when(F.col(end) <= at, F.col(end)))
    deltas = rows.select("_key", _before(F.col(start)).alias("_day"), F.lit(1).alias("_delta")).unionByName(
        rows.where(F.col(end).isNotNull()).select(
            "_key", _before(F.col(end)).alias("_day"), F.lit(-1).alias("_delta")
        )
    )
    daily = deltas.groupBy("_key", "_day").agg(F.sum("_delta").alias("_delta"))
    running = daily.withColumn(
        "open",
        F.sum("_delta").over(
            Window.partitionBy("_key").orderBy("_day").rowsBetween(Window.unboundedPreceding, 0)
        ),
    )
    span = _span(daily, "_day")
    if span is None:
        return None
    first, last = span
    if clock is not None:
        last = max(last, clock.astimezone(dt.timezone.utc).date())
    found = _states(running, "_day", "_key", ["open"], first, last, fill=0)
    if not found:
        return None
    sample = next(iter(found.values()))
    return Timeline(sample.step, sample.days, {k: t.series["open"] for k, t in found.items()})


def requests_open(proposals: DataFrame, clock: dt.datetime | None) -> Timeline | None:
    """Review requests open at each day's end, per catalog (from gold.proposals: each request
    once, whatever its assignees)."""
    return open_per_day(proposals, "created_at", "resolved_at", F.col("source"), clock)


def oldest_open_request(backlog: DataFrame) -> Timeline | None:
    """The age in days of the oldest request open at each day's end, per catalog."""
    span = _span(backlog, "day")
    if span is None:
        return None
    daily = backlog.groupBy("day", "source").agg(F.max("age_max_days").alias("age"))
    found = _states(daily, "day", "source", ["age"], *span)
    if not found:
        return None
    sample = next(iter(found.values()))
    return Timeline(sample.step, sample.days, {k: t.series["age"] for k, t in found.items()})


def cycle_times(proposals: DataFrame) -> list[dict]:
    """Per catalog and request type, of the resolved requests: how many, and the median and 90th
    percentile of their hours from creation to resolution."""
    rows = (
        proposals.where(F.col("hours_to_resolution").isNotNull())
        .groupBy("source", "action_request_type")
        .agg(
            F.count(F.lit(1)).alias("resolved"),
            F.percentile_approx("hours_to_resolution", 0.5).alias("p50_hours"),
            F.percentile_approx("hours_to_resolution", 0.9).alias("p90_hours"),
        )
        .orderBy("source", "action_request_type")
    )
    return [row.asDict() for row in rows.collect()]


def violations_open(violations: DataFrame, clock: dt.datetime | None) -> Timeline | None:
    """Violations open at each day's end per rule, named `rule_id (severity)`."""
    key = F.concat(F.col("rule_id"), F.lit(" ("), F.col("severity"), F.lit(")"))
    return open_per_day(violations, "opened_at", "resolved_at", key, clock)


def violations_by_rule(violations: DataFrame, clock: dt.datetime | None) -> list[dict]:
    """Per rule: its kind and severity, violations open at the clock, opened in all, resolved."""
    at = F.lit(clock).cast("timestamp") if clock is not None else F.current_timestamp()
    opened = F.col("opened_at") <= at
    still = opened & (F.col("resolved_at").isNull() | (F.col("resolved_at") > at))
    rows = (
        violations.groupBy("rule_id", "rule_kind", "severity")
        .agg(
            F.sum(F.when(still, 1).otherwise(0)).alias("open_now"),
            F.sum(F.when(opened, 1).otherwise(0)).alias("opened"),
            F.sum(F.when(opened & F.col("resolved_at").isNotNull() & ~still, 1).otherwise(0)).alias(
                "resolved"
            ),
            F.countDistinct("entity_urn").alias("entities"),
        )
        .orderBy(F.desc("open_now"), "rule_id")
    )
    return [row.asDict() for row in rows.collect()]


def feed_volume(volume: DataFrame) -> dict[str, tuple[Timeline, Timeline]]:
    """Per source: (events per bucket, summed over its families) and (their baseline, summed over
    the families that have one)."""
    span = _span(volume, "event_date")
    if span is None:
        return {}
    first, last = span
    step = step_for(first, last)
    rows = (
        volume.withColumn("_bucket", _bucket(F.col("event_date"), step))
        .groupBy("source", "_bucket")
        .agg(F.sum("events").alias("events"), F.sum("baseline_events").alias("baseline"))
        .collect()
    )
    days = axis(first, last, step)
    index = {d: i for i, d in enumerate(days)}
    out: dict[str, tuple[Timeline, Timeline]] = {}
    for row in sorted(rows, key=lambda r: r["source"]):
        events, baseline = out.setdefault(
            row["source"],
            (
                Timeline(step, days, {"events": [0.0] * len(days)}),
                Timeline(step, days, {"baseline": [None] * len(days)}),
            ),
        )
        events.series["events"][index[row["_bucket"]]] = float(row["events"] or 0)
        if row["baseline"] is not None:
            baseline.series["baseline"][index[row["_bucket"]]] = float(row["baseline"])
    return out


def feed_checks(dq: DataFrame) -> list[dict]:
    """The feeds' freshness and volume outcomes (`feeds.*` rows of ops.dq_results): per feed and
    check, its latest outcome and when, and how many of its runs breached it."""
    feeds = dq.where(F.col("table").startswith(FEED_TABLE_PREFIX))
    rows = (
        feeds.groupBy("table", "expectation")
        .agg(
            F.max_by(F.struct("success", "severity", "unexpected_count"), "validated_at").alias("latest"),
            F.max("validated_at").alias("validated_at"),
            F.count(F.lit(1)).alias("runs"),
            F.sum(F.when(~F.col("success"), 1).otherwise(0)).alias("breaches"),
        )
        .select(
            "table",
            "expectation",
            F.col("latest.success").alias("success"),
            F.col("latest.severity").alias("severity"),
            "validated_at",
            "runs",
            "breaches",
        )
        .orderBy("success", "table", "expectation")
    )
    return [row.asDict() for row in rows.collect()]
