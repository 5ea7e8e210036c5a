"""A real Kafka broker on loopback for the tests: Apache Kafka's own jars from Maven Central,
one KRaft node (broker and controller, no ZooKeeper), in a JVM of its own.

The jars are fetched once with `mvn dependency:copy-dependencies` on a small pom into
`~/.cache/catalog-lakehouse/kafka-<version>/` (outside the repository) and reused. When they
cannot be fetched or the broker does not start, `start_broker` raises `BrokerUnavailable` with
a one-line reason, which the fixture turns into a skip.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

from tests.support.one_at_a_time import one_at_a_time

KAFKA_VERSION = "4.1.1"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "catalog-lakehouse"
POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.tests</groupId><artifactId>kafka-broker</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId>
      <version>{version}</version></dependency>
  </dependencies>
</project>
"""


class BrokerUnavailable(RuntimeError):
    """No broker for the tests; the message is the one-line reason."""


def broker_jars(version: str = KAFKA_VERSION) -> Path:
    """The folder holding the broker's jars, fetched on first use."""
    folder = CACHE / f"kafka-{version}"
    with one_at_a_time(f"kafka-{version}-jars"):  # test workers side by side fetch them once
        if not (folder / ".complete").exists():
            _fetch(version, folder)
    return folder


def _fetch(version: str, folder: Path) -> None:
    if shutil.which("mvn") is None:
        raise BrokerUnavailable("no `mvn` to fetch Kafka's jars from Maven Central")
    with tempfile.TemporaryDirectory() as work:
        (Path(work) / "pom.xml").write_text(POM.format(version=version))
        fetched = Path(work) / "jars"
        command = ["mvn", "-q", "-B", "dependency:copy-dependencies", f"-DoutputDirectory={fetched}"]
        done = subprocess.run(command, cwd=work, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            last = (done.stdout + done.stderr).strip().splitlines()[-1:] or ["no output"]
            raise BrokerUnavailable(f"Kafka {version}'s jars could not be fetched: {last[0][:200]}")
        folder.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(fetched, folder)
    (folder / ".complete").write_text(version)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _java() -> str:
    from pipelines.runtime.java import find_java_home

    home = find_java_home()
    if home is None:
        raise BrokerUnavailable("no JDK 17+ to run the Kafka broker")
    return str(Path(home) / "bin" / "java")


class KafkaBroker:
    """One KRaft node on free loopback ports; `bootstrap` is its address. `stop()` ends it."""

    def __init__(self, jars: Path, work: Path) -> None:
        self.work = work
        broker_port, controller_port = _free_port(), _free_port()
        self.bootstrap = f"127.0.0.1:{broker_port}"
        properties = work / "server.properties"
        properties.write_text(
            "\n".join(
                [
                    "process.roles=broker,controller",
                    "node.id=1",
                    f"controller.quorum.voters=1@127.0.0.1:{controller_port}",
                    f"listeners=PLAINTEXT://127.0.0.1:{broker_port},CONTROLLER://127.0.0.1:{controller_port}",
                    f"advertised.listeners=PLAINTEXT://127.0.0.1:{broker_port}",
                    "controller.listener.names=CONTROLLER",
                    "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                    f"log.dirs={work / 'data'}",
                    "num.partitions=1",
                    "offsets.topic.replication.factor=1",
                    "offsets.topic.num.partitions=3",
                    "transaction.state.log.replication.factor=1",
                    "transaction.state.log.min.isr=1",
                    "group.initial.rebalance.delay.ms=0",
                ]
            )
            + "\n"
        )
        classpath = f"{jars}/*"
        java = _java()
        formatted = subprocess.run(
            [java, "-cp", classpath, "kafka.tools.StorageTool", "format", "-t", uuid.uuid4().hex[:22],
             "-c", str(properties)],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        if formatted.returncode != 0:
            raise BrokerUnavailable(
                f"Kafka's storage could not be formatted: {formatted.stderr.strip()[-200:]}"
            )
        self.log = open(work / "broker.log", "w")
        self.process = subprocess.Popen(
            [java, "-Xmx512m", "-cp", classpath, "kafka.Kafka", str(properties)],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )

    def wait_ready(self, timeout: float = 90.0) -> None:
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise BrokerUnavailable(f"the Kafka broker exited with {self.process.returncode} at start")
            try:
                admin.list_topics(timeout=2)
                return
            except Exception:  # not listening yet
                time.sleep(0.5)
        raise BrokerUnavailable(f"the Kafka broker did not answer within {timeout:.0f}s")

    def create_topic(self, name: str, partitions: int) -> None:
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        for future in admin.create_topics(
            [NewTopic(name, num_partitions=partitions, replication_factor=1)]
        ).values():
            future.result(30)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self.log.close()


def start_broker(work: Path) -> KafkaBroker:
    """A started, answering broker whose files live under `work`."""
    broker = KafkaBroker(broker_jars(), work)
    try:
        broker.wait_ready()
    except BrokerUnavailable:
        broker.stop()
        raise
    return broker
