"""The DataWorks event catalog: complete against the documentation, consistent with its suite."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from silver import dataworks_catalog as catalog

# EventBridge <Category>: <Actions> named in event-catalog-facts.md (Pre* variants listed out).
FACTS = {
    "NodeChange": [
        "NodeChangeCreated",
        "NodeChangeUpdated",
        "NodeChangeDeleted",
        "UndeployNode",
        "FreezeNode",
        "UnFreezeNode",
        "StartDiJob",
        "BatchStartDiJob",
    ],
    "FileChange": ["CommitFile", "DeployFile", "DeleteFile", "RunFile", "ReviewFile"],
    "TableChange": ["CommitTable", "DeployTable"],
    "BackfillDataOperate": ["BackfillData"],
    "InstanceStatusChanges": ["InstanceStatusChanges"],
    "InstanceChange": [
        "FreezeInstance",
        "UnfreezeInstance",
        "KillInstance",
        "RerunInstance",
        "SetInstanceSuccess",
        "DeleteTaskInstanceDependencies",
        "ExpiredTaskInstancesDeleted",
        "PreFreezeInstance",
        "PreUnfreezeInstance",
        "PreRerunInstance",
        "PreSetInstanceSuccess",
        "PreKillInstance",
    ],
    "DagStatusChanges": ["DagStatusChanges"],
    "MonitorAlert": ["WorkbenchMonitorAlert"],
    "ApprovalChange": ["ApprovalChangeCreated", "ApprovalChangeFinished", "ApprovalChangeBeforeCreate"],
    "DqcCheck": ["DqcCheckFinishedEvent", "DqcCheckFeedbackEvent"],
    "ProjectChange": ["DeleteProject", "ProjectDeleted"],
    "ResourcesDownload": ["DownloadResources", "DownloadResourcesExecute"],
    "ResourcesUpload": ["UploadDataToTable"],
}

# eventCodes that appear in the message samples and event tables of the DataWorks documentation.
DOC_CODES = {
    "node-change-created",
    "node-change-updated",
    "node-change-deleted",
    "delete-file",
    "commit-file",
    "deploy-file",
    "run-file",
    "commit-table",
    "deploy-table",
    "start-diJob",
    "batch-start-diJob",
    "undeploy-node",
    "freeze-node",
    "unfreeze-node",
    "backfill-data",
    "instance-status-changes",
    "freeze-instance",
    "unfreeze-instance",
    "kill-instance",
    "rerun-instance",
    "set-instance-success",
    "delete-task-instance-dependencies",
    "pre-freeze-instance",
    "pre-unfreeze-instance",
    "pre-rerun-instance",
    "pre-set-instance-success",
    "pre-kill-instance",
    "expired-task-instances-deleted",
    "dag-status-changes",
    "workbench-monitor-alert",
    "approval-change-created",
    "approval-change-finished",
    "approval-change-before-create",
    "dqc-check-feedback-event",
    "dqc-check-finished-event",
    "batch-create-data-quality-rules",
    "batch-update-data-quality-rules",
    "batch-delete-data-quality-rules",
    "update-data-quality-rule",
    "create-data-quality-evaluation-task",
    "update-data-quality-evaluation-task",
    "clone-data-quality-evaluation-task",
    "batch-delete-data-quality-evaluation-tasks",
    "create-data-quality-evaluation-task-notification",
    "update-data-quality-evaluation-task-notification",
    "delete-data-quality-evaluation-task-notification",
    "delete-project",
    "project-deleted",
    "download-resources",
    "download-resources-execute",
    "upload-data-to-table",
}

SUITE = Path(__file__).resolve().parents[2] / "expectations" / "silver.dataworks_events.json"


def kebab(action: str) -> str:
    return re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", action).lower()


def test_every_documented_code_is_in_the_catalog():
    assert DOC_CODES <= set(catalog.EVENT_CODES)


@pytest.mark.parametrize("category,action", [(c, a) for c, actions in FACTS.items() for a in actions])
def test_every_documented_type_is_in_the_catalog(category, action):
    code = catalog.code_of_type(f"dataworks:{category}:{action}")
    assert code is not None
    assert catalog.type_of(code) == f"dataworks:{category}:{action}"
    assert catalog.event(code).category == category and catalog.event(code).action == action


def test_codes_are_the_kebab_case_actions():
    odd = {code for code, spec in catalog.EVENTS.items() if kebab(spec.action) != code}
    assert odd == {"start-diJob", "batch-start-diJob", "unfreeze-node"}  # as DataWorks spells them


def test_pre_events_are_extension_points():
    for code in catalog.EVENT_CODES:
        if code.startswith("pre-"):
            assert catalog.is_extension_point(code), code
    assert catalog.is_extension_point("instance-status-changes") is False
    assert catalog.is_extension_point("commit-file") is True
    assert catalog.is_extension_point("no-such-event") is None


def test_families_are_the_silver_family_tables():
    assert {spec.family for spec in catalog.EVENTS.values()} == set(catalog.FAMILY_TABLES)
    assert catalog.family_of("node-change-updated") == "silver.dataworks_node_changes"
    assert catalog.family_of("batch-start-diJob") == "silver.dataworks_di_job_starts"
    assert catalog.family_of("no-such-event") is None
    assert catalog.codes_of("silver.dataworks_project_changes") == ("delete-project", "project-deleted")
    with pytest.raises(KeyError):
        catalog.codes_of("silver.nope")


def test_aliases():
    assert catalog.canonical_code("approval-create-before") == "approval-change-before-create"
    assert catalog.family_of("approval-create-before") == "silver.dataworks_approvals"
    assert catalog.canonical_code("commit-file") == "commit-file"


def test_enum_names():
    assert catalog.status_names("instance_status") == {
        1: "NOT_RUN",
        2: "WAIT_TIME",
        3: "WAIT_RESOURCE",
        4: "RUNNING",
        5: "FAILURE",
        6: "SUCCESS",
        7: "CHECKING",
        8: "CHECKING_CONDITION",
    }
    assert set(catalog.status_names("dag_status")) == {1, 4, 5, 6}
    assert catalog.status_names("dag_type")[3] == "BACKFILL"
    assert catalog.status_names("task_type") == catalog.status_names("scheduler_type")
    assert catalog.status_codes("scheduler_type")["SKIP_CYCLE"] == 5
    assert catalog.status_names("file_change_type") == {0: "CREATE", 1: "UPDATE", 2: "DELETE"}
    assert catalog.status_names("dq_check_result")[-2] == "SKIPPED"
    assert catalog.status_names("baseline_status") == {-1: "ABNORMAL", 1: "SAFE", 2: "WARNING", 3: "OVERTIME"}
    with pytest.raises(KeyError):
        catalog.status_names("colour")


def test_suite_lists_exactly_the_catalog_codes():
    suite = json.loads(SUITE.read_text(encoding="utf-8"))
    (rule,) = [e for e in suite["expectations"] if e["meta"]["name"] == "event_code_in_catalog"]
    assert rule["kwargs"]["value_set"] == list(catalog.EVENT_CODES)


def test_column_helpers(spark):
    df = spark.createDataFrame(
        [
            ("instance-status-changes", "6", "dataworks:NodeChange:UnFreezeNode"),
            ("x", "99", "dataworks:A:BcD"),
        ],
        "code string, status string, type string",
    )
    rows = df.select(
        catalog.family_col(F.col("code")).alias("family"),
        catalog.extension_point_col(F.col("code")).alias("blocking"),
        catalog.status_name_col("instance_status", F.col("status")).alias("status_name"),
        catalog.code_from_type_col(F.col("type")).alias("derived"),
    ).collect()
    assert rows[0].asDict() == {
        "family": "silver.dataworks_instance_status_changes",
        "blocking": False,
        "status_name": "SUCCESS",
        "derived": "unfreeze-node",
    }
    assert rows[1].asDict() == {"family": None, "blocking": None, "status_name": None, "derived": "bc-d"}


def test_bad_catalog_fails_naming_the_entry(tmp_path):
    bad = tmp_path / "catalog.yaml"
    bad.write_text("events:\n  oops:\n    type: NodeChange\n    family: silver.dataworks_node_changes\n")
    with pytest.raises(catalog.CatalogError, match=r"events\.oops\.type"):
        catalog.load_catalog(bad)
    bad.write_text(
        "events:\n  a-b:\n    type: 'dataworks:A:AB'\n    family: silver.elsewhere\n    extension_point: false\n"
    )
    with pytest.raises(catalog.CatalogError, match=r"events\.a-b\.family"):
        catalog.load_catalog(bad)


def test_column_helpers_agree_with_the_python_look_ups_on_every_entry(spark):
    codes = [*catalog.EVENT_CODES, *catalog.ALIASES, "no-such-event", None]
    types = [*catalog.EVENT_TYPES, "dataworks:Some:NewThing", None]
    frame = spark.createDataFrame([(c,) for c in codes], "code string")
    rows = frame.select(
        "code",
        catalog.canonical_code_col(F.col("code")).alias("canonical"),
        catalog.family_col(catalog.canonical_code_col(F.col("code"))).alias("family"),
        catalog.extension_point_col(catalog.canonical_code_col(F.col("code"))).alias("blocking"),
        catalog.type_col(catalog.canonical_code_col(F.col("code"))).alias("type"),
    ).collect()
    for row in rows:
        expected = (
            catalog.canonical_code(row.code),
            catalog.family_of(row.code),
            catalog.is_extension_point(row.code),
            catalog.type_of(row.code),
        )
        assert (row.canonical, row.family, row.blocking, row.type) == expected, row.code
    by_type = spark.createDataFrame([(t,) for t in types], "type string")
    for row in by_type.select("type", catalog.code_from_type_col(F.col("type")).alias("code")).collect():
        if row.type in catalog.EVENT_TYPES:
            assert row.code == catalog.code_of_type(row.type)
    assert {r.code for r in rows if r.family} >= set(catalog.EVENT_CODES)
    for kind in catalog.ENUM_KINDS:
        names = catalog.status_names(kind)
        values = [str(code) for code in names] + ["not-a-number", None]
        enum = spark.createDataFrame([(v,) for v in values], "value string")
        found = {
            r.value: r.name
            for r in enum.select(
                "value", catalog.status_name_col(kind, F.col("value")).alias("name")
            ).collect()
        }
        assert found == {**{str(c): n for c, n in names.items()}, "not-a-number": None, None: None}, kind
