"""Virtualenvs the tests build once per machine, kept under the user's cache keyed by what they hold.

Why: a virtualenv with PySpark takes tens of seconds to build and holds the same files for
the same requirements, as an image (a Databricks runtime, a laptop's install) is built once
and used by every job after. The tests that need one (the thin client of Spark Connect, the
simulated job cluster's runtime) build it here the first time, and each test session installs
the wheel of the working tree into it (seconds), so they run the working tree's code. What is
built from a cached venv (a runtime's class archive) is kept beside it (`beside`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.support.one_at_a_time import one_at_a_time

CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "catalog-lakehouse" / "test-venvs"
PIP = ["-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-compile"]
COMPLETE = "complete"  # written last: a folder without it is a build that did not finish


def key(*parts: str) -> str:
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:12]


def built_once(folder: Path, build: Callable[[Path], None]) -> Path:
    """`folder`, filled by `build(folder)` the first time (into an empty folder; a build that did
    not finish is cleared and done again). Test workers side by side: one builds it, the others
    wait and find it."""
    with one_at_a_time(folder.name):
        if not (folder / COMPLETE).is_file():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            build(folder)
            (folder / COMPLETE).write_text("")
    return folder


def cached_venv(kind: str, requirements: list[str]) -> Path:
    """The folder of the venv `kind` holding `requirements`, built the first time."""

    def build(venv: Path) -> None:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        done = subprocess.run(
            [str(venv / "bin" / "python"), *PIP, *requirements], capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr[-3000:]

    return built_once(CACHE / f"{kind}-{key(*requirements)}", build)


def install_wheel(venv: Path, wheel: Path) -> None:
    """`wheel` installed into `venv` in place of any earlier one, its dependencies left as they are."""
    done = subprocess.run(
        [str(venv / "bin" / "python"), *PIP, "--no-deps", "--force-reinstall", str(wheel)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]


def beside(venv: Path, kind: str, *parts: str) -> Path:
    """A folder next to `venv` for what is built from it and `parts` (kept while both are)."""
    return venv.parent / f"{venv.name}-{kind}-{key(*parts)}"
