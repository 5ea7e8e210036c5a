"""A Databricks job schedule's Quartz cron expression and time zone, checked offline.

Databricks schedules take Quartz's cron dialect (seconds first, `?`, `L`, `W`, `#`, an optional
year), which Unix cron libraries (croniter, cronsim) do not parse. The one Python library for
Quartz expressions found, quartz-cron-checker, refuses valid ones Quartz accepts (`L` alone as
the day of the week, a list mixing a range and a name such as `JAN-MAR,DEC`), so the check is
this module's: the grammar of Quartz's CronExpression, field by field.
"""

from __future__ import annotations

import re
import zoneinfo
from typing import Any


def timezone_problems(name: Any) -> list[str]:
    """What is wrong with a schedule's `timezone_id` (empty when it is an IANA time zone)."""
    if not name:
        return ["timezone_id is required"]
    try:
        zoneinfo.ZoneInfo(str(name))
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return [f"timezone_id '{name}' is not a known time zone"]
    return []


MONTHS = "JAN FEB MAR APR MAY JUN JUL AUG SEP OCT NOV DEC".split()
DAYS = "SUN MON TUE WED THU FRI SAT".split()
# name, low, high, names (value of the first name is `low`)
FIELDS = (
    ("seconds", 0, 59, ()),
    ("minutes", 0, 59, ()),
    ("hours", 0, 23, ()),
    ("day-of-month", 1, 31, ()),
    ("month", 1, 12, MONTHS),
    ("day-of-week", 1, 7, DAYS),
    ("year", 1970, 2099, ()),
)
_DOM_SPECIAL = re.compile(r"^(L(-([1-9]|[12][0-9]|30))?|LW|([1-9]|[12][0-9]|3[01])W)$")
_DOW_SPECIAL = re.compile(r"^(L|[1-7]L|[1-7]#[1-5])$")


def cron_problems(expression: str) -> list[str]:
    """What is wrong with a Quartz cron expression (empty when it is valid).

    Six or seven fields (seconds minutes hours day-of-month month day-of-week [year]),
    each `*`, a value, `a-b`, a step `x/n`, or a list of those; `?` in exactly one of
    day-of-month and day-of-week; `L`, `W`, `LW`, `L-n` (day-of-month) and `L`, `nL`,
    `n#k` (day-of-week) as the whole field.
    """
    parts = str(expression).split()
    if len(parts) not in (6, 7):
        return [f"cron '{expression}' must have 6 or 7 fields, has {len(parts)}"]
    problems = []
    for text, (name, low, high, names) in zip(parts, FIELDS, strict=False):
        problem = _field_problem(text.upper(), name, low, high, names)
        if problem:
            problems.append(f"cron '{expression}': {name} '{text}' {problem}")
    if (parts[3] == "?") == (parts[5] == "?"):
        problems.append(f"cron '{expression}': '?' must be in exactly one of day-of-month and day-of-week")
    return problems


def _field_problem(text: str, name: str, low: int, high: int, names: tuple[str, ...]) -> str | None:
    if text == "?":
        return None if name in ("day-of-month", "day-of-week") else "cannot be '?'"
    if name == "day-of-month" and _DOM_SPECIAL.match(text):
        return None
    if name == "day-of-week" and _DOW_SPECIAL.match(text):
        return None
    for item in text.split(","):
        problem = _item_problem(item, low, high, names)
        if problem:
            return problem
    return None


def _item_problem(item: str, low: int, high: int, names: tuple[str, ...]) -> str | None:
    base, slash, step = item.partition("/")
    if slash and (not step.isdigit() or not 1 <= int(step) <= high):
        return f"has an invalid step '{step}'"
    if base == "*":
        return None
    bounds = base.split("-")
    if len(bounds) > 2:
        return f"has an invalid range '{base}'"
    for bound in bounds:
        value = _value(bound, low, names)
        if value is None or not low <= value <= high:
            return f"has '{bound}' outside {low}-{high}"
    return None


def _value(text: str, low: int, names: tuple[str, ...]) -> int | None:
    if text.isdigit():
        return int(text)
    if text in names:
        return names.index(text) + low
    return None
