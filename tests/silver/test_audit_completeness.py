"""Audit collection completeness: short pages, windows short of their total, windows at the cap,
events a re-read found indexed late."""

from __future__ import annotations

from silver import audit_completeness

SCHEMA = "source_file string, page_total long, page_count long"
W1 = "/landing/datahub_audit/audit-0b039020860f-1000-2000"
W2 = "/landing/datahub_audit/audit-0b039020860f-2000-3000"
CAPPED = "/landing/datahub_audit/audit-0b039020860f-3000-3001"


def landed(spark, *files):
    """Bronze rows: each file as (name, total, count, records landed)."""
    rows = [file[:3] for file in files for _ in range(file[3])]
    return spark.createDataFrame(rows, SCHEMA)


def measured(spark, *files) -> dict:
    outcomes = audit_completeness.measure(audit_completeness.pages(landed(spark, *files)))
    return {o.expectation.name: (o.element_count, o.unexpected_count) for o in outcomes}


# "count: Number of events returned in this response; total: Total count of matching events
# (calculated up to 10,000)"; answers carry no scrollId, so pages are tied to windows by name.
def test_a_window_short_of_its_total_a_short_page_and_a_capped_window_are_counted(spark):
    found = measured(
        spark,
        (f"{W1}-p00000.json", 5, 2, 2),
        (f"{W1}-p00001.json", 5, 2, 1),  # one of its two events never landed
        (f"{W1}-b1500.json", 1, 1, 1),  # a boundary's event: the window has 4 of its 5
        (f"{W2}-p00000.json", 3, 2, 2),
        (f"{W2}-b2100.json", 1, 1, 1),  # 2 + 1 = 3: complete
        (f"{CAPPED}-p00000.json", 10_000, 2, 2),
    )
    assert found == {
        "audit_page_events_all_landed": (6, 1),
        "audit_window_events_all_landed": (2, 1),
        "audit_window_under_cap": (6, 1),
        "audit_late_indexed_events": (9, 0),
    }


def test_events_a_reread_found_late_are_measured_and_do_not_count_against_their_window(spark):
    found = measured(
        spark,
        (f"{W1}-p00000.json", 4, 4, 4),
        (f"{W1}-r.json", None, 3, 3),
    )
    assert found["audit_late_indexed_events"] == (7, 3)
    assert found["audit_window_events_all_landed"] == (1, 0)
    assert found["audit_page_events_all_landed"] == (2, 0)


def test_every_check_is_a_warning(spark):
    outcomes = audit_completeness.measure(
        audit_completeness.pages(landed(spark, (f"{W1}-p00000.json", 1, 1, 1)))
    )
    assert [o.expectation.severity for o in outcomes] == ["warn"] * 4
    assert "audit_scroll_chain_unbroken" not in {o.expectation.name for o in outcomes}
