"""A new local driver JVM runs the profile's garbage collector, unless the user names one
(`pipelines.runtime.tuning.collector`): HotSpot refuses to start with two."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from pipelines.core.config import GARBAGE_COLLECTORS, PROJECT_ROOT, ConfigError, load_config
from pipelines.runtime.tuning.collector import COLLECTORS, JAVA_OPTION_VARIABLES, java_options

pytestmark = pytest.mark.slow  # a new JVM per test

# Starts the profile's local session in a new process and prints the JVM's collectors by the
# names HotSpot's management beans give them
COLLECTORS_OF_A_NEW_JVM = """
import json, sys
from pipelines.core.config import load_config
from pipelines.runtime.spark import get_spark

spark = get_spark(load_config(sys.argv[1]))
beans = spark.sparkContext._jvm.java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()
print(json.dumps([bean.getName() for bean in beans]))
spark.stop()
"""
DELTA_RS = {"storage": {"engine": "delta-rs"}}  # a session without Delta's jars starts sooner
PARALLEL = {"PS Scavenge", "PS MarkSweep"}
SERIAL = {"Copy", "MarkSweepCompact"}


def collectors_of_a_new_jvm(tmp_path, profile: dict | None = None, **environment: str) -> set[str]:
    """The collectors of a new local JVM of the profile's (`profile` merged over the local
    profile), with Java's option variables as in `environment` only."""
    path = tmp_path / "conf.yaml"
    path.write_text(json.dumps({**DELTA_RS, "profiles": {"local": profile or {}}}), encoding="utf-8")
    arguments = [str(path)]  # JSON is YAML
    env = {k: v for k, v in os.environ.items() if k not in JAVA_OPTION_VARIABLES}
    done = subprocess.run(
        [sys.executable, "-c", COLLECTORS_OF_A_NEW_JVM, *arguments],
        cwd=PROJECT_ROOT,
        env={**env, "LAKEHOUSE_CLASS_ARCHIVE": "off", **environment},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_a_new_local_jvm_runs_the_parallel_collector_by_default(tmp_path):
    assert load_config().profile["garbage_collector"] == "parallel"
    assert collectors_of_a_new_jvm(tmp_path) == PARALLEL


def test_a_collector_in_javas_option_variables_wins_and_the_jvm_starts(tmp_path):
    assert collectors_of_a_new_jvm(tmp_path, JAVA_TOOL_OPTIONS="-XX:+UseSerialGC") == SERIAL


def test_the_profile_chooses_another_collector_and_the_users_own_option_wins(tmp_path, monkeypatch):
    assert collectors_of_a_new_jvm(tmp_path, {"garbage_collector": "serial"}) == SERIAL
    for variable in JAVA_OPTION_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    assert java_options("parallel", "-Dx=1 -XX:+UseZGC") == ""
    assert java_options("g1", "") == "-XX:+UseG1GC"
    assert java_options("default", "") == "" and java_options(None, "") == ""
    monkeypatch.setenv("_JAVA_OPTIONS", "-XX:+UseShenandoahGC")
    assert java_options("parallel", "") == ""


def test_an_unknown_collector_is_refused_naming_the_choices(tmp_path):
    assert sorted(GARBAGE_COLLECTORS) == sorted(COLLECTORS)
    path = tmp_path / "conf.yaml"
    path.write_text("profiles:\n  local:\n    garbage_collector: zgc\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"garbage_collector must be one of .*'parallel'.*got 'zgc'"):
        load_config(path)
