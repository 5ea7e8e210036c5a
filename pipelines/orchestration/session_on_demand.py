"""A run that has nothing to do starts no Spark: its tasks look at the tables' logs and the landing
folders, find nothing new, and record that, all without a JVM.

Why: a scheduled run mostly finds nothing new, and starting Spark (the JVM, its classes, the
session) was most of what such a run cost. On delta-rs every question a run asks before it has
rows to compute (versions, watermarks, row counts, the landing's new files, the feeds' newest
events) is answered from the logs and file statistics in this process. So a run weighed with
nothing in sight (`rows_in_sight`) first runs with `NO_SESSION` in place of a session; if a task
reaches for Spark after all (a file landed after the weighing, a check without file
statistics), `SessionNeeded` ends that attempt, whose bookkeeping is dropped, and the run starts
again with a session, as any run does.
"""

from __future__ import annotations

from collections.abc import Callable

from pipelines.core.config import Config
from pipelines.core.graph import TaskGraph
from pipelines.landing.source_view import reads_through_spark
from pipelines.ops.collector_losses import losses_waiting
from pipelines.runtime.table_engines import configured_engine, uses_connect


class SessionNeeded(BaseException):
    """An attempt without a session reached work that needs Spark. Not an `Exception`: no task's
    error handling may take it for a failure (the attempt starts again with a session)."""


class _NoSession:
    """Stands for the Spark session of an attempt that started without one: using any of a
    session's methods or properties raises `SessionNeeded` (private and special names are
    missing, as on any object, so that tools which inspect objects pass it by)."""

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        raise SessionNeeded(f"the run needs a Spark session ({name})")

    def __repr__(self) -> str:
        return "NO_SESSION"


NO_SESSION = _NoSession()


def may_run_without_session(
    config: Config, layers: tuple[str, ...], graph: TaskGraph, in_sight: Callable[[], int] | None = None
) -> bool:
    """Whether a run may first try without a session: a local delta-rs warehouse whose landing the
    driver reads, with no collector losses waiting to be loaded, and nothing in sight for any task
    of `layers` (weighed from the logs and the landing, `rows_in_sight`, unless the caller weighed
    them already: `in_sight`)."""
    from pipelines.orchestration.weighing import rows_in_sight

    if uses_connect(config) or config.profile.get("use_existing_session"):
        return False
    if configured_engine(config) != "delta-rs" or not config.warehouse.is_dir():
        return False
    if "bronze" in layers and (reads_through_spark(config, None) or losses_waiting(config)):
        return False
    try:
        return (in_sight() if in_sight is not None else rows_in_sight(config, layers, graph)) == 0
    except Exception:  # noqa: BLE001 - weighed as work: the run with a session reports the cause
        return False
