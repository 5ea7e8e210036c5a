"""The governance report: one static HTML page of charts on how well the catalogs are governed,
written by `lakehouse dq-report` beside the data-quality report (`governance_report.html`).

For the data-governance lead: coverage over time per catalog and per domain
(`gold.governance_coverage_daily`), the review backlog and review cycle times
(`gold.proposals`, `gold.review_backlog_daily`), violations open over time per rule and
severity (`gold.governance_violations`, counted at the warehouse's event clock), and each
feed's volume against its baseline with its freshness and volume checks
(`gold.feed_volume_daily`, the `feeds.*` rows of `ops.dq_results`). A section whose table does
not exist yet says so and the page is still written.

Self-contained like the data-quality report (its style sheet, inline SVG from
`pipelines.quality.charts`, no script): it works offline and reads at 800 px wide.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from pyspark.sql import DataFrame

from gold.event_clock import event_clock
from pipelines.ops.bookkeeping import DQ_RESULTS
from pipelines.quality import governance_data as data
from pipelines.quality.charts import bar_chart, time_chart
from pipelines.quality.report import e
from pipelines.quality.report_assets import CSS
from pipelines.store import TableStore

FILE_NAME = "governance_report.html"
CHART_CSS = """
figure.chart{margin:8px 0 14px}figcaption{font-weight:600;margin:0 0 4px}
svg.chart{max-width:100%;height:auto;display:block}
p.missing{background:#fef9e7;border-left:4px solid #f4d03f;padding:6px 10px}
.summary{display:flex;flex-wrap:wrap;gap:10px;margin:8px 0}
.summary div{border:1px solid #d5d8dc;border-radius:6px;padding:6px 12px;min-width:140px}
.summary b{display:block;font-size:20px}
header a{color:#aed6f1}
"""


def _read(store: TableStore, name: str) -> DataFrame | None:
    return store.read(name) if store.exists(name) else None


def _missing(what: str, table: str, why: str) -> str:
    return f'<p class="missing">No {e(what)} table yet: <code>{e(table)}</code> {e(why)}</p>'


def _section(section_id: str, title: str, body: str) -> str:
    return f'<section id="{e(section_id)}"><h2>{e(title)}</h2>{body}</section>'


def _bucket_note(timeline: data.Timeline) -> str:
    if timeline.step == "day":
        return ""
    step = e(timeline.step)
    return (
        f'<p class="muted">A point per {step}: the history spans more than a year. A state (a share, '
        f"what is open) is its value at the {step}'s end, a volume the {step}'s sum.</p>"
    )


def coverage_section(coverage: DataFrame | None) -> str:
    if coverage is None:
        body = _missing(
            "coverage",
            data.COVERAGE,
            "is written by the gold.governance_coverage_daily task of lakehouse run.",
        )
        return _section("coverage", "Coverage", body)
    per_catalog = data.coverage_per_catalog(coverage)
    if not per_catalog:
        return _section("coverage", "Coverage", '<p class="muted">No live entities counted yet.</p>')
    out = [
        "<p>The share of each catalog's live entities (datasets, tables, and the other entities people "
        "own; schema fields and columns left out) with an owner, a glossary term, a domain, a "
        "description, a tag, at each day's end.</p>",
        _bucket_note(next(iter(per_catalog.values()))),
    ]
    for source, timeline in per_catalog.items():
        out.append(
            time_chart(
                f"coverage-{source}",
                f"Coverage of {source}: share of live entities with each, %",
                timeline.days,
                list(timeline.series.items()),
                percent=True,
            )
        )
    per_domain = data.coverage_per_domain(coverage)
    if per_domain is not None:
        out.append(
            time_chart(
                "coverage-domains",
                "Share of live entities with an owner, per domain, %",
                per_domain.days,
                list(per_domain.series.items()),
                percent=True,
            )
        )
    return _section("coverage", "Coverage", "".join(out))


def _hours_unit(rows: list[dict]) -> tuple[str, float]:
    """Hours while the slowest 90th percentile is under two days, days beyond."""
    slowest = max((r["p90_hours"] or 0 for r in rows), default=0)
    return (" h", 1.0) if slowest < 48 else (" d", 24.0)


def review_section(proposals: DataFrame | None, backlog: DataFrame | None, clock: dt.datetime | None) -> str:
    out = []
    if proposals is None:
        out.append(
            _missing("proposals", data.PROPOSALS, "is written by the gold.proposals task of lakehouse run.")
        )
    else:
        open_requests = data.requests_open(proposals, clock)
        if open_requests is None:
            out.append('<p class="muted">No review requests yet.</p>')
        else:
            out.append(_bucket_note(open_requests))
            out.append(
                time_chart(
                    "backlog-open",
                    "Review requests open at each day's end, per catalog",
                    open_requests.days,
                    list(open_requests.series.items()),
                    area=True,
                    counts=True,
                )
            )
    if backlog is None:
        out.append(
            _missing(
                "backlog", data.BACKLOG, "is written by the gold.review_backlog_daily task of lakehouse run."
            )
        )
    else:
        oldest = data.oldest_open_request(backlog)
        if oldest is not None:
            out.append(
                time_chart(
                    "backlog-age",
                    "Age of the oldest open request at each day's end, per catalog, days",
                    oldest.days,
                    list(oldest.series.items()),
                    unit=" d",
                )
            )
    if proposals is not None:
        rows = data.cycle_times(proposals)
        unit, per = _hours_unit(rows)
        out.append("<h3>Review cycle times</h3>")
        out.append(
            bar_chart(
                "cycle-times",
                f"Time from request to resolution, per catalog and request type ({unit.strip()})",
                [f"{r['source']} {r['action_request_type']} ({r['resolved']})" for r in rows],
                [
                    ("median", [(r["p50_hours"] or 0) / per for r in rows]),
                    ("90th percentile", [(r["p90_hours"] or 0) / per for r in rows]),
                ],
                unit=unit,
            )
        )
        if rows:
            out.append('<p class="muted">Resolved requests only; their count in brackets.</p>')
    return _section("reviews", "Review backlog and cycle times", "".join(out))


def _when(value: dt.datetime | None) -> str:
    return "&mdash;" if value is None else value.strftime("%Y-%m-%d %H:%M UTC")


def _short(value: dt.datetime | None) -> str:
    return "" if value is None else value.strftime("%Y-%m-%d %H:%M")


def violations_section(violations: DataFrame | None, clock: dt.datetime | None) -> str:
    if violations is None:
        body = _missing(
            "violations",
            data.VIOLATIONS,
            "is written by the governance violations task; this section fills in once it has run.",
        )
        return _section("violations", "Governance violations", body)
    by_rule = data.violations_by_rule(violations, clock)
    over_time = data.violations_open(violations, clock)
    if not by_rule or over_time is None:
        return _section("violations", "Governance violations", '<p class="muted">No violations recorded.</p>')
    by_severity: dict[str, int] = {}
    for r in by_rule:
        by_severity[r["severity"]] = by_severity.get(r["severity"], 0) + r["open_now"]
    summary = "".join(
        f'<div data-severity="{e(s)}"><span class="muted">open, {e(s)}</span><b>{by_severity.get(s, 0)}</b></div>'
        for s in ("critical", "warn", "info")
    )
    rows = "".join(
        f"<tr><td>{e(r['rule_id'])}</td><td>{e(r['rule_kind'])}</td><td>{e(r['severity'])}</td>"
        f'<td class="num">{r["open_now"]}</td><td class="num">{r["opened"]}</td>'
        f'<td class="num">{r["resolved"]}</td><td class="num">{r["entities"]}</td></tr>'
        for r in by_rule
    )
    body = (
        f"<p>At the event clock {e(_when(clock))} (the newest event in the warehouse).</p>"
        f'<div class="summary">{summary}</div>'
        + _bucket_note(over_time)
        + time_chart(
            "violations-open",
            "Violations open at each day's end, per rule (severity)",
            over_time.days,
            list(over_time.series.items()),
            counts=True,
        )
        + '<div class="scroll"><table class="violations"><thead><tr><th>Rule</th><th>Kind</th><th>Severity</th>'
        "<th>Open now</th><th>Opened</th><th>Resolved</th><th>Entities</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></div>"
    )
    return _section("violations", "Governance violations", body)


def feeds_section(volume: DataFrame | None, dq: DataFrame | None) -> str:
    out = []
    if volume is None:
        out.append(
            _missing(
                "feed volume",
                data.FEED_VOLUME,
                "is written by the feed checks; this chart fills in once they run.",
            )
        )
    else:
        per_source = data.feed_volume(volume)
        if not per_source:
            out.append('<p class="muted">No events counted yet.</p>')
        else:
            out.append(_bucket_note(next(iter(per_source.values()))[0]))
        for source, (events, baseline) in per_source.items():
            out.append(
                time_chart(
                    f"feed-{source}",
                    f"Events of {source} per {events.step}, and their baseline",
                    events.days,
                    [("baseline (same weekday, trailing)", baseline.series["baseline"])],
                    bars=("events", events.series["events"]),
                    counts=True,
                )
            )
    checks = data.feed_checks(dq) if dq is not None else []
    if not checks:
        out.append(
            '<p class="missing">No feed checks recorded yet: the <code>feeds.*</code> rows of '
            f"<code>{e(DQ_RESULTS)}</code> appear once the feed checks run.</p>"
        )
    else:
        rows = "".join(
            f'<tr class="{"ok" if c["success"] else "fail"}">'
            f"<td>{e(c['table'].removeprefix(data.FEED_TABLE_PREFIX))}</td><td>{e(c['expectation'])}</td>"
            f'<td class="status {"pass" if c["success"] else "bad"}">{"OK" if c["success"] else "BREACHED"}'
            f' <span class="muted">({e(c["severity"])})</span></td><td class="num">{e(_short(c["validated_at"]))}</td>'
            f'<td class="num">{c["breaches"]} of {c["runs"]} runs</td></tr>'
            for c in checks
        )
        out.append(
            "<h3>Freshness and volume checks</h3>"
            '<div class="scroll"><table class="feed-checks"><thead><tr><th>Feed</th><th>Check</th><th>Latest (severity)</th>'
            "<th>Checked (UTC)</th><th>Breached</th></tr></thead>"
            f"<tbody>{rows}</tbody></table></div>"
        )
    return _section("feeds", "Feeds: volume and freshness", "".join(out))


def build_governance_report(store: TableStore) -> str:
    """The governance report's HTML for the warehouse of `store`."""
    clock = event_clock(store)
    generated = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    proposals = _read(store, data.PROPOSALS)
    body = (
        coverage_section(_read(store, data.COVERAGE))
        + review_section(proposals, _read(store, data.BACKLOG), clock)
        + violations_section(_read(store, data.VIOLATIONS), clock)
        + feeds_section(_read(store, data.FEED_VOLUME), _read(store, DQ_RESULTS))
    )
    nav = " &middot; ".join(
        f'<a href="#{i}">{t}</a>'
        for i, t in (
            ("coverage", "Coverage"),
            ("reviews", "Reviews"),
            ("violations", "Violations"),
            ("feeds", "Feeds"),
        )
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Governance report</title><style>{CSS}{CHART_CSS}</style></head><body>"
        f"<header><h1>Governance report</h1><p>Warehouse {e(store.warehouse)} &middot; event clock "
        f"{e(_when(clock))} &middot; generated {e(generated)}</p><p>{nav}</p></header>"
        f"<main>{body}</main></body></html>\n"
    )


def write_governance_report(store: TableStore, out: Path | None = None) -> Path:
    """Write the report (default `<warehouse>/reports/governance_report.html`) and return its path."""
    path = Path(out) if out else Path(store.warehouse) / "reports" / FILE_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(build_governance_report(store), encoding="utf-8")
    return path.resolve()
