"""The report's trend of a table's unexpected % per rule over its last runs, as inline SVG.

Readable in the two cases a plain line chart is not: one run (a bar per rule, labelled, not a
lone dot) and series at the same values (drawn once, the legend naming every rule on that
line). Series are told apart by marker shape and dash pattern as well as colour.
"""

from __future__ import annotations

import html
import math
from typing import Any

from pipelines.quality.report_assets import COLORS, DASHES, MARKERS
from pipelines.quality.report_data import Run

WIDTH, LEFT, RIGHT, TOP, BOTTOM = 520, 44, 36, 10, 24


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _scale_top(peak: float) -> float:
    """A round top for the axis: 1, 2 or 5 times a power of ten, at least `peak`."""
    decade = 10 ** math.ceil(math.log10(max(peak, 1.0)))
    return next(s for s in (decade / 5, decade / 2, decade) if s >= peak)


def _series(ordered: list[Run]) -> list[tuple[list[str], list[float | None]]]:
    """(rule names, unexpected % per run) of the rules that had any, rules with the same values
    merged into one series."""
    by_rule: dict[str, list[float | None]] = {}
    for i, run in enumerate(ordered):
        for r in run.results:
            by_rule.setdefault(r["expectation"], [None] * len(ordered))[i] = r["unexpected_percent"]
    merged: dict[tuple, list[str]] = {}
    for name, values in sorted(by_rule.items()):
        if any(v for v in values if v):
            merged.setdefault(tuple(values), []).append(name)
    return [(names, list(values)) for values, names in merged.items()]


def _marker(shape: str, x: float, y: float, color: str, title: str = "") -> str:
    tip = f"<title>{_e(title)}</title>" if title else ""
    if shape == "square":
        return f'<rect x="{x - 3.5:.1f}" y="{y - 3.5:.1f}" width="7" height="7" fill="{color}">{tip}</rect>'
    if shape == "triangle":
        points = f"{x:.1f},{y - 4.5:.1f} {x + 4.5:.1f},{y + 3.5:.1f} {x - 4.5:.1f},{y + 3.5:.1f}"
        return f'<polygon points="{points}" fill="{color}">{tip}</polygon>'
    if shape == "diamond":
        points = f"{x:.1f},{y - 5:.1f} {x + 5:.1f},{y:.1f} {x:.1f},{y + 5:.1f} {x - 5:.1f},{y:.1f}"
        return f'<polygon points="{points}" fill="{color}">{tip}</polygon>'
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{color}">{tip}</circle>'


def _style(n: int) -> tuple[str, str, str]:
    """(colour, dash pattern, marker) of the `n`-th series: no two of the first 32 alike."""
    return COLORS[n % len(COLORS)], DASHES[(n // len(COLORS)) % len(DASHES)], MARKERS[n % len(MARKERS)]


def _swatch(n: int) -> str:
    color, dash, marker = _style(n)
    return (
        '<svg width="26" height="10" aria-hidden="true">'
        f'<line x1="1" x2="25" y1="5" y2="5" stroke="{color}" stroke-width="2" stroke-dasharray="{dash}"/>'
        f"{_marker(marker, 13, 5, color)}</svg>"
    )


def trend_svg(table: str, runs: list[Run]) -> str:
    """Unexpected % per rule over `runs` (newest first; drawn oldest left), or the bars of one run."""
    ordered = list(reversed(runs))
    series = _series(ordered)
    if not series:
        return '<p class="pass">No unexpected values in these runs.</p>'
    if len(ordered) == 1:
        return _bars(table, ordered[0], series)
    return _lines(table, ordered, series)


def _bars(table: str, run: Run, series: list[tuple[list[str], list[float | None]]]) -> str:
    """One run: a labelled bar per rule that had unexpected values, largest first."""
    bars = sorted(((values[0] or 0.0, name) for names, values in series for name in names), reverse=True)
    row, label_w, plot_w = 20, 210, WIDTH - 210 - 60
    height = TOP + row * len(bars) + 6
    parts = [
        f'<svg class="trend" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" role="img" '
        f'aria-label="{_e(f"unexpected percent per rule of {table} in run {run.run_id}")}">'
    ]
    for i, (value, name) in enumerate(bars):
        y = TOP + i * row
        width = max(1.0, plot_w * value / 100.0)
        shown = name if len(name) <= 32 else name[:31] + "…"
        parts.append(
            f'<text x="{label_w - 6}" y="{y + 13}" font-size="11" text-anchor="end" fill="#1c2833">{_e(shown)}'
            f"<title>{_e(name)}</title></text>"
            f'<rect x="{label_w}" y="{y + 3}" width="{width:.1f}" height="13" fill="#c0392b"/>'
            f'<text x="{label_w + width + 4:.1f}" y="{y + 13}" font-size="11" fill="#1c2833">{value:.2f}%</text>'
        )
    parts.append("</svg>")
    note = f'<p class="muted">One run so far ({_e(run.run_id)}): unexpected % per rule.</p>'
    return note + "".join(parts)


def _lines(table: str, ordered: list[Run], series: list[tuple[list[str], list[float | None]]]) -> str:
    height = 160
    plot_w, plot_h = WIDTH - LEFT - RIGHT, height - TOP - BOTTOM
    top_value = _scale_top(max(v for _, values in series for v in values if v is not None))

    def x(i: int) -> float:
        return LEFT + plot_w * i / (len(ordered) - 1)

    def y(value: float) -> float:
        return TOP + plot_h * (1 - value / top_value)

    parts = [
        f'<svg class="trend" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" role="img" aria-label="{_e(f"unexpected percent trend of {table}")}">',
        f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="#fbfcfc" stroke="#d5d8dc"/>',
    ]
    for frac in (0, 0.5, 1):
        gy = y(top_value * frac)
        parts.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{gy:.1f}" y2="{gy:.1f}" stroke="#e5e8e8"/>')
        parts.append(
            f'<text x="{LEFT - 4}" y="{gy + 4:.1f}" font-size="10" text-anchor="end" fill="#707b7c">'
            f"{top_value * frac:g}%</text>"
        )
    for i, run in enumerate(ordered):
        label = run.validated_at.strftime("%m-%d %H:%M") if run.validated_at else str(i + 1)
        parts.append(
            f'<text x="{x(i):.1f}" y="{height - 8}" font-size="10" text-anchor="middle" fill="#707b7c">'
            f"{_e(label)}</text>"
        )
    legend = []
    for n, (names, values) in enumerate(series):
        color, dash, marker = _style(n)
        points = [(x(i), y(v), v, ordered[i].run_id) for i, v in enumerate(values) if v is not None]
        path = " ".join(f"{px:.1f},{py:.1f}" for px, py, _, _ in points)
        parts.append(
            f'<polyline fill="none" stroke="{color}" stroke-width="2" stroke-dasharray="{dash}" points="{path}"/>'
        )
        label = ", ".join(names)
        for px, py, value, run_id in points:
            parts.append(_marker(marker, px, py, color, f"{label}: {value:.2f}% in run {run_id}"))
        latest = values[-1]
        shown = "" if latest is None else f" ({latest:.2f}% latest)"
        legend.append(f"<span>{_swatch(n)} {_e(label)}{_e(shown)}</span>")
    parts.append("</svg>")
    return "".join(parts) + f'<div class="legend">{"".join(legend)}</div>'
