"""Quartz cron expressions and time zones of a Databricks job schedule, checked offline."""

from __future__ import annotations

import pytest

from pipelines.deploy.quartz_cron import cron_problems, timezone_problems


@pytest.mark.parametrize(
    "expression",
    [
        "0 0/15 * * * ?",
        "0 0 12 * * ?",
        "0 15 10 ? * MON-FRI",
        "0 15 10 L * ?",
        "0 15 10 L-2 * ?",
        "0 15 10 15W * ?",
        "0 15 10 LW * ?",
        "0 15 10 ? * 6L",
        "0 15 10 ? * 6#3",
        "0 15 10 ? * L",
        "0 0,15,30,45 8-18 ? JAN-MAR,DEC SUN,SAT 2026",
        "0 */5 * * * ?",
        "*/10 0-59/2 1,2,3 1-31 1-12 ?",
        "0 15 10 ? * * 2026-2030/2",
    ],
)
def test_valid_quartz_expressions(expression):
    assert cron_problems(expression) == []


@pytest.mark.parametrize(
    ("expression", "problem"),
    [
        ("0 0/15 * * *", "6 or 7 fields"),
        ("0 0 12 * * ? 2026 1", "6 or 7 fields"),
        ("0 0 12 * * *", "exactly one of day-of-month and day-of-week"),
        ("0 0 12 ? * ?", "exactly one of day-of-month and day-of-week"),
        ("60 0 12 * * ?", "seconds '60'"),
        ("0 60 12 * * ?", "minutes '60'"),
        ("0 0 24 * * ?", "hours '24'"),
        ("0 0 12 32 * ?", "day-of-month '32'"),
        ("0 0 12 0 * ?", "day-of-month '0'"),
        ("0 0 12 * 13 ?", "month '13'"),
        ("0 0 12 ? * 8", "day-of-week '8'"),
        ("0 0 12 ? * MON#6", "day-of-week 'MON#6'"),
        ("0 0 12 ? * FOO", "day-of-week 'FOO'"),
        ("0 0 12 * FOO ?", "month 'FOO'"),
        ("0 0/0 12 * * ?", "invalid step"),
        ("0 0/x 12 * * ?", "invalid step"),
        ("0 1-2-3 12 * * ?", "invalid range"),
        ("? 0 12 * * ?", "cannot be '?'"),
        ("0 0 12 * * ? 1969", "year '1969'"),
        ("0 0 12 L-31 * ?", "day-of-month 'L-31'"),
        ("0 0 12 32W * ?", "day-of-month '32W'"),
        ("0 0 12 * * ?,1", "day-of-week '?,1'"),
    ],
)
def test_invalid_quartz_expressions(expression, problem):
    problems = cron_problems(expression)
    assert problems and any(problem in p for p in problems), problems


def test_timezones():
    assert timezone_problems("UTC") == []
    assert timezone_problems("Europe/Berlin") == []
    assert timezone_problems(None) == ["timezone_id is required"]
    assert timezone_problems("Europe/Nowhere") == ["timezone_id 'Europe/Nowhere' is not a known time zone"]
    assert timezone_problems("../etc") != []
