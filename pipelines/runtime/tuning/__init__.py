"""The local driver JVM and process: how it starts (quiet console, class archive), how it compiles
(JIT), how delta-rs returns memory (allocator). Applied only to a local session, where the
profile asks: the `databricks` and `connect` profiles never reach this package.

`for_local_run` is the entry point a command that starts a new JVM for one run calls.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class LocalRun:
    """What a new local JVM for one run starts with, and what the run's first line says of it."""

    java_options: str = ""
    notes: dict[str, str] = field(default_factory=dict)


def for_local_run(config, rows_in_sight: Callable[[], int]) -> LocalRun:
    """The JVM options for a new local JVM started for one run, chosen from the rows the run has
    in sight (`rows_in_sight`, called only when the profile asks: `pipelines.runtime.tuning.jit`)."""
    from pipelines.runtime.tuning.jit import QUICK_JIT, java_options_for_rows

    options = java_options_for_rows(config, rows_in_sight)
    return LocalRun(options, {"jit": "c1"} if QUICK_JIT in options else {})
