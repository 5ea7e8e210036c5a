"""A pytest plugin: how long each test module took, its slowest listed at the end, and a bound;
and the order modules start in.

Why: `make test-all` has to fit in CI's time with room to spare. A module's time is the sum of
its tests' setup, call and teardown, module fixtures included (a built warehouse is paid in
the first test's setup). A module not marked `scale` (those run in `make test-scale`) that takes
longer than `MODULE_LIMIT_SECONDS` is named at the end: make it cheaper, or move what only
measures size to the scale target. The same suite takes several times as long on a slower
machine, so it fails the session only where asked (`LAKEHOUSE_TEST_MODULE_CLOCK=fail`, on the
machine the bound was set on).

The test targets run modules in test workers side by side (pytest-xdist, a module to a worker),
which share the machine's cores: under N workers a module may take N times the bound, its share
of the machine being a worker's. Modules marked `heavy` (two minutes or so alone) start first,
in the order they are collected: a long module started last would keep one worker busy while
the others have nothing left to run.
"""

from __future__ import annotations

import os
from collections import defaultdict

import pytest

MODULE_LIMIT_SECONDS = float(os.environ.get("LAKEHOUSE_TEST_MODULE_LIMIT", "300"))
FAILS = os.environ.get("LAKEHOUSE_TEST_MODULE_CLOCK", "warn") == "fail"  # else over the bound is named only
SHOWN = 12

_seconds: dict[str, float] = defaultdict(float)
_scale_modules: set[str] = set()


def _module(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def workers(config: pytest.Config) -> int:
    """How many test workers share the machine (1 without pytest-xdist or with `-n 0`)."""
    return max(1, int(getattr(config.option, "numprocesses", None) or 1))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    heavy = set()
    for item in items:
        if item.get_closest_marker("scale"):
            _scale_modules.add(_module(item.nodeid))
        if item.get_closest_marker("heavy"):
            heavy.add(_module(item.nodeid))
    items.sort(key=lambda item: _module(item.nodeid) not in heavy)  # stable: collection order otherwise


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _seconds[_module(report.nodeid)] += report.duration


def limit_seconds(config: pytest.Config) -> float:
    """The bound on a module's time: `MODULE_LIMIT_SECONDS` for each worker sharing the cores."""
    return MODULE_LIMIT_SECONDS * workers(config)


def over_limit(config: pytest.Config) -> dict[str, float]:
    """Modules outside the scale target that took longer than the bound."""
    return {
        module: seconds
        for module, seconds in _seconds.items()
        if seconds > limit_seconds(config) and module not in _scale_modules
    }


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    if not _seconds:
        return
    shared = workers(config)
    terminalreporter.section(
        "slowest test modules" + (f" ({shared} workers side by side)" if shared > 1 else "")
    )
    for module, seconds in sorted(_seconds.items(), key=lambda kv: -kv[1])[:SHOWN]:
        terminalreporter.write_line(f"{seconds:8.1f} s  {module}")
    for module, seconds in over_limit(config).items():
        terminalreporter.write_line(
            f"{'FAILED' if FAILS else 'OVER'} (module time): {module} took {seconds:.0f} s, over the {limit_seconds(config):.0f} s "
            f"a module may take outside `make test-scale` ({MODULE_LIMIT_SECONDS:.0f} s a worker)",
            red=True,
        )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if FAILS and over_limit(session.config) and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
