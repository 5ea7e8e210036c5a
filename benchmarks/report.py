"""The benchmark's text report: per-stage tables, the summary, the targets, the scaling table and the
engines side by side.

Why: the figures are dicts (they also go out as one JSON line); this module
only formats them, so it runs without Spark and is tested on its own.
"""

from __future__ import annotations

import sys

from benchmarks.targets import Target, per_event

_INCREMENT_TIMES = {"after": "times after the base's", "inside": "times inside the base's years"}


def _table(header: list[str], rows: list[list], align: str) -> str:
    """An aligned text table; `align` has one `<` or `>` per column."""
    padded = [list(row) + [""] * (len(header) - len(row)) for row in rows]
    cells = [[str(c) for c in header]] + [["" if c is None else str(c) for c in row] for row in padded]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = []
    for number, row in enumerate(cells):
        lines.append("  ".join(f"{c:{a}{w}}" for c, a, w in zip(row, align, widths, strict=True)).rstrip())
        if number == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _rate(rows: int, seconds: float) -> str:
    return f"{rows / seconds:,.0f}" if seconds > 0 and rows else ""


def _stage_row(label: str, seconds: float, total: float, *rest) -> list:
    return [label, f"{seconds:.2f}", f"{seconds / total:.1%}", *rest]


def stage_table(phase: dict) -> str:
    """Per task: seconds, share, rows in/written/in the table, rows/s, DQ and write seconds, driver peak, jobs."""
    total = phase["pipeline_s"] or 1.0
    rows = []
    for t in phase["tasks"]:
        rows_in = t["source_rows"] or t["rows_in"]
        rows.append(
            _stage_row(
                t["key"],
                t["seconds"],
                total,
                t["status"],
                f"{rows_in:,}",
                f"{t['rows_out']:,}",
                f"{t['table_rows']:,}",
                _rate(rows_in, t["seconds"]),
                f"{t['dq_s']:.2f}" if t["layer"] == "silver" else "",
                f"{t['write_s']:.2f}",
                f"{t['spark_s']:.2f}",
                f"{t['driver_mb']:,.0f}",
                t["jobs"],
            )
        )
    for layer in ("bronze", "silver", "gold"):
        rows.append(_stage_row(f"= {layer}", phase["layer_s"][layer], total))
    rows.append(_stage_row("= DQ validation (in silver)", phase["dq_s"], total))
    rows.append(_stage_row("= runner outside tasks", phase["pipeline_s"] - phase["tasks_s"], total))
    rows.append(
        _stage_row(
            "= pipeline",
            phase["pipeline_s"],
            total,
            "",
            f"{phase['events']:,}",
            f"{phase['rows_out']:,}",
            "",
            _rate(phase["events"], phase["pipeline_s"]),
            f"{phase['dq_s']:.2f}",
            f"{phase['write_s']:.2f}",
            f"{phase['spark_jobs_s']:.2f}",
            f"{phase['driver_mb']:,}",
            phase["spark_jobs"],
        )
    )
    header = "stage|s|share|status|rows in|written|table rows|in rows/s|DQ s|write s|Spark s|driver MB|jobs"
    return _table(header.split("|"), rows, "<>><>>>>>>>>>")


def summary_lines(r: dict) -> list[str]:
    full, incr, mem = r["full"], r["incremental"], r["memory"]
    digest = r["landing"].get("sha256")
    lines = [
        f"events {r['events']:,} ({r['landing']['files']} files, {r['landing']['mb']} MB"
        + (f", sha256 {digest[:12]}" if digest else "")
        + f"; generated in {r['generate_s']:.1f} s)",
        f"table engine              {r.get('engine', 'unknown')}",
        f"spark start-up            {r['spark_startup_s']:8.2f} s",
        f"full run wall             {full['wall_s']:8.2f} s  ({full['events_per_s']:,} events/s, start-up included)",
        f"incremental run wall      {incr['wall_s']:8.2f} s  ({incr['events']:,} events in {incr['folder']}/, "
        f"{_INCREMENT_TIMES.get(r.get('increment_times'), 'times unknown')}; {r['incremental_share_of_full']:.1%} of full)",
        *_new_process_lines(r.get("new_process_incremental")),
        f"DQ validation (full)      {full['dq_s']:8.2f} s  = {r['dq_share_of_pipeline']:.1%} of pipeline "
        f"(rules {full['dq_rules_s']:.2f}, uniqueness {full['dq_unique_s']:.2f}, ops.dq_results {full['dq_record_s']:.2f})",
        f"silver typing / dedup     {full['silver_typing_s']:8.2f} s / {full['silver_dedup_s']:.2f} s",
        f"ops.runs bookkeeping      {full['bookkeeping_s']:8.2f} s  (one row per task)",
        f"table writes / scan       {full['write_s']:8.2f} s  (append/overwrite/merge) / "
        f"{full['landing_scan_s']:.2f} s (bronze: hashing + UTF-8 check of landing files in Python)",
        f"parallel tasks            {r.get('parallel_tasks', 1):8}    task seconds summed {full['task_seconds_sum']:.2f} "
        f"in {full['tasks_s']:.2f} s with tasks running (full), {incr['task_seconds_sum']:.2f} in "
        f"{incr['tasks_s']:.2f} s (incremental); layer lines are such spans, task shares their own seconds",
        f"spark jobs / stages       {full['spark_jobs']:>8} / {full['spark_stages']} (full), "
        f"{incr['spark_jobs']} / {incr['spark_stages']} (incremental)",
        *_spark_share_lines(full, incr),
        f"driver memory             {r['driver_memory_mb']:8} MB = peak of JVM RSS + Python RSS during the Spark runs",
        *_cpu_lines(full, incr, r["machine"]["cpus"]),
    ]
    for phase in ("full", "incremental", "duckdb"):
        peaks = mem["per_phase"].get(phase)
        if peaks:
            lines.append(
                f"  {phase:<12} JVM heap used {peaks['jvm_heap_used_mb']:>5} MB (max {mem['heap_max_mb']}), "
                f"after GC {peaks.get('jvm_heap_after_gc_mb', 0):>5} MB, "
                f"JVM RSS {peaks['jvm_rss_mb']:>6} MB, Python RSS {peaks['python_rss_mb']:>6} MB"
            )
    lines.append(
        f"  process peaks: JVM heap pools {mem['jvm_heap_pool_peaks_mb']} MB, JVM RSS {mem['jvm_rss_hwm_mb']} MB, "
        f"Python ru_maxrss {mem['python_maxrss_mb']} MB (DuckDB included)"
    )
    lines += _duckdb_lines(r["duckdb"])
    m = r["machine"]
    lines.append(
        f"machine: {m['cpus']} CPUs ({m.get('cpu_model')}), {m['memory_mb']} MB, "
        f"load {m['load_1min_before']} -> {m['load_1min_after']}; Python {m['python']}, "
        f"PySpark {m['pyspark']}, deltalake {m.get('deltalake')}, delta-spark {m.get('delta_spark')}, DuckDB {m['duckdb']}"
    )
    return lines


def _new_process_lines(cold: dict | None) -> list[str]:
    """The second increment, run in a new process: what a scheduled `lakehouse run` waits for."""
    if cold is None:
        return []
    if cold.get("error"):
        return [f"incremental, new process FAILED: {cold['error']}"]
    return [
        f"incremental, new process  {cold['wall_s']:8.2f} s  ({cold['events']:,} events in {cold['folder']}/; "
        f"Python + Spark start-up {cold['startup_s']:.2f} s, pipeline {cold['pipeline_s']:.2f} s, "
        f"class archive {cold.get('class_archive', 'off')}, JIT {cold.get('jit', 'tiered')}: "
        "a scheduled lakehouse run, cold JIT)"
    ]


def _spark_share_lines(full: dict, incr: dict) -> list[str]:
    """How much of the task time Spark jobs ran; the rest is the driver's."""

    def share(phase: dict) -> str:
        tasks = phase["task_seconds_sum"] or 1.0
        return f"{phase['spark_jobs_s']:.2f} of {phase['task_seconds_sum']:.2f} s ({phase['spark_jobs_s'] / tasks:.0%})"

    untimed = full["untimed_jobs"] + incr["untimed_jobs"]
    return [
        f"in Spark jobs             full {share(full)}, incremental {share(incr)} of the task seconds; "
        "the rest is the driver: building and analysing plans, Python, delta-rs commits"
        + (f" ({untimed} jobs without times left out)" if untimed else "")
    ]


def _cpu_lines(full: dict, incr: dict, cpus: int) -> list[str]:
    """The JVM's CPU during each run and its JIT compiler threads' share (absent off Linux)."""
    if full.get("jvm_cpu_s") is None:
        return []
    parts = []
    for name, run in (("full", full), ("incremental", incr)):
        jvm, jit = run.get("jvm_cpu_s"), run.get("jit_cpu_s")
        if jvm:
            parts.append(f"{name} {jvm:.1f} s, of which JIT {jit:.1f} s ({jit / jvm:.0%})")
    label = f"JVM CPU ({cpus} CPUs)"
    return [f"{label:<26}" + "; ".join(parts) + " (JIT: HotSpot compiling Spark and the code it generates)"]


def _duckdb_lines(d: dict | None) -> list[str]:
    if d is None:
        return ["duckdb reference: skipped (--no-duckdb)"]
    full = d["full"]
    stages = ", ".join(f"{k} {v:.2f}" for k, v in full["stage_seconds"].items())
    lines = [
        f"duckdb reference          {full['seconds']:8.2f} s  ({stages}); {full['events']:,} unique ECE events, "
        f"{full['current_tags']:,} current tags, {full['current_owners']:,} current owners",
        f"spark / duckdb            {d['ratio_spark_over_duckdb']:>8}x  ({d['spark_comparable_s']:.2f} s vs "
        f"{d['duckdb_comparable_s']:.2f} s: {d['comparable']}); whole pipeline {d['ratio_whole_pipeline_over_duckdb']}x",
    ]
    for label, ref in (("full", full), ("after increment", d["after_increment"])):
        if ref is None:
            continue
        check = ref["cross_check"]
        if "skipped" in check:
            lines.append(f"cross-check ({label}): skipped, {check['skipped']}")
            continue
        for name, c in check.items():
            verdict = "equal" if c["equal"] else _difference(c)
            lines.append(f"cross-check ({label}) {name}: {c['reference_rows']:,} rows, {verdict}")
    return lines


def _measured(target: Target) -> str:
    if target.value is None:
        return ""
    return f"{target.value:.1%}" if target.goal.endswith("%") else f"{target.value:,.2f}"


def _difference(check: dict) -> str:
    return (
        f"DIFFER: {check['only_in_reference']} only in DuckDB {check['examples_only_in_reference']}, "
        f"{check['only_in_other']} only in gold {check['examples_only_in_other']}"
    )


def target_table(targets: list[Target]) -> str:
    rows = [[t.name, t.goal, _measured(t), t.verdict, t.note] for t in targets]
    return _table(["target", "goal", "measured", "", "note"], rows, "<<><<")


def report(result: dict, out=None) -> None:
    """The text report of one size (tables first, then the key figures)."""
    out = out or sys.stdout
    scope = f" (tasks {', '.join(result['tasks'])} and their upstream)" if result.get("tasks") else ""
    engine = f", {result['engine']}" if result.get("engine") else ""
    for name in ("full", "incremental"):
        print(f"\n== {name} run: {result[name]['events']:,} events{engine}{scope} ==", file=out)
        print(stage_table(result[name]), file=out)
        if result[name]["error"]:
            print(f"RUN FAILED: {result[name]['error']}", file=out)
    print("\n== summary ==", file=out)
    for line in summary_lines(result):
        print(line, file=out)


def scaling_table(results: list[dict]) -> str:
    """Per size: start-up, full wall, pipeline seconds, microseconds per event and growth vs the previous size."""
    rows, previous = [], None
    for r in sorted(results, key=lambda r: r["events"]):
        seconds = per_event(r)
        growth = f"{seconds / per_event(previous) - 1:+.1%}" if previous else ""
        full, duck = r["full"], r["duckdb"] or {}
        rows.append(
            [
                f"{r['events']:,}",
                f"{r['spark_startup_s']:.1f}",
                f"{full['wall_s']:.1f}",
                f"{full['pipeline_s']:.1f}",
                f"{seconds * 1e6:.1f}",
                growth,
                f"{r['incremental']['wall_s']:.1f}",
                f"{r['dq_share_of_pipeline']:.1%}",
                r["driver_memory_mb"],
                duck.get("ratio_spark_over_duckdb", ""),
            ]
        )
        previous = r
    header = "events|start s|full wall s|pipeline s|us/event|growth|incr s|DQ share|driver MB|spark/duckdb"
    return _table(header.split("|"), rows, ">" * 10)


def engine_table(results: list[dict]) -> str:
    """Per size and engine: the full build, the warm increment (seconds per layer too), the increment
    in a new process and the driver's peak; then per size which engine is faster or lighter, and by
    how much, and whether the engines ran on the same landing data."""
    rows = []
    for r in sorted(results, key=lambda r: r["events"]):
        full, incr = r["full"], r["incremental"]
        rows.append(
            [
                f"{r['events']:,}",
                r.get("engine", "?") + (" (FAILED)" if _failed(r) else ""),
                f"{full['wall_s']:.1f}",
                *(f"{full['layer_s'][layer]:.1f}" for layer in ("bronze", "silver", "gold")),
                f"{incr['wall_s']:.1f}",
                *(f"{incr['layer_s'][layer]:.1f}" for layer in ("bronze", "silver", "gold")),
                f"{_new_process_s(r):.1f}" if _new_process_s(r) else "",
                f"{r['driver_memory_mb']:,}",
            ]
        )
    header = "events|engine|full s|bronze|silver|gold|increment s|bronze|silver|gold|new process s|driver MB"
    lines = [_table(header.split("|"), rows, "><" + ">" * 10)]
    for events in sorted({r["events"] for r in results}):
        lines += _engine_verdicts(events, [r for r in results if r["events"] == events])
    return "\n".join(lines)


def _failed(result: dict) -> bool:
    return any((result.get(phase) or {}).get("error") for phase in ("full", "incremental"))


def _new_process_s(result: dict) -> float | None:
    cold = result.get("new_process_incremental") or {}
    return None if cold.get("error") else cold.get("wall_s")


_ENGINE_MEASURES = (  # (label, figure of one engine's result: lower is better, its format)
    ("faster full build", lambda r: r["full"]["wall_s"], "{:,.1f} s"),
    ("faster warm increment", lambda r: r["incremental"]["wall_s"], "{:,.1f} s"),
    ("faster increment in a new process", _new_process_s, "{:,.1f} s"),
    ("less driver memory", lambda r: r["driver_memory_mb"], "{:,.0f} MB"),
)


def _engine_verdicts(events: int, results: list[dict]) -> list[str]:
    """Which engine wins each measure at one size, with the ratio to the runner-up (runs that
    failed are left out: their figures are partial)."""
    if len(results) < 2:
        return []
    digests = {r["landing"].get("sha256") for r in results}
    same = "same landing data" if len(digests) == 1 and None not in digests else "DIFFERENT landing data"
    lines = [f"{events:,} events ({same}):"]
    for label, figure, shown in _ENGINE_MEASURES:
        ranked = sorted((figure(r), r["engine"]) for r in results if not _failed(r) and figure(r))
        if len(ranked) < 2:
            lines.append(f"  {label}: not measured")
            continue
        (low, winner), (other, _) = ranked[0], ranked[1]
        lines.append(
            f"  {label}: {winner} ({shown.format(low)} vs {shown.format(other)}, {other / low:.2f}x)"
        )
    return lines
