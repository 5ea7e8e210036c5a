"""A target's secret (a webhook URL, an SMTP password): from an environment variable named in
the configuration, or from a Databricks secret scope through the Databricks SDK.

Why never in the file: a webhook URL is the credential of the channel it posts to. The SDK's
`WorkspaceClient().secrets` reads the scope on Databricks (or with `DATABRICKS_HOST` and a
token elsewhere); it is optional (the `databricks` extra), and asked only when a target names
a scope. The value is never printed, logged or recorded.
"""

from __future__ import annotations

import base64
import os

from pipelines.core.config import ConfigError


def resolve(options: dict, name: str, what: str, environ: dict[str, str] | None = None) -> str | None:
    """The secret `name` (`url`, `password`) of a target's `options`: `<name>_env` names an
    environment variable, `<name>_secret` a `{scope, key}`; None when the target gives neither."""
    environ = os.environ if environ is None else environ
    if f"{name}_env" in options:
        variable = options[f"{name}_env"]
        value = environ.get(variable)
        if not value:
            raise ConfigError(f"{what}: environment variable {variable} is not set")
        return value
    if f"{name}_secret" in options:
        reference = options[f"{name}_secret"]
        return _from_scope(reference["scope"], reference["key"], what)
    return None


def _from_scope(scope: str, key: str, what: str) -> str:
    try:
        from databricks.sdk import WorkspaceClient
    except ImportError as exc:
        raise ConfigError(
            f"{what}: reading secret {scope}/{key} needs the databricks-sdk package (the databricks extra)"
        ) from exc
    try:
        encoded = WorkspaceClient().secrets.get_secret(scope=scope, key=key).value
    except Exception as exc:  # the SDK's errors; never with the value
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"{what}: cannot read secret {scope}/{key}: {reason}") from None
    value = base64.b64decode(encoded or "").decode("utf-8") if encoded else ""
    if not value:
        raise ConfigError(f"{what}: secret {scope}/{key} is empty")
    return value
