"""The task graph: one task per table module of `conf/jobs.yaml`, its upstream tasks read from
the table spec.

The graph is declared once. `conf/jobs.yaml` lists the table modules that run; which task
depends on which follows from each spec: a task depends on the tasks that build the tables its
spec reads (a silver spec's `source`, a gold spec's `sources`; bronze reads landing files). So
the local runner, the Databricks job and the code that reads the tables can never disagree.
The same file says what the specs cannot: how the Databricks job groups tasks
(`pipelines.core.task_groups`), its schedule and its retries, and which catch-up collectors it
runs before its bronze tasks (`pipelines.deploy.collect_tasks`).
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from pipelines.core import defaults
from pipelines.core.config import ConfigError
from pipelines.core.table_specs import BronzeTableSpec, GoldTableSpec

DEFAULT_GRAPH = defaults.conf_file("jobs.yaml")
GROUPINGS = ("lane", "table")  # how the Databricks job groups tasks (pipelines.core.task_groups)
SETTINGS = {
    "job_name",
    "schedule",
    "retries",
    "timeout_seconds",
    "duration_warning_seconds",
    "grouping",
    "lanes",
    "tasks",
    "collectors",
    "collector_retries",
    "collector_timeout_seconds",
}


@dataclass(frozen=True)
class Task:
    """One table module of the graph. `depends_on`: the tasks building the tables its spec reads;
    `landing`: for a bronze task, the landing source it ingests."""

    key: str
    module: str
    depends_on: tuple[str, ...] = field(default_factory=tuple)
    landing: str | None = None

    @property
    def layer(self) -> str:
        return self.module.split(".")[0]

    def spec(self, config=None):
        """The task's table spec: `configured_spec(config)` when the module offers it, else its `SPEC`."""
        module = importlib.import_module(self.module)
        if config is not None and hasattr(module, "configured_spec"):
            return module.configured_spec(config)
        return module.SPEC


@dataclass(frozen=True)
class TaskGraph:
    """The tasks, and what `conf/jobs.yaml` says of the Databricks job: its name, schedule,
    retries, how it groups tasks (`grouping`, and the `lanes` of landing sources), and the
    collectors it runs as tasks of their own (`collectors`, by `lakehouse collect` name)."""

    name: str
    tasks: tuple[Task, ...]
    schedule: dict
    retries: int
    grouping: str = "lane"
    lanes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    timeout_seconds: int = 0  # a run still going then is stopped (0: no limit)
    duration_warning_seconds: int = 0  # a run going longer is reported (0: never)
    collectors: tuple[str, ...] = ()  # pulls the Databricks job runs before its bronze tasks
    collector_retries: int = 0  # a failed pull is tried again this many times
    collector_timeout_seconds: int = 0  # a pull still going then is stopped (0: no limit)

    def ordered(self, layers: set[str] | None = None) -> list[Task]:
        """Tasks in dependency order (stable: declaration order among ready tasks). Dependencies
        on tasks outside the graph (a graph cut with `only`) are met already."""
        keys = {t.key for t in self.tasks}
        done: set[str] = set()
        order: list[Task] = []
        pending = list(self.tasks)
        while pending:
            ready = [t for t in pending if all(d in done or d not in keys for d in t.depends_on)]
            if not ready:
                raise ConfigError(f"task graph has a cycle among {[t.key for t in pending]}")
            for task in ready:
                order.append(task)
                done.add(task.key)
                pending.remove(task)
        return [t for t in order if layers is None or t.layer in layers]

    def up_to(self, keys: Iterable[str]) -> TaskGraph:
        """The graph cut down to the tasks `keys` and every task they depend on, directly or not
        (declaration order kept): a run of it builds those tables as a whole run would."""
        by_key = self._by_key(keys)
        wanted, pending = set(), list(keys)
        while pending:
            key = pending.pop()
            if key not in wanted:
                wanted.add(key)
                pending.extend(by_key[key].depends_on)
        return dataclasses.replace(self, tasks=tuple(t for t in self.tasks if t.key in wanted))

    def only(self, keys: Iterable[str]) -> TaskGraph:
        """The graph cut down to exactly the tasks `keys` (declaration order kept), their
        dependencies on other tasks taken as met: a run of it builds those tables alone, as a
        task of the Databricks job does once its upstream tasks succeeded."""
        keys = list(keys)
        self._by_key(keys)
        return dataclasses.replace(self, tasks=tuple(t for t in self.tasks if t.key in keys))

    def _by_key(self, keys: Iterable[str]) -> dict[str, Task]:
        by_key = {t.key: t for t in self.tasks}
        unknown = sorted(set(keys) - set(by_key))
        if unknown:
            raise ConfigError(f"unknown task keys {unknown}; the graph has {sorted(by_key)}")
        return by_key


def task_key(module: str) -> str:
    """A task's key: its module's name with `_` for `.` (`gold.tag_timeline` -> `gold_tag_timeline`)."""
    return module.replace(".", "_")


def inputs_of(spec: Any) -> tuple[str, ...]:
    """The tables a table spec reads: a gold spec's `sources`, a silver spec's `source`; none for
    bronze, which reads landing files (its `source` names a landing source, not a table)."""
    if isinstance(spec, BronzeTableSpec):
        return ()
    if isinstance(spec, GoldTableSpec):
        return tuple(spec.sources)
    return (spec.source,)


def load_graph(path: str | Path = DEFAULT_GRAPH) -> TaskGraph:
    """Parse `conf/jobs.yaml` and derive each task's upstream tasks from its table spec; refuse
    what cannot run: unknown settings, a module without a spec, two tasks building one table, a
    spec reading a table no task builds, a cycle, a landing source in no lane."""
    data = yaml.safe_load(defaults.readable(path).read_text(encoding="utf-8")) or {}
    unknown = sorted(set(data) - SETTINGS)
    if unknown:
        raise ConfigError(f"{path}: unknown settings {unknown}; known: {sorted(SETTINGS)}")
    modules = [_module_name(path, item) for item in data.get("tasks") or []]
    if len(modules) != len(set(modules)):
        raise ConfigError(f"{path}: a module is listed twice")
    specs = {module: _spec(path, module) for module in modules}
    owners: dict[str, str] = {}
    for module, spec in specs.items():
        if spec.table in owners:
            raise ConfigError(f"{path}: {owners[spec.table]} and {task_key(module)} both build {spec.table}")
        owners[spec.table] = task_key(module)
    tasks = []
    for module, spec in specs.items():
        missing = [table for table in inputs_of(spec) if table not in owners]
        if missing:
            raise ConfigError(
                f"{path}: {task_key(module)} reads {missing}, which no task of the graph builds"
            )
        depends_on = tuple(dict.fromkeys(owners[table] for table in inputs_of(spec)))
        landing = None if inputs_of(spec) else spec.source
        tasks.append(Task(task_key(module), module, depends_on, landing))
    graph = TaskGraph(
        data.get("job_name", "lakehouse"),
        tuple(tasks),
        data.get("schedule", {}),
        data.get("retries", 0),
        data.get("grouping", "lane"),
        _lanes(path, data.get("lanes") or {}),
        _seconds(path, data, "timeout_seconds"),
        _seconds(path, data, "duration_warning_seconds"),
        _collectors(path, data.get("collectors") or []),
        _whole(path, data, "collector_retries", "retries"),
        _seconds(path, data, "collector_timeout_seconds"),
    )
    graph.ordered()
    _check_grouping(path, graph)
    return graph


def _seconds(path: str | Path, data: dict, key: str) -> int:
    return _whole(path, data, key, "seconds")


def _whole(path: str | Path, data: dict, key: str, unit: str) -> int:
    value = data.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"{path}: {key} must be a whole number of {unit} >= 0, got {value!r}")
    return value


def _collectors(path: str | Path, names: Any) -> tuple[str, ...]:
    """The collectors' names, each once; which names the job can run is the bundle's to say."""
    if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
        raise ConfigError(
            f"{path}: collectors lists `lakehouse collect` names, e.g. [openmetadata], got {names!r}"
        )
    if len(names) != len(set(names)):
        raise ConfigError(f"{path}: a collector is listed twice in collectors")
    return tuple(names)


def _module_name(path: str | Path, item: Any) -> str:
    if not isinstance(item, str):
        raise ConfigError(
            f"{path}: each task is a table module's name (e.g. silver.datahub_entity_changes), got {item!r}; "
            "upstream tasks are not declared: they follow from the table spec's sources"
        )
    return item


def _spec(path: str | Path, module: str) -> Any:
    try:
        imported = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        raise ConfigError(f"{path}: no table module {module}") from exc
    if not hasattr(imported, "SPEC"):
        raise ConfigError(f"{path}: {module} declares no table spec (SPEC)")
    return imported.SPEC


def _lanes(path: str | Path, lanes: Any) -> dict[str, tuple[str, ...]]:
    if not isinstance(lanes, dict) or not all(isinstance(v, list) for v in lanes.values()):
        raise ConfigError(f"{path}: lanes maps each lane to a list of landing sources")
    return {str(lane): tuple(sources) for lane, sources in lanes.items()}


def _check_grouping(path: str | Path, graph: TaskGraph) -> None:
    if graph.grouping not in GROUPINGS:
        raise ConfigError(f"{path}: grouping must be one of {list(GROUPINGS)}, got {graph.grouping!r}")
    if graph.grouping != "lane":
        return
    lane_of: dict[str, str] = {}
    for lane, sources in graph.lanes.items():
        for source in sources:
            if source in lane_of:
                raise ConfigError(f"{path}: landing source {source} is in lanes {lane_of[source]} and {lane}")
            lane_of[source] = lane
    stray = sorted({t.landing for t in graph.tasks if t.landing and t.landing not in lane_of})
    if stray:
        raise ConfigError(f"{path}: landing sources {stray} are in no lane (grouping: lane)")
