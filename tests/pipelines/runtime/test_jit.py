"""A new JVM started for one small run compiles with C1 only; large runs (many new landing
records, a layer left behind) and long-lived JVMs keep HotSpot's default (`pipelines.runtime.tuning.jit`)."""

from __future__ import annotations

import copy
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from pipelines.core.config import PROJECT_ROOT, Config
from pipelines.executors.bronze import LANDING_BYTES_PER_RECORD
from pipelines.orchestration.runner import LAYERS, run_pipeline
from pipelines.orchestration.weighing import rows_in_sight
from pipelines.runtime.java import ensure_java
from pipelines.runtime.tuning import for_local_run
from pipelines.runtime.tuning.class_archive import JAVA_OPTIONS
from pipelines.runtime.tuning.jit import (
    PROFILE_KEY,
    QUICK_JIT,
    QUICK_JIT_OPTIONS,
    compiles_with_c1_only,
)
from pipelines.store import open_store
from tests.support.runs import lakehouse

SAMPLES = PROJECT_ROOT / "samples" / "landing"
A_SAMPLE = next(p for p in sorted((SAMPLES / "datahub_ece").rglob("*.json*")) if p.is_file())


@pytest.fixture(scope="module")
def store_of(spark):
    return lambda config: open_store(spark, config.warehouse, "delta-rs")


def java_options_for_one_run(config: Config, layers: tuple[str, ...]) -> str:
    """What `lakehouse run --layers ...` starts its JVM with (`pipelines.runtime.tuning.for_local_run`)."""
    return for_local_run(config, lambda: rows_in_sight(config, layers)).java_options


def _with_profile(config: Config, **settings) -> Config:
    raw = copy.deepcopy(config.raw)
    raw["profiles"][raw["profile"]].update(settings)
    return Config(raw)


@pytest.fixture(scope="module")
def landed(config, spark, tmp_path_factory) -> Config:
    """The samples landed in bronze: every source has its table, nothing is pending."""
    root = tmp_path_factory.mktemp("jit")
    shutil.copytree(SAMPLES, root / "landing")
    landed = config.with_overrides(landing=str(root / "landing"), warehouse=str(root / "warehouse"))
    run_pipeline(landed, ("bronze",), spark=spark)
    return landed


def _add_a_file(config: Config, name: str) -> Path:
    """A sample file copied under a new name: new to the ingestion log."""
    target = config.landing / "datahub_ece" / "new" / name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(A_SAMPLE, target)
    return target


def test_a_first_run_counts_every_landing_record_and_nothing_else(config, tmp_path):
    first = config.with_overrides(landing=str(SAMPLES), warehouse=str(tmp_path / "warehouse"))
    in_sight = rows_in_sight(first, ("bronze",))
    assert in_sight > 0 and rows_in_sight(first, LAYERS) == in_sight  # no silver or gold input yet
    assert java_options_for_one_run(first, LAYERS) == QUICK_JIT_OPTIONS  # the samples are a small run
    assert java_options_for_one_run(_with_profile(first, **{PROFILE_KEY: in_sight}), LAYERS) == ""


def test_an_increment_counts_its_new_landing_records(landed):
    assert rows_in_sight(landed, ("bronze",)) == 0
    added = _add_a_file(landed, "pending.json")
    try:
        assert rows_in_sight(landed, ("bronze",)) == added.stat().st_size // LANDING_BYTES_PER_RECORD
    finally:
        added.unlink()


def test_a_layer_left_behind_counts_the_rows_it_has_to_catch_up_on(landed, store_of):
    ece_rows = store_of(landed).count_added_since("bronze.datahub_entity_change_events", None)
    assert rows_in_sight(landed, ("bronze", "silver")) >= ece_rows > 0  # silver never ran
    behind = _with_profile(landed, **{PROFILE_KEY: ece_rows})
    assert java_options_for_one_run(behind, ("bronze",)) == QUICK_JIT_OPTIONS
    assert java_options_for_one_run(behind, LAYERS) == ""


def test_a_small_run_compiles_with_c1_only_unless_the_profile_says_otherwise(landed):
    added = _add_a_file(landed, "small.json")
    bronze = ("bronze",)
    try:
        pending = rows_in_sight(landed, bronze)
        assert 0 < pending < landed.profile[PROFILE_KEY]  # the default profile's limit
        assert java_options_for_one_run(landed, bronze) == QUICK_JIT_OPTIONS
        assert java_options_for_one_run(_with_profile(landed, **{PROFILE_KEY: pending}), bronze) == ""
        assert java_options_for_one_run(_with_profile(landed, **{PROFILE_KEY: 0}), bronze) == ""
        own = dict(landed.profile["spark_conf"]) | {JAVA_OPTIONS: "-XX:-TieredCompilation"}
        assert java_options_for_one_run(_with_profile(landed, spark_conf=own), bronze) == ""
        own[JAVA_OPTIONS] = "-XX:ReservedCodeCacheSize=512m"  # appended after it, ours would shrink it
        assert java_options_for_one_run(_with_profile(landed, spark_conf=own), bronze) == QUICK_JIT
        assert java_options_for_one_run(_with_profile(landed, use_existing_session=True), bronze) == ""
    finally:
        added.unlink()


@pytest.mark.slow  # starts JVMs in subprocesses
def test_c1_only_keeps_the_tiered_code_cache(config):
    """HotSpot alone would give a C1-only JVM a client VM's 48 MB code cache, which Spark fills."""
    java = Path(ensure_java()) / "bin" / "java"

    def code_cache_bytes(options: str) -> int:
        flags = subprocess.run(
            [str(java), *options.split(), "-XX:+PrintFlagsFinal", "-version"], capture_output=True, text=True
        ).stdout
        return int(re.search(r"\bReservedCodeCacheSize\s+=\s+(\d+)", flags).group(1))

    tiered = code_cache_bytes("")
    assert code_cache_bytes(QUICK_JIT) < tiered  # the trap
    assert code_cache_bytes(QUICK_JIT_OPTIONS) == tiered == 240 * 1024 * 1024


def test_the_suites_long_lived_jvm_keeps_the_default_compilers(spark):
    assert not compiles_with_c1_only(spark)


@pytest.mark.slow  # starts `lakehouse run` JVMs in subprocesses
@pytest.mark.parametrize(
    ("options", "c1"),
    [([], True), (["--every", "1s", "--max-runs", "1"], False)],  # --every: one JVM for many runs
    ids=["one run", "every"],
)
def test_lakehouse_run_starts_a_c1_jvm_for_one_small_run_and_says_so(landed, tmp_path, options, c1):
    warehouse = tmp_path / "warehouse"
    shutil.copytree(landed.warehouse, warehouse)
    added = _add_a_file(landed, "increment.json")
    try:
        done = lakehouse(
            "run",
            "--landing",
            str(landed.landing),
            "--warehouse",
            str(warehouse),
            "--layers",
            "bronze",
            *options,
        )
    finally:
        added.unlink()
    assert done.returncode == 0, done.stderr[-3000:]
    run_line = next(line for line in done.stdout.splitlines() if line.startswith("run "))
    assert ("jit=c1" in run_line.split()) is c1
    assert "task=bronze_datahub_entity_change_events" in done.stdout and "files=1" in done.stdout
