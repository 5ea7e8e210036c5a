"""What Databricks serverless and standard access mode refuse, as the rules session refuses it, and
how the code obeys the rules a session runs under (settings that only tune speed are left out,
frames are not cached where the compute refuses it)."""

from __future__ import annotations

import pytest
from pyspark.sql.connect.proto import base_pb2, catalog_pb2, commands_pb2, relations_pb2

from pipelines.core.config import ConfigError, load_config
from pipelines.runtime.caching import keep_cached, release_cached
from pipelines.runtime.compute_rules import (
    SERVERLESS,
    SERVERLESS_SETTINGS,
    STANDARD,
    UNRESTRICTED,
    follow,
    named_rules,
    rules_of,
)
from pipelines.runtime.rules_session import LocalServerNotAllowed, connect, refusal
from pipelines.runtime.spark import SMALL_INPUT_CONF, small_input_mode


def _set(*keys: str) -> base_pb2.ConfigRequest:
    pairs = [base_pb2.KeyValue(key=k, value="x") for k in keys]
    return base_pb2.ConfigRequest(
        operation=base_pb2.ConfigRequest.Operation(set=base_pb2.ConfigRequest.Set(pairs=pairs))
    )


def _sql(text: str) -> base_pb2.ExecutePlanRequest:
    command = commands_pb2.Command(sql_command=commands_pb2.SqlCommand(sql=text))
    return base_pb2.ExecutePlanRequest(plan=base_pb2.Plan(command=command))


def test_serverless_refuses_every_spark_property_but_its_few_as_databricks_does():
    error_class, sql_state, message, _ = refusal(_set("spark.sql.codegen.wholeStage"), SERVERLESS)
    assert (error_class, sql_state) == ("CONFIG_NOT_AVAILABLE", "42K0I")
    assert message == (
        "[CONFIG_NOT_AVAILABLE] Configuration spark.sql.codegen.wholeStage is not available. SQLSTATE: 42K0I"
    )
    assert refusal(_set(*sorted(SERVERLESS_SETTINGS)), SERVERLESS) is None
    unset = base_pb2.ConfigRequest.Operation(
        unset=base_pb2.ConfigRequest.Unset(keys=["spark.sql.adaptive.enabled"])
    )
    assert refusal(base_pb2.ConfigRequest(operation=unset), SERVERLESS)[0] == "CONFIG_NOT_AVAILABLE"
    assert refusal(_sql("SET spark.databricks.delta.commitInfo.userMetadata = {}"), SERVERLESS)[0] == (
        "CONFIG_NOT_AVAILABLE"
    )
    assert refusal(_sql("SET spark.sql.shuffle.partitions=4"), SERVERLESS) is None
    assert refusal(_sql("SELECT 'SET x=1'"), SERVERLESS) is None
    get = base_pb2.ConfigRequest.Operation(
        get=base_pb2.ConfigRequest.Get(keys=["spark.sql.adaptive.enabled"])
    )
    assert refusal(base_pb2.ConfigRequest(operation=get), SERVERLESS) is None  # reading is fine


def test_serverless_refuses_caching_and_checkpoints():
    persist = base_pb2.AnalyzePlanRequest(persist=base_pb2.AnalyzePlanRequest.Persist())
    assert refusal(persist, SERVERLESS)[:3] == (
        "NOT_SUPPORTED_WITH_SERVERLESS",
        "0A000",
        "[NOT_SUPPORTED_WITH_SERVERLESS] PERSIST TABLE is not supported on serverless compute. SQLSTATE: 0A000",
    )
    unpersist = base_pb2.AnalyzePlanRequest(unpersist=base_pb2.AnalyzePlanRequest.Unpersist())
    assert refusal(unpersist, SERVERLESS)[0] == "NOT_SUPPORTED_WITH_SERVERLESS"
    checkpoint = commands_pb2.Command(checkpoint_command=commands_pb2.CheckpointCommand())
    assert refusal(base_pb2.ExecutePlanRequest(plan=base_pb2.Plan(command=checkpoint)), SERVERLESS)[0] == (
        "NOT_SUPPORTED_WITH_SERVERLESS"
    )
    cache_table = relations_pb2.Relation(catalog=catalog_pb2.Catalog(cache_table=catalog_pb2.CacheTable()))
    assert refusal(base_pb2.ExecutePlanRequest(plan=base_pb2.Plan(root=cache_table)), SERVERLESS) is not None
    assert refusal(_sql("CACHE LAZY TABLE t"), SERVERLESS)[0] == "NOT_SUPPORTED_WITH_SERVERLESS"


def test_standard_access_mode_refuses_nothing_on_the_wire():
    """Its refusals (sparkContext, RDDs, the JVM) are the Spark Connect client's own."""
    persist = base_pb2.AnalyzePlanRequest(persist=base_pb2.AnalyzePlanRequest.Persist())
    for request in (_set("spark.sql.codegen.wholeStage"), persist, _sql("CACHE TABLE t")):
        assert refusal(request, STANDARD) is None


def test_rules_need_a_running_server():
    with pytest.raises(LocalServerNotAllowed, match="needs a running Spark Connect server"):
        connect("local[*]", SERVERLESS)


def test_a_profile_names_its_rules_and_a_wrong_name_is_refused(tmp_path):
    assert named_rules("serverless") is SERVERLESS and named_rules(None) is None
    conf = tmp_path / "c.yaml"
    conf.write_text("profile: connect\nprofiles:\n  connect:\n    rules: shared\n")
    with pytest.raises(ConfigError, match="profiles.connect.rules must be one of"):
        load_config(conf)


def test_a_databricks_serverless_runtime_runs_under_the_serverless_rules(monkeypatch):
    session = object.__new__(type("Session", (), {}))
    monkeypatch.setenv("DATABRICKS_RUNTIME_VERSION", "client.4.3")
    assert rules_of(session) is SERVERLESS
    monkeypatch.setenv("DATABRICKS_RUNTIME_VERSION", "17.3")
    assert rules_of(session) is UNRESTRICTED


@pytest.fixture
def serverless_session(spark):
    """The suite's session as if it ran under the serverless rules (recorded only: nothing refuses)."""
    follow(spark, SERVERLESS)
    yield spark
    follow(spark, UNRESTRICTED)


def test_frames_are_cached_only_where_the_compute_allows_it(spark, serverless_session):
    frame = spark.range(3)
    assert keep_cached(frame) is frame and not frame.is_cached
    release_cached(frame)  # nothing to release, nothing asked of the server
    follow(spark, UNRESTRICTED)
    cached = keep_cached(spark.range(3))
    assert cached.is_cached
    release_cached(cached)
    assert not cached.is_cached


def test_small_input_mode_sets_only_what_serverless_lets_a_client_set(spark, serverless_session):
    before = {key: spark.conf.get(key, None) for key in SMALL_INPUT_CONF}
    with small_input_mode(spark, rows=10, limit=100) as switched:
        assert switched
        assert spark.conf.get("spark.sql.shuffle.partitions") == "1"
        left = [k for k in SMALL_INPUT_CONF if k != "spark.sql.shuffle.partitions"]
        assert {k: spark.conf.get(k, None) for k in left} == {k: before[k] for k in left}
    assert {key: spark.conf.get(key, None) for key in SMALL_INPUT_CONF} == before
