"""Delta's jars: which ones a session asks for, and what happens where Maven Central cannot be reached."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys

import pyspark
import pytest

from pipelines.runtime.spark import delta_package, engine_for_new_session
from tests.support.engines import with_engine

# Spark's resolver with one repository that answers nothing and an empty cache: a machine
# without Maven Central, whatever this one has cached.
OFFLINE_IVY = """<ivysettings>
  <settings defaultResolver="nowhere"/>
  <caches defaultCacheDir="{cache}"/>
  <resolvers><ibiblio name="nowhere" m2compatible="true" root="http://127.0.0.1:9/maven2/"/></resolvers>
</ivysettings>
"""


def test_the_jars_asked_for_are_built_for_the_installed_spark_and_delta():
    spark_minor = ".".join(pyspark.__version__.split(".")[:2])
    assert delta_package() == (
        f"io.delta:delta-spark_{spark_minor}_2.13:{importlib.metadata.version('delta-spark')}"
    )


def test_auto_starts_delta_spark_only_for_a_cluster(config):
    assert engine_for_new_session(config) == "delta-rs"  # the local profile: the faster engine here
    assert engine_for_new_session(with_engine(config, "delta-spark")) == "delta-spark"
    raw = json.loads(json.dumps(config.raw))
    raw["profiles"]["local"]["master"] = "spark://cluster:7077"
    assert engine_for_new_session(type(config)(raw)) == "delta-spark"


def _offline_conf(tmp_path, engine: str, master: str) -> str:
    settings = tmp_path / "ivysettings.xml"
    settings.write_text(OFFLINE_IVY.format(cache=tmp_path / "ivy-cache"), encoding="utf-8")
    conf = tmp_path / "offline.yaml"
    conf.write_text(
        f"storage:\n  engine: {engine}\n"
        f"profiles:\n  local:\n    master: '{master}'\n    spark_conf:\n"
        f"      spark.jars.ivySettings: '{settings}'\n      spark.jars.ivy: '{tmp_path / 'ivy'}'\n",
        encoding="utf-8",
    )
    return str(conf)


def _run(tmp_path, conf: str) -> subprocess.CompletedProcess:
    landing = tmp_path / "landing" / "datahub_audit"
    landing.mkdir(parents=True)
    (landing / "a.jsonl").write_text('{"eventType": "SearchEvent", "timestamp": 1767268800000}\n')
    return subprocess.run(
        [sys.executable, "-m", "pipelines.cli", "run", "--conf", conf, "--layers", "bronze"]
        + ["--landing", str(tmp_path / "landing"), "--warehouse", str(tmp_path / "warehouse")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )


@pytest.mark.slow
def test_an_explicit_delta_spark_without_maven_fails_with_a_one_line_reason(tmp_path):
    done = _run(tmp_path, _offline_conf(tmp_path, "delta-spark", "local[1]"))
    assert done.returncode != 0
    reasons = [line for line in done.stderr.splitlines() if line.startswith("lakehouse")]
    assert len(reasons) == 1, done.stderr[-2000:]
    assert "storage.engine is delta-spark but Delta's jars" in reasons[0]
    assert delta_package() in reasons[0]


@pytest.mark.slow
def test_auto_on_a_cluster_without_maven_falls_back_to_delta_rs_saying_so_once(tmp_path):
    """A cluster master (`local-cluster`: executors in JVMs of their own) makes auto ask for
    delta-spark; without Maven it runs on delta-rs, and one line says why."""
    done = _run(tmp_path, _offline_conf(tmp_path, "auto", "local-cluster[1,1,1024]"))
    assert done.returncode == 0, done.stderr[-3000:]
    fallback = [line for line in done.stderr.splitlines() if line.startswith("engine ")]
    assert len(fallback) == 1 and "delta-rs, not delta-spark" in fallback[0], done.stderr[-2000:]
    # the run's own first line (Spark's resolver prints where its settings file is before it)
    run_line = next(line for line in done.stdout.splitlines() if line.startswith("run "))
    assert "engine=delta-rs" in run_line
