"""The governance rules the configuration declares (`governance` in `conf/lakehouse.yaml`), as Spark
columns: which tags belong to which class (e.g. sensitive, pii), which actors are system or service
accounts, and the window within which an undone change is a reversal.

Gold tables that depend on them (`gold.change_history`'s `actor_kind`, `gold.actors`,
`gold.entity_governance_timeline`, `gold.governance_coverage_daily`, `gold.sensitive_exposure`,
`gold.change_reversals`, `gold.governance_violations`) carry a `revision` naming the rules they were built with, so a change of
the rules rebuilds them once (`pipelines.executors.gold`), and a table built before its columns
existed is rebuilt the same way.

Patterns are globs, matched against the whole value in any case: `*` any text, `?` one character.

    rules = GovernanceRules.from_config(load_config())
    df.select(rules.actor_kind(F.col("actor")).alias("actor_kind"))
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from pyspark.sql import Column
from pyspark.sql import functions as F

PERSON, SERVICE, SYSTEM, UNATTRIBUTED = "person", "service", "system", "unattributed"
ACTOR_KINDS = (PERSON, SERVICE, SYSTEM, UNATTRIBUTED)
KIND_ORDER = (SYSTEM, SERVICE)  # the first kind whose pattern matches decides; no match: a person


def _glob_body(pattern: str) -> str:
    return "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)


def glob_regex(*patterns: str) -> str:
    """A Java/Python regex matching what any of the globs matches, whole and in any case."""
    return "(?i)^(?:" + "|".join(_glob_body(p) for p in patterns) + ")$"


def _any_of(value: Column, patterns: tuple[str, ...]) -> Column:
    return value.rlike(glob_regex(*patterns)) if patterns else F.lit(False)


@dataclass(frozen=True)
class GovernanceRules:
    """`tag_classes`: class -> tag patterns; `actor_kinds`: kind -> actor patterns;
    `reversal_window_hours`: how soon an undo must follow to count as a reversal."""

    tag_classes: tuple[tuple[str, tuple[str, ...]], ...]
    actor_kinds: tuple[tuple[str, tuple[str, ...]], ...]
    reversal_window_hours: float

    @classmethod
    def from_section(cls, section: Mapping) -> GovernanceRules:
        """From the `governance` section of a (validated) configuration."""
        classes = tuple(sorted((str(k), tuple(v)) for k, v in section["tag_classes"].items() if v))
        kinds = tuple((k, tuple(section["actor_kinds"].get(k) or ())) for k in KIND_ORDER)
        return cls(classes, kinds, float(section["reversal_window_hours"]))

    @classmethod
    def from_config(cls, config) -> GovernanceRules:
        return cls.from_section(config.section("governance"))

    @property
    def class_names(self) -> tuple[str, ...]:
        """The configured tag classes, sorted (the order of every per-class column)."""
        return tuple(name for name, _ in self.tag_classes)

    def tag_classes_of(self, tag: Column) -> Column:
        """array<string> of the classes a tag (urn or FQN) belongs to, in `class_names` order."""
        found = [F.when(_any_of(tag, patterns), F.lit(name)) for name, patterns in self.tag_classes]
        if not found:
            return F.array().cast("array<string>")
        return F.filter(F.array(*found), lambda c: c.isNotNull())

    def actor_kind(self, actor: Column) -> Column:
        """person, service or system by the configured patterns; unattributed when there is no actor."""
        kind = F.lit(PERSON)
        for name, patterns in reversed(self.actor_kinds):
            kind = F.when(_any_of(actor, patterns), F.lit(name)).otherwise(kind)
        missing = actor.isNull() | (F.trim(actor) == "")
        return F.when(missing, F.lit(UNATTRIBUTED)).otherwise(kind)

    def revision(
        self, version: str, actors: bool = False, classes: bool = False, window: bool = False
    ) -> str:
        """A table's `revision`: its column `version` and the rules it uses (actor kinds, tag
        classes, the reversal window), as a short stable digest."""
        used = [
            version,
            self.actor_kinds if actors else None,
            self.tag_classes if classes else None,
            self.reversal_window_hours if window else None,
        ]
        return hashlib.sha256(json.dumps(used).encode("utf-8")).hexdigest()[:16]


@functools.lru_cache(maxsize=1)
def default_rules() -> GovernanceRules:
    """The rules of the packaged defaults, read on first use (a table module's `SPEC` outside a run)."""
    from pipelines.core.config import load_config

    return GovernanceRules.from_config(load_config())
