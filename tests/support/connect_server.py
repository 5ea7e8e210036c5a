"""A real Spark Connect server on loopback for the tests, carrying Delta's jars, in a JVM of its own.

PySpark ships the server (`org.apache.spark.sql.connect.service.SparkConnectServer`, in its
`spark-connect` jar); `spark-submit` from the PySpark package starts it with Delta's jars from
Spark's Ivy cache (fetched from Maven Central on a machine's first run), Delta's SQL extension
and catalog, and otherwise Spark's defaults, as a Databricks server has none of the product's
settings: a session sets those it may (serverless: hardly any). The pipeline then talks to
it as a Databricks serverless job or a standard access mode cluster talks to theirs: through
a Spark Connect client only (`profile: connect`). When the server cannot start (no Maven
Central, no Java), `start_server` raises `ServerUnavailable` with a one-line reason, which the
fixture turns into a skip.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pyspark

from pipelines.runtime.java import ensure_java
from pipelines.runtime.spark import DELTA_SQL_CONF, delta_package
from pipelines.runtime.tuning.collector import COLLECTORS

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
READY = "Spark Connect server started"
START_SECONDS = 300  # Ivy may fetch Delta's jars first
SERVER_CONF = {  # one small machine: a few partitions, a modest heap, no UI
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.driver.memory": "1536m",
    "spark.databricks.delta.snapshotPartitions": "2",
    "spark.connect.grpc.binding.address": "127.0.0.1",
}


class ServerUnavailable(RuntimeError):
    """No Spark Connect server for the tests; the message is the one-line reason."""


@dataclass
class ConnectServer:
    process: subprocess.Popen
    port: int
    log: Path

    @property
    def remote(self) -> str:
        return f"sc://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(folder: Path) -> ConnectServer:
    """A server listening on a free loopback port, its log and Spark warehouse under `folder`."""
    spark_home = Path(pyspark.__file__).parent
    port = _free_port()
    settings = {
        **SERVER_CONF,
        **DELTA_SQL_CONF,
        "spark.connect.grpc.binding.port": str(port),
        "spark.sql.warehouse.dir": str(folder / "spark-warehouse"),
        # the collector the local profile's driver runs (`pipelines.runtime.tuning.collector`)
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={folder / 'derby'} {COLLECTORS['parallel']}",
    }
    command = [str(spark_home / "bin" / "spark-submit"), "--class", SERVER_CLASS, "--master", "local[2]"]
    command += ["--packages", delta_package()]
    for key, value in settings.items():
        command += ["--conf", f"{key}={value}"]
    command.append("spark-internal")
    environment = {**os.environ, "SPARK_HOME": str(spark_home), "JAVA_HOME": ensure_java()}
    log = folder / "connect-server.log"
    with log.open("w") as output:
        process = subprocess.Popen(
            command, stdout=output, stderr=subprocess.STDOUT, env=environment, cwd=folder
        )
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ServerUnavailable(f"the Spark Connect server exited at start: {_last_error(log)}")
        if READY in log.read_text(errors="replace"):
            return ConnectServer(process, port, log)
        time.sleep(0.5)
    process.kill()
    raise ServerUnavailable(f"the Spark Connect server did not start within {START_SECONDS} s")


def _last_error(log: Path) -> str:
    lines = [
        line
        for line in log.read_text(errors="replace").splitlines()
        if "ERROR" in line or "Exception" in line
    ]
    return (lines[-1] if lines else "no error logged")[:300]
