"""The suite's module clock (`tests/support/module_clock.py`), run on small suites of its own in
pytest subprocesses: a module over the bound fails the session where asked and is named
otherwise, one of the scale target does not fail it, modules marked `heavy` start first, and under N test workers the bound is N times as long."""

from __future__ import annotations

import pytest

from pipelines.core.config import PROJECT_ROOT

SLEEPY = """
import time
import pytest
{marks}

def test_takes_a_while():
    time.sleep(0.7)
"""
QUICK = """
def test_quick():
    pass
"""


@pytest.fixture
def suite(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(PROJECT_ROOT))
    monkeypatch.setenv("LAKEHOUSE_TEST_MODULE_LIMIT", "0.5")
    monkeypatch.setenv("LAKEHOUSE_TEST_MODULE_CLOCK", "fail")
    pytester.makeini("[pytest]\nmarkers =\n    heavy: starts first\n    scale: size only\n")

    def run(*options: str):
        return pytester.runpytest_subprocess(
            "-p", "tests.support.module_clock", "-p", "no:cacheprovider", *options
        )

    return run


def test_a_module_over_the_bound_fails_the_session(pytester, suite):
    pytester.makepyfile(test_sleepy=SLEEPY.format(marks=""), test_quick=QUICK)
    result = suite()
    result.stdout.fnmatch_lines(
        ["*slowest test modules*", "*test_sleepy.py*", "FAILED (module time): test_sleepy.py*"]
    )
    assert "FAILED (module time): test_quick.py" not in result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=2)


def test_unless_asked_a_module_over_the_bound_is_named_and_the_session_passes(pytester, suite, monkeypatch):
    monkeypatch.delenv("LAKEHOUSE_TEST_MODULE_CLOCK")
    pytester.makepyfile(test_sleepy=SLEEPY.format(marks=""))
    result = suite()
    result.stdout.fnmatch_lines(["OVER (module time): test_sleepy.py*"])
    assert result.ret == pytest.ExitCode.OK


def test_a_module_of_the_scale_target_may_take_longer(pytester, suite):
    pytester.makepyfile(test_sleepy=SLEEPY.format(marks="pytestmark = pytest.mark.scale"))
    result = suite()
    assert "FAILED (module time)" not in result.stdout.str()
    assert result.ret == pytest.ExitCode.OK


def test_heavy_modules_start_first(pytester, suite):
    pytester.makepyfile(
        test_a_quick=QUICK,
        test_b_quick=QUICK,
        test_c_heavy=QUICK.replace("def", "import pytest\npytestmark = pytest.mark.heavy\n\ndef"),
    )
    result = suite("-v")
    ran = [line.split("::")[0] for line in result.stdout.lines if "::test_quick PASSED" in line]
    assert ran == ["test_c_heavy.py", "test_a_quick.py", "test_b_quick.py"]


def test_under_two_workers_a_module_may_take_twice_the_bound(pytester, suite):
    pytester.makepyfile(test_sleepy=SLEEPY.format(marks=""))
    alone = suite()
    side_by_side = suite("-p", "xdist", "-n", "2")
    assert alone.ret == pytest.ExitCode.TESTS_FAILED
    side_by_side.stdout.fnmatch_lines(["*slowest test modules (2 workers side by side)*"])
    assert side_by_side.ret == pytest.ExitCode.OK, side_by_side.stdout.str()
