"""Which ready task may start now, and where: beside the running ones, alone, or not yet.

`run.parallel_tasks` chooses the rule:
- `auto`: a small task (fewer rows to read than the profile's `small_input_rows`, weighed by
  `pipelines.orchestration.weighing`) runs beside other small ones, up to one per core; a large
  task runs alone, on the run's own thread. Two large tasks at once only fight over the cores.
- a number N: up to N tasks at once, whatever their size.
- 1 (or `auto` on one core, or without `small_input_rows`): one by one, in graph order.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from enum import Enum

from pipelines.core.context import RunContext
from pipelines.core.graph import Task
from pipelines.orchestration.weighing import task_rows

AUTO = "auto"


class Start(Enum):
    """Where a ready task starts."""

    BESIDE = "beside"  # in the pool, beside the tasks running there
    ALONE = "alone"  # on the run's own thread, nothing else running
    WAIT = "wait"  # not now: after a running task finishes


class Admission:
    """The rule for starting ready tasks: at most `width` at once; with `is_small`, only small
    tasks side by side and a large one alone."""

    def __init__(self, width: int, is_small: Callable[[Task], bool] | None = None) -> None:
        self.width = width
        self._is_small = is_small

    @property
    def one_by_one(self) -> bool:
        return self.width == 1

    def start(self, task: Task, running: list[Task]) -> Start:
        """Where `task`, ready now, starts while `running` run."""
        if self._is_small is None:
            return Start.BESIDE if len(running) < self.width else Start.WAIT
        if not self._is_small(task):
            return Start.WAIT if running else Start.ALONE
        if len(running) < self.width and all(self._is_small(t) for t in running):
            return Start.BESIDE
        return Start.WAIT


def admission_for(ctx: RunContext, parallel: int | str) -> Admission:
    """The admission `run.parallel_tasks` (`parallel`) asks for on this machine."""
    if parallel == 1:
        return Admission(1)
    if parallel != AUTO:
        return Admission(int(parallel))
    limit = ctx.config.profile.get("small_input_rows")
    width = os.cpu_count() or 1
    if not limit or width < 2:
        return Admission(1)
    small: dict[str, bool] = {}

    def is_small(task: Task) -> bool:  # weighed once, when it is ready (its inputs are final)
        if task.key not in small:
            try:
                small[task.key] = task_rows(task.spec(ctx.config), ctx.warehouse) < limit
            except Exception:  # weighed as large: it runs alone and reports its own failure
                small[task.key] = False
        return small[task.key]

    return Admission(width, is_small)
