"""The JVM class archive: which file a session uses, and real JVMs recording, mapping and surviving a bad one."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipelines.core.config import PROJECT_ROOT
from pipelines.runtime.java import ensure_java
from pipelines.runtime.tuning import class_archive
from pipelines.runtime.tuning.class_archive import ENV, ClassArchive, archive_folder, for_session

# A new process, as `lakehouse run` is: get_spark with the default configuration, one job, exit.
SESSION_SCRIPT = """
from pipelines.core.config import load_config
from pipelines.runtime.spark import get_spark
print("rows", get_spark(load_config()).range(10).count())
"""


def test_the_setting_names_the_folder_and_the_environment_overrides_it(monkeypatch, tmp_path):
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert archive_folder("auto") == archive_folder(None) == tmp_path / "catalog-lakehouse" / "jvm"
    assert archive_folder(False) is None and archive_folder("off") is None  # YAML `off` is False
    assert archive_folder("~/jsa") == Path.home() / "jsa"
    monkeypatch.setenv(ENV, "off")
    assert archive_folder("auto") is None


def test_the_archive_name_follows_the_jdk_and_the_settings_that_shape_it(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV, str(tmp_path))
    java_home = ensure_java()
    conf = {"spark.driver.memory": "2304m", "spark.sql.shuffle.partitions": "4"}
    archive = for_session("auto", java_home, conf)
    assert archive is not None and archive.path.parent == tmp_path and archive.path.suffix == ".jsa"
    assert for_session("auto", java_home, dict(conf)) == archive  # the same inputs, the same file
    assert for_session("auto", java_home, conf | {"spark.sql.shuffle.partitions": "8"}) == archive
    assert for_session("auto", java_home, conf | {"spark.driver.memory": "4g"}) != archive  # heap layout
    assert for_session("auto", java_home, conf | {"spark.jars": "extra.jar"}) != archive  # classpath
    user_managed = conf | {"spark.driver.extraJavaOptions": "-XX:SharedArchiveFile=/x.jsa"}
    assert for_session("auto", java_home, user_managed) is None
    monkeypatch.setenv(ENV, str(tmp_path / "with blank"))  # Java options are split on blanks
    assert for_session("auto", java_home, conf) is None


def test_a_missing_archive_is_recorded_a_present_one_mapped_a_failed_jdk_left_alone(tmp_path):
    archive = ClassArchive(tmp_path / "jvm" / "spark-0.jsa")
    options, recording = archive.options()
    assert recording is not None and recording.parent == archive.path.parent
    assert options.startswith(f"-XX:ArchiveClassesAtExit={recording} ") and "-Xlog:cds=off" in options
    archive.path.write_bytes(b"archive")
    options, recording = archive.options()
    assert recording is None and options.startswith(f"-XX:SharedArchiveFile={archive.path} ")
    assert f"-XX:ErrorFile={archive.path.parent}/hs_err_pid%p.log" in options
    archive.discard()
    archive.failed_marker.touch()
    assert archive.options() == ("", None)


def test_recording_removes_what_killed_recorders_left_and_keeps_a_running_ones(tmp_path):
    folder = tmp_path / "jvm"
    folder.mkdir()
    left, running = folder / "spark-0.jsa.dead.tmp", folder / "spark-0.jsa.live.tmp"
    for leftover in (left, running):
        leftover.write_bytes(b"partial")
    old = time.time() - class_archive.STALE_SECONDS - 60
    os.utime(left, (old, old))
    ClassArchive(folder / "spark-0.jsa").options()
    assert not left.exists() and running.exists()


def _session_process(folder: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SESSION_SCRIPT],
        cwd=PROJECT_ROOT,
        env=os.environ | {ENV: str(folder)} | env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow
def test_a_new_process_records_the_archive_the_next_maps_and_a_damaged_one_is_dropped(tmp_path):
    folder = tmp_path / "jvm"
    first = _session_process(folder)
    assert first.returncode == 0 and "rows 10" in first.stdout, first.stderr[-2000:]
    archives = list(folder.glob("*.jsa"))
    assert len(archives) == 1 and archives[0].stat().st_size > 10_000_000, list(folder.iterdir())
    assert not list(folder.glob("*.tmp")), "the recording was renamed into place"

    # the next JVM loads Spark's classes from the archive ("top": the dynamic layer over the JDK's)
    log = tmp_path / "classes-%p.txt"
    second = _session_process(folder, JDK_JAVA_OPTIONS=f"-Xlog:class+load=info:file={log}")
    assert second.returncode == 0 and "rows 10" in second.stdout, second.stderr[-2000:]
    loaded = "\n".join(p.read_text() for p in tmp_path.glob("classes-*.txt"))
    assert "org.apache.spark.SparkContext source: shared objects file (top)" in loaded

    # HotSpot aborts on a damaged archive: the session starts without it and the file goes
    archive = archives[0]
    archive.chmod(0o644)
    archive.write_bytes(archive.read_bytes()[:1_000_000])
    third = _session_process(folder)
    assert third.returncode == 0 and "rows 10" in third.stdout, third.stderr[-2000:]
    assert not archive.exists()
