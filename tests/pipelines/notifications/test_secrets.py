"""A target's secret from the environment or from a Databricks secret scope, read through the
Databricks SDK from the Secrets API on loopback."""

from __future__ import annotations

import pytest

from pipelines.core.config import ConfigError
from pipelines.notifications.secrets import resolve
from tests.support.secrets_api import JOB_TOKEN, secrets_api

HOOK = "https://hooks.example.com/T000/B000/secret-part"


def test_a_secret_comes_from_the_variable_the_target_names():
    assert resolve({"url_env": "HOOK_URL"}, "url", "t", environ={"HOOK_URL": HOOK}) == HOOK
    with pytest.raises(ConfigError, match="^t: environment variable HOOK_URL is not set$"):
        resolve({"url_env": "HOOK_URL"}, "url", "t", environ={})
    assert resolve({"host": "smtp"}, "password", "t", environ={}) is None  # a mail target without login


def test_a_secret_comes_from_a_databricks_secret_scope(monkeypatch):
    with secrets_api(monkeypatch, {("lakehouse", "hook"): HOOK}) as workspace:
        assert resolve({"url_secret": {"scope": "lakehouse", "key": "hook"}}, "url", "t") == HOOK
        with pytest.raises(ConfigError, match="^t: cannot read secret lakehouse/gone: ") as caught:
            resolve({"url_secret": {"scope": "lakehouse", "key": "gone"}}, "url", "t")
    assert HOOK not in str(caught.value)
    assert workspace.requests[0] == ("lakehouse", "hook", f"Bearer {JOB_TOKEN}")
