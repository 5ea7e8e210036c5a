"""A virtualenv with Spark Connect's thin client (`pyspark-client`, no JVM) and the project's wheel.

What a laptop driving a remote cluster (or Databricks Connect) has: the `pyspark` package without
its jars, py4j or delta-spark, and the wheel with only its own runtime dependencies. The venv
with `pyspark-client` (the installed PySpark's version) and those dependencies is built once per
machine (`tests.support.cached_venvs`); each test session installs the wheel it builds into it
(seconds), so the tests run the code of the working tree.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

from tests.support.cached_venvs import cached_venv, install_wheel
from tests.support.packaging import build_wheel, wheel_dependencies


def requirements() -> list[str]:
    """`pyspark-client` of the installed PySpark's version, and the wheel's runtime dependencies."""
    return [f"pyspark-client=={importlib.metadata.version('pyspark')}", *wheel_dependencies()]


def thin_client_python(scratch: Path) -> Path:
    """The venv's python, with the working tree's wheel installed (built under `scratch`)."""
    venv = cached_venv("thin-client", requirements())
    install_wheel(venv, build_wheel(_empty(scratch / "wheel-source"), _empty(scratch / "dist")))
    return venv / "bin" / "python"


def _empty(path: Path) -> Path:
    path.mkdir(parents=True)
    return path
