"""What the compute a session runs on lets the code do: Databricks serverless, standard access mode, or anything.

Databricks documents what its Spark Connect compute refuses:
- **serverless** (jobs and notebooks): `spark.conf.set` of any Spark property but a handful
  (`SERVERLESS_SETTINGS`; any other raises `[CONFIG_NOT_AVAILABLE]`), and `persist`, `cache`,
  `unpersist`, `checkpoint`, `cacheTable` (`[NOT_SUPPORTED_WITH_SERVERLESS]`); commit metadata
  travels as the writer option `userMetadata`, not as a session setting;
- **standard access mode** (formerly shared): no Spark context, RDDs or JVM access, which a
  Spark Connect client has none of anyway; session settings and `persist` are allowed.

The code asks `rules_of(spark)` before it changes a session setting or caches a frame, so the
same code runs under each: a setting that only tunes speed is left out where it is refused
(`settable`), a frame is recomputed where it cannot be cached (`pipelines.runtime.caching`). A
session learns its rules from the profile (`profiles.<name>.rules: serverless | standard`, which
the `connect` profile also enforces on the session: `pipelines.runtime.rules_session`) or, on a
Databricks serverless runtime, from `DATABRICKS_RUNTIME_VERSION` (`client.<n>` there).
"""

from __future__ import annotations

import os
import weakref
from dataclasses import dataclass
from typing import Any

# The Spark properties a serverless notebook or job may set at run time (Databricks, "Configure
# Spark properties for serverless notebooks and jobs").
SERVERLESS_SETTINGS = frozenset(
    {
        "spark.sql.shuffle.partitions",
        "spark.sql.session.timeZone",
        "spark.sql.ansi.enabled",
        "spark.sql.files.maxPartitionBytes",
        "spark.sql.legacy.timeParserPolicy",
        "spark.databricks.execution.timeout",
    }
)
RUNTIME_VERSION_ENV = "DATABRICKS_RUNTIME_VERSION"  # `client.<n>` on serverless compute


@dataclass(frozen=True)
class ComputeRules:
    """`settable`: the session settings the compute lets a client change (None: any);
    `caches`: whether frames may be persisted."""

    name: str
    settable: frozenset[str] | None = None
    caches: bool = True

    def may_set(self, key: str) -> bool:
        return self.settable is None or key in self.settable

    def settable_part(self, settings: dict[str, Any]) -> dict[str, Any]:
        """The part of `settings` this compute lets a client set."""
        return {key: value for key, value in settings.items() if self.may_set(key)}


UNRESTRICTED = ComputeRules("unrestricted")
STANDARD = ComputeRules("standard")
SERVERLESS = ComputeRules("serverless", settable=SERVERLESS_SETTINGS, caches=False)
RULES = {rules.name: rules for rules in (STANDARD, SERVERLESS)}  # the values of `profiles.<p>.rules`

_sessions: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def named_rules(name: str | None) -> ComputeRules | None:
    """The rules a profile's `rules` names (None when it names none); ValueError for another name."""
    if name is None:
        return None
    if name not in RULES:
        raise ValueError(f"rules must be one of {sorted(RULES)}, got {name!r}")
    return RULES[name]


def follow(spark: Any, rules: ComputeRules) -> None:
    """Record that `spark` runs under `rules` (a session the profile names rules for)."""
    _sessions[spark] = rules


def rules_of(spark: Any) -> ComputeRules:
    """The rules `spark` runs under: those recorded for it (`follow`), else serverless on a
    Databricks serverless runtime, else none."""
    recorded = _sessions.get(spark)
    if recorded is not None:
        return recorded
    if os.environ.get(RUNTIME_VERSION_ENV, "").startswith("client."):
        return SERVERLESS
    return UNRESTRICTED
