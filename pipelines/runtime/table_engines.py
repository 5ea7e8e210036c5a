"""Which table engine a configuration means, decided without starting (or importing) Spark: a
query that DuckDB answers needs to know it too, and it runs without a JVM."""

from __future__ import annotations

import re

from pipelines.core.config import Config

LOCAL_MASTER = re.compile(r"local(\[[^\]]*\])?")  # one JVM; `local-cluster[...]` has executors of its own
CONNECT_PROFILE = "connect"


def uses_connect(config: Config) -> bool:
    """Whether the profile talks to Spark through Spark Connect (`connect`, or any with a `remote`)."""
    return config.profile_name == CONNECT_PROFILE or "remote" in config.profile


def engine_for_new_session(config: Config) -> str:
    """The engine a new session is started for: `delta-spark` when asked for, or with `auto` when
    Spark runs on a cluster (executors in their own JVMs) or behind Spark Connect; `delta-rs`
    for `auto` on a local master, where it is the faster of the two (docs/engines.md)."""
    if config.engine != "auto":
        return config.engine
    if uses_connect(config):
        return "delta-spark"
    master = str(config.profile.get("master") or "local")
    return "delta-rs" if LOCAL_MASTER.fullmatch(master) else "delta-spark"


def configured_engine(config: Config) -> str:
    """The table engine a command on this configuration uses: delta-spark on a session it is
    handed (Databricks), else as a new session would (`engine_for_new_session`)."""
    if config.engine == "auto" and config.profile.get("use_existing_session"):
        return "delta-spark"
    return engine_for_new_session(config)
