"""Where the code runs: the Spark session, a JDK, SQL expression text, fault injection for crash
tests, the secrets a Databricks task reads from its scope.

The names below load on first use: the tuning settings (`pipelines.runtime.tuning`) are read
by commands before Spark itself is imported.
"""

from __future__ import annotations

import importlib

__all__ = ["ensure_java", "get_spark"]
_HOMES = {"ensure_java": "pipelines.runtime.java", "get_spark": "pipelines.runtime.spark"}


def __getattr__(name: str):
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
