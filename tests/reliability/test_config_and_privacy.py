"""Configuration is strict and safe; secrets stay out of files; gold never shows an audit IP.

A config file is read with `yaml.safe_load` (no object construction), validated key by key
(errors name the key), may not point a source outside the landing folder, and the CLI turns
any of that into one line on stderr and a non-zero exit before Spark starts. The committed
configuration names environment variables for secrets, never values. `gold.failed_logins`
exposes sha256(salt || ip) only, with the salt from the environment.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

import pytest
import yaml
from pyspark.sql import functions as F

from pipelines.core.config import PROJECT_ROOT, ConfigError, load_config
from pipelines.core.graph import load_graph
from pipelines.orchestration.runner import run_pipeline
from pipelines.store import TableStore, open_store
from tests.support.runs import SAMPLES, SOURCES, lakehouse

SECRET_KEY = re.compile(r"salt|token|secret|password|passwd|credential|api_?key", re.IGNORECASE)
SECRET_REFERENCE = re.compile(r"\{\{secrets/[^/]+/[^/]+\}\}")
ENV_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
IPV4 = re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}\b")
AUDIT_IP = "203.0.113.66"  # the failed-login source in the bundled audit samples


def _conf(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "conf.yaml"
    path.write_text(text)
    return path


# --- loading --------------------------------------------------------------------------------


def test_yaml_object_tags_are_refused_not_executed(tmp_path):
    witness = tmp_path / "executed"
    path = _conf(tmp_path, f'landing: !!python/object/apply:os.system ["touch {witness}"]\n')
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(path)
    assert not witness.exists()


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("landingg: x\n", "landingg"),
        ("bronze:\n  max_file_mbb: 3\n", "bronze.max_file_mbb"),
        ("sources:\n  datahub_ece:\n    folderr: x\n", "sources.datahub_ece.folderr"),
        ("bronze:\n  max_file_mb: big\n", "bronze.max_file_mb"),
        ("quality:\n  fail_on_breach: 'yes'\n", "quality.fail_on_breach"),
        ("run:\n  lock_timeout_seconds: true\n", "run.lock_timeout_seconds"),
        ("storage: warehouse\n", "storage"),
        ("storage:\n  engine: duckdb\n", "storage.engine"),
        ("maintenance:\n  compact_min_files: -1\n", "maintenance.compact_min_files"),
        ("maintenance:\n  compact_target_file_mb: 0\n", "maintenance.compact_target_file_mb"),
        ("maintenance:\n  validation_document_days: 1.5\n", "maintenance.validation_document_days"),
        ("profiles:\n  local:\n    small_input_rows: lots\n", "profiles.local.small_input_rows"),
        ("profiles:\n  local:\n    quick_jit_below_records: -1\n", "profiles.local.quick_jit_below_records"),
        ("governance:\n  tag_classes:\n    Sensitive Data: ['x']\n", "governance.tag_classes"),
        ("governance:\n  tag_classes:\n    sensitive: '*pii*'\n", "governance.tag_classes.sensitive"),
        ("governance:\n  actor_kinds:\n    robot: ['x']\n", "governance.actor_kinds.robot"),
        ("governance:\n  actor_kinds:\n    service: [3]\n", "governance.actor_kinds.service"),
        ("governance:\n  reversal_window_hours: 0\n", "governance.reversal_window_hours"),
        ("feeds:\n  severity: error\n", "feeds.severity"),
        ("feeds:\n  volume_min_ratio: -0.5\n", "feeds.volume_min_ratio"),
        ("feeds:\n  datahub:\n    freshness_hours: 0\n", "feeds.datahub.freshness_hours"),
        ("feeds:\n  datahub:\n    families: {TAG: soon}\n", "feeds.datahub.families.TAG"),
        ("feeds:\n  datahubb:\n    freshness_hours: 4\n", "feeds.datahubb"),
        ("governance:\n  rules_file: ''\n", "governance.rules_file"),
    ],
)
def test_unknown_keys_and_wrong_types_name_the_key(tmp_path, text, key):
    with pytest.raises(ConfigError) as error:
        load_config(_conf(tmp_path, text))
    assert key in str(error.value)


def test_tag_classes_can_be_added_and_dropped_and_actor_kind_lists_replace_the_defaults(tmp_path):
    text = (
        "governance:\n  tag_classes:\n    restricted: ['urn:li:tag:restricted']\n    pii: []\n"
        "  actor_kinds:\n    service: ['etl_*']\n"
    )
    governance = load_config(_conf(tmp_path, text)).section("governance")
    assert set(governance["tag_classes"]) == {"sensitive", "pii", "restricted"}
    assert governance["actor_kinds"]["service"] == ["etl_*"] and governance["actor_kinds"]["system"]
    from gold.governance_rules import GovernanceRules

    assert GovernanceRules.from_section(governance).class_names == ("restricted", "sensitive")


@pytest.mark.parametrize("folder", ["/etc", "../outside", "datahub/../../outside", "~/x/../../.."])
def test_a_source_folder_outside_the_landing_folder_is_refused(tmp_path, folder):
    text = yaml.safe_dump({"sources": {"datahub_ece": {"folder": folder}}})
    with pytest.raises(ConfigError, match=r"sources\.datahub_ece\.folder"):
        load_config(_conf(tmp_path, text))


def test_a_source_folder_inside_the_landing_folder_is_accepted(tmp_path):
    text = yaml.safe_dump({"sources": {"datahub_ece": {"folder": "nested/datahub"}}})
    assert load_config(_conf(tmp_path, text)).sources["datahub_ece"]["folder"] == "nested/datahub"


@pytest.mark.parametrize(
    "text",
    [
        'landing: !!python/object/apply:os.system ["true"]\n',
        "bronze:\n  max_file_mbb: 3\n",
        "sources:\n  dataworks:\n    folder: ../../etc\n",
        "bronze: [unclosed\n",
    ],
)
def test_lakehouse_run_with_a_bad_config_exits_with_one_line(tmp_path, text):
    done = lakehouse(
        "run", "--conf", str(_conf(tmp_path, text)), "--warehouse", str(tmp_path / "w"), timeout=120
    )
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lakehouse: config error: "), done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "w").exists()


def test_lakehouse_run_with_a_missing_config_exits_with_one_line(tmp_path):
    done = lakehouse("run", "--conf", str(tmp_path / "nope.yaml"), timeout=120)
    assert done.returncode != 0 and done.stderr.strip().count("\n") == 0
    assert "nope.yaml" in done.stderr


# --- secrets --------------------------------------------------------------------------------


def _committed_config_files() -> list[Path]:
    found = sorted((PROJECT_ROOT / "conf").rglob("*.y*ml"))
    found += [p for p in [PROJECT_ROOT / "databricks.yml"] if p.exists()]
    found += (
        sorted((PROJECT_ROOT / "resources").rglob("*.y*ml")) if (PROJECT_ROOT / "resources").is_dir() else []
    )
    return found


def _secret_like(node, where: str):
    """(path, value) of every key that names a secret, anywhere in a YAML document."""
    if isinstance(node, dict):
        for key, value in node.items():
            path = f"{where}.{key}" if where else str(key)
            if SECRET_KEY.search(str(key)) and not isinstance(value, (dict, list)):
                yield path, value
            yield from _secret_like(value, path)
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from _secret_like(item, f"{where}[{index}]")


def test_committed_configuration_holds_no_secret_values():
    files = _committed_config_files()
    assert PROJECT_ROOT / "conf" / "lakehouse.yaml" in files
    offending = []
    checked = 0
    for path in files:
        for document in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            for key, value in _secret_like(document, ""):
                checked += 1
                is_env_name = str(key).endswith("_env") and isinstance(value, str) and ENV_NAME.match(value)
                # a Databricks secret reference names where the secret is, as an env name does
                is_reference = isinstance(value, str) and SECRET_REFERENCE.fullmatch(value)
                if value not in (None, "") and not is_env_name and not is_reference:
                    offending.append(f"{path.relative_to(PROJECT_ROOT)}: {key}")
    assert not offending, offending
    assert checked >= 1  # privacy.ip_salt_env at least: the check saw the key it guards


# --- privacy --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def audit_silver(config, spark, tmp_path_factory) -> tuple[Path, Path]:
    """(landing, warehouse) after bronze and silver over the bundled audit samples."""
    if not any(task.module == "gold.failed_logins" for task in load_graph().tasks):
        pytest.skip("gold.failed_logins is not in conf/jobs.yaml")
    root = tmp_path_factory.mktemp("privacy")
    landing = root / "landing"
    for source in SOURCES:
        (landing / source).mkdir(parents=True)
    shutil.copytree(SAMPLES / "datahub_audit", landing / "datahub_audit", dirs_exist_ok=True)
    warehouse = root / "silver_only"
    run_pipeline(
        config.with_overrides(landing=str(landing), warehouse=str(warehouse)),
        ("bronze", "silver"),
        spark=spark,
    )
    return landing, warehouse


def _gold_with_salt(config, spark, audit_silver, tmp_path, monkeypatch, env: dict[str, str], settings=None):
    landing, silver_only = audit_silver
    warehouse = tmp_path / "warehouse"
    shutil.copytree(silver_only, warehouse)
    monkeypatch.delenv("LAKEHOUSE_IP_SALT", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings = (settings or config).with_overrides(landing=str(landing), warehouse=str(warehouse))
    run_pipeline(settings, ("gold",), spark=spark)
    return open_store(spark, warehouse, "delta-rs")


def _hash(salt: str, ip: str) -> str:
    return hashlib.sha256((salt + ip).encode()).hexdigest()


def _strings(store: TableStore, table: str) -> list[str]:
    frame = store.read(table)
    return [r.j for r in frame.select(F.to_json(F.struct(*frame.columns)).alias("j")).collect()]


@pytest.mark.slow
def test_gold_exposes_only_a_salted_hash_of_the_ip(config, spark, audit_silver, tmp_path, monkeypatch):
    store = _gold_with_salt(
        config, spark, audit_silver, tmp_path, monkeypatch, {"LAKEHOUSE_IP_SALT": "pepper-1"}
    )
    assert store.read("silver.datahub_audit_events").where(F.col("source_ip") == AUDIT_IP).count() == 4
    rows = store.read("gold.failed_logins").collect()
    assert {r.source_ip_hash for r in rows} == {_hash("pepper-1", AUDIT_IP)}
    assert sum(r.failed_logins for r in rows) == 4  # 2 + 1 on 2024-03-02, 1 on 2024-03-03
    for table in [t for t in store.tables() if t.startswith("gold.")]:
        leaked = [text for text in _strings(store, table) if IPV4.search(text)]
        assert not leaked, f"{table} shows an IP: {leaked[:2]}"


@pytest.mark.slow
def test_the_hash_changes_with_the_salt(config, spark, audit_silver, tmp_path, monkeypatch):
    store = _gold_with_salt(
        config, spark, audit_silver, tmp_path, monkeypatch, {"LAKEHOUSE_IP_SALT": "pepper-2"}
    )
    hashes = {r.source_ip_hash for r in store.read("gold.failed_logins").collect()}
    assert _hash("pepper-2", AUDIT_IP) in hashes and _hash("pepper-1", AUDIT_IP) not in hashes


@pytest.mark.slow
def test_the_salt_variable_named_by_the_run_config_is_used(
    config, spark, audit_silver, tmp_path, monkeypatch
):
    own = config.with_overrides()
    own.raw["privacy"]["ip_salt_env"] = "TEAM_IP_SALT"
    store = _gold_with_salt(
        config, spark, audit_silver, tmp_path, monkeypatch, {"TEAM_IP_SALT": "pepper-3"}, own
    )
    hashes = {r.source_ip_hash for r in store.read("gold.failed_logins").collect()}
    assert _hash("pepper-3", AUDIT_IP) in hashes
