"""How a query's rows are printed: `--format table|csv|json`, the same text for every query
engine (and the same table layout for `lakehouse timeline --format table`).

The table is laid out by `rich` (columns aligned by display width, wide characters included);
a value wider than `MAX_WIDTH` characters is cut with `…`, and the footer says so: csv and json
print every value whole.

Values read as people write them, whichever engine answered: a timestamp to the second, with
its fraction only when it has one (`2024-03-01 10:00:00`, `2022-04-14 16:18:20.653`); an
interval as days and a clock time (`30 days 17:00:00`, `-1 day -02:30:00`), with years and
months first when it has them (`1 year 2 months`), as DuckDB and PostgreSQL print them.
"""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import IO, Any

FORMATS = ("table", "csv", "json")
MAX_WIDTH = 100  # characters of a table cell; longer values are cut with a marker
MAX_ROWS = 1000  # rows a table shows; csv and json stream every row
CUT = "…"


@dataclass(frozen=True)
class Interval:
    """An interval with a calendar part (months), which `datetime.timedelta` cannot hold: Spark's
    year-month intervals, DuckDB's intervals of months."""

    months: int
    days: int = 0
    microseconds: int = 0


def _fraction(microseconds: int) -> str:
    return f".{microseconds:06d}".rstrip("0") if microseconds else ""


def timestamp_text(value: dt.datetime) -> str:
    """`yyyy-MM-dd HH:mm:ss`, then the fraction of a second without trailing zeros, if any."""
    return value.strftime("%Y-%m-%d %H:%M:%S") + _fraction(value.microsecond)


def _count(number: int, unit: str) -> str:
    return f"{number} {unit}{'' if abs(number) == 1 else 's'}"


def interval_text(months: int = 0, days: int = 0, microseconds: int = 0) -> str:
    """`1 year 2 months 3 days 04:05:06.5`: each part signed, zero parts left out (all zero:
    `00:00:00`)."""
    parts = []
    years, rest = divmod(abs(months), 12)
    sign = -1 if months < 0 else 1
    if years:
        parts.append(_count(sign * years, "year"))
    if rest:
        parts.append(_count(sign * rest, "month"))
    if days:
        parts.append(_count(days, "day"))
    if microseconds or not parts:
        seconds, fraction = divmod(abs(microseconds), 1_000_000)
        hours, seconds = divmod(seconds, 3600)
        minutes, seconds = divmod(seconds, 60)
        clock = f"{hours:02d}:{minutes:02d}:{seconds:02d}{_fraction(fraction)}"
        parts.append(("-" if microseconds < 0 else "") + clock)
    return " ".join(parts)


def _timedelta_text(value: dt.timedelta) -> str:
    total = value // dt.timedelta(microseconds=1)
    days, rest = divmod(abs(total), 86_400_000_000)
    sign = -1 if total < 0 else 1
    return interval_text(0, sign * days, sign * rest)


def plain(value: Any) -> Any:
    """A JSON-friendly value: timestamps and intervals as text people write, decimals as numbers,
    maps as objects (keys sorted), structs as objects (fields in order)."""
    if isinstance(value, dt.datetime):
        return timestamp_text(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return _timedelta_text(value)
    if isinstance(value, Interval):
        return interval_text(value.months, value.days, value.microseconds)
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if hasattr(value, "asDict"):  # a struct (Row): before tuples, which it also is; fields in order
        return {str(k): plain(v) for k, v in value.asDict().items()}
    if isinstance(value, dict):  # a map: keys sorted, as engines hand entries back in any order
        return {str(k): plain(v) for k, v in sorted(value.items(), key=lambda item: str(item[0]))}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def text(value: Any) -> str:
    """A value as one cell's text: NULL for a null, JSON for a map, struct or array."""
    value = plain(value)
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def table_text(columns: Sequence[str], cells: Sequence[Sequence[str]], max_width: int = MAX_WIDTH) -> str:
    """Aligned columns under a header line, one line per row (line breaks in a value become
    spaces); values wider than `max_width` cut with `…`. Lines carry no trailing blanks."""
    from rich import box
    from rich.cells import cell_len
    from rich.console import Console
    from rich.table import Table

    rows = [[cell.replace("\n", " ") for cell in row] for row in cells]
    widths = [
        min(max_width, max([cell_len(c)] + [cell_len(r[i]) for r in rows])) for i, c in enumerate(columns)
    ]
    table = Table(box=box.ASCII2, show_edge=False, pad_edge=False, header_style=None, highlight=False)
    for column, width in zip(columns, widths, strict=True):
        table.add_column(column, max_width=width, min_width=width, overflow="ellipsis", no_wrap=True)
    for row in rows:
        table.add_row(*row)
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=sum(widths) + 3 * len(widths) + 1,  # wide enough that nothing is squeezed
        color_system=None,
        highlight=False,
        markup=False,
        emoji=False,
        force_terminal=False,
        force_jupyter=False,
    )
    console.print(table)
    return "\n".join(line.rstrip() for line in buffer.getvalue().splitlines())


def was_cut(cells: Iterable[Sequence[str]], max_width: int = MAX_WIDTH) -> bool:
    """Whether `table_text` cuts any of these values."""
    from rich.cells import cell_len

    return any(cell_len(cell) > max_width for row in cells for cell in row)


def write_table(columns: list[str], rows: Iterable[tuple], out: IO[str], max_rows: int = MAX_ROWS) -> int:
    """Aligned text; a lone multi-line value (EXPLAIN's plan) is printed as is."""
    shown, more = [], False
    for row in rows:
        if len(shown) == max_rows:
            more = True
            break
        shown.append([text(v) for v in row])
    if len(columns) == 1 and len(shown) == 1 and "\n" in shown[0][0]:
        print(shown[0][0], file=out)
        return 1
    print(table_text(columns, shown), file=out)
    notes = []
    if more:
        notes.append(f"showing the first {max_rows}: add LIMIT or use --format csv/json")
    if was_cut(shown):
        notes.append(
            f"values over {MAX_WIDTH} characters cut with {CUT}: --format csv/json prints them whole"
        )
    suffix = "".join(f", {note}" for note in notes)
    print(f"({len(shown)} row{'s' if len(shown) != 1 else ''}{suffix})", file=out)
    return len(shown)


def write_rows(
    columns: list[str], rows: Iterable[tuple], fmt: str, out: IO[str], max_rows: int = MAX_ROWS
) -> int:
    """Print column names and rows in `fmt`, the same for every query engine."""
    if fmt == "table":
        return write_table(columns, rows, out, max_rows)
    count = 0
    if fmt == "csv":
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow(["" if v is None else text(v) for v in row])
            count += 1
    else:
        for row in rows:
            record = {c: plain(v) for c, v in zip(columns, row, strict=True)}
            print(json.dumps(record, ensure_ascii=False, default=str), file=out)
            count += 1
    return count
