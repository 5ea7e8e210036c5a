"""The task graph: upstream tasks read from the table specs, the checks when loaded, its order,
cutting it down, and the Databricks job's task groups."""

from __future__ import annotations

import sys
import types

import pytest
import yaml

from pipelines.core.config import ConfigError
from pipelines.core.graph import DEFAULT_GRAPH, inputs_of, load_graph, task_key
from pipelines.core.task_groups import group_graph, group_key_of, task_groups

LANES = (
    "lanes: {datahub: [datahub_ece, datahub_audit], openmetadata: [openmetadata], dataworks: [dataworks]}\n"
)
SMALL = [
    "bronze.datahub_entity_change_events",
    "bronze.datahub_audit_events",
    "silver.datahub_entity_changes",
    "silver.datahub_audit_events",
    "gold.deprecation_timeline",
    "gold.failed_logins",
]


def write_graph(tmp_path, modules=SMALL, extra: str = LANES):
    path = tmp_path / "jobs.yaml"
    path.write_text("job_name: toy\n" + extra + "tasks:\n" + "".join(f"  - {m}\n" for m in modules))
    return path


def test_every_task_depends_exactly_on_the_tasks_building_the_tables_its_spec_reads():
    """One declaration: the graph's edges are the specs' sources, so they cannot disagree."""
    graph = load_graph()
    builds = {task.spec().table: task.key for task in graph.tasks}
    for task in graph.tasks:
        assert set(task.depends_on) == {builds[table] for table in inputs_of(task.spec())}, task.key
        assert task.key == task_key(task.module)
    assert any(task.depends_on for task in graph.tasks)


def test_jobs_yaml_declares_no_dependencies_and_a_declared_one_is_refused(tmp_path):
    raw = yaml.safe_load(DEFAULT_GRAPH.read_text(encoding="utf-8"))
    assert all(isinstance(item, str) for item in raw["tasks"])  # module names, nothing else
    path = tmp_path / "jobs.yaml"
    path.write_text(
        "tasks:\n  - bronze.datahub_audit_events\n"
        "  - {key: silver_datahub_audit_events, module: silver.datahub_audit_events, depends_on: []}\n"
    )
    with pytest.raises(ConfigError, match="upstream tasks are not declared"):
        load_graph(path)


def test_up_to_keeps_the_tasks_and_everything_they_depend_on_in_declaration_order(tmp_path):
    graph = load_graph(write_graph(tmp_path))
    assert [t.key for t in graph.up_to(["gold_failed_logins"]).tasks] == [
        "bronze_datahub_audit_events",
        "silver_datahub_audit_events",
        "gold_failed_logins",
    ]
    assert graph.up_to(["bronze_datahub_audit_events"]).name == "toy"


def test_only_keeps_exactly_the_tasks_and_takes_their_other_dependencies_as_met(tmp_path):
    graph = load_graph(write_graph(tmp_path))
    cut = graph.only(["gold_failed_logins", "silver_datahub_audit_events"])
    assert [t.key for t in cut.ordered()] == ["silver_datahub_audit_events", "gold_failed_logins"]
    with pytest.raises(ConfigError, match=r"unknown task keys \['nope'\]"):
        graph.only(["nope"])


def test_up_to_names_unknown_keys(tmp_path):
    graph = load_graph(write_graph(tmp_path))
    with pytest.raises(ConfigError, match=r"unknown task keys \['nope'\]"):
        graph.up_to(["gold_failed_logins", "nope"])


def test_every_gold_task_of_the_pipeline_reaches_bronze():
    graph = load_graph()
    for task in graph.tasks:
        if task.layer == "gold":
            layers = {t.layer for t in graph.up_to([task.key]).tasks}
            assert layers == {"bronze", "silver", "gold"}, task.key


@pytest.mark.parametrize(
    ("modules", "extra", "message"),
    [
        (["silver.datahub_audit_events"], LANES, r"reads \['bronze.datahub_audit_events'\], which no task"),
        (["bronze.datahub_audit_events", "bronze.datahub_audit_events"], LANES, "listed twice"),
        (["bronze.nowhere"], LANES, "no table module bronze.nowhere"),
        (["gold.intervals"], LANES, "declares no table spec"),
        (["bronze.datahub_audit_events"], LANES + "retry: 3\n", r"unknown settings \['retry'\]"),
        (["bronze.datahub_audit_events"], LANES + "grouping: layer\n", "grouping must be one of"),
        (
            ["bronze.datahub_audit_events"],
            "lanes: {datahub: [datahub_ece]}\n",
            r"\['datahub_audit'\] are in no lane",
        ),
        (
            ["bronze.datahub_audit_events"],
            "lanes: {a: [datahub_audit], b: [datahub_audit]}\n",
            "datahub_audit is in lanes a and b",
        ),
    ],
)
def test_a_graph_that_cannot_run_is_refused_when_loaded(tmp_path, modules, extra, message):
    with pytest.raises(ConfigError, match=message):
        load_graph(write_graph(tmp_path, modules, extra))


def test_a_table_built_by_two_tasks_is_refused(tmp_path, monkeypatch):
    from bronze import datahub_audit_events

    twin = types.ModuleType("bronze.twin_of_audit")  # a second module declaring the same table
    twin.SPEC = datahub_audit_events.SPEC
    monkeypatch.setitem(sys.modules, "bronze.twin_of_audit", twin)
    with pytest.raises(ConfigError, match="both build bronze.datahub_audit_events"):
        load_graph(write_graph(tmp_path, ["bronze.datahub_audit_events", "bronze.twin_of_audit"]))


# -- the Databricks job's task groups ------------------------------------------------


def test_the_default_groups_are_one_per_layer_and_lane_of_landing_sources():
    groups = {g.key: g for g in task_groups(load_graph())}
    assert list(groups) == [
        "bronze_datahub",
        "bronze_openmetadata",
        "bronze_dataworks",
        "silver_datahub",
        "silver_openmetadata",
        "silver_dataworks",
        "gold_datahub",
        "gold_datahub_openmetadata",
        "gold_openmetadata",
        "gold_dataworks",
        "gold_datahub_openmetadata_dataworks",  # its violations read the governance profiles
    ]
    assert groups["bronze_datahub"].tasks == (
        "bronze_datahub_entity_change_events",
        "bronze_datahub_audit_events",
    )
    assert groups["gold_datahub_openmetadata"].depends_on == ("silver_datahub", "silver_openmetadata")
    assert "gold_change_history" in groups["gold_datahub_openmetadata_dataworks"].tasks
    assert "gold_datahub_openmetadata" in groups["gold_datahub_openmetadata_dataworks"].depends_on
    assert len(groups["silver_dataworks"].tasks) == 16


def test_group_dependencies_follow_from_the_task_dependencies_and_every_task_is_in_one_group():
    graph = load_graph()
    key_of = group_key_of(graph)
    groups = task_groups(graph)
    assert sorted(t for g in groups for t in g.tasks) == sorted(t.key for t in graph.tasks)
    expected = {
        (key_of[t.key], key_of[d]) for t in graph.tasks for d in t.depends_on if key_of[t.key] != key_of[d]
    }
    assert {(g.key, d) for g in groups for d in g.depends_on} == expected
    seen: set[str] = set()
    for group in groups:  # each after the groups it waits for
        assert set(group.depends_on) <= seen, group.key
        seen.add(group.key)


def test_a_group_runs_its_tasks_in_graph_order_and_nothing_else():
    graph = load_graph()
    silver = group_graph(graph, "silver_dataworks")
    assert [t.key for t in silver.ordered()][0] == "silver_dataworks_events"
    assert {t.layer for t in silver.tasks} == {"silver"}
    with pytest.raises(ConfigError, match="unknown task group 'gold'"):
        group_graph(graph, "gold")


def test_lanes_and_grouping_are_configurable(tmp_path):
    one_lane = "lanes: {catalogs: [datahub_ece, datahub_audit, openmetadata, dataworks]}\n"
    assert [g.key for g in task_groups(load_graph(write_graph(tmp_path, extra=one_lane)))] == [
        "bronze_catalogs",
        "silver_catalogs",
        "gold_catalogs",
    ]
    per_table = load_graph(write_graph(tmp_path, extra="grouping: table\n"))
    groups = task_groups(per_table)
    assert [g.key for g in groups] == [t.key for t in per_table.ordered()]
    assert {g.key: g.depends_on for g in groups}["gold_failed_logins"] == ("silver_datahub_audit_events",)
