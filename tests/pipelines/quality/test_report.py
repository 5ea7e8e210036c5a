"""`lakehouse dq-report`: the HTML report over ops.dq_results, silver.quarantine and ops.runs."""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from html.parser import HTMLParser

import pytest

from pipelines.cli import main
from pipelines.ops.bookkeeping import DQ_RESULTS, DQ_SCHEMA, RUNS, RUNS_SCHEMA
from pipelines.quality.report import build_report, write_report
from pipelines.quality.report_data import Run
from pipelines.quality.report_trend import trend_svg
from pipelines.store import open_store
from tests.support import browser as browser_support

T1 = dt.datetime(2026, 1, 1, 12, 0)
T2 = dt.datetime(2026, 1, 1, 12, 15)
QUARANTINE_SCHEMA = (
    "quarantine_id string, source_table string, event_id string, raw string, failed_checks array<string>, "
    "run_id string, quarantined_at timestamp, source_file string, record_index long"
)
BRONZE_TABLES = {"src_a": "bronze.src_a"}
EVIL = "<script>alert(1)</script>"
LONG_ID = "91b052f8356493a1df20238fc65eed7bc90a5356aee3abce73e4ecea1e450ae5"


def dq_row(run, table, name, success, unexpected, total, examples, at, severity="drop"):
    """A row of ops.dq_results; `examples` as recorded: failing values with their rows and row
    keys, or example values alone."""
    percent = 100.0 * unexpected / total if total else 0.0
    return (
        run,
        table,
        name,
        "expect_column_values_to_not_be_null",
        "event_time",
        severity,
        success,
        unexpected,
        total,
        percent,
        json.dumps(examples),
        at,
    )


def run_row(run, job, table, status, source, rows_in, out, quarantined, duplicates, reconciles=None, at=T1):
    return (
        run,
        job,
        table,
        at,
        at + dt.timedelta(seconds=3),
        status,
        source,
        rows_in,
        out,
        quarantined,
        duplicates,
        1,
        reconciles,
        "",
    )


@pytest.fixture(scope="module")
def warehouse(spark, tmp_path_factory):
    """Two runs. run-1: a reconciliation mismatch. run-2 (latest, the pipeline's tasks all
    succeeded): silver.a1 fails two drop rules with the same unexpected % in both runs, gold.c
    fails a warn rule on 77.78% of its rows, silver.b passes and has a rule that saw no rows."""
    path = tmp_path_factory.mktemp("report") / "warehouse"
    store = open_store(spark, path, "delta-rs")
    failing_values = [
        {"value": EVIL, "rows": 2, "row_keys": ["e2", "e3"]},
        {"value": "not-a-date", "rows": 1, "row_keys": [LONG_ID]},
    ]
    store.append(
        spark.createDataFrame(
            [
                dq_row("run-1", "silver.a1", "event_id_not_null", True, 0, 5, [], T1, "fail"),
                dq_row("run-1", "silver.a1", "event_time_parsed", False, 1, 5, ["1970"], T1),
                dq_row("run-1", "silver.a1", "actor_present", False, 1, 5, ["null"], T1),
                dq_row("run-2", "silver.a1", "event_id_not_null", True, 0, 10, [], T2, "fail"),
                dq_row("run-2", "silver.a1", "event_time_parsed", False, 3, 10, failing_values, T2),
                dq_row("run-2", "silver.a1", "actor_present", False, 3, 10, ["null"], T2),
                dq_row("run-2", "silver.b", "actor_present", True, 0, 4, [], T2, "warn"),
                dq_row("run-2", "silver.b", "chain_unbroken", True, 0, 0, [], T2, "warn"),
                dq_row("run-2", "gold.c", "kind_known", False, 7, 9, ["x", "y"], T2, "warn"),
            ],
            DQ_SCHEMA,
        ),
        DQ_RESULTS,
    )
    store.append(
        spark.createDataFrame(
            [
                run_row("run-1", "bronze_src_a", "bronze.src_a", "SUCCESS", 5, 5, 5, 0, 0),
                run_row("run-1", "silver_a1", "silver.a1", "SUCCESS", 5, 5, 3, 1, 0, "src_a"),
                run_row("run-2", "bronze_src_a", "bronze.src_a", "SUCCESS", 10, 10, 10, 0, 0, at=T2),
                run_row("run-2", "silver_a1", "silver.a1", "SUCCESS", 10, 10, 6, 3, 1, "src_a", at=T2),
                run_row("run-2", "silver_b", "silver.b", "SUCCESS", 6, 4, 4, 0, 0, at=T2),
            ],
            RUNS_SCHEMA,
        ),
        RUNS,
    )
    store.append(
        spark.createDataFrame(
            [
                ("q1", "silver.a1", "e1", "{}", ["event_time_parsed"], "run-1", T1, "f1", 1),
                ("q2", "silver.a1", "e2", "{}", ["event_time_parsed", "cast:actor"], "run-2", T2, "f2", 1),
                ("q3", "silver.a1", "e3", "{}", ["event_time_parsed"], "run-2", T2, "f2", 2),
                ("q4", "silver.a1", None, "x", ["malformed JSON"], "run-2", T2, "f2", 3),
            ],
            QUARANTINE_SCHEMA,
        ),
        "silver.quarantine",
    )
    return path


class Cells(HTMLParser):
    """Rows of each <table>, keyed by its class, as lists of cell texts; and tag names seen."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[dict]] = {}
        self.tags: set[str] = set()
        self._table: list[dict] | None = None
        self._row: dict | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        attrs = dict(attrs)
        if tag == "table":
            self._table = self.tables.setdefault(f"{attrs.get('class')}:{attrs.get('data-table', '')}", [])
        elif tag == "tr" and self._table is not None:
            self._row = {"class": attrs.get("class") or "", "cells": []}
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row["cells"].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None and self._table is not None:
            self._table.append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def parse(page: str) -> Cells:
    cells = Cells()
    cells.feed(page)
    return cells


def rows_of(cells: Cells, key: str) -> list[list[str]]:
    """The body rows' cell texts of the table whose class starts with `key`'s class."""
    kind, _, table = key.partition(":")
    found = [
        rows
        for name, rows in cells.tables.items()
        if name.split(":")[0].split()[0] == kind and name.endswith(f":{table}")
    ]
    assert len(found) == 1, (key, list(cells.tables))
    return [r["cells"] for r in found[0][1:]]


@pytest.fixture(scope="module")
def page(spark, warehouse) -> str:
    return build_report(open_store(spark, warehouse, "delta-rs"), BRONZE_TABLES)


def test_the_header_gives_the_data_quality_verdict_by_severity_apart_from_the_run_status(page):
    verdict = re.search(r'<div class="verdict [^"]*" id="dq-verdict"[^>]*>(.*?)</div>', page).group(1)
    text = re.sub(r"<[^>]+>", "", verdict)
    assert "ROWS QUARANTINED" in text  # a drop rule failing is the worst severity failing
    assert "3 failing expectations in 2 of 3 tables: 0 fail 2 drop 1 warn" in text
    assert "1 not evaluated" in text
    run = re.sub(r"<[^>]+>", "", re.search(r'id="run-status">(.*?)</div>', page).group(1))
    assert "Pipeline run" in run and "SUCCESS" in run and "run-2: 3 tasks, 0 failed" in run


def test_a_roll_up_per_layer(page):
    assert rows_of(parse(page), "rollup:") == [
        ["gold", "1", "1", "1", "0", "0", "1", "0", "0"],
        ["silver", "2", "1", "5", "0", "2", "0", "1", "4"],
    ]


def test_the_overview_sorts_by_severity_then_worst_unexpected_percent(page):
    overview = rows_of(parse(page), "overview:")
    # gold.c's warn rule fails on more rows (77.78%) than silver.a1's drop rules (30%): it comes second
    assert [r[:5] for r in overview] == [
        ["silver.a1", "silver", "drop", "2 drop", "30.00%"],
        ["gold.c", "gold", "warn", "1 warn", "77.78%"],
        ["silver.b", "silver", "none", "0", "0.00%"],
    ]
    assert [r[5:] for r in overview] == [["0", "3", "4"], ["0", "1", "0"], ["1", "2", "0"]]
    assert 'href="#dq-silver.a1"' in page and 'href="#q-silver.a1"' in page  # links within the page


def test_failing_values_come_with_their_rows_and_example_event_ids(page):
    cells = parse(page)
    latest = rows_of(cells, "expectations:silver.a1")[:3]  # the latest run's rows first, failing first
    assert [r[0] for r in latest] == ["actor_present", "event_time_parsed", "event_id_not_null"]
    failing = latest[1]
    assert failing[:6] == ["event_time_parsed", "drop", "FAIL", "3", "10", "30.00%"]
    assert f"{EVIL} ×2 e.g. e2, e3" in failing[6] and "not-a-date ×1 e.g. 91b052f8356493a1…" in failing[6]
    assert f'title="{LONG_ID}"' in page  # the whole key on hover
    assert failing[7] == "expect_column_values_to_not_be_null (event_time)"
    assert latest[2][:3] == ["event_id_not_null", "fail", "PASS"]
    assert rows_of(cells, "expectations:gold.c")[0][6] == "xy"  # example values as older runs recorded them
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert(1)" not in page


def test_a_check_that_saw_no_rows_is_not_evaluated_rather_than_passed(page):
    rows = {r[0]: r for r in rows_of(parse(page), "expectations:silver.b")}
    assert rows["chain_unbroken"][2] == "NOT EVALUATED" and rows["actor_present"][2] == "PASS"
    assert 'data-state="not-evaluated"' in page


def test_quarantined_rows_are_reachable_by_a_query_per_table(page):
    cells = parse(page)
    quarantine = {r[0]: r[1:] for r in rows_of(cells, "quarantine:silver.a1")}
    assert quarantine == {
        "event_time_parsed": ["3", "2", "e1 e3"],
        "cast:actor": ["1", "1", "e2"],
        "malformed JSON": ["1", "1", "none (unparsed records)"],
    }
    query = (
        "lakehouse sql &quot;SELECT event_id, failed_checks, source_file, record_index, run_id, raw "
        "FROM silver.quarantine WHERE source_table = &#x27;silver.a1&#x27; ORDER BY quarantined_at DESC&quot;"
    )
    assert query in page


def test_reconciliation_per_source_and_run(page):
    assert rows_of(parse(page), "reconciliation:") == [
        ["run-2", "src_a", "silver.a1", "10", "10", "6", "3", "1", "10", "OK"],
        ["run-1", "src_a", "silver.a1", "5", "5", "3", "1", "0", "4", "MISMATCH"],
    ]


def test_the_page_loads_nothing_from_elsewhere(page):
    for external in ("<script src", "<link", " src=", "@import", "url(", 'href="http', "href='http"):
        assert external not in page
    assert page.count("<script>") == 1  # the filters and sorting, inline
    assert "Previous run run-1" in page  # earlier runs are kept, folded


def test_trends_draw_identical_series_once_and_one_run_as_bars():
    def run(run_id, at, **percents):
        results = [{"expectation": k, "unexpected_percent": v} for k, v in percents.items()]
        return Run(run_id, at, results)

    two = [run("r2", T2, a=30.0, b=30.0, c=5.0, d=0.0), run("r1", T1, a=20.0, b=20.0, c=10.0, d=0.0)]
    chart = parse(trend_svg("silver.x", two))
    assert "polyline" in chart.tags
    drawn = trend_svg("silver.x", two)
    assert drawn.count("<polyline") == 2  # a and b are one line; d never had unexpected values
    assert "a, b (30.00% latest)" in drawn and "c (5.00% latest)" in drawn
    assert 'stroke-dasharray=""' in drawn and "<rect x=" in drawn  # markers of two shapes

    one = trend_svg("silver.x", [run("r1", T1, a=20.0, b=12.5, d=0.0)])
    assert "<polyline" not in one and one.count('fill="#c0392b"/>') == 2  # a bar per rule that had any
    assert "20.00%" in one and "12.50%" in one and "One run so far" in one
    assert "No unexpected values" in trend_svg("silver.x", [run("r1", T1, d=0.0)])


def test_empty_warehouse_says_there_is_no_data(spark, tmp_path, capsys):
    code = main(["dq-report", "--warehouse", str(tmp_path / "empty")])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    path = tmp_path / "empty" / "reports" / "dq_report.html"
    governance = path.with_name("governance_report.html")  # written beside it
    assert out.splitlines() == [str(path), str(governance)]
    assert "No data yet" in path.read_text(encoding="utf-8")
    assert "No violations table yet" in governance.read_text(encoding="utf-8")


def _browser_binaries() -> tuple[str | None, str | None]:
    return browser_support.chromium(), shutil.which("chromedriver")


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """One headless Chromium for the module, driven over WebDriver (Debian's chromium and
    chromium-driver, which `make browser` installs); no network, a fresh profile."""
    chromium, driver = _browser_binaries()
    if chromium is None or driver is None:
        pytest.skip(browser_support.SKIP)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}",
    ):
        options.add_argument(flag)
    session = webdriver.Chrome(options=options, service=Service(driver))
    yield session
    session.quit()


@pytest.mark.slow  # starts a browser
def test_the_report_reads_at_desktop_and_narrow_widths_and_its_filters_and_sorting_work(
    browser, spark, warehouse, tmp_path
):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    path = write_report(open_store(spark, warehouse, "delta-rs"), tmp_path / "dq.html", BRONZE_TABLES)

    def shown_tables() -> list[str]:
        rows = browser.find_elements(By.CSS_SELECTOR, "table.overview tbody tr")
        return [row.get_attribute("data-dq-table") for row in rows if row.is_displayed()]

    for width in (1400, 800):
        browser.set_window_size(width, 1000)
        browser.get(path.as_uri())
        page, viewport = browser.execute_script(
            "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
        assert page <= viewport, f"the page scrolls sideways at {width} px: {page} > {viewport}"
        verdict = browser.find_element(By.ID, "dq-verdict").text
        assert "ROWS QUARANTINED" in verdict and "0 fail" in verdict and "2 drop" in verdict, verdict
        assert "SUCCESS" in browser.find_element(By.ID, "run-status").text
        rollup = [r.text for r in browser.find_elements(By.CSS_SELECTOR, "table.rollup tbody tr")]
        assert [r.split()[0] for r in rollup] == ["gold", "silver"]
        assert browser.find_element(By.ID, "filters").is_displayed()
        assert shown_tables() == ["silver.a1", "gold.c", "silver.b"]
        browser.save_screenshot(str(tmp_path / f"dq-{width}.png"))
        assert (tmp_path / f"dq-{width}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    browser.find_element(By.ID, "f-failing").click()
    assert shown_tables() == ["silver.a1", "gold.c"]
    assert browser.find_element(By.ID, "f-count").text == "2 of 3 tables shown"
    assert not browser.find_element(By.ID, "dq-silver.b").is_displayed()
    Select(browser.find_element(By.ID, "f-severity")).select_by_value("warn")
    assert shown_tables() == ["gold.c"]
    Select(browser.find_element(By.ID, "f-severity")).select_by_value("all")
    Select(browser.find_element(By.ID, "f-layer")).select_by_value("silver")
    assert shown_tables() == ["silver.a1"]
    passing = browser.find_elements(By.CSS_SELECTOR, "#dq-silver\\.a1 tr[data-state=pass]")
    assert passing and not any(row.is_displayed() for row in passing)  # failing only: their rows too
    browser.find_element(By.ID, "f-failing").click()
    Select(browser.find_element(By.ID, "f-layer")).select_by_value("all")
    assert shown_tables() == ["silver.a1", "gold.c", "silver.b"]

    header = browser.find_element(
        By.XPATH, "//table[contains(@class,'overview')]//th[.//button[text()='Worst unexpected %']]"
    )
    header.find_element(By.TAG_NAME, "button").click()
    assert header.get_attribute("aria-sort") == "ascending"
    assert shown_tables() == ["silver.b", "silver.a1", "gold.c"]
    header.find_element(By.TAG_NAME, "button").click()
    assert shown_tables() == ["gold.c", "silver.a1", "silver.b"]
