"""`lakehouse sql`: every table as <layer>.<table>, read-only, time travel, output formats."""

from __future__ import annotations

import datetime as dt
import io
import json
import os

import pytest

from pipelines.cli import main
from pipelines.query import script, statements
from pipelines.query.spark_session import SqlSession
from pipelines.store import open_store

T0 = dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.timezone.utc)


@pytest.fixture(scope="module")
def warehouse(spark, tmp_path_factory):
    """silver.events (two versions), ops.runs, gold.tag_timeline: a few rows each."""
    path = tmp_path_factory.mktemp("sql") / "warehouse"
    store = open_store(spark, path, "delta-rs")
    schema = "event_id string, n long, tags array<string>, attrs map<string,string>, event_time timestamp"
    store.append(spark.createDataFrame([("e1", 1, ["a"], {"k": "v"}, T0)], schema), "silver.events")
    store.append(
        spark.createDataFrame([("e2", 2, [], None, T0), ("e3", None, None, None, None)], schema),
        "silver.events",
    )
    store.append(
        spark.createDataFrame(
            [("run-1", "silver_events", "SUCCESS")], "run_id string, job string, status string"
        ),
        "ops.runs",
    )
    timeline = (
        "source string, entity_urn string, parent_urn string, tag_urn string, valid_from timestamp, "
        "valid_to timestamp, is_current boolean, added_by string, removed_by string, end_reason string"
    )
    store.append(
        spark.createDataFrame(
            [
                ("datahub", "urn:ds:1", None, "urn:tag:pii", T0, None, True, "alice", None, None),
                ("datahub", "urn:ds:1", None, "urn:tag:old", T0, T0, False, "bob", "bob", "REMOVED"),
                ("datahub", "urn:ds:2", None, "urn:tag:pii", T0, None, True, "alice", None, None),
                ("datahub", "urn:ds:2,f", "urn:ds:2", "urn:tag:pii", T0, None, True, "alice", None, None),
            ],
            timeline,
        ),
        "gold.tag_timeline",
    )
    status = "entity_urn string, status string, is_current boolean"
    store.append(
        spark.createDataFrame([("urn:ds:1", "ACTIVE", True), ("urn:ds:2", "SOFT_DELETED", True)], status),
        "gold.entity_status_timeline",
    )
    return path


def run_sql(capsys, warehouse, *args: str) -> tuple[int, str, str]:
    code = main(["sql", "--warehouse", str(warehouse), "--engine", "spark", *args])
    out, err = capsys.readouterr()
    return code, out, err


def json_rows(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines()]


def snapshot(path) -> dict[str, int]:
    """Every file under the warehouse with its size: any write would change it."""
    return {
        os.path.relpath(os.path.join(root, name), path): os.path.getsize(os.path.join(root, name))
        for root, _, names in os.walk(path)
        for name in names
    }


def test_tables_resolve_by_layer_and_name_in_any_case_and_quoting(capsys, warehouse):
    code, out, err = run_sql(
        capsys,
        warehouse,
        "--format",
        "json",
        "SELECT e.event_id, e.n, e.tags, e.attrs, e.event_time, r.status FROM Silver.Events e "
        "CROSS JOIN `ops`.`runs` r WHERE e.event_id <> 'silver.events' ORDER BY e.event_id",
    )
    assert (code, err) == (0, "")
    assert json_rows(out) == [
        {
            "event_id": "e1",
            "n": 1,
            "tags": ["a"],
            "attrs": {"k": "v"},
            "event_time": "2026-01-01 12:00:00",
            "status": "SUCCESS",
        },
        {
            "event_id": "e2",
            "n": 2,
            "tags": [],
            "attrs": None,
            "event_time": "2026-01-01 12:00:00",
            "status": "SUCCESS",
        },
        {"event_id": "e3", "n": None, "tags": None, "attrs": None, "event_time": None, "status": "SUCCESS"},
    ]


def test_table_and_csv_formats(capsys, warehouse):
    code, out, _ = run_sql(capsys, warehouse, "SELECT event_id, n, tags FROM silver.events ORDER BY event_id")
    assert code == 0
    assert out.splitlines() == [
        "event_id | n    | tags",
        "---------+------+------",
        'e1       | 1    | ["a"]',
        "e2       | 2    | []",
        "e3       | NULL | NULL",
        "(3 rows)",
    ]
    code, out, _ = run_sql(
        capsys,
        warehouse,
        "--format",
        "csv",
        "SELECT event_id, n FROM silver.events ORDER BY event_id; SELECT 'x,y' AS s",
    )
    assert code == 0
    assert out.splitlines() == ["event_id,n", "e1,1", "e2,2", "e3,", "s", '"x,y"']


def test_as_of_version_reads_every_table_at_that_version(capsys, warehouse):
    code, out, err = run_sql(
        capsys, warehouse, "--format", "json", "--as-of-version", "0", "SELECT event_id FROM silver.events"
    )
    assert (code, err) == (0, "")
    assert json_rows(out) == [{"event_id": "e1"}]
    code, out, err = run_sql(capsys, warehouse, "--as-of-version", "1", "SELECT count(*) FROM ops.runs")
    assert code == 1
    assert "ops.runs has no version 1" in err
    assert "TABLE_OR_VIEW_NOT_FOUND" in err and len(err.splitlines()) == 2


def test_current_views_are_registered_and_leave_out_deleted_entities_and_their_fields(capsys, warehouse):
    pytest.importorskip("gold.current_views")
    code, out, err = run_sql(
        capsys, warehouse, "--format", "json", "SELECT entity_urn, tag_urn FROM gold.current_tags"
    )
    assert (code, err) == (0, "")
    assert json_rows(out) == [
        {"entity_urn": "urn:ds:1", "tag_urn": "urn:tag:pii"}
    ]  # urn:ds:2 is soft-deleted
    # A view whose base table is missing is not registered: Spark reports the name.
    code, _, err = run_sql(capsys, warehouse, "SELECT * FROM gold.current_owners")
    assert code == 1
    assert "gold.current_owners: its base tables do not exist" in err


def test_show_describe_explain_and_file_input(capsys, warehouse, tmp_path):
    script = tmp_path / "q.sql"
    script.write_text(
        "-- what is there\nSHOW TABLES IN silver;\nDESCRIBE silver.events;\n"
        "EXPLAIN SELECT * FROM silver.events WHERE n > 1;\n",
        encoding="utf-8",
    )
    code, out, err = run_sql(capsys, warehouse, "--format", "csv", "-f", str(script))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[:2] == ["namespace,tableName,isTemporary", "silver,events,false"]
    assert "event_id,string," in lines and 'attrs,"map<string,string>",' in lines
    assert "Physical Plan" in out


def test_errors_are_one_line(capsys, warehouse):
    code, out, err = run_sql(capsys, warehouse, "SELECT * FROM silver.nope")
    assert (code, out) == (1, "")
    assert err.startswith("lakehouse sql: [TABLE_OR_VIEW_NOT_FOUND]") and "`silver`.`nope`" in err
    assert len(err.splitlines()) == 1


REFUSED = [
    "DROP TABLE silver.events",
    "drop table silver.events",
    "DELETE FROM silver.events",
    "INSERT INTO silver.events SELECT * FROM silver.events",
    "CREATE TABLE x AS SELECT 1",
    "ALTER TABLE silver.events ADD COLUMNS (x int)",
    "UPDATE silver.events SET n = 1",
    "MERGE INTO silver.events t USING silver.events s ON t.event_id = s.event_id WHEN MATCHED THEN DELETE",
    "TRUNCATE TABLE silver.events",
    "REPLACE TABLE x AS SELECT 1",
    "CACHE TABLE silver.events",
    "SET spark.sql.shuffle.partitions = 1",
    "ADD JAR /tmp/x.jar",
    "LOAD DATA LOCAL INPATH '/tmp' INTO TABLE x",
    "REFRESH TABLE silver.events",
    "MSCK REPAIR TABLE x",
    "USE silver",
    "/* harmless? */ DrOp TABLE silver.events",
    "-- comment\n  delete from silver.events",
    "SELECT 1; DROP TABLE silver.events",
    "SELECT 1 AS a; /* ; */ insert overwrite table t select 1",
    "WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x",
    "(SELECT 1) UNION ALL (SELECT 2); TRUNCATE TABLE t",
    "EXPLAIN DELETE FROM silver.events",
    "SELECT reflect('java.lang.System', 'exit', 0)",
    "SELECT java_method('java.lang.System', 'exit', 0)",
    "'DROP' TABLE x",
    "",
    "-- only a comment",
]


@pytest.mark.parametrize("statement", REFUSED)
def test_writing_statements_are_refused_before_anything_runs(capsys, statement):
    code = main(["sql", "--warehouse", "/nonexistent/warehouse", statement])
    out, err = capsys.readouterr()
    assert code == 2, err
    assert out == ""
    assert err.startswith("lakehouse sql: ") and ("refused" in err or "no statement" in err)


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT 'DROP TABLE x; delete' AS s",
        "select `delete`, `update` from t -- drop table",
        "/* insert */ WITH a AS (SELECT 1) SELECT * FROM a",
        "SHOW TABLES",
        "DESC silver.events",
        "VALUES (1)",
        "SELECT regexp_replace('a', 'a', 'b'), date_add(current_date(), 1), 1 AS updated_rows",
    ],
)
def test_reading_statements_pass_the_check(statement):
    for number, tokens in enumerate(statements.split_statements(statement), start=1):
        statements.check_read_only(tokens, number)


def test_a_refused_statement_stops_the_whole_input_and_nothing_changes(capsys, spark, warehouse):
    before = snapshot(warehouse)
    store = open_store(spark, warehouse, "delta-rs")
    versions = {name: store.version(name) for name in store.tables()}
    with SqlSession(spark, warehouse, "delta-rs") as session:
        out, err = io.StringIO(), io.StringIO()
        assert script.run_script(session, "SELECT 1 AS one; DROP TABLE silver.events", "table", out, err) == 2
        assert out.getvalue() == ""
        assert "statement 2 starts with 'DROP'" in err.getvalue()
        for text in ("SHOW TABLES", "DESCRIBE silver.events", "SELECT count(*) FROM gold.tag_timeline"):
            assert script.run_script(session, text, "csv", io.StringIO(), err) == 0
        with pytest.raises(statements.ReadOnlyViolation):
            session.execute("DROP TABLE `silver.events`")
    assert snapshot(warehouse) == before
    assert {name: store.version(name) for name in store.tables()} == versions
    assert not spark.catalog.tableExists("`silver.events`")  # the views stayed in the private session


def test_interactive_prompt(spark, warehouse):
    stdin = io.StringIO(
        "SELECT 1 AS x;\nSELECT event_id\n  FROM silver.events\n  WHERE n = 2;\n"
        "DROP TABLE silver.events;\nSELECT 'still here' AS s;\nquit\nSELECT 'not run' AS s;\n"
    )
    out, err = io.StringIO(), io.StringIO()
    with SqlSession(spark, warehouse, "delta-rs") as session:
        assert script.interactive(session, "csv", stdin, out, err) == 0
    assert out.getvalue().splitlines() == ["x", "1", "event_id", "e2", "s", "still here"]
    assert "refused" in err.getvalue()


def test_rewrite_touches_only_table_references(spark, warehouse):
    with SqlSession(spark, warehouse, "delta-rs") as session:
        tokens = statements.tokenize(
            "SELECT 'silver.events', silver.events.n, x.silver.events FROM silver . events /* silver.events */ "
            "JOIN `silver.events` USING (n) -- ops.runs"
        )
        assert session.prepare(tokens) == (
            "SELECT 'silver.events', `silver.events`.n, x.silver.events FROM `silver.events` /* silver.events */ "
            "JOIN `silver.events` USING (n) -- ops.runs"
        )


def test_tokenizer_nested_comments_and_statements():
    found = statements.split_statements("/* a /* b; */ c; */ SELECT ';' AS s; ; -- x;\nSELECT 2")
    assert ["".join(t.text for t in s).strip() for s in found] == [
        "/* a /* b; */ c; */ SELECT ';' AS s",
        "-- x;\nSELECT 2",
    ]
