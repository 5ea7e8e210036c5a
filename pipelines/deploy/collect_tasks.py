"""The Databricks job's collect tasks: the catch-up pulls, once per run, before the bronze tasks.

`lakehouse collect openmetadata` is the backstop of OpenMetadata's webhook, which does not retry
a failed delivery, and `lakehouse collect datahub-audit` the one path of DataHub's audit events:
both must run wherever the pipeline runs (docs/collectors.md). `collectors` in conf/jobs.yaml
lists those the job runs; each becomes a task `collect_<name>` starting `lakehouse-collect
<name>` from the wheel: one pull (the job's schedule is the tick, never `--every`) into the
landing the bronze tasks read, its server's URL a bundle variable, its token a secret of the
job's scope (`--token-secret`, read as the IP salt is: `pipelines.runtime.secrets`).

Why the job is wired so:
- the task group holding the bronze task of the collector's landing source depends on the
  collect task, so a run ingests what its own pull landed; with `run_if: ALL_DONE`, since a
  failed pull must not hold up its lane, nor the lanes that join it in gold: what the webhook
  or the Kafka collector landed is still ingested, and the next run's pull resumes where this
  one stopped. A bronze group has no other upstream task, so ALL_DONE waives nothing else.
- no condition task decides whether to pull: a task whose dependencies were all excluded is
  excluded too, whatever its `run_if`, and the lane's bronze task would go with it. A collect
  task whose server variable is empty runs, says so and succeeds (`pipelines.cli.collect_task`).
- retries: a pull is idempotent. Every file it lands has a name made of its window and request
  (`pull-<server>-<start>-<end>-<type>.jsonl`, `audit-<collection>-<start>-<end>-p<page>.json`),
  looked for before fetching, and its state is saved after each file, so an attempt that
  failed or was stopped leaves nothing a retry lands again. But the lane's bronze task waits for
  every attempt, so `collector_retries` stays small (retrying for ever, `-1`, the bundle check
  refuses) and `collector_timeout_seconds` bounds an attempt; what it did not reach, the next
  run pulls.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipelines.core.config import ConfigError
from pipelines.core.graph import TaskGraph
from pipelines.core.task_groups import group_key_of

COLLECT_ENTRY_POINT = "lakehouse-collect"
RETRY_INTERVAL_MILLIS = 60_000  # after the pull's own retries of each request gave up


@dataclass(frozen=True)
class ScheduledCollector:
    """A pull the job can run: `lakehouse collect <name>` landing into landing source `source`."""

    name: str
    source: str
    server_variable: str
    server_description: str
    token_key: str  # the key of its token in the job's secret scope
    options: tuple[tuple[str, str], ...] = ()  # further (option, bundle variable) pairs
    variables: tuple[tuple[str, str], ...] = ()  # those variables: (name, description), default ""

    @property
    def task_key(self) -> str:
        return task_key(self.name)


def task_key(name: str) -> str:
    """`openmetadata` -> `collect_openmetadata`, `datahub-audit` -> `collect_datahub_audit`."""
    return "collect_" + name.replace("-", "_")


COLLECTORS = {
    collector.name: collector
    for collector in (
        ScheduledCollector(
            name="openmetadata",
            source="openmetadata",
            server_variable="openmetadata_server",
            server_description="OpenMetadata base URL the collect_openmetadata task pulls from, e.g. "
            "https://openmetadata.example.com (empty: the task pulls nothing and succeeds)",
            token_key="openmetadata_token",
            options=(("subscription", "openmetadata_subscription"),),
            variables=(
                (
                    "openmetadata_subscription",
                    "OpenMetadata alert (event subscription) whose failed deliveries the pull lands "
                    "too: the one posting to the receiver (empty: none)",
                ),
            ),
        ),
        ScheduledCollector(
            name="datahub-audit",
            source="datahub_audit",
            server_variable="datahub_server",
            server_description="DataHub GMS base URL the collect_datahub_audit task pulls audit events "
            "from, e.g. https://datahub-gms.example.com (empty: the task pulls nothing and succeeds)",
            token_key="datahub_token",
        ),
    )
}


def scheduled(graph: TaskGraph) -> list[ScheduledCollector]:
    """The collectors `graph` (conf/jobs.yaml) runs, in its order; one the job cannot run, or one
    landing into a source no bronze task of the graph reads, is refused."""
    found = []
    landed = {task.landing for task in graph.tasks if task.landing}
    for name in graph.collectors:
        if name not in COLLECTORS:
            raise ConfigError(
                f"collectors: the job cannot run '{name}'; it runs {sorted(COLLECTORS)} "
                "(the Kafka collector and the receiver run for ever: run them beside the job)"
            )
        collector = COLLECTORS[name]
        if collector.source not in landed:
            raise ConfigError(
                f"collectors: {name} lands into {collector.source}, which no bronze task of the graph reads"
            )
        found.append(collector)
    return found


def fed_groups(graph: TaskGraph) -> dict[str, list[str]]:
    """{task group: the collect tasks it waits for}: each collector's task before the group
    holding the bronze task of its landing source."""
    key_of = group_key_of(graph)
    fed: dict[str, list[str]] = {}
    for collector in scheduled(graph):
        for task in graph.tasks:
            if task.landing == collector.source:
                fed.setdefault(key_of[task.key], []).append(collector.task_key)
    return fed


def variables(graph: TaskGraph) -> dict[str, dict]:
    """The bundle variables of the collectors `graph` runs: each server's URL and their further
    options, all defaulting to empty (an unset server: its task pulls nothing)."""
    found: dict[str, dict] = {}
    for collector in scheduled(graph):
        found[collector.server_variable] = {"description": collector.server_description, "default": ""}
        for name, description in collector.variables:
            found[name] = {"description": description, "default": ""}
    return found


def parameters(collector: ScheduledCollector, landing: str, conf: str, scope: str) -> list[str]:
    """`lakehouse-collect`'s parameters for `collector`: its server variable, the bronze tasks'
    landing and conf, its token from `scope`, its further options (`--option=value`: an empty
    value stays one parameter)."""
    return [
        collector.name,
        f"--server=${{var.{collector.server_variable}}}",
        f"--landing={landing}",
        f"--conf={conf}",
        f"--token-secret={scope}/{collector.token_key}",
        *(f"--{option}=${{var.{variable}}}" for option, variable in collector.options),
    ]
