"""Charts as inline SVG, written directly: the governance report's trends and bars.

Inline SVG keeps the page light and offline (no script library, nothing fetched) and readable
without a script. Each chart carries an accessible name (`role="img"`, a `<title>` and
`aria-labelledby`), axes with round ticks, date labels and an HTML legend; series are told apart
by marker shape and dash pattern as well as colour (the data-quality report's trend styles).
Every drawn series or bar has the class `mark`, so a check can tell a chart with data from an
empty frame. The charts scale down with the page (`max-width:100%`).
"""

from __future__ import annotations

import datetime as dt
import html
import math
from collections.abc import Sequence
from typing import Any

from pipelines.quality.report_trend import _marker, _scale_top, _style, _swatch

WIDTH, LEFT, RIGHT, TOP, BOTTOM = 680, 52, 16, 12, 26
# markers on every point up to this many points a series; beyond, the line alone
MARKED_POINTS = 60
LABEL_WIDTH = 64  # a date label's width at font size 10, and a little room
Values = Sequence[float | None]


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _tick(value: float, percent: bool) -> str:
    if percent:
        return f"{value:g}%"
    if value >= 10_000:
        return f"{value / 1000:g}k"
    return f"{value:g}"


def _open(chart_id: str, title: str, height: int) -> str:
    return (
        f'<svg class="chart" id="{_e(chart_id)}" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" '
        f'height="{height}" viewBox="0 0 {WIDTH} {height}" role="img" aria-labelledby="{_e(chart_id)}-t">'
        f'<title id="{_e(chart_id)}-t">{_e(title)}</title>'
    )


def _legend(names: list[str], extra: str = "") -> str:
    items = "".join(f"<span>{_swatch(n)} {_e(name)}</span>" for n, name in enumerate(names))
    return f'<div class="legend">{items}{extra}</div>'


def _date_labels(days: Sequence[dt.date], x, height: int, most: int = 7) -> str:
    """At most `most` date labels, evenly spread, the first and last among them."""
    if not days:
        return ""
    every = max(1, math.ceil(len(days) / most))
    shown = sorted({*range(0, len(days), every), len(days) - 1})
    if len(shown) > 1 and x(shown[-1]) - x(shown[-2]) < 1.5 * LABEL_WIDTH:
        shown.pop(-2)  # the last label (perhaps drawn left of its point) would run into the one before

    def anchor(i: int) -> str:  # the outermost labels stay inside the chart
        return "start" if x(i) - 32 < 0 else "end" if x(i) + 32 > WIDTH else "middle"

    return "".join(
        f'<text x="{x(i):.1f}" y="{height - 8}" font-size="10" text-anchor="{anchor(i)}" fill="#5d6d7e">'
        f"{_e(days[i].isoformat())}</text>"
        for i in shown
    )


def _y_axis(top_value: float, y, plot_w: int, percent: bool) -> str:
    parts = []
    for frac in (0, 0.25, 0.5, 0.75, 1):
        gy = y(top_value * frac)
        parts.append(
            f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{gy:.1f}" y2="{gy:.1f}" stroke="#e5e8e8"/>'
            f'<text x="{LEFT - 5}" y="{gy + 4:.1f}" font-size="10" text-anchor="end" fill="#5d6d7e">'
            f"{_tick(top_value * frac, percent)}</text>"
        )
    return "".join(parts)


def _top(peak: float, percent: bool, counts: bool) -> float:
    """The axis' top: 100 for shares; for counts, a multiple of 4 up to 40, so that the quarter
    ticks are whole numbers; else 1, 2 or 5 times a power of ten."""
    if percent:
        return 100.0
    if counts and peak <= 40:
        return float(max(4, math.ceil(peak / 4) * 4))
    return _scale_top(peak if peak > 0 else 1.0)


def time_chart(
    chart_id: str,
    title: str,
    days: Sequence[dt.date],
    series: list[tuple[str, Values]],
    *,
    bars: tuple[str, Values] | None = None,
    percent: bool = False,
    counts: bool = False,
    area: bool = False,
    unit: str = "",
    height: int = 190,
) -> str:
    """Values over time: a line per series (filled below when `area`), and optionally one series
    drawn as columns under the lines (`bars`, e.g. daily volume under its baseline). `days` are
    the x positions (a day, or the first day of a week or month); a None value is a gap. `percent`
    plots shares on a 0-100 axis, `counts` whole numbers."""
    drawn = [(name, values) for name, values in series if any(v is not None for v in values)]
    bar_values = [v for v in (bars[1] if bars else []) if v is not None]
    if not days or (not drawn and not any(bar_values)):
        return f'<p class="muted">{_e(title)}: nothing to plot yet.</p>'
    plot_w, plot_h = WIDTH - LEFT - RIGHT, height - TOP - BOTTOM
    peak = max([v for _, values in drawn for v in values if v is not None] + bar_values + [0.0])
    top_value = _top(peak, percent, counts)
    slot = plot_w / len(days)

    def x(i: int) -> float:
        return LEFT + slot * (i + 0.5)

    def y(value: float) -> float:
        return TOP + plot_h * (1 - value / top_value)

    parts = [
        _open(chart_id, title, height),
        f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="#fbfcfc" stroke="#d5d8dc"/>',
        _y_axis(top_value, y, plot_w, percent),
        _date_labels(days, x, height),
    ]
    legend_extra = ""
    if bars and bar_values:
        name, values = bars
        width = max(1.0, slot * 0.7)
        for i, v in enumerate(values):
            if not v:  # nothing to draw for none or zero
                continue
            parts.append(
                f'<rect class="mark bar" x="{x(i) - width / 2:.1f}" y="{y(v):.1f}" width="{width:.1f}" '
                f'height="{max(0.0, y(0) - y(v)):.1f}" fill="#aed6f1"><title>{_e(name)} on '
                f"{days[i].isoformat()}: {v:,.0f}{_e(unit)}</title></rect>"
            )
        legend_extra = (
            '<span><svg width="26" height="10" aria-hidden="true"><rect x="6" y="1" width="14" height="8" '
            f'fill="#aed6f1"/></svg> {_e(name)}</span>'
        )
    for n, (name, values) in enumerate(drawn):
        color, dash, marker = _style(n)
        points = [(x(i), y(v), v, days[i]) for i, v in enumerate(values) if v is not None]
        path = " ".join(f"{px:.1f},{py:.1f}" for px, py, _, _ in points)
        if area and len(points) > 1:
            base = f"{points[-1][0]:.1f},{y(0):.1f} {points[0][0]:.1f},{y(0):.1f}"
            parts.append(f'<polygon points="{path} {base}" fill="{color}" fill-opacity="0.12"/>')
        parts.append(
            f'<polyline class="mark" fill="none" stroke="{color}" stroke-width="2" '
            f'stroke-dasharray="{dash}" points="{path}"><title>{_e(name)}</title></polyline>'
        )
        if len(points) <= MARKED_POINTS:
            for px, py, v, day in points:
                shown = f"{v:.1f}%" if percent else f"{v:,.2f}".rstrip("0").rstrip(".") + unit
                parts.append(_marker(marker, px, py, color, f"{name} on {day.isoformat()}: {shown}"))
    parts.append("</svg>")
    legend = _legend([n for n, _ in drawn], legend_extra)
    return f'<figure class="chart"><figcaption>{_e(title)}</figcaption>{"".join(parts)}{legend}</figure>'


def bar_chart(
    chart_id: str, title: str, categories: list[str], series: list[tuple[str, Values]], unit: str = ""
) -> str:
    """Horizontal bars, a group per category and a bar per series in it (e.g. the median and
    90th percentile of each request type's cycle time), each labelled with its value."""
    values = [v for _, vs in series for v in vs if v is not None]
    if not categories or not values:
        return f'<p class="muted">{_e(title)}: nothing to plot yet.</p>'
    bar_h, gap, label_w = 12, 10, 230
    group_h = bar_h * len(series) + gap
    height = TOP + group_h * len(categories) + BOTTOM
    plot_w = WIDTH - label_w - 70
    top_value = _scale_top(max(values) if max(values) > 0 else 1.0)

    def w(value: float) -> float:
        return plot_w * value / top_value

    parts = [_open(chart_id, title, height)]
    for frac in (0, 0.5, 1):
        gx = label_w + w(top_value * frac)
        parts.append(
            f'<line x1="{gx:.1f}" x2="{gx:.1f}" y1="{TOP}" y2="{height - BOTTOM}" stroke="#e5e8e8"/>'
            f'<text x="{gx:.1f}" y="{height - 8}" font-size="10" text-anchor="middle" fill="#5d6d7e">'
            f"{_tick(top_value * frac, False)}{_e(unit)}</text>"
        )
    for c, category in enumerate(categories):
        y0 = TOP + c * group_h
        shown = category if len(category) <= 36 else category[:35] + "…"
        parts.append(
            f'<text x="{label_w - 6}" y="{y0 + bar_h * len(series) / 2 + 4:.1f}" font-size="11" '
            f'text-anchor="end" fill="#1c2833">{_e(shown)}<title>{_e(category)}</title></text>'
        )
        for s, (name, vs) in enumerate(series):
            v = vs[c]
            if v is None:
                continue
            color = _style(s)[0]
            by = y0 + s * bar_h
            parts.append(
                f'<rect class="mark bar" x="{label_w}" y="{by}" width="{max(1.0, w(v)):.1f}" '
                f'height="{bar_h - 2}" fill="{color}"><title>{_e(category)}, {_e(name)}: {v:,.1f}{_e(unit)}'
                f"</title></rect>"
                f'<text x="{label_w + max(1.0, w(v)) + 4:.1f}" y="{by + bar_h - 3}" font-size="10" '
                f'fill="#1c2833">{v:,.1f}{_e(unit)}</text>'
            )
    parts.append("</svg>")
    legend = "".join(
        f'<span><svg width="26" height="10" aria-hidden="true"><rect x="6" y="1" width="14" height="8" '
        f'fill="{_style(s)[0]}"/></svg> {_e(name)}</span>'
        for s, (name, _) in enumerate(series)
    )
    return (
        f'<figure class="chart"><figcaption>{_e(title)}</figcaption>{"".join(parts)}'
        f'<div class="legend">{legend}</div></figure>'
    )
