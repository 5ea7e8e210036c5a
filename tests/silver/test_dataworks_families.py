"""DataWorks family tables on the doc's sample payloads (dataworks-event-list-and-message-formats.zh.md).

Masked ids of the samples (`9***4`) are replaced by numbers, except where a test
wants the masked value. Input rows have the columns of silver.dataworks_events.
"""

from __future__ import annotations

import datetime as dt
import importlib
import json

import pytest
from pyspark.sql import functions as F

from pipelines import quality
from silver import dataworks_catalog as catalog
from silver.dataworks_families import Family, family_transform
from tests.support.dataworks_samples import MAPPINGS_5777, SAMPLES, events


def run(frame, table: str) -> list[dict]:
    mod = importlib.import_module(table)
    return [row.asDict(recursive=True) for row in mod.SPEC.transform(frame).collect()]


@pytest.fixture(scope="module")
def sample_rows(spark):
    """Family table -> its rows from all SAMPLES, with the suite's `_failed_*` flags (each built once)."""
    frame = events(spark, SAMPLES).cache()
    built: dict[str, list[dict]] = {}

    def rows(table: str) -> list[dict]:
        if table not in built:
            output = importlib.import_module(table).SPEC.transform(frame)
            flagged = quality.flag_rows(output, quality.load_suite(table))
            built[table] = [row.asDict(recursive=True) for row in flagged.collect()]
        return built[table]

    yield rows
    frame.unpersist()


def by_id(rows: list[dict]) -> dict[str, dict]:
    return {row["parent_event_id"] if "parent_event_id" in row else row["event_id"]: row for row in rows}


def utc(*parts: int) -> dt.datetime:
    """A UTC instant as PySpark returns timestamps: naive, in the test process's local time."""
    return dt.datetime(*parts, tzinfo=dt.timezone.utc).astimezone().replace(tzinfo=None)


def test_every_family_table_has_a_module_with_its_job():
    for table in catalog.FAMILY_TABLES:
        spec = importlib.import_module(table).SPEC
        assert (spec.table, spec.source, spec.reconciles) == (table, "silver.dataworks_events", None)
        assert isinstance(importlib.import_module(table).FAMILY, Family)


def test_node_changes(sample_rows):
    rows = sample_rows("silver.dataworks_node_changes")
    assert [r["event_id"] for r in rows] == ["evt-node_created"]
    row = rows[0]
    assert row["entity_key"] == "dataworks:node:70000003"
    assert (row["node_name"], row["priority"], row["baseline_id"], row["repeatability"]) == (
        "ods_orders",
        1,
        70000287,
        True,
    )
    assert row["scheduler_type_name"] == "NORMAL"
    assert row["create_time"] == utc(2024, 7, 12, 3, 8, 50, 864000)
    assert (row["tenant_id"], row["project_id"], row["operator"]) == (28000656, 90004, "190000735")
    assert row["extension_point"] is False
    assert row["data_extra"] is None
    assert row["_errors"] == []
    assert row["raw"] and row["source_file"] == "/landing/dataworks/test.jsonl"


def test_file_changes_local_time_is_shanghai(sample_rows):
    (row,) = sample_rows("silver.dataworks_file_changes")
    assert row["entity_key"] == "dataworks:file:50000830"
    assert (row["change_type"], row["change_type_name"]) == (0, "CREATE")
    assert row["file_create_time"] == utc(2024, 7, 12, 3, 8, 50)  # 11:08:50 Asia/Shanghai
    assert (row["file_version"], row["file_type"], row["resource_type"]) == (1, 10, 1)
    assert row["_errors"] == []


def test_table_changes_key_by_project_and_name(sample_rows):
    (row,) = sample_rows("silver.dataworks_table_changes")
    assert row["entity_key"] == "dataworks:table:project1.table1"
    assert (row["table_type"], row["max_compute_project"]) == ("ODPS", "project1")


def test_di_job_starts_one_row_per_mapping(sample_rows):
    rows = sample_rows("silver.dataworks_di_job_starts")
    v1 = [r for r in rows if r["parent_event_id"] == "evt-start_di_v1"]
    batch = [r for r in rows if r["parent_event_id"] == "evt-batch_start_di"]
    unmapped = [r for r in rows if r["parent_event_id"] == "evt-start_di_unmapped"]
    assert len(v1) == 4 and len(batch) == 7 and len(unmapped) == 1
    assert len({r["event_id"] for r in rows}) == 12
    assert {r["di_job_id"] for r in v1} == {5280}
    assert [r["src_table"] for r in sorted(v1, key=lambda r: r["mapping_index"])] == [
        "xb_test_116",
        "xb_test_117",
        "xb_test_118",
        "xb_test_135",
    ]
    assert v1[0]["entity_key"] == "dataworks:di_job:5280"
    per_job = {spec: sum(r["di_job_id"] == spec for r in batch) for spec in (5777, 5679)}
    assert per_job == {5777: 3, 5679: 4}
    assert {r["di_job_name"] for r in batch if r["di_job_id"] == 5777} == {
        "sync_mysql_to_holo_20240911_170801"
    }
    assert batch[0]["job_ids"] == [5777, 5679]
    assert batch[0]["start_date_time"] == utc(2024, 9, 12, 6, 0)
    (row,) = unmapped
    assert row["di_job_id"] == 5502 and row["show_table_mapping"] is False
    assert row["src_table"] is None and row["dst_table"] is None
    assert row["start_date_time"] == utc(2024, 9, 10, 9, 0)
    assert row["last_start_position"] == utc(2024, 4, 12, 14, 7, 2)
    assert all(r["_errors"] == [] for r in rows)


def test_node_operations_several_nodes_key_the_workspace(sample_rows):
    (row,) = sample_rows("silver.dataworks_node_operations")
    assert row["node_ids"] == [1, 2, 3]
    assert row["operation"] == "FREEZE"
    assert row["entity_key"] == "dataworks:project:1200056"


def test_backfills(sample_rows):
    (row,) = sample_rows("silver.dataworks_backfills")
    assert row["entity_key"] == "dataworks:node:10000271"
    assert (row["include_node_ids"], row["exclude_node_ids"]) == ([10000271], [])
    assert row["multiple_time_periods"] == [{"biz_begin_time": "2022-04-17", "biz_end_time": "2022-04-17"}]
    assert (row["backfill_name"], row["run_order"], row["parallel_group"]) == (
        "P_fff_20220418_215404",
        "asc",
        1,
    )
    assert row["_errors"] == []


def test_instance_status_changes_names_codes(sample_rows):
    (row,) = sample_rows("silver.dataworks_instance_status_changes")
    assert row["entity_key"] == "dataworks:instance:453000169"
    assert (row["status"], row["status_name"]) == (5, catalog.status_names("instance_status")[5])
    assert row["status_name"] == "FAILURE"
    assert (row["dag_type_name"], row["task_type_name"]) == ("SCHEDULED", "NORMAL")
    assert row["begin_wait_time_time"] == utc(2022, 5, 16, 11, 29, 36)
    assert row["project_id"] == 300002  # appId


def test_instance_operations(sample_rows):
    rows = by_id(sample_rows("silver.dataworks_instance_operations"))
    frozen = rows["evt-freeze_instance"]
    assert frozen["entity_key"] == "dataworks:instance:5230009736"
    assert (frozen["operation"], frozen["project_type"]) == ("FREEZE_INSTANCE", "PROD")
    expired = rows["evt-expired_instances"]
    assert expired["deleted_task_instance_ids"] == [524000035, 524000498, 524000637]
    assert expired["entity_key"] == "dataworks:project:307303"
    assert expired["operation_time"] == utc(2024, 12, 18, 7, 12, 34, 897000)


def test_workflow_status_changes(sample_rows):
    (row,) = sample_rows("silver.dataworks_workflow_status_changes")
    assert row["entity_key"] == "dataworks:dag:500358972116"
    assert (row["status_name"], row["dag_type_name"]) == ("SUCCESS", "BACKFILL")
    assert row["biz_date"] == utc(2022, 11, 6, 16, 0)


def test_monitor_alerts_shapes(sample_rows):
    rows = by_id(sample_rows("silver.dataworks_monitor_alerts"))
    sla = rows["evt-sla_alert"]
    assert (sla["baseline_status"], sla["baseline_status_name"]) == (3, "OVERTIME")
    assert sla["biz_date"] == utc(2022, 6, 5, 16, 0)
    assert sla["entity_key"] == "dataworks:instance:30700003778"
    remind = rows["evt-remind_alert"]
    assert remind["node_ids"] == [10000005472, 10000005473, 10000005474]
    assert remind["task_ids"] == [30700000896, 30700000870, 30700000855]
    assert remind["entity_key"] == "dataworks:project:90004"
    assert remind["baseline_status"] is None and remind["_errors"] == []


def test_approvals_unify_requested_objects(sample_rows):
    rows = by_id(sample_rows("silver.dataworks_approvals"))
    created = rows["evt-approval_created"]
    (obj,) = created["requested_objects"]
    assert (obj["object_guid"], obj["actions"], obj["project_id"], obj["workspace_id"]) == (
        "odps.b_mc1.loghub_070103",
        ["Select", "Describe"],
        90004,
        90004,
    )
    assert [g["grantee_type_sub"] for g in created["grantees"]] == [103, 105]
    assert created["entity_key"] == "dataworks:table:odps.b_mc1.loghub_070103"
    assert (created["applicant_name"], created["apply_reason"], created["apply_period"]) == (
        "yupeng.sunyp",
        "测试",
        2997964800000,
    )
    assert created["process_create_time"] == utc(2022, 5, 9, 11, 6, 3)
    request = rows["evt-table_permission_request"]
    (obj,) = request["requested_objects"]
    assert (obj["object_guid"], obj["project_name"], obj["actions"]) == (
        "odps.d11aa.tablei",
        "d11aa",
        ["Select", "Describe"],
    )
    assert request["grantees"][0]["grantee_id"] == "123900008872"
    assert (request["deadline_type"], request["env_code"], request["label_security"]) == ("month", 1, False)
    assert all(r["_errors"] == [] and r["data_extra"] is None for r in rows.values())


def test_dq_check_results(sample_rows):
    rows = by_id(sample_rows("silver.dataworks_dq_check_results"))
    finished = rows["evt-dq_finished"]
    assert (finished["check_result"], finished["check_result_name"]) == (0, "PASSED")
    assert finished["entity_key"] == "dataworks:table:test_mc_2303_kongjian.sx_dim_1209_001"
    assert finished["biz_date"] == utc(2023, 2, 8, 16, 0)
    assert finished["reference_value"][0]["value"] == 0.0
    assert finished["sample_value"] == [
        {"biz_date": utc(2023, 2, 8, 16, 0), "discrete_property": None, "value": 3.0}
    ]
    feedback = rows["evt-dq_feedback"]
    assert feedback["begin_time"] == utc(2023, 2, 15, 8, 2, 25)
    assert (feedback["rule_check_id"], feedback["create_user"]) == (521771452, "110755000425000")
    assert all(r["_errors"] == [] for r in rows.values())


def test_dq_rule_events(sample_rows):
    rows = by_id(sample_rows("silver.dataworks_dq_rule_events"))
    created = rows["evt-dq_rules_created"]
    assert (created["object_kind"], created["operation"]) == ("RULE", "CREATE")
    assert created["entity_key"] == "dataworks:table:odps.project_demo.tb_table_demo"
    (rule,) = created["rules"]
    assert (rule["enabled"], json.loads(rule["sampling_config"])) == (True, {"metric": "count"})
    notification = rows["evt-dq_notification_created"]
    assert (notification["object_kind"], notification["operation"]) == ("NOTIFICATION", "CREATE")
    assert notification["data_quality_evaluation_task_id"] == 10001


def test_project_and_resource_transfers(sample_rows):
    (project,) = sample_rows("silver.dataworks_project_changes")
    assert project["entity_key"] == "dataworks:project:90004"
    assert project["message_time"] == utc(2023, 12, 11, 2, 9, 16, 896000)
    (upload,) = sample_rows("silver.dataworks_resource_transfers")
    assert (upload["direction"], upload["entity_key"]) == (
        "UPLOAD",
        "dataworks:table:odps.mc_project.test_table",
    )
    assert (upload["query_dw_project_id"], upload["file_size"], upload["operator"]) == (
        90004,
        123456,
        "1222222000",
    )


def test_masked_values_are_cast_errors_naming_the_field(spark):
    masked = {
        "masked_project": {**SAMPLES["instance_failed"], "appId": 300002, "projectId": "9***4"},
        "masked_node_ids": {**SAMPLES["freeze_node"], "nodeIds": [1, "7***0"]},
        "masked_reference": {
            **SAMPLES["dq_finished"],
            "referenceValue": [{"value": "n/a"}],
            "beginTime": "2023-02-30 25:00:00",
        },
    }
    frame = events(spark, masked)
    (row,) = run(frame, "silver.dataworks_instance_status_changes")
    assert row["_errors"] == ["cast:data.projectId"]
    assert row["status_name"] == "FAILURE"
    (row,) = run(frame, "silver.dataworks_node_operations")
    assert row["_errors"] == ["cast:data.nodeIds"]
    (row,) = run(frame, "silver.dataworks_dq_check_results")
    assert sorted(row["_errors"]) == ["cast:data.beginTime", "cast:data.referenceValue[].value"]


def test_unknown_fields_are_kept_in_data_extra(spark):
    drift = {
        "drift": {**SAMPLES["instance_failed"], "retryCount": 2, "newInfo": {"a": 1}},
        "nested_drift": {
            **SAMPLES["batch_start_di"],
            "tableMappings": [{"id": 5777, "tableMapping": [{**MAPPINGS_5777[0], "srcSchema": "s1"}]}],
        },
    }
    frame = events(spark, drift)
    (row,) = run(frame, "silver.dataworks_instance_status_changes")
    assert row["data_extra"] == {"retryCount": "2", "newInfo": '{"a":1}'}
    assert row["_errors"] == []
    (row,) = run(frame, "silver.dataworks_di_job_starts")
    assert json.loads(row["data_extra"]["tableMappings"])[0]["tableMapping"][0]["srcSchema"] == "s1"
    assert row["src_table"] == "test_verify1"


def test_scheduler_type_sent_as_code_is_named(spark):
    updated = {**SAMPLES["node_created"], "eventCode": "node-change-updated", "schedulerType": 2}
    (row,) = run(events(spark, {"updated": updated}), "silver.dataworks_node_changes")
    assert (row["scheduler_type"], row["scheduler_type_name"]) == ("2", "PAUSE")


def test_invalid_payload_json_is_an_error(spark):
    frame = events(spark, {"bad": SAMPLES["project_deleted"]}).withColumn("data", F.lit("{not json"))
    (row,) = run(frame, "silver.dataworks_project_changes")
    assert row["_errors"] == ["json:data"]


@pytest.mark.parametrize("table", catalog.FAMILY_TABLES)
def test_expectation_suites_pass_on_the_samples(sample_rows, table):
    suite = quality.load_suite(table)
    assert suite is not None and suite.table == table
    rows = sample_rows(table)
    assert rows and {e.column for e in suite.expectations} <= set(rows[0])
    assert all(not row["_failed_drop"] and not row["_failed_warn"] for row in rows)


def test_status_sets_in_suites_are_the_catalog_enums():
    enums = {
        ("silver.dataworks_instance_status_changes", "status"): "instance_status",
        ("silver.dataworks_instance_status_changes", "dag_type"): "dag_type",
        ("silver.dataworks_instance_status_changes", "task_type"): "task_type",
        ("silver.dataworks_workflow_status_changes", "status"): "dag_status",
        ("silver.dataworks_workflow_status_changes", "dag_type"): "dag_type",
        ("silver.dataworks_file_changes", "change_type"): "file_change_type",
        ("silver.dataworks_monitor_alerts", "baseline_status"): "baseline_status",
        ("silver.dataworks_monitor_alerts", "task_status"): "instance_status",
    }
    for (table, column), kind in enums.items():
        (rule,) = [
            e
            for e in quality.load_suite(table).expectations
            if e.column == column and e.type == "expect_column_values_to_be_in_set"
        ]
        assert sorted(rule.kwargs["value_set"]) == sorted(catalog.status_names(kind)), (table, column)


def test_family_transform_is_generic(spark):
    family = Family(
        table="silver.dataworks_project_changes",
        fields={"projectName": "string", "extra.list": [{"n": "int"}]},
        entity=(("project", "project_id"),),
    )
    frame = events(spark, {"p": {**SAMPLES["project_deleted"], "extra": {"list": [{"n": "1"}, {"n": 2}]}}})
    (row,) = [r.asDict(recursive=True) for r in family_transform(family)(frame).collect()]
    assert row["extra_list"] == [{"n": 1}, {"n": 2}]
    assert row["data_extra"] == {"blockBusiness": "false", "timestamp": "1702260556896"}


def test_each_family_selects_exactly_the_event_codes_its_transform_keeps(spark):
    """The executor skips a family whose selector accepts none of the new event codes, so the
    selector must agree with the transform's own filter on every code: the catalog's, aliases,
    unknown ones and null."""
    codes = [*catalog.EVENT_CODES, *catalog.ALIASES, "no-such-event", None]
    frame = events(spark, {f"code-{i}": {"eventCode": code} for i, code in enumerate(codes)}).cache()
    try:
        for table in catalog.FAMILY_TABLES:
            spec = importlib.import_module(table).SPEC
            kept = {row.event_code for row in spec.transform(frame).select("event_code").distinct().collect()}
            selected = {code for code in codes if spec.selects.accepts(code)}
            assert kept == selected, table
            assert selected, f"{table} selects no event code"
    finally:
        frame.unpersist()


FAMILIES_WITH_CHANGE_TIMES = {
    "silver.dataworks_instance_status_changes": ("modify_time", "finish_time", "begin_running_time"),
    "silver.dataworks_node_changes": ("modify_time",),
    "silver.dataworks_approvals": ("update_time",),
    "silver.dataworks_dq_check_results": ("end_time",),
}


@pytest.mark.parametrize("table", sorted(FAMILIES_WITH_CHANGE_TIMES))
def test_a_family_with_a_change_time_orders_by_the_first_one_its_payload_sends(sample_rows, table):
    family = importlib.import_module(table).FAMILY
    assert tuple(family.column(path) for path in family.change_time) == FAMILIES_WITH_CHANGE_TIMES[table]
    rows = sample_rows(table)
    assert rows and any(row["changed_at"] is not None for row in rows)
    for row in rows:
        sent = [row[column] for column in FAMILIES_WITH_CHANGE_TIMES[table] if row[column] is not None]
        assert row["changed_at"] == (sent[0] if sent else None)


def test_families_without_a_change_time_have_no_changed_at(sample_rows):
    assert "changed_at" not in sample_rows("silver.dataworks_workflow_status_changes")[0]
