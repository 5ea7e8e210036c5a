"""Secrets of a Databricks task (the IP salt, the collectors' tokens), from a Databricks secret scope.

gold.failed_logins hashes audit IPs with a salt read from the environment variable that
`privacy.ip_salt_env` names, and the catch-up collectors send the token held by the variable
their `token_env` names. On a job cluster the bundle sets the salt's variable from the secret
scope (`spark_env_vars` with a `{{secrets/<scope>/<key>}}` reference, which Databricks resolves
and redacts). Serverless jobs take no cluster environment variables, and a cluster whose
referenced secret is missing does not start at all, which must not happen for the token of a
collector a workspace may not use: there a task reads the secret the way Databricks documents
for jobs, with the Secrets utility (`dbutils.secrets.get`), through the Databricks SDK the
runtime carries: `WorkspaceClient().dbutils` is the runtime's own `dbutils` on Databricks and
the Secrets API (`DATABRICKS_HOST`, `DATABRICKS_TOKEN`) elsewhere. The value goes into this
process's environment only: it is never printed or logged.
"""

from __future__ import annotations

import argparse
import os

from pipelines.core.config import ConfigError


def secret_reference(text: str) -> str:
    """An argparse type: `SCOPE/KEY`, both parts present, the key without a slash."""
    scope, slash, key = text.partition("/")
    if not (scope and slash and key) or "/" in key:
        raise argparse.ArgumentTypeError(f"{text!r} is not SCOPE/KEY")
    return text


def secret_into_env(env_name: str, secret: str, what: str, environ: dict[str, str] | None = None) -> bool:
    """Set `env_name` from the Databricks secret `secret` (`SCOPE/KEY`) unless it is set already;
    returns whether the secret was read. Raises ConfigError, naming `what`, the scope and the key
    only, when the secret cannot be read."""
    environ = os.environ if environ is None else environ
    if environ.get(env_name):
        return False
    scope, _, key = secret.partition("/")
    try:
        from databricks.sdk import WorkspaceClient
    except ImportError as exc:
        raise ConfigError(
            f"reading {what} from secret {scope}/{key} needs the databricks-sdk package "
            "(Databricks runtimes and serverless environments carry it)"
        ) from exc
    try:
        value = WorkspaceClient().dbutils.secrets.get(scope=scope, key=key)
    except Exception as exc:  # the SDK's and the runtime's errors alike; never with the value
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"cannot read {what} from secret {scope}/{key}: {reason}") from None
    if not value:
        raise ConfigError(f"secret {scope}/{key} ({what}) is empty")
    environ[env_name] = value
    return True


def salt_from_secret(env_name: str, secret: str, environ: dict[str, str] | None = None) -> bool:
    """The IP salt into `env_name` from `secret` (`secret_into_env`)."""
    return secret_into_env(env_name, secret, "the IP salt", environ)
