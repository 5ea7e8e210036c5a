"""A Spark Connect session that refuses what Databricks serverless or standard access mode refuses.

`profiles.connect.rules: serverless | standard` makes the `connect` profile's session one of
these, so that a run against any Spark Connect server (the tests' local one) fails where it would
fail on that compute. The refusals are made where Databricks makes them, on the way to the
server: a gRPC interceptor on the client's channel answers the request itself with the error
Databricks answers (same error class, SQL state and message shape), which the client raises as
it raises any server error:
- serverless: setting (or unsetting) a Spark property outside `SERVERLESS_SETTINGS`, by
  `spark.conf` or SQL `SET`: `[CONFIG_NOT_AVAILABLE]`; `persist`/`cache`, `unpersist`,
  `checkpoint`/`localCheckpoint`, `cacheTable`, SQL `CACHE TABLE`: `[NOT_SUPPORTED_WITH_SERVERLESS]`;
- both: no Spark context, RDDs or JVM: a Spark Connect client has none (it raises
  `[JVM_ATTRIBUTE_NOT_SUPPORTED]` or `[NOT_IMPLEMENTED]` itself), so standard access mode adds
  nothing on the wire.
Each refusal is also written to stderr (`REFUSED`), so a caller that catches the error cannot
hide it from a test reading the output.
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any

from pipelines.runtime.compute_rules import ComputeRules

REFUSED = "compute rules refused:"
SET_STATEMENT = re.compile(r"^\s*(?:RE)?SET\s+(?!-v\b)([^\s=;]+)", re.IGNORECASE)
CACHE_STATEMENT = re.compile(r"^\s*(?:UN)?CACHE\s+(?:LAZY\s+)?TABLE\b", re.IGNORECASE)
ANALYSIS_EXCEPTION = "org.apache.spark.sql.AnalysisException"
CONNECT_MODE = "SPARK_CONNECT_MODE_ENABLED"  # PySpark's own mark of a Spark Connect process


class LocalServerNotAllowed(ValueError):
    """Rules were asked of a session whose server this process would start itself."""


def connect(remote: str, rules: ComputeRules, new: bool = False):
    """A Spark Connect session with the server at `remote` (`sc://host:port`) under `rules`: this
    process's (`getOrCreate`), or with `new` one more beside it (`create`)."""
    from pyspark.sql.connect.client import DefaultChannelBuilder
    from pyspark.sql.connect.session import SparkSession

    if not remote.startswith("sc://"):
        raise LocalServerNotAllowed(
            f"profiles.connect.rules needs a running Spark Connect server (sc://host:port), not {remote!r}"
        )
    channel = DefaultChannelBuilder(remote)
    channel.add_interceptor(_interceptor(rules))
    # What PySpark's own `builder.remote()` does before it creates a Connect session: marks the
    # process as Spark Connect's, so that `pyspark.sql.functions` builds Connect columns
    os.environ[CONNECT_MODE] = "1"
    builder = SparkSession.builder.channelBuilder(channel)
    return builder.create() if new else builder.getOrCreate()


def refusal(request: Any, rules: ComputeRules) -> tuple[str, str, str, dict[str, str]] | None:
    """(error class, SQL state, message, message parameters) Databricks answers `request` (a
    Spark Connect request message) with under `rules`, or None when it is allowed."""
    kind = type(request).__name__
    if kind == "ConfigRequest":
        operation = request.operation
        which = operation.WhichOneof("op_type")
        keys = []
        if which == "set":
            keys = [pair.key for pair in operation.set.pairs]
        elif which == "unset":
            keys = list(operation.unset.keys)
        for key in keys:
            if not rules.may_set(key):
                return _config_not_available(key)
        return None
    if rules.caches:
        return None
    if kind == "AnalyzePlanRequest":
        which = request.WhichOneof("analyze")
        if which in ("persist", "unpersist"):
            return _not_supported(f"{which.upper()} TABLE")
        return None
    if kind == "ExecutePlanRequest":
        return _plan_refusal(request.plan, rules)
    return None


def _plan_refusal(plan: Any, rules: ComputeRules):
    if plan.HasField("command"):
        command = plan.command
        which = command.WhichOneof("command_type")
        if which == "checkpoint_command":
            return _not_supported("CHECKPOINT")
        if which == "sql_command":
            text = command.sql_command.sql or command.sql_command.input.sql.query
            return _statement_refusal(text, rules)
        return None
    root = plan.root
    if root.WhichOneof("rel_type") == "catalog":
        which = root.catalog.WhichOneof("cat_type")
        if which in ("cache_table", "uncache_table", "clear_cache"):
            return _not_supported(which.replace("_", " ").upper())
    if root.WhichOneof("rel_type") == "sql":
        return _statement_refusal(root.sql.query, rules)
    return None


def _statement_refusal(text: str, rules: ComputeRules):
    setting = SET_STATEMENT.match(text or "")
    if setting and "=" in text and not rules.may_set(setting.group(1)):
        return _config_not_available(setting.group(1))
    if CACHE_STATEMENT.match(text or ""):
        return _not_supported("CACHE TABLE")
    return None


def _config_not_available(key: str):
    return (
        "CONFIG_NOT_AVAILABLE",
        "42K0I",
        f"[CONFIG_NOT_AVAILABLE] Configuration {key} is not available. SQLSTATE: 42K0I",
        {"config": key},
    )


def _not_supported(operation: str):
    return (
        "NOT_SUPPORTED_WITH_SERVERLESS",
        "0A000",
        f"[NOT_SUPPORTED_WITH_SERVERLESS] {operation} is not supported on serverless compute. SQLSTATE: 0A000",
        {"operation": operation},
    )


def _interceptor(rules: ComputeRules):
    """A client interceptor (unary and streaming calls) raising Databricks' error for a refused request."""
    import grpc

    class Refusing(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):
        def _check(self, request: Any) -> None:
            refused = refusal(request, rules)
            if refused is not None:
                sys.stderr.write(f"{REFUSED} {rules.name}: {refused[2]}\n")
                raise _rpc_error(*refused)

        def intercept_unary_unary(self, continuation, client_call_details, request):
            self._check(request)
            return continuation(client_call_details, request)

        def intercept_unary_stream(self, continuation, client_call_details, request):
            self._check(request)
            return continuation(client_call_details, request)

    return Refusing()


def _rpc_error(error_class: str, sql_state: str, message: str, parameters: dict[str, str]):
    """The gRPC error a Spark Connect server answers an AnalysisException with: a status whose
    ErrorInfo names the exception class, error class and SQL state (what the client reads)."""
    import grpc
    from google.rpc import error_details_pb2, status_pb2

    info = error_details_pb2.ErrorInfo(
        reason=ANALYSIS_EXCEPTION,
        domain="org.apache.spark",
        metadata={
            "classes": json.dumps([ANALYSIS_EXCEPTION]),
            "errorClass": error_class,
            "sqlState": sql_state,
            "messageParameters": json.dumps(parameters),
        },
    )
    status = status_pb2.Status(code=grpc.StatusCode.INTERNAL.value[0], message=message)
    status.details.add().Pack(info)

    class Refused(grpc.RpcError, grpc.Call):
        def code(self):
            return grpc.StatusCode.INTERNAL

        def details(self):
            return message

        def trailing_metadata(self):
            return (("grpc-status-details-bin", status.SerializeToString()),)

        def initial_metadata(self):
            return ()

        def is_active(self):
            return False

        def time_remaining(self):
            return None

        def cancel(self):
            return False

        def add_callback(self, callback):
            return False

        def __str__(self):
            return message

    return Refused()
