"""The task graph from `conf/jobs.yaml`: tasks, their modules and dependencies.

One declaration serves the local runner (topological order) and the
Databricks bundle export, so the two can never drift apart.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from pipelines.core import defaults
from pipelines.core.config import ConfigError

DEFAULT_GRAPH = defaults.conf_file("jobs.yaml")


@dataclass(frozen=True)
class Task:
    key: str
    module: str
    depends_on: tuple[str, ...] = field(default_factory=tuple)

    @property
    def layer(self) -> str:
        return self.module.split(".")[0]

    def spec(self, config=None):
        """The task's job spec: `configured_spec(config)` when the module offers it, else its `SPEC`."""
        module = importlib.import_module(self.module)
        if config is not None and hasattr(module, "configured_spec"):
            return module.configured_spec(config)
        return module.SPEC


@dataclass(frozen=True)
class TaskGraph:
    name: str
    tasks: tuple[Task, ...]
    schedule: dict
    retries: int

    def ordered(self, layers: set[str] | None = None) -> list[Task]:
        """Tasks in dependency order (stable: declaration order among ready tasks)."""
        done: set[str] = set()
        order: list[Task] = []
        pending = list(self.tasks)
        while pending:
            ready = [t for t in pending if all(d in done for d in t.depends_on)]
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
        by_key = {t.key: t for t in self.tasks}
        wanted, pending = set(), list(keys)
        unknown = sorted(set(pending) - set(by_key))
        if unknown:
            raise ConfigError(f"unknown task keys {unknown}; the graph has {sorted(by_key)}")
        while pending:
            key = pending.pop()
            if key not in wanted:
                wanted.add(key)
                pending.extend(by_key[key].depends_on)
        return dataclasses.replace(self, tasks=tuple(t for t in self.tasks if t.key in wanted))


def load_graph(path: str | Path = DEFAULT_GRAPH) -> TaskGraph:
    """Parse and check the graph: unique keys, known dependencies, no cycles."""
    data = yaml.safe_load(defaults.readable(path).read_text(encoding="utf-8")) or {}
    tasks = []
    for item in data.get("tasks", []):
        unknown = set(item) - {"key", "module", "depends_on"}
        if unknown:
            raise ConfigError(f"{path}: task {item.get('key')} has unknown keys {sorted(unknown)}")
        tasks.append(Task(item["key"], item["module"], tuple(item.get("depends_on", []))))
    keys = [t.key for t in tasks]
    if len(keys) != len(set(keys)):
        raise ConfigError(f"{path}: duplicate task keys")
    for task in tasks:
        missing = [d for d in task.depends_on if d not in keys]
        if missing:
            raise ConfigError(f"{path}: task {task.key} depends on unknown {missing}")
    graph = TaskGraph(
        data.get("job_name", "lakehouse"), tuple(tasks), data.get("schedule", {}), data.get("retries", 0)
    )
    graph.ordered()
    return graph
