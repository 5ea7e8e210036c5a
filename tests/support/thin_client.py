"""A virtualenv with Spark Connect's thin client (`pyspark-client`, no JVM) and the project's wheel.

What a laptop driving a remote cluster (or Databricks Connect) has: the `pyspark` package without
its jars, py4j or delta-spark, and the wheel with only its own runtime dependencies. The venv
with `pyspark-client` (the installed PySpark's version) and those dependencies is built once per
machine and kept under the user's cache, keyed by what it holds; each test session installs the
wheel it builds into it (seconds), so the tests run the code of the working tree.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.one_at_a_time import one_at_a_time
from tests.support.packaging import build_wheel

CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "catalog-lakehouse" / "test-venvs"
PIP = ["-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-compile"]


def requirements() -> list[str]:
    """`pyspark-client` of the installed PySpark's version, and the wheel's runtime dependencies."""
    runtime = [r for r in importlib.metadata.requires("catalog-lakehouse") or [] if "extra ==" not in r]
    return [f"pyspark-client=={importlib.metadata.version('pyspark')}", *sorted(runtime)]


def thin_client_python(scratch: Path) -> Path:
    """The venv's python, with the working tree's wheel installed (built under `scratch`)."""
    wanted = requirements()
    venv = CACHE / ("thin-client-" + hashlib.sha256("\n".join(wanted).encode()).hexdigest()[:12])
    python = venv / "bin" / "python"
    with one_at_a_time("thin-client-venv"):  # test workers side by side: one builds it
        if not (venv / "complete").is_file():
            shutil.rmtree(venv, ignore_errors=True)
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            done = subprocess.run([str(python), *PIP, *wanted], capture_output=True, text=True)
            assert done.returncode == 0, done.stderr[-3000:]
            (venv / "complete").write_text("\n".join(wanted))
    wheel = build_wheel(_empty(scratch / "wheel-source"), _empty(scratch / "dist"))
    done = subprocess.run(
        [str(python), *PIP, "--no-deps", "--force-reinstall", str(wheel)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return python


def _empty(path: Path) -> Path:
    path.mkdir(parents=True)
    return path
