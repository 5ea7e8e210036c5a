"""A quiet console for a local driver JVM: its start-up notices that a user cannot act on stay off it.

Spark's loggers read `log4j2.properties` beside this module (given to the driver with
`LOG4J2_OPTION`), which drops the loopback-hostname and native-hadoop warnings and, being a
configuration of our own, Spark's "default log4j profile" notices. The JVM itself prints one
line no option silences ("Using incubator modules", for the module Spark's launcher adds), and
Spark's dependency resolver prints a forty-line report each time it checks Delta's jars
(`spark.jars.packages`), so the driver's stderr is read through a pipe and every other line
passed on to ours. When the resolver downloads, one line says so instead.
"""

from __future__ import annotations

import re
import sys
import threading
from pathlib import Path
from subprocess import PIPE
from typing import IO

from pyspark import SparkConf, SparkContext
from pyspark.java_gateway import launch_gateway

LOG4J2 = Path(__file__).with_name("log4j2.properties")
LOG4J2_OPTION = f"-Dlog4j2.configurationFile={LOG4J2.as_uri()}"
JVM_NOTICES = re.compile(r"^WARNING: Using incubator modules: ")
# Ivy's resolution report, line by line; its failures ("unresolved dependency", "FAILED") pass on.
RESOLVER_REPORT = re.compile(
    r"^(:: (loading settings|resolving dependencies|resolution report|retrieving) ::"
    r"|Ivy Default Cache set to: |The jars for the packages stored in: |\S+#\S+ added as a dependency$"
    r"|\tconfs: |\tfound \S+ in |\tdownloading |\t\[SUCCESSFUL \]|\t\d+ artifacts copied"
    r"|\t[-|]|\t:: (evicted modules|modules in use):|\t\S+ (by \[\S+\]|from \S+) in \[default\]$)"
)
DOWNLOADING = "\tdownloading "


def java_options(own: str) -> str:
    """The driver options that quiet its logging, unless `own` configures log4j itself."""
    return "" if "log4j2.configurationFile" in own else LOG4J2_OPTION


def start_driver(conf: SparkConf) -> None:
    """Start the driver JVM for `conf` with its stderr passed on, JVM notices left out; the next
    SparkContext uses it. Does nothing when a driver JVM runs already."""
    if SparkContext._gateway is not None:
        return
    gateway = launch_gateway(conf, popen_kwargs={"stderr": PIPE})
    proc = gateway.proc
    threading.Thread(
        target=_pass_on, args=(proc.stderr, sys.stderr), name="driver-stderr", daemon=True
    ).start()
    SparkContext._ensure_initialized(gateway=gateway, conf=conf)


def _pass_on(source: IO[bytes], target: IO[str]) -> None:
    told = False
    for raw in iter(source.readline, b""):
        line = raw.decode("utf-8", errors="replace")
        if line.startswith(DOWNLOADING) and not told:
            target.write("spark      fetching Delta's jars from Maven Central (once: they are cached)\n")
            told = True
        if not (JVM_NOTICES.match(line) or RESOLVER_REPORT.match(line)):
            target.write(line)
            target.flush()
