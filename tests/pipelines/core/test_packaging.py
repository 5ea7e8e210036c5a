"""The wheel carries the default configuration, the event catalogs and the expectation suites,
and the code reads them as package data (importlib.resources) wherever it is installed."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from pipelines.core.config import PROJECT_ROOT
from tests.support.packaging import build_wheel

# what `pip wheel .` needs of the repository: the build settings and the mapped folders
CATALOGS = sorted(p.name for p in (PROJECT_ROOT / "conf" / "catalogs").glob("*.yaml"))
SUITES = sorted(p.name for p in (PROJECT_ROOT / "expectations").glob("*.json"))

# Run in a child: where each default is read from, and a --conf overlay merged over them.
PROBE = """
import json, sys
from pipelines import quality
from pipelines.quality.suites import SUITES_DIR
from pipelines.core.config import DEFAULT_CONF, load_config
from pipelines.core.graph import DEFAULT_GRAPH, load_graph
from silver import datahub_catalog, dataworks_catalog

config = load_config(sys.argv[1]) if len(sys.argv) > 1 else load_config()
suites = quality.suites_dir(config.section("quality")["suites_dir"])
print(json.dumps({
    "conf": str(DEFAULT_CONF),
    "graph": str(DEFAULT_GRAPH),
    "suites": str(suites),
    "catalogs": [str(datahub_catalog.CATALOG_PATH), str(dataworks_catalog.CATALOG_PATH)],
    "tasks": len(load_graph().tasks),
    "events": len(dataworks_catalog.load_catalog().events),
    "ece_categories": len(datahub_catalog.load_catalog().categories()),
    "suite": str(quality.load_suite("silver.datahub_entity_changes", suites).path),
    "fail_on_breach": config.section("quality")["fail_on_breach"],
    "catalog": config.section("storage")["catalog"],
    "profile": config.raw["profile"],
}))
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """`pip wheel --no-deps` of a copy of the build inputs."""
    return build_wheel(tmp_path_factory.mktemp("wheel-source"), tmp_path_factory.mktemp("dist"))


def probe(cwd: Path, pythonpath: Path | None = None, *args: str) -> dict:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd)}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], cwd=cwd, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_wheel_carries_the_defaults_as_package_data(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        expected = {
            "pipelines/conf/lakehouse.yaml": PROJECT_ROOT / "conf" / "lakehouse.yaml",
            "pipelines/conf/jobs.yaml": PROJECT_ROOT / "conf" / "jobs.yaml",
            **{f"pipelines/conf/catalogs/{n}": PROJECT_ROOT / "conf" / "catalogs" / n for n in CATALOGS},
            **{f"pipelines/expectations/{n}": PROJECT_ROOT / "expectations" / n for n in SUITES},
        }
        assert CATALOGS == ["datahub_ece.yaml", "dataworks_events.yaml"]
        assert len(SUITES) > 10
        for member, source in expected.items():
            assert member in names, f"{member} is not in the wheel"
            assert archive.read(member) == source.read_bytes(), f"{member} differs from {source.name}"
    # every module of the listed packages is in the wheel (pyproject.toml lists the packages)
    modules = {
        str(p.relative_to(PROJECT_ROOT))
        for top in ("pipelines", "bronze", "silver", "gold")
        for p in (PROJECT_ROOT / top).rglob("*.py")
        if "__pycache__" not in p.parts
    }
    assert modules - names == set()


def test_an_unpacked_wheel_reads_its_own_defaults_from_any_directory(wheel, tmp_path):
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)  # what pip does with a pure-Python wheel
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    found = probe(elsewhere, site)
    assert found["conf"] == str(site / "pipelines" / "conf" / "lakehouse.yaml")
    assert found["graph"] == str(site / "pipelines" / "conf" / "jobs.yaml")
    assert found["suites"] == str(site / "pipelines" / "expectations")  # `suites_dir: expectations`
    assert found["suite"] == str(site / "pipelines" / "expectations" / "silver.datahub_entity_changes.json")
    assert found["catalogs"] == [
        str(site / "pipelines" / "conf" / "catalogs" / "datahub_ece.yaml"),
        str(site / "pipelines" / "conf" / "catalogs" / "dataworks_events.yaml"),
    ]
    assert found["tasks"] > 30 and found["events"] > 10 and found["ece_categories"] > 0


def test_a_conf_file_overlays_the_installed_defaults(wheel, tmp_path):
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    overlay = tmp_path / "mine.yaml"
    overlay.write_text("quality: {fail_on_breach: false}\nstorage: {catalog: main}\n", encoding="utf-8")
    found = probe(tmp_path, site, str(overlay))
    assert (found["fail_on_breach"], found["catalog"]) == (False, "main")
    assert found["profile"] == "local"  # the rest from the wheel's conf/lakehouse.yaml
    assert found["suites"] == str(site / "pipelines" / "expectations")


def test_the_installed_project_reads_the_repository_folders_from_any_directory(tmp_path):
    """The editable install maps pipelines.conf and pipelines.expectations to conf/ and expectations/."""
    found = probe(tmp_path)
    assert found["conf"] == str(PROJECT_ROOT / "conf" / "lakehouse.yaml")
    assert found["graph"] == str(PROJECT_ROOT / "conf" / "jobs.yaml")
    assert found["suites"] == str(PROJECT_ROOT / "expectations")
    assert found["catalogs"][0] == str(PROJECT_ROOT / "conf" / "catalogs" / "datahub_ece.yaml")


def test_a_working_directory_folder_named_like_a_bundled_one_comes_first(tmp_path):
    own = tmp_path / "expectations"
    own.mkdir()
    (own / "silver.datahub_entity_changes.json").write_text(
        json.dumps({"name": "silver.datahub_entity_changes", "expectations": []}), encoding="utf-8"
    )
    found = probe(tmp_path)
    assert found["suites"] == str(own)
    assert found["suite"] == str(own / "silver.datahub_entity_changes.json")


def test_a_missing_suites_folder_is_a_config_error(tmp_path, monkeypatch):
    from pipelines import quality
    from pipelines.core.config import ConfigError
    from pipelines.quality.suites import SUITES_DIR

    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="quality.suites_dir: no_such_folder is not a folder"):
        quality.suites_dir("no_such_folder")
    assert quality.suites_dir("expectations") == SUITES_DIR
