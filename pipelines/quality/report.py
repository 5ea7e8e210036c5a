"""`lakehouse dq-report`: one static HTML page on data quality, from the ops tables.

What the data-quality lead sees first: the verdict by severity (how many rules fail that stop
the run, quarantine rows or only warn), apart from the pipeline run's own status; a roll-up per
layer; then every table, worst first (by severity, then by unexpected %), with filters and
sortable columns. Below: each table's rules with their failing values (rows, example
`event_id`s) and trend, the quarantine with a query per table to reach its rows, landing files
not read in full, and the reconciliation of each run.

The page is self-contained (inline CSS, SVG and script, `pipelines.quality.report_assets`):
it works offline, mailed or archived next to the warehouse. Spark aggregates
(`pipelines.quality.report_data`); every value is HTML-escaped.
"""

from __future__ import annotations

import datetime as dt
import html
import json
from collections import Counter
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame

from pipelines.landing import ingestion_log
from pipelines.ops.bookkeeping import DQ_RESULTS, RUNS
from pipelines.quality.report_assets import CSS, SCRIPT
from pipelines.quality.report_data import (
    FAIL,
    NOT_EVALUATED,
    WORST_FIRST,
    Run,
    collector_losses,
    dq_runs,
    layer_of,
    quarantine_counts,
    recent_runs,
    reconcile,
    severity_rank,
    state,
    unread_files,
)
from pipelines.quality.report_trend import trend_svg
from pipelines.store import TableStore

QUARANTINE = "silver.quarantine"
COLLECTOR_LOSSES = "ops.collector_losses"
DEFAULT_LAST_RUNS = 10
MEANING = {"fail": "the run stops", "drop": "failing rows go to silver.quarantine", "warn": "recorded only"}


def e(value: Any) -> str:
    """Escaped text; missing values as a dash."""
    return "&mdash;" if value is None else html.escape(str(value), quote=True)


def _when(value: dt.datetime | None) -> str:
    return "" if value is None else value.strftime("%Y-%m-%d %H:%M:%S UTC")


def _num(value: Any) -> str:
    return "&mdash;" if value is None else f"{int(value):,}"


def _read(store: TableStore, name: str) -> DataFrame | None:
    return store.read(name) if store.exists(name) else None


def _scroll(table: str) -> str:
    """A wide table scrolls inside its card, never the page."""
    return f'<div class="scroll">{table}</div>'


def _head(*columns: tuple[str, str]) -> str:
    """A sortable header: (label, "num" or "text") per column."""
    cells = "".join(
        f'<th data-type="{kind}"><button type="button">{e(label)}</button></th>' for label, kind in columns
    )
    return f"<thead><tr>{cells}</tr></thead>"


def _sev(severity: str, count: int | None = None) -> str:
    text = severity if count is None else f"{count} {severity}"
    return f'<span class="sev sev-{e(severity)}" title="{e(MEANING.get(severity, ""))}">{e(text)}</span>'


def _table_attributes(table: str, run: Run) -> str:
    """What the filters read: layer, failing count, the severities of its rules and failing rules."""
    failing = " ".join(s for s in WORST_FIRST if run.failing_by_severity[s])
    present = " ".join(s for s in WORST_FIRST if any(r["severity"] == s for r in run.results))
    return (
        f'data-dq-table="{e(table)}" data-layer="{e(layer_of(table))}" data-failing="{run.failed}" '
        f'data-severities="{e(present)}" data-failing-severities="{e(failing)}"'
    )


# -- the first look ----------------------------------------------------------------------


def verdict(runs_by_table: dict[str, list[Run]]) -> dict:
    """The data-quality verdict of the latest run of every table: failing rules by severity."""
    counts: Counter = Counter()
    for runs in runs_by_table.values():
        counts.update(runs[0].failing_by_severity)
    worst = next((s for s in WORST_FIRST if counts[s]), None)
    label = {"fail": "FAILING", "drop": "ROWS QUARANTINED", "warn": "WARNINGS", None: "ALL PASSING"}[worst]
    return {
        "label": label if runs_by_table else "NOT VALIDATED",
        "worst": worst,
        "by_severity": {s: counts[s] for s in WORST_FIRST},
        "failing": sum(counts.values()),
        "not_evaluated": sum(runs[0].not_evaluated for runs in runs_by_table.values()),
        "tables": len(runs_by_table),
        "failing_tables": sum(1 for runs in runs_by_table.values() if runs[0].failed),
    }


def header(warehouse: str, generated: str, runs_by_table: dict[str, list[Run]], runs: list) -> str:
    """Title, then the data-quality verdict and the pipeline run's status, side by side."""
    found = verdict(runs_by_table)
    tone = {"fail": "v-fail", "drop": "v-drop", "warn": "v-warn", None: "v-pass"}[found["worst"]]
    breakdown = " ".join(_sev(s, n) for s, n in found["by_severity"].items())
    unevaluated = (
        f'<span class="detail">{found["not_evaluated"]} not evaluated (no rows to check)</span>'
        if found["not_evaluated"]
        else ""
    )
    dq = (
        f'<div class="verdict {tone if runs_by_table else "v-muted"}" id="dq-verdict" '
        f'data-worst="{e(found["worst"] or "none")}"><span class="label">Data quality (latest run of each table)</span>'
        f"<b>{e(found['label'])}</b>"
        f'<span class="detail">{found["failing"]} failing expectation{"s" if found["failing"] != 1 else ""} '
        f"in {found['failing_tables']} of {found['tables']} tables: {breakdown}</span>{unevaluated}</div>"
    )
    latest_id, latest = (runs[0][0], runs[0][1]) if runs else (None, [])
    failed = sum(1 for t in latest if t["status"] == "FAILED")
    status = "FAILED" if failed else ("SUCCESS" if latest else "NO RUNS")
    run = (
        f'<div class="verdict {"v-fail" if failed else "v-pass" if latest else "v-muted"}" id="run-status">'
        f'<span class="label">Pipeline run (its tasks, not data quality)</span><b>{e(status)}</b>'
        f'<span class="detail">{e(latest_id)}: {len(latest)} tasks, {failed} failed</span></div>'
    )
    legend = " &middot; ".join(f"{_sev(s)} {e(MEANING[s])}" for s in WORST_FIRST)
    return (
        f"<header><h1>Data quality report</h1><p>Warehouse {e(warehouse)} &middot; generated {e(generated)}</p>"
        f'<div class="verdicts">{dq}{run}</div><p class="legend-sev">Severities: {legend}</p></header>'
    )


def rollup_section(runs_by_table: dict[str, list[Run]], counts: dict[str, dict] | None) -> str:
    """Per layer: tables, rules, failing rules by severity, not evaluated, quarantined rows."""
    layers: dict[str, dict] = {}
    for table, runs in runs_by_table.items():
        latest = runs[0]
        row = layers.setdefault(
            layer_of(table),
            {
                "tables": 0,
                "failing_tables": 0,
                "rules": 0,
                "not_evaluated": 0,
                "quarantined": 0,
                **dict.fromkeys(WORST_FIRST, 0),
            },
        )
        row["tables"] += 1
        row["failing_tables"] += bool(latest.failed)
        row["rules"] += len(latest.results)
        row["not_evaluated"] += latest.not_evaluated
        row["quarantined"] += (counts or {}).get(table, {}).get("rows", 0)
        for severity, n in latest.failing_by_severity.items():
            row[severity] += n
    body = "".join(
        f'<tr data-layer="{e(layer)}"><td>{e(layer)}</td><td class="num">{r["tables"]}</td>'
        f'<td class="num">{r["failing_tables"]}</td><td class="num">{r["rules"]}</td>'
        + "".join(f'<td class="num">{r[s]}</td>' for s in WORST_FIRST)
        + f'<td class="num">{r["not_evaluated"]}</td><td class="num">{_num(r["quarantined"])}</td></tr>'
        for layer, r in sorted(layers.items())
    )
    head = (
        "<thead><tr><th>Layer</th><th>Tables</th><th>Tables failing</th><th>Expectations</th>"
        + "".join(f"<th>Failing {_sev(s)}</th>" for s in WORST_FIRST)
        + "<th>Not evaluated</th><th>Quarantined rows</th></tr></thead>"
    )
    return (
        '<section id="rollup"><h2>By layer</h2>'
        + _scroll(f'<table class="rollup">{head}<tbody>{body}</tbody></table>')
        + "</section>"
    )


def filters(runs_by_table: dict[str, list[Run]]) -> str:
    """The filter bar (shown by the script; without it every row stays shown)."""
    layers = sorted({layer_of(t) for t in runs_by_table})
    layer_options = "".join(f'<option value="{e(x)}">{e(x)}</option>' for x in layers)
    severity_options = "".join(f'<option value="{s}">{s}</option>' for s in WORST_FIRST)
    return (
        '<form class="filters" id="filters" hidden aria-label="Filter the tables and expectations">'
        '<label><input type="checkbox" id="f-failing"> Failing only</label>'
        f'<label>Layer <select id="f-layer"><option value="all">all</option>{layer_options}</select></label>'
        f'<label>Severity <select id="f-severity"><option value="all">all</option>{severity_options}</select></label>'
        '<span class="muted" id="f-count"></span></form>'
    )


def overview_order(runs_by_table: dict[str, list[Run]]) -> list[str]:
    """Tables worst first: by the worst severity failing, then the worst unexpected %, then name."""
    return sorted(
        runs_by_table,
        key=lambda t: (
            -severity_rank(runs_by_table[t][0].worst_severity),
            -runs_by_table[t][0].worst_percent,
            t,
        ),
    )


def overview_table(runs_by_table: dict[str, list[Run]], counts: dict[str, dict] | None) -> str:
    """One line per table, worst first, linking to its section."""
    rows = []
    for table in overview_order(runs_by_table):
        latest = runs_by_table[table][0]
        quarantined = (counts or {}).get(table, {}).get("rows", 0)
        worst = latest.worst_severity
        failing = " ".join(_sev(s, n) for s in WORST_FIRST if (n := latest.failing_by_severity[s])) or "0"
        quarantine_link = (
            f'<a href="#q-{e(table)}">{_num(quarantined)}</a>' if quarantined else _num(quarantined)
        )
        rows.append(
            f'<tr class="{"fail" if latest.failed else "ok"}" {_table_attributes(table, latest)}>'
            f'<td><a href="#dq-{e(table)}">{e(table)}</a></td><td>{e(layer_of(table))}</td>'
            f'<td data-value="{severity_rank(worst)}">{_sev(worst) if worst else _sev("none")}</td>'
            f'<td class="num" data-value="{latest.failed}">{failing}</td>'
            f'<td class="num" data-value="{latest.worst_percent:.6f}">{latest.worst_percent:.2f}%</td>'
            f'<td class="num">{latest.not_evaluated}</td><td class="num">{len(latest.results)}</td>'
            f'<td class="num" data-value="{quarantined}">{quarantine_link}</td></tr>'
        )
    head = _head(
        ("Table", "text"),
        ("Layer", "text"),
        ("Worst severity failing", "num"),
        ("Failing", "num"),
        ("Worst unexpected %", "num"),
        ("Not evaluated", "num"),
        ("Expectations", "num"),
        ("Quarantined rows", "num"),
    )
    return _scroll(f'<table class="overview sortable">{head}<tbody>{"".join(rows)}</tbody></table>')


# -- each table ---------------------------------------------------------------------------


def failing_values(text: str | None) -> str:
    """The failing values as recorded: each with its rows and example row keys (`event_id`s),
    or, as older runs recorded them, example values alone."""
    try:
        values = json.loads(text) if text else []
    except ValueError:
        values = [text]
    if not isinstance(values, list):
        values = [values]
    items = []
    for v in values[:5]:
        if isinstance(v, dict):
            keys = ", ".join(short_id(k) for k in v.get("row_keys") or [])
            where = f' <span class="muted">e.g. {keys}</span>' if keys else ""
            items.append(
                f"<li><code>{e(str(v.get('value'))[:120])}</code> &times;{_num(v.get('rows'))}{where}</li>"
            )
        else:
            items.append(f"<li><code>{e(str(v)[:120])}</code></li>")
    return f'<ul class="values">{"".join(items)}</ul>' if items else '<span class="muted">&mdash;</span>'


def _result_order(r: dict) -> tuple:
    return (
        {FAIL: 0, NOT_EVALUATED: 2}.get(state(r), 1),
        -severity_rank(r["severity"]),
        -(r["unexpected_percent"] or 0),
        r["expectation"],
    )


def expectations_table(table: str, run: Run) -> str:
    rows = []
    for r in sorted(run.results, key=_result_order):
        now = state(r)
        target = f"{r['expectation_type']}" + (f" ({r['column']})" if r.get("column") else "")
        shown = {FAIL: "FAIL", NOT_EVALUATED: "NOT EVALUATED"}.get(now, "PASS")
        percent = f"{r['unexpected_percent']:.2f}%" if now != NOT_EVALUATED else "&mdash;"
        rows.append(
            f'<tr class="{now if now != "pass" else "ok"}" data-expectation="{e(r["expectation"])}" '
            f'data-severity="{e(r["severity"])}" data-state="{now}">'
            f"<td>{e(r['expectation'])}</td>"
            f'<td data-value="{severity_rank(r["severity"])}">{_sev(r["severity"])}</td>'
            f'<td class="status {now}">{shown}</td><td class="num">{_num(r["unexpected_count"])}</td>'
            f'<td class="num">{_num(r["element_count"])}</td>'
            f'<td class="num" data-value="{r["unexpected_percent"] or 0:.6f}">{percent}</td>'
            f'<td class="values">{failing_values(r.get("examples"))}</td>'
            f'<td class="type"><code>{e(target)}</code></td></tr>'
        )
    head = _head(  # what to act on first, the rule's definition last
        ("Expectation", "text"),
        ("Severity", "num"),
        ("Result", "text"),
        ("Unexpected", "num"),
        ("Rows", "num"),
        ("Unexpected %", "num"),
        ("Failing values (rows, e.g. event_id)", "text"),
        ("Type (column)", "text"),
    )
    return _scroll(
        f'<table class="expectations sortable" data-table="{e(table)}" data-run="{e(run.run_id)}">{head}'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def expectations_section(runs_by_table: dict[str, list[Run]], counts: dict[str, dict] | None) -> str:
    if not runs_by_table:
        return '<section id="expectations"><h2>Expectations</h2><p class="muted">No validation results yet.</p></section>'
    out = [
        '<section id="expectations"><h2>Tables, worst first</h2>',
        filters(runs_by_table),
        overview_table(runs_by_table, counts),
    ]
    for table in overview_order(runs_by_table):
        runs = runs_by_table[table]
        latest = runs[0]
        badge = (
            " ".join(_sev(s, n) for s in WORST_FIRST if (n := latest.failing_by_severity[s])) + " failing"
            if latest.failed
            else '<span class="pass">all passing</span>'
        )
        if latest.not_evaluated:
            badge += f' <span class="muted">({latest.not_evaluated} not evaluated)</span>'
        detail = (
            f'<p class="muted">Latest run {e(latest.run_id)} at {e(_when(latest.validated_at))}; '
            f"trend over the last {len(runs)} run{'s' if len(runs) != 1 else ''}.</p>"
            + trend_svg(table, runs)
            + expectations_table(table, latest)
            + "".join(
                f"<details><summary>Previous run {e(run.run_id)} at {e(_when(run.validated_at))}: "
                f"{run.failed} failing of {len(run.results)}</summary>{expectations_table(table, run)}</details>"
                for run in runs[1:]
            )
        )
        if not any(run.failed for run in runs):  # nothing to look at: folded
            detail = f"<details><summary>{len(latest.results)} expectations</summary>{detail}</details>"
        out.append(
            f'<div class="table-dq" id="dq-{e(table)}" {_table_attributes(table, latest)}>'
            f"<h3>{e(table)} &middot; {badge}</h3>{detail}</div>"
        )
    out.append("</section>")
    return "".join(out)


# -- the rest ------------------------------------------------------------------------------


def quarantine_query(table: str) -> str:
    """The `lakehouse sql` command that lists a table's quarantined rows, newest first."""
    return (
        'lakehouse sql "SELECT event_id, failed_checks, source_file, record_index, run_id, raw '
        f"FROM {QUARANTINE} WHERE source_table = '{table}' ORDER BY quarantined_at DESC\""
    )


def quarantine_section(counts: dict[str, dict] | None, warehouse: str) -> str:
    head = '<section id="quarantine"><h2>Quarantine</h2>'
    if not counts:
        return head + '<p class="muted">No quarantined rows.</p></section>'
    out = [
        head,
        f"<p>Rows a <code>drop</code> rule rejected, kept whole in <code>{QUARANTINE}</code> "
        f"(files: <code>{e(Path(warehouse) / 'silver' / 'quarantine')}</code>). "
        "Rows by failed check (a row that failed several checks counts under each).</p>",
    ]
    for table, total in counts.items():
        rows = "".join(
            f'<tr><td>{e(r["reason"])}</td><td class="num">{_num(r["rows"])}</td>'
            f'<td class="num">{_num(r["latest_rows"])}</td>'
            f"<td>{_event_ids(r)}</td></tr>"
            for r in total["reasons"]
        )
        out.append(
            f'<h3 id="q-{e(table)}">{e(table)}: {_num(total["rows"])} rows, {_num(total["latest_rows"])} in its latest run</h3>'
            f'<p class="reach">Its rows: <code>{e(quarantine_query(table))}</code></p>'
            + _scroll(
                f'<table class="quarantine" data-table="{e(table)}"><thead><tr><th>Failed check</th>'
                f"<th>Rows (all runs)</th><th>Rows in run {e(total['latest_run'])}</th>"
                f"<th>Example event_id</th></tr></thead><tbody>{rows}</tbody></table>"
            )
        )
    out.append("</section>")
    return "".join(out)


def _event_ids(row: dict) -> str:
    ids = list(dict.fromkeys(i for i in (row.get("first_event_id"), row.get("last_event_id")) if i))
    return " ".join(short_id(i) for i in ids) or '<span class="muted">none (unparsed records)</span>'


def short_id(value: str, shown: int = 16) -> str:
    """A row key as code, cut to its first `shown` characters (the whole key on hover): enough
    to find the row (`WHERE event_id LIKE '<prefix>%'`)."""
    text = str(value)
    cut = text if len(text) <= shown else text[:shown] + "…"
    return f'<code class="key" title="{e(text)}">{e(cut)}</code>'


def landing_section(files: list[dict]) -> str:
    head = '<section id="landing-files"><h2>Landing files not read in full</h2>'
    if not files:
        return head + '<p class="muted">Every landing file seen was read in full.</p></section>'
    rows = "".join(
        f'<tr data-status="{e(f["status"])}"><td>{e(f["source"])}</td><td><code>{e(f["landing_key"] or f["path"])}</code></td>'
        f'<td class="status bad">{e(f["status"])}</td><td>{e(f["note"])}</td>'
        f'<td class="num">{_num(f["records"])}</td><td>{e(f["run_id"])}</td><td>{e(_when(f["logged_at"]))}</td></tr>'
        for f in files
    )
    return (
        head + "<p>Each run goes on without these files. A damaged file's records before the damage are in "
        "bronze, marked corrupt; the others are tried again by the next run, and a good file put in the "
        "place of any of them is ingested.</p>"
        + _scroll(
            '<table class="landing-files"><thead><tr><th>Source</th><th>File</th><th>Status</th><th>Reason</th>'
            f"<th>Records kept</th><th>Run</th><th>Logged</th></tr></thead><tbody>{rows}</tbody></table>"
        )
        + "</section>"
    )


def losses_section(losses: list[dict]) -> str:
    head = '<section id="collector-losses"><h2>Refused or not collected by the collectors</h2>'
    if not losses:
        return (
            head
            + '<p class="muted">The collectors refused nothing and collected everything they were asked.</p></section>'
        )
    rows = "".join(
        f'<tr><td>{e(x["collector"])}</td><td>{e(x["source"])}</td><td class="status bad">{e(x["status"])}</td>'
        f'<td>{e(x["reason"])}</td><td class="num">{_num(x["count"])}</td><td>{e(_when(x["first_at"]))}</td>'
        f"<td>{e(_when(x['last_at']))}</td></tr>"
        for x in losses
    )
    return (
        head + "<p>Requests the receiver refused and pulls that stopped or could not read everything "
        "(<code>ops.collector_losses</code>). A sender that does not retry loses what was refused: run "
        "the source's catch-up pull (<code>lakehouse collect openmetadata</code>) over that time.</p>"
        + _scroll(
            '<table class="collector-losses"><thead><tr><th>Collector</th><th>Source</th><th>Status</th>'
            f"<th>Reason</th><th>Count</th><th>First</th><th>Last</th></tr></thead><tbody>{rows}</tbody></table>"
        )
        + "</section>"
    )


def runs_section(runs: list[tuple[str, list[dict]]], bronze_tables: dict[str, str]) -> str:
    head = '<section id="reconciliation"><h2>Runs and reconciliation</h2>'
    if not runs:
        return head + '<p class="muted">No runs recorded yet.</p></section>'
    latest_id, latest_tasks = runs[0]
    out = [head, f"<h3>Latest run {e(latest_id)}</h3>", _tasks_table(latest_tasks)]
    checks = []
    for run_id, tasks in runs:
        for c in reconcile(tasks, bronze_tables):
            tone = {"OK": "pass", "NO NEW ROWS": "muted", "INCOMPLETE": "warn"}.get(c["verdict"], "bad")
            checks.append(
                f"<tr><td>{e(run_id)}</td><td>{e(c['source'])}</td><td>{e(c['tables'])}</td>"
                f'<td class="num">{_num(c["landed"])}</td><td class="num">{_num(c["read"])}</td>'
                f'<td class="num">{_num(c["rows_out"])}</td><td class="num">{_num(c["rows_quarantined"])}</td>'
                f'<td class="num">{_num(c["rows_duplicate"])}</td><td class="num">{_num(c["accounted"])}</td>'
                f'<td class="status {tone}">{e(c["verdict"])}</td></tr>'
            )
    out.append(
        "<h3>Reconciliation per landing source</h3><p>Bronze rows read by the silver tables that account for "
        "a source must equal their silver rows + quarantined rows + duplicates removed.</p>"
        + _scroll(
            '<table class="reconciliation"><thead><tr><th>Run</th><th>Source</th><th>Silver tables</th>'
            "<th>Bronze rows landed</th><th>Bronze rows read</th><th>Silver rows</th><th>Quarantined</th>"
            f"<th>Duplicates</th><th>Accounted</th><th>Check</th></tr></thead><tbody>{''.join(checks)}</tbody></table>"
        )
    )
    for run_id, tasks in runs[1:]:
        failed = sum(1 for t in tasks if t["status"] == "FAILED")
        out.append(
            f"<details><summary>Previous run {e(run_id)}: {len(tasks)} tasks, {failed} failed</summary>"
            f"{_tasks_table(tasks)}</details>"
        )
    out.append("</section>")
    return "".join(out)


def _tasks_table(tasks: list[dict]) -> str:
    rows = []
    for t in tasks:
        tone = {"SUCCESS": "pass", "FAILED": "fail"}.get(t["status"], "muted")
        seconds = (t["finished_at"] - t["started_at"]).total_seconds() if t["finished_at"] else None
        rows.append(
            f'<tr class="{"fail" if tone == "fail" else ""}"><td>{e(t["job"])}</td><td>{e(t["table"])}</td>'
            f'<td class="status {tone}">{e(t["status"])}</td><td class="num">{_num(t["source_rows"])}</td>'
            f'<td class="num">{_num(t["rows_in"])}</td><td class="num">{_num(t["rows_out"])}</td>'
            f'<td class="num">{_num(t["rows_quarantined"])}</td><td class="num">{_num(t["rows_duplicate"])}</td>'
            f'<td class="num">{"" if seconds is None else f"{seconds:.1f}"}</td><td>{e(t["message"] or "")}</td></tr>'
        )
    return _scroll(
        '<table class="runs"><thead><tr><th>Task</th><th>Table</th><th>Status</th><th>Source rows</th>'
        "<th>Rows in</th><th>Rows out</th><th>Quarantined</th><th>Duplicates</th><th>Seconds</th>"
        "<th>Message</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
    )


def build_report(
    store: TableStore, bronze_tables: dict[str, str] | None = None, last_runs: int = DEFAULT_LAST_RUNS
) -> str:
    """The report's HTML for the warehouse of `store`."""
    dq, quarantine, runs_df = (_read(store, n) for n in (DQ_RESULTS, QUARANTINE, RUNS))
    landing_log = _read(store, ingestion_log.TABLE)
    losses = _read(store, COLLECTOR_LOSSES)
    runs_by_table = dq_runs(dq, last_runs) if dq is not None else {}
    counts = quarantine_counts(quarantine) if quarantine is not None else None
    runs = recent_runs(runs_df, last_runs) if runs_df is not None else []
    generated = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    warehouse = str(store.warehouse)
    if dq is None and quarantine is None and runs_df is None:
        top = f"<header><h1>Data quality report</h1><p>Warehouse {e(warehouse)} &middot; generated {e(generated)}</p></header>"
        body = (
            '<section id="empty"><h2>No data yet</h2><p>The warehouse has no ops tables yet: '
            "run <code>lakehouse run</code> first, then build this report again.</p></section>"
        )
    else:
        top = header(warehouse, generated, runs_by_table, runs)
        body = (
            rollup_section(runs_by_table, counts)
            + expectations_section(runs_by_table, counts)
            + quarantine_section(counts, warehouse)
            + landing_section(unread_files(landing_log) if landing_log is not None else [])
            + losses_section(collector_losses(losses) if losses is not None else [])
            + runs_section(runs, bronze_tables or {})
        )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Data quality report</title><style>{CSS}</style></head><body>"
        f"{top}<main>{body}</main><script>{SCRIPT}</script></body></html>\n"
    )


def write_report(
    store: TableStore,
    out: Path | None = None,
    bronze_tables: dict[str, str] | None = None,
    last_runs: int = DEFAULT_LAST_RUNS,
) -> Path:
    """Write the report (default `<warehouse>/reports/dq_report.html`) and return its path."""
    path = Path(out) if out else Path(store.warehouse) / "reports" / "dq_report.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(build_report(store, bronze_tables, last_runs), encoding="utf-8")
    return path.resolve()
