"""Was every DataHub audit-events search page collected? Checks recorded in `ops.dq_results`.

A search page says how many events it returns (`count`) and how many match its window (`total`,
"calculated up to 10,000"); the answers do not echo the `scrollId` that fetched them. Bronze keeps
`count` and `total` beside every record (`bronze.datahub_audit_events`), and the collector names
each file after its window (`audit-<collection>-<start>-<end>-p<page>.json`, `-b<ms>.json` for
the events of a page boundary, `-r.json` for a re-read of the overlap), so the collected pages
can be checked after the fact, over all of bronze (pages are few; only counts come back):

- `audit_page_events_all_landed`: a page holds as many records as its `count`;
- `audit_window_events_all_landed`: a window under the cap holds, in its pages and boundary
  files, at least the `total` its pages reported (fewer: a page or a boundary's events are
  missing);
- `audit_window_under_cap`: a query window's `total` is below the 10,000 cap (at the cap the
  window may hold more events than the search could return: split it);
- `audit_late_indexed_events`: records that a re-read of the overlap found after their window
  was collected, because DataHub indexed them late. They are collected, so this measures the
  indexing lag: many of them say the lag nears `overlap_minutes`, beyond which events are missed.

All are `warn`: a gap is reported (DQ report, `ops.dq_results`), it does not stop a run.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pipelines.quality import Expectation, Outcome

BRONZE = "bronze.datahub_audit_events"
TOTAL_CAP = 10_000
PAGE_KEY = ("source_file", "page_total", "page_count")
# the collector's file names: audit-<collection>-<start>-<end>-<kind>...
FILE_NAME = r"audit-([0-9a-f]+)-([0-9]+)-([0-9]+)-([pbr])[^/]*$"

PAGE_EVENTS = Expectation(
    "audit_page_events_all_landed",
    "expect_column_pair_values_to_be_equal",
    {"column_A": "page_count", "column_B": "records"},
    "warn",
)
WINDOW_EVENTS = Expectation(
    "audit_window_events_all_landed",
    "expect_column_pair_values_a_to_be_greater_than_b",
    {"column_A": "records", "column_B": "window_total", "or_equal": True},
    "warn",
)
WINDOW_CAP = Expectation(
    "audit_window_under_cap",
    "expect_column_values_to_be_between",
    {"column": "page_total", "max_value": TOTAL_CAP - 1},
    "warn",
)
LATE_EVENTS = Expectation(
    "audit_late_indexed_events",
    "expect_column_values_to_be_in_set",
    {"column": "indexed_late", "value_set": [False]},
    "warn",
)


def pages(bronze: DataFrame) -> DataFrame:
    """One row per landed file: its page fields, its records, and the window and kind its name says."""
    per_page = bronze.groupBy(*PAGE_KEY).agg(F.count("*").alias("records"))
    name = F.col("source_file")
    return per_page.select(
        *PAGE_KEY,
        "records",
        F.concat_ws(
            "-",
            F.regexp_extract(name, FILE_NAME, 1),
            F.regexp_extract(name, FILE_NAME, 2),
            F.regexp_extract(name, FILE_NAME, 3),
        ).alias("window"),
        F.nullif(F.regexp_extract(name, FILE_NAME, 4), F.lit("")).alias("kind"),
    )


def windows(page_rows: DataFrame) -> DataFrame:
    """One row per collected window under the cap: records in its pages and boundary files, and
    the `total` its pages reported."""
    own = page_rows.where(F.col("kind").isin("p", "b"))
    return (
        own.groupBy("window")
        .agg(
            F.sum("records").alias("records"),
            F.max(F.when(F.col("kind") == "p", F.col("page_total"))).alias("window_total"),
        )
        .where(F.col("window_total").isNotNull() & (F.col("window_total") < TOTAL_CAP))
    )


def measure(page_rows: DataFrame) -> list[Outcome]:
    """The four outcomes from the page rows (two small aggregates, collected)."""
    counts = page_rows.agg(
        F.count(F.col("page_count")).alias("counted"),
        F.sum((F.col("page_count") != F.col("records")).cast("int")).alias("short"),
        F.count(F.col("page_total")).alias("totals"),
        F.sum((F.col("page_total") >= TOTAL_CAP).cast("int")).alias("capped"),
        F.sum("records").alias("all_records"),
        F.sum(F.when(F.col("kind") == "r", F.col("records"))).alias("late"),
    ).first()
    window_counts = (
        windows(page_rows)
        .agg(
            F.count("*").alias("windows"),
            F.sum((F.col("records") < F.col("window_total")).cast("int")).alias("short_windows"),
        )
        .first()
    )

    def outcome(expectation: Expectation, elements, unexpected) -> Outcome:
        return Outcome(expectation, int(elements or 0), int(unexpected or 0), ())

    return [
        outcome(PAGE_EVENTS, counts["counted"], counts["short"]),
        outcome(WINDOW_EVENTS, window_counts["windows"], window_counts["short_windows"]),
        outcome(WINDOW_CAP, counts["totals"], counts["capped"]),
        outcome(LATE_EVENTS, counts["all_records"], counts["late"]),
    ]


def outcomes(store) -> list[Outcome]:
    """The checks over every page bronze holds (none when there is no audit table yet)."""
    if not store.exists(BRONZE):
        return []
    bronze = store.read(BRONZE)
    for column in [c for c in PAGE_KEY if c not in bronze.columns]:  # a table older than the page fields
        bronze = bronze.withColumn(column, F.lit(None).cast("long"))
    return measure(pages(bronze))
