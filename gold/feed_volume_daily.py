"""`gold.feed_volume_daily`: events per day of each catalog feed and event family, beside the
same weekday's usual count.

Why: a collector that stops, or a catalog that sends a fraction of its usual events, leaves no
error anywhere; only the volume tells. Families are what users of each catalog recognise
(`FAMILIES`): DataHub entity change events by category (OWNER counted as OWNERSHIP) and
proposals as `PROPOSAL`, DataHub audit events by their event type, OpenMetadata change events by
`eventType`, DataWorks events by their event code's family in the catalog
(`conf/catalogs/dataworks_events.yaml`, e.g. `node_changes`); `unknown` where a row names none.

`baseline_events` is the mean count of the same weekday in the `BASELINE_WEEKS` weeks before (a
weekday without events counting 0), null when none of them had an event; `ratio` is
`events / baseline_events`. Each event therefore counts on its own day and in the baseline of
the same weekday of the next `BASELINE_WEEKS` weeks: `relevant` gives it once per such day
(`weeks_back` 0 for its own day), and a day is a group. A day with no events of a family whose
baseline has some gets a row with `events` 0 (a silent day shows as ratio 0), so such rows run up
to `BASELINE_WEEKS` weeks past a family's last events.

Incremental: counts add up (silver holds each event once), so a run adds the new events' counts
to the rows of the days they touch, their own and the same weekday of the next
`BASELINE_WEEKS` weeks (`Accumulate`, located by `event_date`), and reads no history.
The baseline is kept as a mean of a fixed number of weeks, so added counts add to it exactly
(a count over 4 is exact in a double).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import reduce

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from gold import GROUP, column_names, empty_frame
from gold.associations import OWNERSHIP
from gold.feed_checks import FeedChecks, FeedSettings
from pipelines.core.table_specs import Accumulate, GoldTableSpec

TABLE = "gold.feed_volume_daily"
BASELINE_WEEKS = 4
UNKNOWN = "unknown"
SCHEMA = (
    "source string, family string, event_date date, events long, baseline_events double, ratio double, "
    "newest_event_time timestamp, newest_landed_at timestamp"
)
COLUMNS = column_names(SCHEMA)
KEY = ("source", "family", "event_date")
WEEKS_BACK = "_weeks_back"  # 0: the event's own day; n: counted in the baseline of the day n weeks later
_DATAWORKS_FAMILY_PREFIX = r"^silver\.dataworks_"


def _known(value: Column) -> Column:
    return F.coalesce(F.nullif(value.cast("string"), F.lit("")), F.lit(UNKNOWN))


def _datahub_category() -> Column:
    category = F.col("category")
    return _known(F.when(category.isin(*OWNERSHIP.categories), F.lit("OWNERSHIP")).otherwise(category))


# silver table -> (source, the family of each of its rows); built lazily (no session at import)
FAMILIES: dict[str, tuple[str, Callable[[], Column]]] = {
    "silver.datahub_entity_changes": ("datahub", _datahub_category),
    "silver.datahub_action_requests": ("datahub", lambda: F.lit("PROPOSAL")),
    "silver.datahub_audit_events": ("datahub", lambda: _known(F.col("event_type"))),
    "silver.openmetadata_change_events": ("openmetadata", lambda: _known(F.col("event_type"))),
    "silver.dataworks_events": (
        "dataworks",
        lambda: _known(F.regexp_replace(F.col("family"), _DATAWORKS_FAMILY_PREFIX, "")),
    ),
}
SOURCES = tuple(FAMILIES)
# source -> its silver tables: what the freshness checks ask for their newest event
FEEDS: dict[str, tuple[str, ...]] = {
    source: tuple(t for t, (of, _) in FAMILIES.items() if of == source)
    for source in dict.fromkeys(of for of, _ in FAMILIES.values())
}


def _family_of(source_table: str) -> tuple[str, Callable[[], Column]]:
    if source_table not in FAMILIES:
        raise ValueError(f"{TABLE}: unknown source table {source_table!r}")
    return FAMILIES[source_table]


def relevant(source_table: str, rows: DataFrame) -> DataFrame:
    """Each event once for its own day (`weeks_back` 0) and once for the same weekday of each of
    the next `BASELINE_WEEKS` weeks, under that day (`event_date`, also the group)."""
    source, family = _family_of(source_table)
    weeks = F.array(*[F.lit(n) for n in range(BASELINE_WEEKS + 1)])
    events = rows.where(F.col("event_date").isNotNull()).select(
        F.lit(source).alias("source"),
        family().alias("family"),
        F.col("event_date").alias("_own_date"),
        "event_time",
        "ingested_at",
        F.explode(weeks).alias(WEEKS_BACK),
    )
    day = F.date_add(F.col("_own_date"), F.col(WEEKS_BACK) * 7)
    return events.withColumn("event_date", day).withColumn(GROUP, day).drop("_own_date")


def _with_ratio(counted: DataFrame) -> DataFrame:
    baseline = F.col("baseline_events")
    return counted.select(
        *KEY,
        "events",
        "baseline_events",
        F.when(baseline > 0, F.col("events") / baseline).alias("ratio"),
        "newest_event_time",
        "newest_landed_at",
    )


def build(sources: dict[str, DataFrame]) -> DataFrame:
    """The rows (`COLUMNS`) of the days the given relevant rows fall on."""
    parts = [
        rows.select(*KEY, WEEKS_BACK, "event_time", "ingested_at")
        for rows in sources.values()
        if rows is not None
    ]
    if not parts:
        return empty_frame(SCHEMA)
    own = F.col(WEEKS_BACK) == 0
    history = F.sum(F.when(~own, 1).otherwise(0))
    counted = (
        reduce(DataFrame.unionByName, parts)
        .groupBy(*KEY)
        .agg(
            F.sum(F.when(own, 1).otherwise(0)).cast("long").alias("events"),
            F.when(history > 0, history / F.lit(float(BASELINE_WEEKS))).alias("baseline_events"),
            F.max(F.when(own, F.col("event_time"))).alias("newest_event_time"),
            F.max(F.when(own, F.col("ingested_at"))).alias("newest_landed_at"),
        )
    )
    return _with_ratio(counted)


def accumulate(current: DataFrame, increment: DataFrame) -> DataFrame:
    """Rows of `current` and `increment` for the same source, family and day become one: events
    and baselines added (a mean over a fixed number of weeks adds up), the newest times kept."""
    both = current.select(*COLUMNS).unionByName(increment.select(*COLUMNS))
    counted = both.groupBy(*KEY).agg(
        F.sum("events").cast("long").alias("events"),
        F.sum("baseline_events").alias("baseline_events"),  # null while both are
        F.max("newest_event_time").alias("newest_event_time"),
        F.max("newest_landed_at").alias("newest_landed_at"),
    )
    return _with_ratio(counted)


def spec_for(settings: FeedSettings | None = None) -> GoldTableSpec:
    """The table, with its feed checks under `settings` (None: the packaged defaults, read when
    the checks run)."""
    return GoldTableSpec(
        table=TABLE,
        sources=SOURCES,
        relevant=relevant,
        build=build,
        group_key="event_date",
        row_key=KEY,
        incremental=Accumulate(accumulate),
        locality="event_date",  # an event changes its own day's rows and those it is a baseline of
        cluster_by=("event_date",),
        checks=(FeedChecks(TABLE, FEEDS, settings),),
    )


SPEC = spec_for()


def configured_spec(config) -> GoldTableSpec:
    """The table with the checks the run's configuration asks for (`feeds`)."""
    return spec_for(FeedSettings.from_section(config.section("feeds")))
