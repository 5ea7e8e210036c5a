"""The Databricks job's collect tasks: which collectors conf/jobs.yaml may list and which bronze
task each feeds, and `lakehouse-collect`, their entry point, run with the parameters a task
passes: one pull into landing from a stand-in of the server, its token read from a secret scope
over HTTP, a failure raised as the Jobs service needs it, an unset server a pull with nothing
to do."""

from __future__ import annotations

import dataclasses
import json
import re
import time
from collections import Counter
from pathlib import Path

import pytest

from pipelines.cli import collect_main
from pipelines.core.config import ConfigError, load_config
from pipelines.core.graph import load_graph
from pipelines.deploy import bundle, collect_tasks
from pipelines.deploy.collect_tasks import COLLECTORS
from pipelines.deploy.deployments import deployment
from pipelines.deploy.task_parameters import parse_collect_task
from tests.support.secrets_api import JOB_TOKEN, secrets_api
from tests.support.stand_in_datahub import StandInAuditServer
from tests.support.stand_in_openmetadata import StandInOpenMetadata

TOKEN = "a-token-only-the-scope-holds"
MINUTE_MS = 60_000
VARIABLE = re.compile(r"\$\{var\.(\w+)\}")


def task_parameters(name: str, landing: Path, **values: str) -> list[str]:
    """The parameters a collect task passes (`collect_tasks.parameters`, as the bundle writes them),
    each `${var.X}` filled in from `values` as a deploy does, the secret scope `lakehouse`."""
    written = collect_tasks.parameters(COLLECTORS[name], "${var.landing}", "${var.conf}", "lakehouse")
    values = {"landing": str(landing), "conf": "", **values}
    return [VARIABLE.sub(lambda m: values[m[1]], p) for p in written]


def landed(landing: Path) -> list[Path]:
    return sorted(
        p for p in landing.rglob("*") if p.is_file() and not any(part.startswith("_") for part in p.parts)
    )


def landed_openmetadata_ids(landing: Path) -> Counter:
    return Counter(
        json.loads(line)["id"]
        for path in (landing / "openmetadata").glob("*.jsonl")
        for line in path.read_bytes().splitlines()
        if line.strip()
    )


def now_ms() -> int:
    return int(time.time() * 1000)


@pytest.fixture(autouse=True)
def no_token_in_the_environment(monkeypatch):
    """The job sets no token variable: each task reads its token from the scope (the variables
    are restored after each test, which the secret's reading sets)."""
    monkeypatch.setenv("OPENMETADATA_TOKEN", "")
    monkeypatch.setenv("DATAHUB_TOKEN", "")


def test_the_openmetadata_task_pulls_once_into_landing_with_its_token_from_the_scope(
    tmp_path, monkeypatch, capsys
):
    secret = {("lakehouse", "openmetadata_token"): TOKEN}
    with secrets_api(monkeypatch, secret) as workspace, StandInOpenMetadata(token=TOKEN) as server:
        events = server.change([now_ms() - 10 * MINUTE_MS + i * 1000 for i in range(7)])
        parameters = task_parameters(
            "openmetadata", tmp_path, openmetadata_server=server.url, openmetadata_subscription="lakehouse"
        )
        assert collect_main(parameters) == 0
    out = capsys.readouterr()
    assert workspace.requests == [("lakehouse", "openmetadata_token", f"Bearer {JOB_TOKEN}")]
    assert out.out.startswith("collected  events=7  failed_events=0")
    assert landed_openmetadata_ids(tmp_path) == Counter({e["id"]: 1 for e in events})
    asked = [path for path, _ in server.requests]
    assert asked.count("/api/v1/events") == 4  # one request per event type: one pull, no loop
    assert "/api/v1/events/subscriptions/name/lakehouse/failedEvents" in asked  # the subscription too
    assert TOKEN not in out.out + out.err
    assert all(TOKEN not in p.read_text() for p in tmp_path.rglob("*") if p.is_file())


def test_the_audit_task_pulls_once_into_landing_with_its_token_from_the_scope(tmp_path, monkeypatch, capsys):
    secret = {("lakehouse", "datahub_token"): TOKEN}
    with secrets_api(monkeypatch, secret) as workspace, StandInAuditServer(token=TOKEN) as server:
        server.add_events([now_ms() - 3_600_000 + i * 10_000 for i in range(25)])
        assert collect_main(task_parameters("datahub-audit", tmp_path, datahub_server=server.url)) == 0
    out = capsys.readouterr()
    assert workspace.requests == [("lakehouse", "datahub_token", f"Bearer {JOB_TOKEN}")]
    assert "events=25" in out.out
    pages = landed(tmp_path / "datahub_audit")
    assert pages and sum(len(json.loads(p.read_bytes())["usageEvents"]) for p in pages) == 25
    assert TOKEN not in out.out + out.err


@pytest.mark.parametrize("target", ["dev", "prod_serverless"])
def test_the_exported_job_s_collect_tasks_pull_with_the_parameters_a_deploy_fills_in(
    tmp_path, monkeypatch, capsys, target
):
    """The committed job's own parameters, filled in as `databricks bundle deploy` fills them
    (`--var` for the servers and the landing), run through the entry point: both pulls land,
    each with its token from the job's scope."""
    deployed = deployment(bundle.bundle_documents(load_graph(), load_config()), target)
    secrets = {
        ("catalog_lakehouse", "openmetadata_token"): TOKEN,
        ("catalog_lakehouse", "datahub_token"): TOKEN,
    }
    with (
        secrets_api(monkeypatch, secrets) as workspace,
        StandInOpenMetadata(token=TOKEN) as openmetadata,
        StandInAuditServer(token=TOKEN) as datahub,
    ):
        events = openmetadata.change([now_ms() - 5 * MINUTE_MS + i * 1000 for i in range(3)])
        datahub.add_events([now_ms() - 3_600_000 + i * 1000 for i in range(4)])
        deployed.variables.update(
            openmetadata_server=openmetadata.url + "/api", datahub_server=datahub.url, landing=str(tmp_path)
        )
        for key in ("collect_openmetadata", "collect_datahub_audit"):
            (task,) = [t for t in deployed.jobs["catalog_lakehouse"]["tasks"] if t["task_key"] == key]
            parameters = deployed.resolve(task["python_wheel_task"]["parameters"])
            assert not [p for p in parameters if "${" in p], parameters
            assert collect_main(parameters) == 0, capsys.readouterr().err
    assert [(scope, key) for scope, key, _ in workspace.requests] == [
        ("catalog_lakehouse", "openmetadata_token"),
        ("catalog_lakehouse", "datahub_token"),
    ]
    assert landed_openmetadata_ids(tmp_path) == Counter({e["id"]: 1 for e in events})
    assert "events=4" in capsys.readouterr().out
    assert not [path for path, _ in openmetadata.requests if path.endswith("/failedEvents")]  # none named


@pytest.mark.parametrize(
    ("name", "variable"), [("openmetadata", "openmetadata_server"), ("datahub-audit", "datahub_server")]
)
def test_an_unset_server_is_a_pull_with_nothing_to_do(tmp_path, monkeypatch, capsys, name, variable):
    """A workspace without that catalog deploys the job all the same: the task says so and
    succeeds, reading no secret and landing nothing."""
    with secrets_api(monkeypatch, {}) as workspace:
        parameters = task_parameters(name, tmp_path, **{variable: "", "openmetadata_subscription": ""})
        assert "--server=" in parameters
        assert collect_main(parameters) == 0
    assert workspace.requests == []
    assert capsys.readouterr().out == (
        f"lakehouse-collect: {name}: no server given (bundle variable {variable} is empty): nothing pulled\n"
    )
    assert landed(tmp_path) == []


def test_a_failed_pull_raises_as_the_jobs_service_needs_it(tmp_path, monkeypatch, capsys):
    """The Jobs service fails a wheel task only when its entry point raises."""
    secrets = {("lakehouse", "openmetadata_token"): "a-token-the-server-refuses"}
    with secrets_api(monkeypatch, secrets), StandInOpenMetadata(token=TOKEN) as server:
        parameters = task_parameters(
            "openmetadata", tmp_path, openmetadata_server=server.url, openmetadata_subscription=""
        )
        with pytest.raises(SystemExit) as refused:
            collect_main(parameters)
    assert refused.value.code == 1
    assert "401" in capsys.readouterr().err
    with secrets_api(monkeypatch, {}), StandInAuditServer(token=TOKEN) as server:
        with pytest.raises(SystemExit) as missing:
            collect_main(task_parameters("datahub-audit", tmp_path, datahub_server=server.url))
        assert server.requests == 0
    assert missing.value.code == 2
    assert "cannot read the DataHub token from secret lakehouse/datahub_token" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("parameters", "message"),
    [
        (
            ["openmetadata", "--server=x", "--landing=l", "--every=15m"],
            "--every: a task of the job pulls once",
        ),
        (["datahub-kafka", "--bootstrap-servers=b", "--landing=l"], "invalid choice: 'datahub-kafka'"),
        (
            ["openmetadata", "--server=x", "--landing=l", "--token-secret=noslash"],
            "'noslash' is not SCOPE/KEY",
        ),
        (["openmetadata", "--landing=l"], "the following arguments are required: --server"),
    ],
)
def test_the_entry_point_refuses_what_a_task_must_not_run(parameters, message, capsys):
    with pytest.raises(SystemExit) as refused:
        parse_collect_task(parameters)
    assert refused.value.code == 2
    assert message in capsys.readouterr().err


def test_the_entry_point_takes_the_options_of_lakehouse_collect():
    parsed = parse_collect_task(
        [
            "datahub-audit",
            "--server=http://gms",
            "--landing=l",
            "--token-env=MINE",
            "--event-types=LogInEvent",
        ]
    )
    assert (parsed.collect_source, parsed.server, parsed.token_env, parsed.event_types) == (
        "datahub-audit",
        "http://gms",
        "MINE",
        "LogInEvent",
    )


def both(graph=None):
    """The graph of conf/jobs.yaml running both pulls."""
    return dataclasses.replace(graph or load_graph(), collectors=("openmetadata", "datahub-audit"))


def test_each_collector_feeds_the_group_holding_the_bronze_task_of_its_landing_source():
    graph = both()
    assert collect_tasks.fed_groups(graph) == {
        "bronze_openmetadata": ["collect_openmetadata"],
        "bronze_datahub": ["collect_datahub_audit"],
    }
    by_table = dataclasses.replace(graph, grouping="table")
    assert collect_tasks.fed_groups(by_table) == {
        "bronze_openmetadata_change_events": ["collect_openmetadata"],
        "bronze_datahub_audit_events": ["collect_datahub_audit"],
    }
    assert collect_tasks.fed_groups(dataclasses.replace(graph, collectors=())) == {}


def test_the_job_runs_only_the_pulls_and_only_into_a_source_a_bronze_task_reads():
    graph = load_graph()
    with pytest.raises(
        ConfigError, match=r"cannot run 'datahub-kafka'; it runs \['datahub-audit', 'openmetadata'\]"
    ):
        collect_tasks.scheduled(dataclasses.replace(graph, collectors=("datahub-kafka",)))
    without = graph.only([t.key for t in graph.tasks if t.landing != "openmetadata" and t.layer == "bronze"])
    with pytest.raises(ConfigError, match="openmetadata lands into openmetadata, which no bronze task"):
        collect_tasks.scheduled(both(without))


def write_graph(tmp_path, extra: str) -> Path:
    path = tmp_path / "jobs.yaml"
    path.write_text(
        "job_name: toy\nlanes: {datahub: [datahub_ece, datahub_audit]}\n"
        + extra
        + "tasks:\n  - bronze.datahub_audit_events\n"
    )
    return path


def test_conf_jobs_yaml_runs_both_pulls_retried_once_and_stopped_after_ten_minutes():
    graph = load_graph()
    assert graph.collectors == ("openmetadata", "datahub-audit")
    assert (graph.collector_retries, graph.collector_timeout_seconds) == (1, 600)


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ("", ((), 0, 0)),
        ("collectors: []\n", ((), 0, 0)),
        (
            "collectors: [datahub-audit]\ncollector_retries: 3\ncollector_timeout_seconds: 60\n",
            (("datahub-audit",), 3, 60),
        ),
    ],
)
def test_the_collector_settings_of_a_jobs_yaml(tmp_path, extra, expected):
    graph = load_graph(write_graph(tmp_path, extra))
    assert (graph.collectors, graph.collector_retries, graph.collector_timeout_seconds) == expected


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("collectors: openmetadata\n", "collectors lists `lakehouse collect` names"),
        ("collectors: [openmetadata, openmetadata]\n", "a collector is listed twice"),
        ("collectors: [1]\n", "collectors lists `lakehouse collect` names"),
        ("collector_retries: -1\n", "collector_retries must be a whole number of retries >= 0, got -1"),
        ("collector_retries: true\n", "collector_retries must be a whole number"),
        ("collector_timeout_seconds: 1.5\n", "collector_timeout_seconds must be a whole number of seconds"),
    ],
)
def test_collector_settings_that_cannot_run_are_refused_when_loaded(tmp_path, extra, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_graph(write_graph(tmp_path, extra))
