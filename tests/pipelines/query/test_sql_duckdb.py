"""`lakehouse sql` and `lakehouse timeline` on DuckDB: the same answers as Spark on the demo
warehouse, read-only, time travel, the same output formats, no JVM; without `--engine`, DuckDB
answers what it answers alike and Spark SQL the rest, and stderr says which answered."""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
import textwrap

import pytest

from pipelines.cli import main
from pipelines.core.config import PROJECT_ROOT
from tests.support.docs_queries import portable_queries

DATASET = "urn:li:dataset:(urn:li:dataPlatform:snowflake,example.table,PROD)"
ENGINES = ("spark", "duckdb")


@pytest.fixture(scope="module")
def demo_warehouse(sample_warehouse):
    """The bundled samples through bronze, silver and gold (delta-rs)."""
    return sample_warehouse[0].warehouse


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def sql(capsys, warehouse, engine: str, *args: str) -> tuple[int, str, str]:
    return run(capsys, "sql", "--warehouse", str(warehouse), "--engine", engine, *args)


def snapshot(path) -> dict[str, int]:
    """Every file under the warehouse with its size: any write would change it."""
    return {
        os.path.relpath(os.path.join(root, name), path): os.path.getsize(os.path.join(root, name))
        for root, _, names in os.walk(path)
        for name in names
    }


def test_the_docs_mark_portable_queries():
    assert len(portable_queries()) >= 14


def auto(capsys, warehouse, *args: str) -> tuple[int, str, str]:
    """`lakehouse sql` without `--engine`."""
    return run(capsys, "sql", "--warehouse", str(warehouse), *args)


@pytest.mark.parametrize("heading, query", portable_queries(), ids=lambda v: v[:12])
def test_portable_analyst_queries_answer_alike_on_both_engines_and_duckdb_answers_them_by_default(
    capsys, demo_warehouse, heading, query
):
    answers = {engine: sql(capsys, demo_warehouse, engine, "--format", "json", query) for engine in ENGINES}
    assert answers["spark"][0] == 0, answers["spark"][2]
    assert answers["duckdb"] == answers["spark"]
    assert answers["duckdb"][1].strip(), f"{heading}: no rows on the demo warehouse"
    assert auto(capsys, demo_warehouse, "--format", "json", query) == (
        0,
        answers["spark"][1],
        "lakehouse sql: note: answered by DuckDB\n",
    )


@pytest.mark.parametrize(
    "query, reason",
    [
        ("SELECT size(collect_set(category)) AS kinds FROM gold.change_history", "is Spark SQL's to answer"),
        (
            "SELECT details['modifier'] AS m FROM gold.change_history ORDER BY change_id LIMIT 3",
            "Spark SQL's",
        ),
        ("DESCRIBE gold.tag_timeline", "only queries go to DuckDB"),
    ],
    ids=["spark-only function", "map access", "describe"],
)
def test_what_duckdb_may_answer_otherwise_is_answered_by_spark_sql_by_default(
    capsys, demo_warehouse, query, reason
):
    forced = sql(capsys, demo_warehouse, "spark", "--format", "csv", query)
    assert forced[0] == 0 and forced[1].count("\n") > 1, forced[2]
    code, out, err = auto(capsys, demo_warehouse, "--format", "csv", query)
    assert (code, out) == (0, forced[1])
    assert err.startswith("lakehouse sql: note: answered by Spark SQL: ") and reason in err, err
    assert err.count("\n") == 1


def test_an_unnamed_count_is_named_as_spark_names_it_and_both_answers_print_aligned_tables(
    capsys, demo_warehouse
):
    query = (
        "SELECT count(*) FROM gold.tag_timeline WHERE is_current; "
        "SELECT category, entity_urn, event_time FROM gold.change_history "
        "WHERE category IN ('STRUCTURED_PROPERTY', 'TAG') ORDER BY event_time, change_id"
    )
    forced = sql(capsys, demo_warehouse, "spark", query)
    code, out, err = auto(capsys, demo_warehouse, query)
    assert (code, out) == (0, forced[1]) and err.count("answered by DuckDB") == 2
    count, rows = out.split("(1 row)\n")
    assert count.splitlines()[:3] == ["count(1)", "--------", "5"]
    table = rows.splitlines()[:-1]
    assert any("STRUCTURED_PROPERTY" in line for line in table) and any("." in line for line in table)
    bars = {tuple(i for i, c in enumerate(line) if c in "|+") for line in table}
    assert len(bars) == 1, table  # every line's column separators at the same places


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_every_format_prints_the_same_text(capsys, demo_warehouse, fmt):
    query = (
        "SELECT change_id, source, category, operation, modifier, event_time, details "
        "FROM gold.change_history ORDER BY event_time, change_id LIMIT 40"
    )
    spark_answer = sql(capsys, demo_warehouse, "spark", "--format", fmt, query)
    duckdb_answer = sql(capsys, demo_warehouse, "duckdb", "--format", fmt, query)
    assert spark_answer[0] == 0 and spark_answer[1].count("\n") > 20
    assert duckdb_answer == spark_answer


def test_intervals_and_timestamps_print_as_people_write_them_on_both_engines(capsys, demo_warehouse):
    query = (
        "SELECT valid_from, valid_to - valid_from AS open_for, INTERVAL 50 HOURS AS h "
        "FROM gold.tag_timeline WHERE valid_to IS NOT NULL ORDER BY valid_from, timeline_id LIMIT 2"
    )
    answers = {engine: sql(capsys, demo_warehouse, engine, "--format", "csv", query) for engine in ENGINES}
    assert answers["duckdb"] == answers["spark"]
    assert answers["spark"][1].splitlines() == [
        "valid_from,open_for,h",
        "2022-04-14 16:18:20.653,00:00:00,2 days 02:00:00",
        "2024-03-01 17:00:00,30 days 17:00:00,2 days 02:00:00",
    ]
    assert auto(capsys, demo_warehouse, "--format", "csv", query) == (
        0,
        answers["spark"][1],
        "lakehouse sql: note: answered by DuckDB\n",
    )
    months = sql(
        capsys, demo_warehouse, "spark", "--format", "csv", "SELECT INTERVAL '1-2' YEAR TO MONTH AS m"
    )
    assert months[1].splitlines() == ["m", "1 year 2 months"]


@pytest.mark.parametrize(
    "statement", ["SHOW TABLES IN gold LIKE 'current*|actors'", "SHOW VIEWS", "SHOW TABLES"]
)
def test_show_tables_lists_the_names_queries_use_alike_on_every_engine(capsys, demo_warehouse, statement):
    answers = {
        engine: sql(capsys, demo_warehouse, engine, "--format", "csv", statement) for engine in ENGINES
    }
    assert answers["duckdb"] == answers["spark"] and answers["spark"][0] == 0
    lines = answers["spark"][1].splitlines()
    assert lines[0] == "namespace,tableName,isTemporary" and "gold,current_tags,false" in lines
    assert not any("__delta" in line or line.startswith(",") for line in lines)
    if "LIKE" in statement:
        assert [line.split(",")[1] for line in lines[1:]] == [
            "actors", "current_domains", "current_glossary_terms", "current_owners", "current_tags",
        ]  # fmt: skip
    assert auto(capsys, demo_warehouse, "--format", "csv", statement)[1] == answers["spark"][1]


def test_information_schema_is_answered_by_duckdb_with_the_warehouse_tables(capsys, demo_warehouse):
    query = "SELECT table_name FROM information_schema.tables WHERE table_schema = 'gold' ORDER BY table_name"
    code, out, err = auto(capsys, demo_warehouse, "--format", "csv", query)
    assert (
        code == 0 and "governance_coverage_daily" in out.splitlines() and "current_tags" in out.splitlines()
    )
    assert "information_schema is DuckDB's" in err


def test_asof_prints_every_entitys_state_at_a_time_alike_on_both_engines(capsys, demo_warehouse):
    entity = "openmetadata:table:mysql_prod.shop.sales.orders"
    answers = {
        engine: run(capsys, "asof", "--warehouse", str(demo_warehouse), "--at", "2024-03-04T08:35:00",
                    "--entity", entity, "--format", "csv", "--engine", engine)
        for engine in ENGINES
    }  # fmt: skip
    assert answers["duckdb"] == answers["spark"] and answers["spark"][0] == 0
    rows = [line.split(",")[3:6] for line in answers["spark"][1].splitlines()[1:]]
    assert rows == [
        ["tag", "PII.Sensitive", ""],  # the email column's, then the table's own
        ["tag", "PersonalData.Personal", ""],
        ["owner", "aaron_johnson0", "user"],
        ["owner", "amanda_york8", "user"],
        ["status", "ACTIVE", ""],
        ["tag", "PII.Sensitive", ""],
    ]
    everything = run(
        capsys, "asof", "--warehouse", str(demo_warehouse), "--at", "2024-03-05", "--format", "csv"
    )
    assert everything[0] == 0 and everything[2] == "lakehouse asof: note: answered by DuckDB\n"
    every_row = list(csv.reader(io.StringIO(everything[1])))
    assert ["urn:li:dataset:(urn:li:dataPlatform:snowflake,example.table,PROD)", "", "owner"] in [
        row[1:4] for row in every_row
    ], every_row[:3]
    bad = run(capsys, "asof", "--warehouse", str(demo_warehouse), "--at", "yesterday")
    assert bad[0] == 2 and "not an ISO date" in bad[2]


def test_current_views_answer_alike(capsys, demo_warehouse):
    query = "SELECT * FROM gold.current_owners ORDER BY entity_urn, owner_urn, owner_type"
    spark_answer = sql(capsys, demo_warehouse, "spark", "--format", "csv", query)
    assert spark_answer[0] == 0 and spark_answer[1].count("\n") > 2
    assert sql(capsys, demo_warehouse, "duckdb", "--format", "csv", query) == spark_answer


def test_as_of_version_reads_the_same_versions_on_both_engines(capsys, demo_warehouse):
    query = "SELECT count(*) AS files FROM ops.ingestion_log"
    counts = {}
    for version in ("0", "1"):
        answers = {
            e: sql(capsys, demo_warehouse, e, "--format", "json", "--as-of-version", version, query)
            for e in ENGINES
        }
        assert answers["duckdb"] == answers["spark"] and answers["spark"][0] == 0
        counts[version] = answers["spark"][1]
    assert counts["0"] != counts["1"]  # each bronze task of the run logged its files in a commit

    # silver tables were written once (version 0): at version 1 both engines say so
    late = "SELECT count(*) AS n FROM silver.datahub_entity_changes"
    for engine in ENGINES:
        code, _, err = sql(capsys, demo_warehouse, engine, "--as-of-version", "1", late)
        assert code == 1 and "silver.datahub_entity_changes has no version 1" in err, (engine, err)


@pytest.mark.parametrize(
    "statement, code, reason",
    [
        ("DROP VIEW gold.tag_timeline", 2, "refused"),
        ("SELECT 1; INSERT INTO gold.tag_timeline SELECT * FROM gold.tag_timeline", 2, "refused"),
        ("CREATE TABLE gold.copy AS SELECT 1", 2, "refused"),
        ("SELECT * FROM read_parquet('{warehouse}/gold/tag_timeline/*.parquet')", 1, "disabled"),
        ("EXPLAIN COPY gold.tag_timeline TO '{warehouse}/gold/out.csv'", 1, "disabled"),
    ],
)
def test_duckdb_cannot_write_or_touch_files(capsys, demo_warehouse, statement, code, reason):
    before = snapshot(demo_warehouse)
    got, out, err = sql(capsys, demo_warehouse, "duckdb", statement.format(warehouse=demo_warehouse))
    assert (got, out) == (code, "") and reason in err and err.count("\n") == 1, err
    assert snapshot(demo_warehouse) == before


def test_interactive_prompt_and_file_input(capsys, demo_warehouse, tmp_path, monkeypatch):
    import io

    query = "SELECT count(*) AS n FROM gold.tag_timeline;"
    monkeypatch.setattr(sys, "stdin", io.StringIO(query + "\nquit\n"))
    code, prompted, _ = sql(capsys, demo_warehouse, "duckdb")
    script = tmp_path / "q.sql"
    script.write_text(query)
    assert code == 0 and prompted
    assert sql(capsys, demo_warehouse, "duckdb", "-f", str(script)) == (0, prompted, "")
    assert sql(capsys, demo_warehouse, "spark", "-f", str(script))[1] == prompted


def test_catalog_tables_are_refused_in_one_line(capsys, demo_warehouse, tmp_path):
    conf = tmp_path / "catalog.yaml"
    conf.write_text('storage:\n  engine: delta-spark\n  catalog: "main"\n')
    code, out, err = run(capsys, "sql", "--conf", str(conf), "--warehouse", str(demo_warehouse),
                         "--engine", "duckdb", "SELECT 1")  # fmt: skip
    assert code == 2 and out == "" and err.count("\n") == 1 and "catalog tables" in err


@pytest.mark.parametrize(
    "options",
    [
        [],
        ["--category", "OWNER"],
        ["--start", "2024-03-01T10:00", "--end", "2024-03-01T12:00"],
        ["--format", "table"],
    ],
)
def test_timeline_prints_the_same_history_on_both_engines_and_duckdb_answers_by_default(
    capsys, demo_warehouse, options
):
    answers = {
        engine: run(
            capsys, "timeline", DATASET, "--warehouse", str(demo_warehouse), "--engine", engine, *options
        )
        for engine in ENGINES
    }
    assert answers["spark"][0] == 0 and "urn:li:corpuser:" in answers["spark"][1]
    assert answers["duckdb"] == answers["spark"]
    by_default = run(capsys, "timeline", DATASET, "--warehouse", str(demo_warehouse), *options)
    assert by_default == (0, answers["spark"][1], "lakehouse timeline: note: answered by DuckDB\n")


def test_timeline_table_aligns_long_categories_and_millisecond_times(capsys, demo_warehouse):
    entity = "urn:li:dataset:abc"  # a structured property; times to the millisecond
    code, out, _ = run(capsys, "timeline", entity, "--warehouse", str(demo_warehouse), "--format", "table")
    lines = out.splitlines()[:-1]
    assert code == 0 and lines[0].startswith("time (UTC)")
    assert any("STRUCTURED_PROPERTY" in line for line in lines), out
    assert len({tuple(i for i, c in enumerate(line) if c in "|+") for line in lines}) == 1, out


NO_JVM = textwrap.dedent(
    """
    import sys
    from pyspark import SparkContext
    from pipelines.cli import main
    code = main(sys.argv[1:])
    print("jvm" if SparkContext._gateway is not None else "no-jvm", code)
    """
)


@pytest.mark.slow
@pytest.mark.parametrize("engine, expected", [("duckdb", "no-jvm 0"), ("spark", "jvm 0")])
def test_duckdb_starts_no_jvm(demo_warehouse, engine, expected):
    """In a fresh process; the spark variant shows the check sees a JVM when one starts."""
    for command in (
        ["sql", "--format", "csv", "SELECT count(*) AS n FROM gold.change_history"],
        ["timeline", DATASET],
    ):
        done = subprocess.run(
            [sys.executable, "-c", NO_JVM, command[0], "--warehouse", str(demo_warehouse),
             "--engine", engine, *command[1:]],
            capture_output=True, text=True, timeout=600, cwd=PROJECT_ROOT,
        )  # fmt: skip
        assert done.stdout.strip().splitlines()[-1] == expected, done.stderr[-2000:]
