"""`lakehouse dq-report`: one static HTML page on data quality, from the ops tables.

Built from `ops.dq_results` (expectations per table per run), `silver.quarantine`
(rejected rows and why), `ops.runs` (row counts that must reconcile) and
`ops.ingestion_log` (landing files that could not be read, or only in part). The page
is self-contained (inline CSS, inline SVG, no scripts), so it can be mailed,
archived next to the warehouse or opened from a file share. Spark aggregates;
only the last `last_runs` runs' rows and per-reason counts reach the driver.
Every value is HTML-escaped.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import math
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from pipelines.landing import ingestion_log
from pipelines.ops.bookkeeping import DQ_RESULTS, RUNS
from pipelines.store import TableStore

QUARANTINE = "silver.quarantine"
DEFAULT_LAST_RUNS = 10
COLORS = ("#c0392b", "#2471a3", "#d68910", "#7d3c98", "#138d75", "#5d6d7e", "#a04000", "#1e8449")
CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1c2833;background:#f4f6f7}
header{background:#1c2833;color:#fff;padding:18px 32px}header h1{margin:0 0 4px;font-size:22px}
header p{margin:0;color:#d5d8dc}main{padding:8px 32px 40px;max-width:1400px}
section{background:#fff;border:1px solid #d5d8dc;border-radius:6px;margin:18px 0;padding:6px 20px 16px}
h2{font-size:18px;border-bottom:1px solid #e5e8e8;padding-bottom:6px}h3{font-size:15px;margin:20px 0 6px}
table{border-collapse:collapse;margin:6px 0 10px;font-size:13px}
th,td{border:1px solid #e5e8e8;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f2f3f4}td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.fail td{background:#fdedec}.status{font-weight:600}.pass{color:#1e8449}.fail .status,.bad{color:#c0392b}
.warn{color:#b9770e}code{background:#f2f3f4;padding:0 3px;border-radius:3px;font-size:12px;word-break:break-all}
.cards{display:flex;gap:12px;flex-wrap:wrap;margin:14px 0}.card{background:#fff;border:1px solid #d5d8dc;
border-radius:6px;padding:10px 16px;min-width:150px}.card b{display:block;font-size:22px}
details{margin:4px 0}summary{cursor:pointer;color:#2471a3}.legend span{margin-right:14px;white-space:nowrap}
.swatch{display:inline-block;width:10px;height:10px;margin-right:4px;border-radius:2px}.muted{color:#707b7c}
"""


@dataclass(frozen=True)
class Run:
    """One run of one table's suite (from ops.dq_results)."""

    run_id: str
    validated_at: dt.datetime
    results: list[dict]

    @property
    def failed(self) -> int:
        return sum(1 for r in self.results if not r["success"])


def e(value: Any) -> str:
    """Escaped text; missing values as a dash."""
    return "&mdash;" if value is None else html.escape(str(value), quote=True)


def _when(value: dt.datetime | None) -> str:
    return "" if value is None else value.strftime("%Y-%m-%d %H:%M:%S UTC")


def _num(value: Any) -> str:
    return "&mdash;" if value is None else f"{int(value):,}"


def _read(store: TableStore, name: str) -> DataFrame | None:
    return store.read(name) if store.exists(name) else None


# -- data ---------------------------------------------------------------------------


def dq_runs(dq: DataFrame, last_runs: int) -> dict[str, list[Run]]:
    """Per table, its last `last_runs` validation runs, newest first."""
    per_run = dq.groupBy("table", "run_id").agg(F.max("validated_at").alias("validated_at"))
    recent = per_run.withColumn(
        "_rank",
        F.row_number().over(Window.partitionBy("table").orderBy(F.desc("validated_at"), F.desc("run_id"))),
    ).where(F.col("_rank") <= last_runs)
    rows = dq.join(recent.select("table", "run_id", F.col("validated_at").alias("_at")), ["table", "run_id"])
    runs: dict[str, dict[str, Run]] = defaultdict(dict)
    for row in rows.orderBy("table", "expectation").collect():
        run = runs[row["table"]].setdefault(row["run_id"], Run(row["run_id"], row["_at"], []))
        run.results.append(row.asDict())
    return {
        table: sorted(by_id.values(), key=lambda r: (r.validated_at, r.run_id), reverse=True)
        for table, by_id in sorted(runs.items())
    }


def quarantine_counts(quarantine: DataFrame) -> dict[str, dict]:
    """Per source table: quarantined rows, overall and in its latest quarantining run, and by failed check."""
    latest = quarantine.groupBy("source_table").agg(F.max_by("run_id", "quarantined_at").alias("latest_run"))
    tagged = quarantine.join(latest, "source_table").withColumn(
        "_in_latest", F.when(F.col("run_id") == F.col("latest_run"), 1).otherwise(0)
    )

    def counted(df: DataFrame, *keys: str) -> DataFrame:
        return df.groupBy(*keys).agg(
            F.count(F.lit(1)).alias("rows"),
            F.sum("_in_latest").alias("latest_rows"),
            F.first("latest_run").alias("latest_run"),
        )

    counts = {
        row["source_table"]: {**row.asDict(), "reasons": []}
        for row in counted(tagged, "source_table").collect()
    }
    by_reason = counted(
        tagged.withColumn("reason", F.explode_outer("failed_checks")), "source_table", "reason"
    )
    for row in by_reason.orderBy("source_table", F.desc("rows"), "reason").collect():
        counts[row["source_table"]]["reasons"].append(row.asDict())
    return dict(sorted(counts.items()))


def unread_files(log: DataFrame) -> list[dict]:
    """Landing files whose latest log row says they could not be read, or only in part (damaged,
    unreadable, vanished, still being written, too large): what someone has to look at. A file
    later replaced by a good one and ingested drops off."""
    latest = Window.partitionBy("source", F.coalesce("landing_key", "path")).orderBy(F.desc("logged_at"))
    problems = (*ingestion_log.NOT_READ, ingestion_log.DAMAGED, ingestion_log.TOO_LARGE)
    rows = (
        log.withColumn("_rank", F.row_number().over(latest))
        .where((F.col("_rank") == 1) & F.col("status").isin(*problems))
        .select(
            "source",
            "landing_key",
            "path",
            "status",
            "note",
            "records",
            "corrupt_records",
            "run_id",
            "logged_at",
        )
        .orderBy(F.desc("logged_at"), "source", "path")
    )
    return [row.asDict() for row in rows.collect()]


def recent_runs(runs: DataFrame, last_runs: int) -> list[tuple[str, list[dict]]]:
    """The last `last_runs` pipeline runs (newest first) with their task rows."""
    ids = (
        runs.groupBy("run_id")
        .agg(F.min("started_at").alias("_started"))
        .orderBy(F.desc("_started"), F.desc("run_id"))
        .limit(last_runs)
    )
    grouped: dict[str, list[dict]] = defaultdict(list)
    order: dict[str, dt.datetime] = {}
    for row in runs.join(ids, "run_id").orderBy("started_at", "job").collect():
        grouped[row["run_id"]].append(row.asDict())
        order[row["run_id"]] = row["_started"]
    return [
        (run_id, grouped[run_id]) for run_id in sorted(grouped, key=lambda r: (order[r], r), reverse=True)
    ]


def reconcile(tasks: list[dict], bronze_tables: dict[str, str]) -> list[dict]:
    """Per landing source of one run: bronze rows read = silver + quarantined + duplicates?"""
    by_source: dict[str, list[dict]] = defaultdict(list)
    for task in tasks:
        if task.get("reconciles"):
            by_source[task["reconciles"]].append(task)
    checks = []
    for source, group in sorted(by_source.items()):
        done = [t for t in group if t["status"] == "SUCCESS"]
        landed = [t["rows_out"] for t in tasks if t["table"] == bronze_tables.get(source)]
        read = {t["source_rows"] or 0 for t in done}
        parts = {k: sum(t[k] or 0 for t in done) for k in ("rows_out", "rows_quarantined", "rows_duplicate")}
        accounted = sum(parts.values())
        if any(t["status"] == "FAILED" for t in group):
            verdict = "INCOMPLETE"
        elif not done:
            verdict = "NO NEW ROWS"
        elif len(read) == 1 and read == {accounted}:
            verdict = "OK"
        else:
            verdict = "MISMATCH"
        checks.append(
            {
                "source": source,
                "tables": ", ".join(sorted(t["table"] for t in group)),
                "landed": landed[0] if landed else None,
                "read": max(read) if read else None,
                **parts,
                "accounted": accounted,
                "verdict": verdict,
            }
        )
    return checks


# -- HTML ----------------------------------------------------------------------------


def _examples(text: str | None) -> str:
    try:
        values = json.loads(text) if text else []
    except ValueError:
        values = [text]
    if not isinstance(values, list):
        values = [values]
    shown = [f"<code>{e(str(v)[:120])}</code>" for v in values[:3]]
    return " ".join(shown) or '<span class="muted">&mdash;</span>'


def expectations_table(table: str, run: Run) -> str:
    rows = []
    for r in sorted(run.results, key=lambda r: (r["success"], r["expectation"])):
        state = "pass" if r["success"] else "fail"
        target = f"{r['expectation_type']}" + (f" ({r['column']})" if r.get("column") else "")
        rows.append(
            f'<tr class="{"fail" if state == "fail" else "ok"}" data-expectation="{e(r["expectation"])}">'
            f"<td>{e(r['expectation'])}</td>"
            f"<td><code>{e(target)}</code></td><td>{e(r['severity'])}</td>"
            f'<td class="status {state}">{state.upper()}</td><td class="num">{_num(r["unexpected_count"])}</td>'
            f'<td class="num">{_num(r["element_count"])}</td><td class="num">{r["unexpected_percent"]:.2f}%</td>'
            f"<td>{_examples(r.get('examples'))}</td></tr>"
        )
    return (
        f'<table class="expectations" data-table="{e(table)}" data-run="{e(run.run_id)}"><thead><tr>'
        "<th>Expectation</th><th>Type (column)</th><th>Severity</th><th>Result</th><th>Unexpected</th>"
        "<th>Rows</th><th>Unexpected %</th><th>Example failing values</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )


def trend_svg(table: str, runs: list[Run]) -> str:
    """Unexpected % per expectation over the runs (oldest left); only expectations that had any."""
    ordered = list(reversed(runs))
    series: dict[str, list[float | None]] = {}
    for i, run in enumerate(ordered):
        for r in run.results:
            series.setdefault(r["expectation"], [None] * len(ordered))[i] = r["unexpected_percent"]
    series = {k: v for k, v in sorted(series.items()) if any(p for p in v if p)}
    width, height, left, top, bottom = 520, 150, 44, 10, 24
    plot_w, plot_h = width - left - 36, height - top - bottom
    peak = max([p for v in series.values() for p in v if p is not None] + [1.0])
    decade = 10 ** math.ceil(math.log10(peak))
    top_value = next(s for s in (decade / 5, decade / 2, decade) if s >= peak)

    def x(i: int) -> float:
        return left + (plot_w * i / (len(ordered) - 1) if len(ordered) > 1 else plot_w / 2)

    def y(value: float) -> float:
        return top + plot_h * (1 - value / top_value)

    parts = [
        f'<svg class="trend" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{e(f"unexpected percent trend of {table}")}">',
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="#fbfcfc" stroke="#d5d8dc"/>',
    ]
    for frac in (0, 0.5, 1):
        gy = y(top_value * frac)
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{gy:.1f}" y2="{gy:.1f}" stroke="#e5e8e8"/>')
        parts.append(
            f'<text x="{left - 4}" y="{gy + 4:.1f}" font-size="10" text-anchor="end" fill="#707b7c">'
            f"{top_value * frac:g}%</text>"
        )
    for i, run in enumerate(ordered):
        parts.append(
            f'<text x="{x(i):.1f}" y="{height - 8}" font-size="10" text-anchor="middle" fill="#707b7c">'
            f"{e(run.validated_at.strftime('%m-%d %H:%M') if run.validated_at else i + 1)}</text>"
        )
    legend = []
    for n, (name, values) in enumerate(series.items()):
        color = COLORS[n % len(COLORS)]
        points = [(x(i), y(v), v, ordered[i].run_id) for i, v in enumerate(values) if v is not None]
        if len(points) > 1:
            path = " ".join(f"{px:.1f},{py:.1f}" for px, py, _, _ in points)
            parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{path}"/>')
        for px, py, value, run_id in points:
            parts.append(
                f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3" fill="{color}">'
                f"<title>{e(name)}: {value:.2f}% in run {e(run_id)}</title></circle>"
            )
        legend.append(f'<span><i class="swatch" style="background:{color}"></i>{e(name)}</span>')
    if not series:
        parts.append(
            f'<text x="{left + plot_w / 2}" y="{top + plot_h / 2}" font-size="12" text-anchor="middle" '
            f'fill="#1e8449">no unexpected values in these runs</text>'
        )
    parts.append("</svg>")
    return "".join(parts) + (f'<div class="legend">{"".join(legend)}</div>' if legend else "")


def overview_table(runs_by_table: dict[str, list[Run]], counts: dict[str, dict] | None) -> str:
    """One line per table, failing tables first, linking to its section."""
    rows = []
    order = sorted(runs_by_table.items(), key=lambda item: (-item[1][0].failed, item[0]))
    for table, runs in order:
        latest = runs[0]
        worst = max((r["unexpected_percent"] for r in latest.results), default=0.0)
        quarantined = (counts or {}).get(table, {}).get("rows", 0)
        state = "fail" if latest.failed else "pass"
        rows.append(
            f'<tr class="{"fail" if latest.failed else "ok"}"><td><a href="#dq-{e(table)}">{e(table)}</a></td>'
            f'<td>{e(latest.run_id)}</td><td class="num">{len(latest.results)}</td>'
            f'<td class="num status {state}">{latest.failed}</td><td class="num">{worst:.2f}%</td>'
            f'<td class="num">{_num(quarantined)}</td></tr>'
        )
    return (
        '<table class="overview"><thead><tr><th>Table</th><th>Latest run</th><th>Expectations</th>'
        "<th>Failing</th><th>Worst unexpected %</th><th>Quarantined rows</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )


def expectations_section(runs_by_table: dict[str, list[Run]], counts: dict[str, dict] | None) -> str:
    if not runs_by_table:
        return '<section id="expectations"><h2>Expectations</h2><p class="muted">No validation results yet.</p></section>'
    out = ['<section id="expectations"><h2>Expectations</h2>', overview_table(runs_by_table, counts)]
    for table, runs in runs_by_table.items():
        latest = runs[0]
        badge = (
            f'<span class="bad">{latest.failed} failing</span>'
            if latest.failed
            else '<span class="pass">all passing</span>'
        )
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
            f'<div class="table-dq" id="dq-{e(table)}"><h3>{e(table)} &middot; {badge}</h3>{detail}</div>'
        )
    out.append("</section>")
    return "".join(out)


def quarantine_section(counts: dict[str, dict] | None) -> str:
    head = '<section id="quarantine"><h2>Quarantine</h2>'
    if not counts:
        return head + '<p class="muted">No quarantined rows.</p></section>'
    out = [head, "<p>Rows by failed check (a row that failed several checks counts under each).</p>"]
    for table, total in counts.items():
        out.append(
            f"<h3>{e(table)}: {_num(total['rows'])} rows, {_num(total['latest_rows'])} in its latest run</h3>"
            f'<table class="quarantine" data-table="{e(table)}"><thead><tr><th>Failed check</th>'
            f"<th>Rows (all runs)</th><th>Rows in run {e(total['latest_run'])}</th></tr></thead><tbody>"
            + "".join(
                f'<tr><td>{e(r["reason"])}</td><td class="num">{_num(r["rows"])}</td>'
                f'<td class="num">{_num(r["latest_rows"])}</td></tr>'
                for r in total["reasons"]
            )
            + "</tbody></table>"
        )
    out.append("</section>")
    return "".join(out)


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
        '<table class="landing-files"><thead><tr><th>Source</th><th>File</th><th>Status</th><th>Reason</th>'
        "<th>Records kept</th><th>Run</th><th>Logged</th></tr></thead><tbody>"
        + rows
        + "</tbody></table></section>"
    )


def runs_section(runs: list[tuple[str, list[dict]]], bronze_tables: dict[str, str]) -> str:
    head = '<section id="reconciliation"><h2>Runs and reconciliation</h2>'
    if not runs:
        return head + '<p class="muted">No runs recorded yet.</p></section>'
    latest_id, latest_tasks = runs[0]
    out = [head, f"<h3>Latest run {e(latest_id)}</h3>", _tasks_table(latest_tasks)]
    out.append(
        "<h3>Reconciliation per landing source</h3><p>Bronze rows read by the silver tables that account for "
        "a source must equal their silver rows + quarantined rows + duplicates removed.</p>"
        '<table class="reconciliation"><thead><tr><th>Run</th><th>Source</th><th>Silver tables</th>'
        "<th>Bronze rows landed</th><th>Bronze rows read</th><th>Silver rows</th><th>Quarantined</th>"
        "<th>Duplicates</th><th>Accounted</th><th>Check</th></tr></thead><tbody>"
    )
    for run_id, tasks in runs:
        for c in reconcile(tasks, bronze_tables):
            state = {"OK": "pass", "NO NEW ROWS": "muted", "INCOMPLETE": "warn"}.get(c["verdict"], "bad")
            out.append(
                f"<tr><td>{e(run_id)}</td><td>{e(c['source'])}</td><td>{e(c['tables'])}</td>"
                f'<td class="num">{_num(c["landed"])}</td><td class="num">{_num(c["read"])}</td>'
                f'<td class="num">{_num(c["rows_out"])}</td><td class="num">{_num(c["rows_quarantined"])}</td>'
                f'<td class="num">{_num(c["rows_duplicate"])}</td><td class="num">{_num(c["accounted"])}</td>'
                f'<td class="status {state}">{e(c["verdict"])}</td></tr>'
            )
    out.append("</tbody></table>")
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
        state = {"SUCCESS": "pass", "FAILED": "fail"}.get(t["status"], "muted")
        seconds = (t["finished_at"] - t["started_at"]).total_seconds() if t["finished_at"] else None
        rows.append(
            f'<tr class="{"fail" if state == "fail" else ""}"><td>{e(t["job"])}</td><td>{e(t["table"])}</td>'
            f'<td class="status {state}">{e(t["status"])}</td><td class="num">{_num(t["source_rows"])}</td>'
            f'<td class="num">{_num(t["rows_in"])}</td><td class="num">{_num(t["rows_out"])}</td>'
            f'<td class="num">{_num(t["rows_quarantined"])}</td><td class="num">{_num(t["rows_duplicate"])}</td>'
            f'<td class="num">{"" if seconds is None else f"{seconds:.1f}"}</td><td>{e(t["message"] or "")}</td></tr>'
        )
    return (
        '<table class="runs"><thead><tr><th>Task</th><th>Table</th><th>Status</th><th>Source rows</th>'
        "<th>Rows in</th><th>Rows out</th><th>Quarantined</th><th>Duplicates</th><th>Seconds</th>"
        "<th>Message</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
    )


def _cards(runs_by_table: dict[str, list[Run]], counts: dict[str, dict] | None, runs: list) -> str:
    failing = sum(r[0].failed for r in runs_by_table.values())
    tables_failing = sum(1 for r in runs_by_table.values() if r[0].failed)
    quarantined = sum(total["rows"] for total in (counts or {}).values())
    latest = runs[0][1] if runs else []
    status = "FAILED" if any(t["status"] == "FAILED" for t in latest) else ("SUCCESS" if latest else "none")
    cards = [
        ("Latest run", f'<span class="{"bad" if status == "FAILED" else "pass"}">{e(status)}</span>'),
        ("Tables validated", str(len(runs_by_table))),
        ("Failing expectations (latest)", f'<span class="{"bad" if failing else "pass"}">{failing}</span>'),
        ("Tables with failures", str(tables_failing)),
        ("Quarantined rows", f"{quarantined:,}"),
    ]
    return (
        '<div class="cards">'
        + "".join(f'<div class="card"><b>{v}</b>{e(k)}</div>' for k, v in cards)
        + "</div>"
    )


def build_report(
    store: TableStore, bronze_tables: dict[str, str] | None = None, last_runs: int = DEFAULT_LAST_RUNS
) -> str:
    """The report's HTML for the warehouse of `store`."""
    dq, quarantine, runs_df = (_read(store, n) for n in (DQ_RESULTS, QUARANTINE, RUNS))
    landing_log = _read(store, ingestion_log.TABLE)
    runs_by_table = dq_runs(dq, last_runs) if dq is not None else {}
    counts = quarantine_counts(quarantine) if quarantine is not None else None
    runs = recent_runs(runs_df, last_runs) if runs_df is not None else []
    generated = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    if dq is None and quarantine is None and runs_df is None:
        body = (
            '<section id="empty"><h2>No data yet</h2><p>The warehouse has no ops tables yet: '
            "run <code>lakehouse run</code> first, then build this report again.</p></section>"
        )
    else:
        body = (
            _cards(runs_by_table, counts, runs)
            + expectations_section(runs_by_table, counts)
            + quarantine_section(counts)
            + landing_section(unread_files(landing_log) if landing_log is not None else [])
            + runs_section(runs, bronze_tables or {})
        )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Data quality report</title><style>{CSS}</style></head><body>"
        f"<header><h1>Data quality report</h1><p>Warehouse {e(store.warehouse)} &middot; generated {e(generated)}"
        f"</p></header><main>{body}</main></body></html>\n"
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
