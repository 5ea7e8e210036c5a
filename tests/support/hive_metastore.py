"""A Hive metastore service on loopback that several Spark processes share at once.

Spark's built-in Hive catalog keeps its metastore in an embedded Derby database, which one
process at a time may open; Unity Catalog serves every task of a Databricks job at once. The
stand-in is Hive's own metastore service (`org.apache.hadoop.hive.metastore.HiveMetaStore`,
from the jars PySpark ships) over a Derby database, which clients reach by Thrift
(`spark.hadoop.hive.metastore.uris`).
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyspark

from pipelines.runtime.java import ensure_java

STARTUP_SECONDS = 180
SERVICE = "org.apache.hadoop.hive.metastore.HiveMetaStore"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(0.5)
        return probe.connect_ex(("127.0.0.1", port)) == 0


@contextmanager
def hive_metastore(folder: Path) -> Iterator[str]:
    """A metastore service with its Derby database under `folder`; yields its Thrift URI and
    stops the service on exit."""
    folder.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    settings = {
        "hive.async.log.enabled": "false",  # its async logger needs a jar PySpark does not ship
        "javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={folder / 'db'};create=true",
        "datanucleus.schema.autoCreateAll": "true",
        "hive.metastore.schema.verification": "false",
        "hive.metastore.warehouse.dir": str(folder / "default-warehouse"),
        "derby.system.home": str(folder),
    }
    jars = Path(pyspark.__file__).parent / "jars"
    command = [
        str(Path(ensure_java()) / "bin" / "java"),
        "-Xmx256m",
        "-XX:TieredStopAtLevel=1",
        *(f"-D{key}={value}" for key, value in settings.items()),
        "-cp",
        f"{jars}{os.sep}*",
        SERVICE,
        "-p",
        str(port),
    ]
    log = (folder / "metastore.log").open("w")
    service = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=folder)
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while not _listening(port):
            if service.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"the Hive metastore did not start: {(folder / 'metastore.log').read_text()[-3000:]}"
                )
            time.sleep(0.5)
        yield f"thrift://127.0.0.1:{port}"
    finally:
        service.terminate()
        try:
            service.wait(timeout=30)
        except subprocess.TimeoutExpired:
            service.kill()
        log.close()
