"""Expectation suites as files: `expectations/<table>.json` (GX 1.x format, carried in the wheel)
parsed into `Suite`s of `Expectation`s, each with its severity.

A suite is written once and drives both the row split (drop -> quarantine, fail -> stop the
run) and the recorded validation result. What a rule means as SQL is `pipelines.quality.rules`;
how rules are counted is `pipelines.quality.measure`. Everything a suite file can get wrong is
refused here, with the file and the expectation named.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from pipelines.core import defaults
from pipelines.core.config import ConfigError

SUITES_DIR = defaults.suites()
SEVERITIES = ("warn", "drop", "fail")
UNIQUE = "expect_column_values_to_be_unique"
COMPOUND_UNIQUE = "expect_compound_columns_to_be_unique"
NO_OVERLAP = "expect_intervals_to_not_overlap_per_key"  # ours: GX has no built-in for it
# Rules over the rows of a key (`column_list`), evaluated with one window per key in the same
# aggregation as the row-level rules: gold tables only, whose rows are written a whole group
# at a time, so a key's rows are all in the frame checked.
KEYED = (COMPOUND_UNIQUE, NO_OVERLAP)
OWN_TYPES = (NO_OVERLAP,)  # expectation types of ours, not GX's
SUPPORTED = {
    "expect_column_values_to_not_be_null",
    "expect_column_values_to_be_null",
    "expect_column_values_to_be_in_set",
    "expect_column_values_to_not_be_in_set",
    "expect_column_values_to_match_regex",
    "expect_column_values_to_not_match_regex",
    "expect_column_values_to_be_between",
    "expect_column_value_lengths_to_be_between",
    "expect_column_pair_values_to_be_in_set",
    "expect_column_pair_values_a_to_be_greater_than_b",
    UNIQUE,
    *KEYED,
}
IGNORE_ROW_IF = ("both_values_are_missing", "either_value_is_missing", "neither")  # the first: GX's default
COMPOUND_IGNORE_ROW_IF = ("all_values_are_missing", "any_value_is_missing", "never")
DEFAULT_ROW_KEY = "event_id"


class SuiteError(ValueError):
    """A suite file that cannot be used; the message names file and expectation."""


@dataclass(frozen=True)
class Expectation:
    name: str
    type: str
    kwargs: dict[str, Any]
    severity: str
    example_columns: tuple[str, ...] = ()  # `meta.example_columns`: what names a failing row

    @property
    def column(self) -> str | None:
        return self.kwargs.get("column") or self.kwargs.get("column_A")

    @property
    def keyed(self) -> bool:
        """Evaluated over the rows of each key (`column_list`), not row by row."""
        return self.type in KEYED

    @property
    def key(self) -> tuple[str, ...]:
        return tuple(self.kwargs.get("column_list", ()))

    @property
    def mostly(self) -> float:
        return float(self.kwargs.get("mostly", 1.0))

    @property
    def row_level(self) -> bool:
        return self.type != UNIQUE and not self.keyed


@dataclass(frozen=True)
class Suite:
    table: str
    expectations: tuple[Expectation, ...]
    path: Path
    row_key: str = DEFAULT_ROW_KEY  # `meta.row_key`: the column whose values name a failing row

    def by_severity(self, severity: str) -> list[Expectation]:
        return [e for e in self.expectations if e.severity == severity and e.row_level]

    @property
    def row_level(self) -> list[Expectation]:
        """The rules checked row by row, in the suite's order."""
        return [e for e in self.expectations if e.row_level]

    @property
    def keyed(self) -> list[Expectation]:
        """The rules checked over the rows of each key."""
        return [e for e in self.expectations if e.keyed]

    @property
    def table_level(self) -> list[Expectation]:
        """The uniqueness rules (`expect_column_values_to_be_unique`), measured on the rows written."""
        return [e for e in self.expectations if e.type == UNIQUE]


def parse_suite(path: Path) -> Suite:
    """The suite in the file at `path`; SuiteError names the file and the expectation at fault."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise SuiteError(f"{path}: not valid JSON ({exc})") from exc
    meta = data.get("meta", {})
    table = meta.get("table") or data.get("name")
    expectations = []
    names = set()
    for index, item in enumerate(data.get("expectations", [])):
        meta = item.get("meta", {})
        exp_type = item.get("type") or item.get("expectation_type")
        severity = meta.get("severity", "warn")
        name = meta.get("name") or f"{exp_type}:{item.get('kwargs', {}).get('column', index)}"
        where = f"{path}: expectation {index} ({name})"
        if exp_type not in SUPPORTED:
            raise SuiteError(f"{where}: unsupported type {exp_type}")
        if severity not in SEVERITIES:
            raise SuiteError(f"{where}: severity must be one of {SEVERITIES}")
        if exp_type == UNIQUE and severity != "warn":
            raise SuiteError(f"{where}: uniqueness is table-level and can only warn")
        kwargs = dict(item.get("kwargs", {}))
        _check_kwargs(where, table, exp_type, severity, kwargs)
        if name in names:
            raise SuiteError(f"{where}: duplicate name")
        if not re.fullmatch(r"[A-Za-z0-9_.:\-]+", name):
            raise SuiteError(f"{where}: name must be a short identifier")
        names.add(name)
        example = tuple(meta.get("example_columns", ()))
        expectations.append(Expectation(name, exp_type, kwargs, severity, example))
    row_key = data.get("meta", {}).get("row_key", DEFAULT_ROW_KEY)
    return Suite(table, tuple(expectations), path, row_key)


def _check_kwargs(where: str, table: str, exp_type: str, severity: str, kwargs: dict) -> None:
    """What a suite file can get wrong about the rules only gold suites use."""
    gold = str(table).startswith("gold.")
    if gold and severity == "drop":
        raise SuiteError(f"{where}: a gold table has no quarantine, so no drop rules (warn or fail)")
    if exp_type in KEYED:
        if not gold:
            raise SuiteError(f"{where}: {exp_type} is evaluated on gold tables only")
        if not kwargs.get("column_list"):
            raise SuiteError(f"{where}: {exp_type} needs column_list (the key)")
    if exp_type == COMPOUND_UNIQUE and len(kwargs["column_list"]) < 2:
        # GX's rule: one column is expect_column_values_to_be_unique
        raise SuiteError(f"{where}: {exp_type} needs at least two columns in column_list")
    if exp_type == NO_OVERLAP and not (kwargs.get("from_column") and kwargs.get("to_column")):
        raise SuiteError(f"{where}: {exp_type} needs from_column and to_column")
    allowed = COMPOUND_IGNORE_ROW_IF if exp_type == COMPOUND_UNIQUE else IGNORE_ROW_IF
    if kwargs.get("ignore_row_if", allowed[0]) not in allowed:
        raise SuiteError(f"{where}: ignore_row_if must be one of {allowed}")


def suites_dir(setting: str | None = None) -> Path:
    """The configured suites folder (`quality.suites_dir`; `pipelines.core.defaults.resolve` says
    where a relative one is: `expectations` is the suites the package carries)."""
    if not setting:
        return SUITES_DIR
    folder = defaults.resolve(setting)
    if not folder.is_dir():
        raise ConfigError(f"quality.suites_dir: {setting} is not a folder ({folder})")
    return folder


@cache
def load_suite(table: str, directory: Path = SUITES_DIR) -> Suite | None:
    """The suite named after `table` in `directory`, or None when the table has none."""
    path = directory / f"{table}.json"
    return parse_suite(path) if path.is_file() else None
