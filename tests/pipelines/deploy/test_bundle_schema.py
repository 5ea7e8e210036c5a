"""The committed bundle against the JSON schema of the Databricks CLI version the deployment
docs name (`tests.support.bundle_schema`, a pinned copy): databricks.yml as written, and every
target's resources as the CLI merges them (a target's overrides alone lack the required
fields their top-level declaration has)."""

from __future__ import annotations

import copy

import pytest
import yaml

from pipelines.core.config import PROJECT_ROOT
from pipelines.deploy.deployments import MAIN, deployment, target_names
from tests.support.bundle_schema import CLI_VERSION, deprecated, errors

FILES = ("databricks.yml", "resources/catalog_lakehouse_job.yml", "resources/catalog_lakehouse_storage.yml")


@pytest.fixture(scope="module")
def committed() -> dict[str, dict]:
    return {f: yaml.safe_load((PROJECT_ROOT / f).read_text(encoding="utf-8")) for f in FILES}


def merged(documents: dict[str, dict], target: str) -> dict:
    """One target's resources as the CLI deploys them, as a bundle document."""
    return {"resources": deployment(documents, target).resources}


def test_the_docs_name_the_cli_version_whose_schema_the_bundle_is_checked_against():
    assert f"Databricks CLI {CLI_VERSION}" in (PROJECT_ROOT / "docs" / "deployment.md").read_text()


def test_the_committed_bundle_validates_against_the_schema(committed):
    assert errors(committed[MAIN]) == []
    for relative, document in committed.items():
        assert errors({"resources": document.get("resources") or {}}) == [], relative
    for target in target_names(committed):
        assert errors(merged(committed, target)) == [], target


def test_the_committed_bundle_uses_no_field_the_schema_marks_deprecated(committed):
    for document in committed.values():
        assert deprecated(document) == []
    for target in target_names(committed):
        assert deprecated(merged(committed, target)) == [], target


def test_the_schema_catches_an_unknown_key_a_wrong_type_a_deprecated_field_and_a_missing_name(committed):
    documents = copy.deepcopy(committed)
    job = documents[FILES[1]]["resources"]["jobs"]["catalog_lakehouse"]
    job["tasks"][1]["pyton_wheel_task"] = {}
    job["max_concurrent_runs"] = "one"
    job["email_notifications"] = {"on_failure": ["oncall@example.com"], "no_alert_for_skipped_runs": True}
    prefix = "resources.jobs.catalog_lakehouse"
    found = errors(documents[FILES[1]])
    assert (
        f"{prefix}.tasks.1: Additional properties are not allowed ('pyton_wheel_task' was unexpected)"
        in found
    )
    assert any(e.startswith(f"{prefix}.max_concurrent_runs: 'one'") for e in found)
    assert deprecated(documents[FILES[1]]) == [f"{prefix}.email_notifications.no_alert_for_skipped_runs"]
    # a reference stands for a value of any type
    job["max_concurrent_runs"] = "${var.runs}"
    assert not any("max_concurrent_runs" in e for e in errors(documents[FILES[1]]))

    scope = documents[FILES[2]]["targets"]["prod"]["resources"]["secret_scopes"]["lakehouse_secrets"]
    del scope["name"]
    assert "resources.secret_scopes.lakehouse_secrets: 'name' is a required property" in errors(
        merged(documents, "prod")
    )
    assert not any("secret_scopes" in e for e in errors(merged(documents, "dev")))
