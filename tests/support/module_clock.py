"""A pytest plugin: how long each test module took, its slowest listed at the end, and a bound.

Why: `make test-all` has to fit in CI's time with room to spare. A module's time is the sum of
its tests' setup, call and teardown, module fixtures included (a built warehouse is paid in
the first test's setup). The session fails when a module not marked `scale` (those run in
`make test-scale`) takes longer than `MODULE_LIMIT_SECONDS`: make it cheaper, or move what
only measures size to the scale target.
"""

from __future__ import annotations

import os
from collections import defaultdict

import pytest

MODULE_LIMIT_SECONDS = float(os.environ.get("LAKEHOUSE_TEST_MODULE_LIMIT", "300"))
SHOWN = 12

_seconds: dict[str, float] = defaultdict(float)
_scale_modules: set[str] = set()


def _module(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("scale"):
            _scale_modules.add(_module(item.nodeid))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _seconds[_module(report.nodeid)] += report.duration


def over_limit() -> dict[str, float]:
    """Modules outside the scale target that took longer than the bound."""
    return {
        module: seconds
        for module, seconds in _seconds.items()
        if seconds > MODULE_LIMIT_SECONDS and module not in _scale_modules
    }


def pytest_terminal_summary(terminalreporter) -> None:
    if not _seconds:
        return
    terminalreporter.section("slowest test modules")
    for module, seconds in sorted(_seconds.items(), key=lambda kv: -kv[1])[:SHOWN]:
        terminalreporter.write_line(f"{seconds:8.1f} s  {module}")
    for module, seconds in over_limit().items():
        terminalreporter.write_line(
            f"FAILED (module time): {module} took {seconds:.0f} s, over the {MODULE_LIMIT_SECONDS:.0f} s "
            "a module may take outside `make test-scale`",
            red=True,
        )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if over_limit() and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
