"""Was every DataHub audit-events search page collected? Checks recorded in `ops.dq_results`.

The Audit Events Search API pages with `scrollId` / `nextScrollId`; a page says how many
events it returns (`count`) and how many match (`total`, "calculated up to 10,000"). Bronze
keeps these beside every record (`bronze.datahub_audit_events`), so the collected pages
can be checked after the fact, over all of bronze (pages are few; only counts come back):

- `audit_page_events_all_landed`: a page holds as many records as its `count`;
- `audit_scroll_chain_unbroken`: a full page's `nextScrollId` was used to fetch a collected
  page (checked where the landed pages record the `scrollId` that fetched them; a page
  shorter than the longest of its window is the window's last and needs no successor);
- `audit_window_under_cap`: a query window's `total` is below the 10,000 cap (at the cap
  the window may hold more events than the search could return: split it).

All are `warn`: a gap is reported (DQ report, `ops.dq_results`), it does not stop a run.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pipelines.quality import Expectation, Outcome

BRONZE = "bronze.datahub_audit_events"
TOTAL_CAP = 10_000
PAGE_KEY = ("source_file", "scroll_id", "next_scroll_id", "page_total", "page_count")

PAGE_EVENTS = Expectation(
    "audit_page_events_all_landed",
    "expect_column_pair_values_to_be_equal",
    {"column_A": "page_count", "column_B": "records"},
    "warn",
)
SCROLL_CHAIN = Expectation(
    "audit_scroll_chain_unbroken",
    "expect_column_values_to_be_in_set",
    {"column": "next_page_collected", "value_set": [True]},
    "warn",
)
WINDOW_CAP = Expectation(
    "audit_window_under_cap",
    "expect_column_values_to_be_between",
    {"column": "page_total", "max_value": TOTAL_CAP - 1},
    "warn",
)


def pages(bronze: DataFrame) -> DataFrame:
    """One row per landed page: its page fields, its records, and whether the page it points to
    (`next_scroll_id`) was collected (null when that cannot be known or is not expected)."""
    landed = bronze.where(F.col("next_scroll_id").isNotNull() | F.col("page_total").isNotNull())
    per_page = landed.groupBy(*PAGE_KEY).agg(F.count("*").alias("records"))
    fetched_by = (
        per_page.where(F.col("scroll_id").isNotNull())
        .select(F.col("scroll_id").alias("_fetched_by"), F.lit(True).alias("_collected"))
        .distinct()
    )
    longest = per_page.groupBy("page_total").agg(F.max("page_count").alias("_longest"))
    chained = per_page.join(longest, "page_total", "left").join(
        fetched_by, F.col("next_scroll_id") == F.col("_fetched_by"), "left"
    )
    scroll_ids_known = fetched_by.limit(1).count() > 0
    expects_next = (
        F.lit(scroll_ids_known)
        & F.col("next_scroll_id").isNotNull()
        & (F.coalesce(F.col("page_count"), F.lit(0)) > 0)
        & (F.col("page_count") >= F.col("_longest"))
    )
    return chained.select(
        *PAGE_KEY,
        "records",
        F.when(expects_next, F.coalesce(F.col("_collected"), F.lit(False))).alias("next_page_collected"),
    )


def measure(page_rows: DataFrame) -> list[Outcome]:
    """The three outcomes from the page rows (one small aggregate, collected)."""
    counts = page_rows.agg(
        F.count(F.col("page_count")).alias("counted"),
        F.sum((F.col("page_count") != F.col("records")).cast("int")).alias("short"),
        F.count(F.col("next_page_collected")).alias("chained"),
        F.sum((~F.col("next_page_collected")).cast("int")).alias("broken"),
        F.count(F.col("page_total")).alias("totals"),
        F.sum((F.col("page_total") >= TOTAL_CAP).cast("int")).alias("capped"),
    ).first()

    def outcome(expectation: Expectation, elements: str, unexpected: str) -> Outcome:
        return Outcome(expectation, int(counts[elements] or 0), int(counts[unexpected] or 0), ())

    return [
        outcome(PAGE_EVENTS, "counted", "short"),
        outcome(SCROLL_CHAIN, "chained", "broken"),
        outcome(WINDOW_CAP, "totals", "capped"),
    ]


def outcomes(store) -> list[Outcome]:
    """The checks over every page bronze holds (none when there is no audit table yet)."""
    if not store.exists(BRONZE):
        return []
    bronze = store.read(BRONZE)
    missing = [c for c in PAGE_KEY if c not in bronze.columns]
    for column in missing:  # a table landed before these page fields were kept
        bronze = bronze.withColumn(column, F.lit(None).cast("string" if "id" in column else "long"))
    return measure(pages(bronze))
