"""A failed task's one-line reason names what went wrong, also when the JVM raised it."""

from __future__ import annotations

import pytest
from py4j.protocol import Py4JJavaError

from pipelines.orchestration.failure import one_line_reason


def test_a_python_error_gives_its_type_and_first_line():
    assert one_line_reason(ValueError("bad column\nmore detail")) == "ValueError: bad column"


def test_a_jvm_error_gives_the_java_exception_not_the_py4j_call(spark):
    with pytest.raises(Py4JJavaError) as raised:
        spark.sparkContext._jvm.java.lang.Class.forName("no.such.Class")
    assert "An error occurred while calling" in str(raised.value).splitlines()[0]
    reason = one_line_reason(raised.value)
    assert reason == "java.lang.ClassNotFoundException: no.such.Class"


def test_a_wrapped_jvm_error_names_its_root_cause(spark):
    jvm = spark.sparkContext._jvm
    root = jvm.java.lang.IllegalStateException("disk full")
    with pytest.raises(Py4JJavaError) as raised:
        jvm.java.util.concurrent.CompletableFuture.failedFuture(
            jvm.java.lang.RuntimeException("stage failed", root)
        ).get()
    reason = one_line_reason(raised.value)
    assert reason.startswith("java.util.concurrent.ExecutionException: ")
    assert reason.endswith("(caused by java.lang.IllegalStateException: disk full)")
