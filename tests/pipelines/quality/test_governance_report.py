"""The governance report: its series from hand-written rows of every table it reads, its page, the
sections of tables not there yet, and the page in a real Chromium at 800 px, offline."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from gold import governance_coverage_daily as coverage_table
from gold import proposals as proposals_table
from gold import review_backlog_daily as backlog_table
from gold.event_clock import CHANGE_HISTORY, event_clock
from pipelines.cli import main
from pipelines.core.config import PROJECT_ROOT
from pipelines.ops.bookkeeping import DQ_RESULTS, DQ_SCHEMA
from pipelines.quality import governance_data as data
from pipelines.quality.charts import bar_chart, time_chart
from pipelines.quality.governance_report import build_governance_report
from pipelines.runtime.spark import SMALL_INPUT_CONF, session_conf
from pipelines.store import open_store
from tests.support import browser
from tests.support.engines import engine_store, skip_without_delta_spark

UTC = dt.timezone.utc
# the shared interfaces' schemas: the tables are written by other tasks
VIOLATIONS_SCHEMA = (
    "violation_id string, rule_id string, rule_kind string, severity string, source string, "
    "entity_urn string, entity_type string, entity_name string, responsible string, "
    "condition_since timestamp, opened_at timestamp, resolved_at timestamp, details map<string,string>"
)
FEED_VOLUME_SCHEMA = (
    "source string, family string, event_date date, events long, baseline_events double, ratio double, "
    "newest_event_time timestamp, newest_landed_at timestamp"
)
HISTORY_SCHEMA = "change_id string, source string, entity_urn string, event_time timestamp"
CLOCK = dt.datetime(2024, 3, 4, 9, 0, tzinfo=UTC)
DAYS = [dt.date(2024, 3, d) for d in range(1, 5)]
MARKETING = "urn:li:domain:marketing"


def at(day: int, hour: int = 0, minute: int = 0) -> dt.datetime:
    return dt.datetime(2024, 3, day, hour, minute, tzinfo=UTC)


def violation(vid, rule, severity, opened, resolved=None, entity="urn:e1"):
    return (vid, rule, "owner_missing", severity, "datahub", entity, "dataset", None, None,
            opened, opened, resolved, {})  # fmt: skip


def coverage_row(day, source, entity_type, domain, live, owner, term=0):
    return (f"{day}-{source}-{entity_type}-{domain}", day, source, "snowflake", entity_type, domain,
            live, owner, term, 0 if domain is None else live, 0, 0, {}, str(day))  # fmt: skip


def dq_feed_row(run, table, expectation, success, at_):
    return (run, table, expectation, "expect_feed", None, "warn", success, 0 if success else 1, 1,
            0.0 if success else 100.0, "[]", at_)  # fmt: skip


def write_tables(spark, store, only: tuple[str, ...] = ()) -> None:
    """Every table the report reads (or those named in `only`), a few rows each, on `store`'s engine."""
    tables = {
        CHANGE_HISTORY: (
            HISTORY_SCHEMA,
            [("c1", "datahub", "urn:e1", at(1, 8)), ("c2", "datahub", "urn:e1", CLOCK)],
        ),
        data.VIOLATIONS: (
            VIOLATIONS_SCHEMA,
            [
                violation("v1", "owner-required", "warn", at(1, 10), at(3, 12)),
                violation("v2", "owner-required", "warn", at(2), entity="urn:e2"),  # at 03-01's end
                violation("v3", "no-unattributed", "critical", at(2, 5)),
                violation("v4", "no-unattributed", "critical", at(5, 1)),  # after the clock: not yet
            ],
        ),
        data.COVERAGE: (
            coverage_table.SCHEMA,
            [coverage_row(d, "datahub", "dataset", MARKETING, 2, 1 if d.day < 3 else 2, 1) for d in DAYS]
            + [coverage_row(d, "datahub", "schemaField", MARKETING, 10, 0) for d in DAYS]  # fields: left out
            + [coverage_row(d, "openmetadata", "table", None, 4, 1) for d in DAYS[1:]],
        ),
        data.PROPOSALS: (
            proposals_table.SCHEMA,
            [
                (
                    "p1",
                    "TAG_ASSOCIATION",
                    "urn:e1",
                    None,
                    None,
                    None,
                    "alice",
                    at(1, 9),
                    "ACCEPTED",
                    "STATUS_EVENT",
                    at(2, 9),
                    "bob",
                    None,
                    {},
                    None,
                    "datahub",
                    ["bob"],
                    24.0,
                ),
                (
                    "p2",
                    "TAG_ASSOCIATION",
                    "urn:e2",
                    None,
                    None,
                    None,
                    "alice",
                    at(1, 9),
                    "ACCEPTED",
                    "STATUS_EVENT",
                    at(1, 21),
                    "bob",
                    None,
                    {},
                    None,
                    "datahub",
                    ["bob", "carol"],
                    12.0,
                ),
                (
                    "p3",
                    "PERMISSION_REQUEST",
                    "urn:e3",
                    None,
                    None,
                    None,
                    "dan",
                    at(2, 3),
                    "PENDING",
                    None,
                    None,
                    None,
                    None,
                    {},
                    None,
                    "dataworks",
                    [],
                    None,
                ),
            ],  # fmt: skip
        ),
        data.BACKLOG: (
            backlog_table.SCHEMA,
            [
                (f"b{d}", d, "datahub", "TAG_ASSOCIATION", "bob", 1, 1, 0, 0, 0, 0.5, 0.5, 0.5 + i, str(d))
                for i, d in enumerate(DAYS)
            ],  # fmt: skip
        ),
        data.FEED_VOLUME: (
            FEED_VOLUME_SCHEMA,
            [
                ("datahub", fam, d, n + i, None if i == 0 else 10.0, None, at(d.day, 8), at(d.day, 9))
                for i, d in enumerate(DAYS)
                for fam, n in (("entity_changes", 8), ("audit", 2))
            ],  # fmt: skip
        ),
        DQ_RESULTS: (
            DQ_SCHEMA,
            [
                dq_feed_row("r1", "feeds.datahub", "feed_is_fresh:audit", True, at(3, 9)),
                dq_feed_row("r2", "feeds.datahub", "feed_is_fresh:audit", False, at(4, 9)),
                dq_feed_row("r2", "feeds.datahub", "feed_volume_near_baseline:audit", True, at(4, 9)),
                dq_feed_row("r2", "silver.x", "not_a_feed_check", False, at(4, 9)),
            ],
        ),
    }
    for name, (schema, rows) in tables.items():
        if only and name not in only:
            continue
        store.append(spark.createDataFrame(rows, schema), name)


@pytest.fixture(scope="module", autouse=True)
def _small_input(spark):
    """Plans as for a small input (a few hand-written rows): no code generation to wait for."""
    with session_conf(spark, SMALL_INPUT_CONF):
        yield


@pytest.fixture(scope="module")
def store(spark, tmp_path_factory):
    store = open_store(spark, tmp_path_factory.mktemp("governance") / "warehouse", "delta-rs")
    write_tables(spark, store)
    return store


@pytest.fixture(scope="module")
def page(store) -> str:
    return build_governance_report(store)


def test_the_event_clock_is_the_newest_change(store):
    assert event_clock(store) == CLOCK


def test_violations_open_are_counted_at_each_days_end_and_at_the_clock(store):
    found = data.violations_open(store.read(data.VIOLATIONS), CLOCK)
    assert (found.step, found.days) == ("day", DAYS)  # up to the clock's day, not the later opening
    assert found.series == {
        "owner-required (warn)": [2, 2, 1, 1],  # v2 opened at midnight: open at 03-01's end
        "no-unattributed (critical)": [0, 1, 1, 1],  # v4 opens after the clock: not yet a violation
    }
    rules = {r["rule_id"]: r for r in data.violations_by_rule(store.read(data.VIOLATIONS), CLOCK)}
    assert {k: (r["open_now"], r["opened"], r["resolved"]) for k, r in rules.items()} == {
        "owner-required": (1, 2, 1),
        "no-unattributed": (1, 1, 0),
    }


def test_coverage_shares_per_catalog_leave_fields_out_and_per_domain(store):
    coverage = store.read(data.COVERAGE)
    per_catalog = data.coverage_per_catalog(coverage)
    assert sorted(per_catalog) == ["datahub", "openmetadata"]
    assert per_catalog["datahub"].series["owner"] == [50.0, 50.0, 100.0, 100.0]
    assert per_catalog["datahub"].series["glossary term"] == [50.0] * 4
    assert per_catalog["openmetadata"].series["owner"] == [None, 25.0, 25.0, 25.0]  # from its first day
    per_domain = data.coverage_per_domain(coverage)
    assert per_domain.series == {
        "marketing": [50.0, 50.0, 100.0, 100.0],
        "no domain": [None, 25.0, 25.0, 25.0],
    }


def test_reviews_count_each_request_once_and_cycle_times_per_type(store):
    proposals = store.read(data.PROPOSALS)
    found = data.requests_open(proposals, CLOCK)
    # p2 has two assignees and resolved the day it was made: never open at a day's end
    assert found.series == {"datahub": [1, 0, 0, 0], "dataworks": [0, 1, 1, 1]}
    times = data.cycle_times(proposals)
    assert [(r["source"], r["action_request_type"], r["resolved"]) for r in times] == [
        ("datahub", "TAG_ASSOCIATION", 2)
    ]
    assert (times[0]["p50_hours"], times[0]["p90_hours"]) == (12.0, 24.0)
    assert data.oldest_open_request(store.read(data.BACKLOG)).series == {"datahub": [0.5, 1.5, 2.5, 3.5]}


def test_feed_volume_sums_families_with_the_baseline_where_known_and_only_feed_checks(store):
    events, baseline = data.feed_volume(store.read(data.FEED_VOLUME))["datahub"]
    assert events.series["events"] == [10.0, 12.0, 14.0, 16.0]
    assert baseline.series["baseline"] == [None, 20.0, 20.0, 20.0]
    checks = data.feed_checks(store.read(DQ_RESULTS))
    assert [(c["expectation"], c["success"], c["breaches"], c["runs"]) for c in checks] == [
        ("feed_is_fresh:audit", False, 1, 2),  # the latest outcome, breached first
        ("feed_volume_near_baseline:audit", True, 0, 1),
    ]


def test_long_histories_are_plotted_by_week_then_by_month(spark):
    assert data.step_for(dt.date(2024, 1, 1), dt.date(2024, 12, 31)) == "day"
    assert data.step_for(dt.date(2023, 1, 1), dt.date(2024, 12, 31)) == "week"
    assert data.step_for(dt.date(2014, 1, 1), dt.date(2024, 12, 31)) == "month"
    assert data.axis(dt.date(2024, 1, 31), dt.date(2024, 4, 2), "month") == [
        dt.date(2024, m, 1) for m in (1, 2, 3, 4)
    ]
    two_years = spark.createDataFrame(
        [("a", dt.datetime(2023, 1, 2, 12, tzinfo=UTC), dt.datetime(2024, 6, 5, 12, tzinfo=UTC))],
        "rule string, opened_at timestamp, resolved_at timestamp",
    )
    found = data.open_per_day(
        two_years, "opened_at", "resolved_at", two_years["rule"], dt.datetime(2024, 12, 31, tzinfo=UTC)
    )
    weeks = found.series["a"]
    assert found.step == "week" and len(found.days) == 105 and all(d.weekday() == 0 for d in found.days)
    resolved_week = found.days.index(dt.date(2024, 6, 3))
    assert set(weeks[:resolved_week]) == {1} and set(weeks[resolved_week:]) == {0}  # state at each week's end


def test_the_page_has_a_chart_per_series_and_loads_nothing(page):
    charts = re.findall(r'<svg class="chart" id="([^"]+)"', page)
    assert charts == [
        "coverage-datahub",
        "coverage-openmetadata",
        "coverage-domains",
        "backlog-open",
        "backlog-age",
        "cycle-times",
        "violations-open",
        "feed-datahub",
    ]
    assert re.search(
        r'aria-labelledby="violations-open-t"><title id="violations-open-t">Violations open', page
    )
    assert "2024-03-04 09:00 UTC" in page  # the event clock
    summary = dict(
        re.findall(r'<div data-severity="(\w+)"><span class="muted">[^<]*</span><b>(\d+)</b>', page)
    )
    assert summary == {"critical": "1", "warn": "1", "info": "0"}
    assert "BREACHED" in page and "1 of 2" in page and "not_a_feed_check" not in page
    for external in ("<script", "<link", " src=", "@import", "url(", 'href="http'):
        assert external not in page
    assert "table yet" not in page


def test_sections_of_tables_not_there_yet_say_so_and_dq_report_writes_both(spark, tmp_path, capsys):
    warehouse = tmp_path / "warehouse"
    store = open_store(spark, warehouse, "delta-rs")
    store.append(spark.createDataFrame([("c1", "datahub", "urn:e1", CLOCK)], HISTORY_SCHEMA), CHANGE_HISTORY)
    assert main(["dq-report", "--warehouse", str(warehouse)]) == 0
    paths = [Path(p) for p in capsys.readouterr().out.splitlines()]
    assert [p.name for p in paths] == ["dq_report.html", "governance_report.html"]
    text = paths[1].read_text(encoding="utf-8")
    for missing in ("coverage", "proposals", "backlog", "violations", "feed volume"):
        assert f"No {missing} table yet" in text
    assert "No feed checks recorded yet" in text and "<svg" not in text


@pytest.mark.slow  # starts a browser
def test_the_page_in_chromium_at_800_px_has_data_in_every_chart_and_no_sideways_scroll(page, tmp_path):
    path = tmp_path / "governance_report.html"
    path.write_text(page, encoding="utf-8")
    probe = """{
      width: document.documentElement.scrollWidth,
      viewport: document.documentElement.clientWidth,
      fetched: performance.getEntriesByType('resource').length,
      charts: Array.prototype.map.call(document.querySelectorAll('svg.chart'), function (svg) {
        var box = svg.getBoundingClientRect();
        return {id: svg.id, marks: svg.querySelectorAll('.mark').length,
                width: Math.round(box.width), height: Math.round(box.height)};
      })
    }"""
    found = browser.dump_dom(path, tmp_path, probe, width=800)
    assert "error" not in found, found
    assert found["viewport"] <= 800 and found["width"] <= found["viewport"], found
    assert found["fetched"] == 0  # nothing loaded beside the page
    assert len(found["charts"]) == 8
    for chart in found["charts"]:
        assert chart["marks"] > 0, chart
        assert 0 < chart["width"] <= found["viewport"] and chart["height"] > 40, chart


@pytest.mark.slow  # the delta-spark engine
def test_delta_spark_gives_the_clock_and_the_violations_alike(spark, tmp_path, store):
    """The engine's part: the clock from the table's file statistics, tables read by name."""
    skip_without_delta_spark("delta-spark")
    named = engine_store(spark, tmp_path / "warehouse", "delta-spark")
    write_tables(spark, named, only=(CHANGE_HISTORY, data.VIOLATIONS))
    assert event_clock(named) == CLOCK
    expected = data.violations_open(store.read(data.VIOLATIONS), CLOCK)
    assert data.violations_open(named.read(data.VIOLATIONS), event_clock(named)) == expected
    assert named.exists(data.VIOLATIONS) and not named.exists(data.COVERAGE)


def test_make_browser_installs_what_the_browser_tests_skip_message_names():
    makefile = (PROJECT_ROOT / "Makefile").read_text(encoding="utf-8")
    assert f"BROWSER_INSTALL := {browser.INSTALL}\n" in makefile
    assert "test-all: $(STAMP) browser\n" in makefile and browser.INSTALL in browser.SKIP


def test_charts_label_their_axes_sparingly_and_say_when_there_is_nothing_to_plot():
    days = [dt.date(2024, 1, 1) + dt.timedelta(days=i) for i in range(90)]
    chart = time_chart("c", "Open <per> day", days, [("a", [float(i % 7) for i in range(90)])], counts=True)
    assert 'aria-labelledby="c-t"><title id="c-t">Open &lt;per&gt; day</title>' in chart
    labels = re.findall(r">(\d{4}-\d{2}-\d{2})</text>", chart)
    assert 2 <= len(labels) <= 7 and labels[0] == "2024-01-01" and labels[-1] == "2024-03-30"
    assert re.findall(r'text-anchor="end" fill="#5d6d7e">(\d+)</text>', chart) == ["0", "2", "4", "6", "8"]
    plot = chart.split("</svg>")[0]  # the legend's swatches follow
    assert plot.count('class="mark"') == 1 and "<circle" not in plot  # 90 points: the line alone
    assert "nothing to plot yet" in time_chart("c", "Open", days, [("a", [None] * 90)])
    bars = bar_chart("b", "Cycle", ["x", "y"], [("median", [2.0, 30.0]), ("p90", [4.0, None])], unit=" h")
    assert bars.count('class="mark bar"') == 3 and ">30.0 h</text>" in bars
