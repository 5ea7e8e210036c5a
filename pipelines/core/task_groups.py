"""The Databricks job's tasks: groups of the graph's tasks, each run in one process.

Every task of a Databricks job pays its own start-up (a Python process, a Spark session, the
wheel's imports), so one task per table does not fit a 15-minute schedule. The job therefore
runs groups: with `grouping: lane` (the default) the tasks of one layer whose tables descend
from the same lanes of landing sources (`lanes` in `conf/jobs.yaml`) form one group, named
`<layer>_<lane>[_<lane>...]` (`bronze_datahub`, `silver_dataworks`, `gold_datahub_openmetadata`);
with `grouping: table` every task is a group of its own, named by its key. A group runs its
tasks in graph order (`lakehouse-task --group KEY`); a group depends on the groups holding its
tasks' upstream tasks. The local runner keeps the fine-grained graph.
"""

from __future__ import annotations

import graphlib
from dataclasses import dataclass

from pipelines.core.config import ConfigError
from pipelines.core.graph import TaskGraph


@dataclass(frozen=True)
class TaskGroup:
    """One task of the Databricks job: `tasks` (keys, in graph order) and the groups it waits for."""

    key: str
    tasks: tuple[str, ...]
    depends_on: tuple[str, ...]


def group_key_of(graph: TaskGraph) -> dict[str, str]:
    """{task key: the key of its group}."""
    if graph.grouping == "table":
        return {t.key: t.key for t in graph.tasks}
    lane_of = {source: lane for lane, sources in graph.lanes.items() for source in sources}
    order = list(graph.lanes)
    lanes: dict[str, set[str]] = {}
    keys = {}
    for task in graph.ordered():
        found = {lane_of[task.landing]} if task.landing else set()
        for upstream in task.depends_on:
            found |= lanes.get(upstream, set())
        lanes[task.key] = found
        keys[task.key] = "_".join([task.layer, *sorted(found, key=order.index)])
    return keys


def task_groups(graph: TaskGraph) -> list[TaskGroup]:
    """The groups, each after the groups it depends on (first appearance in graph order among
    those ready); a grouping that would make two groups wait for each other is refused."""
    key_of = group_key_of(graph)
    members: dict[str, list[str]] = {}
    waits: dict[str, set[str]] = {}
    for task in graph.ordered():
        group = key_of[task.key]
        members.setdefault(group, []).append(task.key)
        waits.setdefault(group, set()).update(key_of[d] for d in task.depends_on if key_of[d] != group)
    sorter = graphlib.TopologicalSorter(waits)
    try:
        sorter.prepare()
    except graphlib.CycleError as exc:
        raise ConfigError(f"task groups wait for each other: {exc.args[1]}") from exc
    first = list(members)
    ordered: list[str] = []
    while sorter.is_active():
        ready = sorted(sorter.get_ready(), key=first.index)
        ordered += ready
        sorter.done(*ready)
    return [
        TaskGroup(key, tuple(members[key]), tuple(sorted(waits[key], key=first.index))) for key in ordered
    ]


def group_graph(graph: TaskGraph, key: str) -> TaskGraph:
    """The graph cut to the tasks of group `key` (their other upstream tasks taken as done)."""
    for group in task_groups(graph):
        if group.key == key:
            return graph.only(group.tasks)
    raise ConfigError(f"unknown task group '{key}'; the job has {[g.key for g in task_groups(graph)]}")
