"""The suite evaluator: one Spark pass gives the counts GX itself computes; severities split rows."""

from __future__ import annotations

import json

import pytest
from pyspark.sql import functions as F

from pipelines import quality
from pipelines.quality import FAILED_DROP, FAILED_FAIL, FAILED_WARN, SuiteError, flag_rows, measure
from pipelines.quality.suites import OWN_TYPES, SUITES_DIR

EXPECTATIONS = [
    {
        "type": "expect_column_values_to_not_be_null",
        "kwargs": {"column": "id"},
        "meta": {"name": "id_present", "severity": "drop"},
    },
    {
        "type": "expect_column_values_to_be_in_set",
        "kwargs": {"column": "kind", "value_set": ["A", "B"]},
        "meta": {"name": "kind_known", "severity": "warn"},
    },
    {
        "type": "expect_column_values_to_match_regex",
        "kwargs": {"column": "urn", "regex": "^urn:li:"},
        "meta": {"name": "urn_shape", "severity": "drop"},
    },
    {
        "type": "expect_column_values_to_be_between",
        "kwargs": {"column": "n", "min_value": 0, "max_value": 10},
        "meta": {"name": "n_range", "severity": "fail"},
    },
    {
        "type": "expect_column_value_lengths_to_be_between",
        "kwargs": {"column": "kind", "min_value": 1, "max_value": 1},
        "meta": {"name": "kind_len", "severity": "warn"},
    },
    {
        "type": "expect_column_pair_values_to_be_in_set",
        "kwargs": {"column_A": "kind", "column_B": "op", "value_pairs_set": [["A", "ADD"], ["B", "REMOVE"]]},
        "meta": {"name": "pair_known", "severity": "warn"},
    },
    {
        "type": "expect_column_values_to_be_null",
        "kwargs": {"column": "legacy"},
        "meta": {"name": "legacy_unused", "severity": "warn"},
    },
    {
        "type": "expect_column_values_to_not_match_regex",
        "kwargs": {"column": "urn", "regex": "test"},
        "meta": {"name": "no_test_urns", "severity": "warn"},
    },
    {
        "type": "expect_column_values_to_be_in_set",
        "kwargs": {
            "column": "op",
            "value_set": ["ADD"],
            "row_condition": "kind = 'A'",
            "condition_parser": "spark",
        },
        "meta": {"name": "a_adds", "severity": "warn"},
    },
]
ROWS = [
    ("1", "A", "urn:li:x", 1, "ADD", None),
    (None, "B", "urn:li:y", 5, "REMOVE", None),
    ("3", "C", "bad", 50, "ADD", "old"),
    ("4", "AB", "urn:li:test", None, "REMOVE", None),
    ("5", None, None, -1, None, None),
    ("6", "A", "urn:li:z", 2, "REMOVE", None),
]
COLUMNS = "id string, kind string, urn string, n long, op string, legacy string"


@pytest.fixture
def suite(tmp_path):
    path = tmp_path / "silver.t.json"
    path.write_text(
        json.dumps({"name": "silver.t", "meta": {"table": "silver.t"}, "expectations": EXPECTATIONS})
    )
    return quality.parse_suite(path)


@pytest.fixture
def frame(spark):
    return spark.createDataFrame(ROWS, COLUMNS)


def test_rows_carry_the_names_of_the_rules_they_break(suite, frame):
    flagged = {r.id: r for r in flag_rows(frame, suite).collect()}
    assert flagged[None][FAILED_DROP] == ["id_present"]
    assert flagged["3"][FAILED_DROP] == ["urn_shape"]
    assert flagged["3"][FAILED_FAIL] == ["n_range"]
    assert flagged["3"][FAILED_WARN] == ["kind_known", "pair_known", "legacy_unused"]
    assert flagged["4"][FAILED_WARN] == ["kind_known", "kind_len", "pair_known", "no_test_urns"]
    assert flagged["6"][FAILED_WARN] == ["pair_known", "a_adds"]
    assert (
        flagged["1"][FAILED_DROP] == []
        and flagged["1"][FAILED_WARN] == []
        and flagged["1"][FAILED_FAIL] == []
    )


def test_counts_match_great_expectations_own_validation(suite, frame):
    import great_expectations as gx

    total, outcomes = measure(flag_rows(frame, suite), suite)
    ours = {o.expectation.name: o.unexpected_count for o in outcomes}

    context = gx.get_context(mode="ephemeral")
    batch = (
        context.data_sources.add_pandas("fixture")
        .add_dataframe_asset("rows")
        .add_batch_definition_whole_dataframe("all")
        .get_batch(batch_parameters={"dataframe": frame.toPandas()})
    )
    comparable = [e for e in EXPECTATIONS if "row_condition" not in e["kwargs"]]
    result = batch.validate(gx.ExpectationSuite(name="parity", expectations=comparable))
    theirs = {r.expectation_config.meta["name"]: r.result["unexpected_count"] for r in result.results}
    assert total == len(ROWS)
    assert theirs == {name: ours[name] for name in theirs}
    assert ours["a_adds"] == 1


def test_failing_rule_reports_examples_and_mostly_tolerates(suite, frame):
    _total, outcomes = measure(flag_rows(frame, suite), suite)
    by_name = {o.expectation.name: o for o in outcomes}
    assert by_name["n_range"].unexpected_count == 2 and not by_name["n_range"].success
    assert set(by_name["n_range"].examples) == {"-1", "50"}
    assert quality.breaches(outcomes) == [by_name["n_range"]]
    lenient = quality.Expectation(
        "n",
        "expect_column_values_to_be_between",
        {"column": "n", "min_value": 0, "max_value": 10, "mostly": 0.6},
        "fail",
    )
    assert quality.Outcome(lenient, 6, 2, ()).success


def test_counts_from_precomputed_rule_results_equal_counts_from_the_rows(suite, frame):
    direct = measure(flag_rows(frame, suite), suite)
    narrow = frame.select(*quality.rule_results(suite))  # none of the rules' input columns left

    precomputed = measure(narrow, suite, precomputed=True)

    assert precomputed == direct
    assert any(o.unexpected_count for o in direct[1])


def test_a_batch_measure_equals_the_rules_then_the_uniqueness_of_the_accepted_rows(frame, tmp_path):
    unique_kind = {
        "type": "expect_column_values_to_be_unique",
        "kwargs": {"column": "kind"},
        "meta": {"name": "kind_unique", "severity": "warn"},
    }
    path = tmp_path / "silver.b.json"
    path.write_text(json.dumps({"name": "silver.b", "expectations": [*EXPECTATIONS, unique_kind]}))
    suite = quality.parse_suite(path)
    flagged = flag_rows(frame, suite).withColumn("_bad", F.size(FAILED_DROP) > 0)
    narrow = flagged.select("_bad", "kind", "op", *quality.rule_results(suite))

    batch = quality.measure_batch(narrow, suite, "_bad", distinct_of="op")

    rows, outcomes = measure(narrow, suite, precomputed=True)
    rejected = narrow.where("_bad").count()
    accepted, uniqueness = quality.measure_uniqueness(narrow.where(~F.col("_bad")), suite)
    distinct = narrow.where(~F.col("_bad")).select("op").distinct().dropna().count()
    assert (batch.rows, batch.outcomes, batch.rejected) == (rows, outcomes, rejected)
    assert (batch.accepted, batch.accepted_uniqueness, batch.accepted_distinct) == (
        accepted,
        uniqueness,
        distinct,
    )
    assert (rejected, accepted, distinct, uniqueness[0].unexpected_count) == (2, 4, 2, 1)
    unmeasured = quality.measure_batch(narrow, suite, "_bad")
    assert (unmeasured.rows, unmeasured.outcomes, unmeasured.rejected) == (rows, outcomes, rejected)
    assert (unmeasured.accepted_uniqueness, unmeasured.accepted_distinct) == (None, None)


def test_uniqueness_is_measured_on_written_rows(spark, tmp_path):
    path = tmp_path / "silver.u.json"
    path.write_text(
        json.dumps(
            {
                "name": "silver.u",
                "expectations": [
                    {
                        "type": "expect_column_values_to_be_unique",
                        "kwargs": {"column": "id"},
                        "meta": {"name": "id_unique", "severity": "warn"},
                    }
                ],
            }
        )
    )
    rows, (outcome,) = quality.measure_uniqueness(
        spark.createDataFrame([("a",), ("a",), ("b",)], "id string"), quality.parse_suite(path)
    )
    assert (rows, outcome.unexpected_count, outcome.success) == (3, 1, False)


@pytest.mark.parametrize(
    "expectation, message",
    [
        (
            {"type": "expect_table_row_count_to_equal", "kwargs": {"value": 1}, "meta": {"severity": "warn"}},
            "unsupported",
        ),
        (
            {
                "type": "expect_column_values_to_not_be_null",
                "kwargs": {"column": "a"},
                "meta": {"severity": "loud"},
            },
            "severity",
        ),
        (
            {
                "type": "expect_column_values_to_be_unique",
                "kwargs": {"column": "a"},
                "meta": {"severity": "drop"},
            },
            "only warn",
        ),
    ],
)
def test_bad_suites_are_refused_with_the_file_named(tmp_path, expectation, message):
    path = tmp_path / "silver.bad.json"
    path.write_text(json.dumps({"name": "silver.bad", "expectations": [expectation]}))
    with pytest.raises(SuiteError, match=message) as error:
        quality.parse_suite(path)
    assert "silver.bad.json" in str(error.value)


def test_every_bundled_suite_loads_and_is_a_valid_gx_suite_but_for_our_own_rule_types():
    import great_expectations as gx

    paths = sorted(SUITES_DIR.glob("*.json"))
    assert paths, "expectations/ holds the suites"
    for path in paths:
        suite = quality.parse_suite(path)
        assert suite.table == path.stem
        theirs = [e for e in json.loads(path.read_text())["expectations"] if e["type"] not in OWN_TYPES]
        # GX logs and leaves out an expectation it cannot build: all of its types must be there
        built = gx.ExpectationSuite(name=suite.table, expectations=theirs)
        assert len(built.expectations) == len(theirs), path.name


def test_gx_result_document_is_built_from_our_counts(suite, frame):
    _total, outcomes = measure(flag_rows(frame, suite), suite)
    result = quality.to_gx_result("silver.t", outcomes, "run-1").to_json_dict()
    assert result["success"] is False
    counts = {
        r["expectation_config"]["meta"]["name"]: r["result"]["unexpected_count"] for r in result["results"]
    }
    assert counts["urn_shape"] == 1 and counts["id_present"] == 1


def test_a_failing_rule_names_its_most_frequent_failing_values_with_their_rows_and_row_keys(spark, tmp_path):
    path = tmp_path / "silver.k.json"
    rules = [
        {
            "type": "expect_column_values_to_be_in_set",
            "kwargs": {"column": "kind", "value_set": ["A"]},
            "meta": {"name": "kind_known", "severity": "warn"},
        },
        {
            "type": "expect_column_values_to_not_be_null",
            "kwargs": {"column": "id"},
            "meta": {"name": "id_present", "severity": "drop"},
        },
    ]
    path.write_text(json.dumps({"name": "silver.k", "meta": {"row_key": "id"}, "expectations": rules}))
    suite = quality.parse_suite(path)
    frame = spark.createDataFrame(
        [("1", "A"), ("2", "B"), ("3", "B"), ("4", "C"), ("5", None), ("6", "B")], "id string, kind string"
    )

    _rows, (kind, present) = measure(frame, suite)

    assert kind.failing_values == (
        quality.FailingValue("B", 3, ("2", "6")),
        quality.FailingValue("C", 1, ("4",)),
    )
    assert present.failing_values == ()  # it failed on no row
    document = quality.to_gx_result("silver.k", [kind, present], "run-1").to_json_dict()
    assert document["results"][0]["result"]["partial_unexpected_counts"] == [
        {"value": "B", "count": 3},
        {"value": "C", "count": 1},
    ]
