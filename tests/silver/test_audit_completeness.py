"""Audit collection completeness: short pages, a broken scroll chain, windows at the 10,000 cap."""

from __future__ import annotations

from silver import audit_completeness

SCHEMA = "source_file string, scroll_id string, next_scroll_id string, page_total long, page_count long"


def landed(spark, *pages):
    """Bronze rows: each page as (file, scrollId, nextScrollId, total, count, records landed)."""
    rows = [page[:5] for page in pages for _ in range(page[5])]
    return spark.createDataFrame(rows, SCHEMA)


# "count: Number of events returned in this response; total: Total count of matching events
# (calculated up to 10,000)"; pages continue with `nextScrollId`.
def test_gaps_in_the_collected_pages_are_counted(spark):
    bronze = landed(
        spark,
        ("p1.json", None, "s2", 5, 2, 2),
        ("p2.json", "s2", "s3", 5, 2, 1),  # one of its two events never landed
        # the page fetched with s3 is missing: p2 was full, so a page must follow
        ("q1.json", None, "t2", 10_000, 2, 2),  # a window at the cap
        ("q2.json", "t2", "t3", 10_000, 1, 1),  # shorter than its window's pages: the last one
    )
    outcomes = {o.expectation.name: o for o in audit_completeness.measure(audit_completeness.pages(bronze))}
    assert (
        outcomes["audit_page_events_all_landed"].element_count,
        outcomes["audit_page_events_all_landed"].unexpected_count,
    ) == (4, 1)
    assert (
        outcomes["audit_scroll_chain_unbroken"].element_count,
        outcomes["audit_scroll_chain_unbroken"].unexpected_count,
    ) == (3, 1)
    assert (
        outcomes["audit_window_under_cap"].element_count,
        outcomes["audit_window_under_cap"].unexpected_count,
    ) == (4, 2)
    assert all(o.expectation.severity == "warn" for o in outcomes.values())


def test_without_recorded_scroll_ids_the_chain_is_not_judged(spark):
    bronze = landed(spark, ("p1.json", None, "s2", 5, 2, 2), ("p2.json", None, "s3", 5, 2, 2))
    outcomes = {o.expectation.name: o for o in audit_completeness.measure(audit_completeness.pages(bronze))}
    assert outcomes["audit_scroll_chain_unbroken"].element_count == 0
    assert outcomes["audit_page_events_all_landed"].unexpected_count == 0
