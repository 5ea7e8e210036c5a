"""The governance rules file (`governance.rules_file`, by default `conf/governance_rules.yaml`):
which conditions on entities become violations in `gold.governance_violations`, how severe they
are and after how long.

The rules are data, so an operator tunes them without a code change; they are validated when
read, with one-line errors naming the file, the rule and the field, because a typo in a
scheduled job's rules should stop it loudly rather than evaluate nothing. `digest` names the
rules in the table's `revision`, so editing the file rebuilds the table once.

    rules = load_rules(defaults.resolve("conf/governance_rules.yaml"), tag_classes=("sensitive",))
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path

import yaml

from pipelines.core.config import ConfigError
from pipelines.core.defaults import readable

OWNER_MISSING = "owner_missing"
SENSITIVE_TAG_REMOVED = "sensitive_tag_removed"
PROPOSAL_PENDING = "proposal_pending"
UNATTRIBUTED_CHANGE = "unattributed_change"
DOMAIN_MISSING = "domain_missing"
KINDS = (OWNER_MISSING, SENSITIVE_TAG_REMOVED, PROPOSAL_PENDING, UNATTRIBUTED_CHANGE, DOMAIN_MISSING)
SEVERITIES = ("info", "warn", "critical")
SOURCES = ("datahub", "openmetadata", "dataworks")
NEW_ONLY_KINDS = (OWNER_MISSING, DOMAIN_MISSING)  # conditions an entity can hold from its appearance
FIELDS = (
    "id", "kind", "severity", "after_days", "after_hours", "entity_types", "sources", "tag_classes",
    "new_only", "description",
)  # fmt: skip
RULE_ID = r"[a-z0-9][a-z0-9_-]*"


@dataclass(frozen=True)
class ViolationRule:
    """One validated rule; `after_hours` is its duration in hours (0: immediate), whichever
    unit the file gave; empty `entity_types` / `sources`: every one."""

    id: str
    kind: str
    severity: str
    after_hours: float = 0.0
    entity_types: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    tag_classes: tuple[str, ...] = ()
    new_only: bool = False


def digest(rules: tuple[ViolationRule, ...]) -> str:
    """A short stable name of the rules (descriptions left out: they change no row)."""
    text = json.dumps([asdict(rule) for rule in rules], sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def load_rules(path, tag_classes: tuple[str, ...] | None = None) -> tuple[ViolationRule, ...]:
    """The rules of the file at `path`; `tag_classes`: the configured classes a rule may name
    (None: not checked)."""
    origin = Path(str(path)).name
    try:
        raw = yaml.safe_load(readable(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise ConfigError(f"{origin}: cannot be read: {str(error).splitlines()[0]}") from error
    return parse_rules(raw, origin, tag_classes)


def parse_rules(raw, origin: str, tag_classes: tuple[str, ...] | None = None) -> tuple[ViolationRule, ...]:
    """Validate the parsed YAML of a rules file (a mapping with a `rules` list)."""
    if not isinstance(raw, dict) or set(raw) != {"rules"} or not isinstance(raw["rules"], list):
        raise ConfigError(f"{origin}: must be a mapping with one key, 'rules', holding a list of rules")
    rules, seen = [], set()
    for position, entry in enumerate(raw["rules"], start=1):
        rule = _rule(entry, f"{origin}: rule {position}", tag_classes)
        if rule.id in seen:
            raise ConfigError(f"{origin}: rule '{rule.id}': id: duplicate id")
        seen.add(rule.id)
        rules.append(rule)
    return tuple(rules)


def _rule(entry, where: str, tag_classes: tuple[str, ...] | None) -> ViolationRule:
    if not isinstance(entry, dict):
        raise ConfigError(f"{where}: must be a mapping, got {type(entry).__name__}")
    rule_id = entry.get("id")
    if not isinstance(rule_id, str) or not re.fullmatch(RULE_ID, rule_id):
        raise ConfigError(f"{where}: id: must be lower case letters, digits, _ and -, got {rule_id!r}")
    where = f"{where.rsplit(': ', 1)[0]}: rule '{rule_id}'"
    unknown = sorted(set(entry) - set(FIELDS))
    if unknown:
        raise ConfigError(f"{where}: {unknown[0]}: unknown field (known: {', '.join(FIELDS)})")
    kind = entry.get("kind")
    if kind not in KINDS:
        raise ConfigError(f"{where}: kind: must be one of {list(KINDS)}, got {kind!r}")
    severity = entry.get("severity")
    if severity not in SEVERITIES:
        raise ConfigError(f"{where}: severity: must be one of {list(SEVERITIES)}, got {severity!r}")
    if "after_days" in entry and "after_hours" in entry:
        raise ConfigError(f"{where}: after_days: give after_days or after_hours, not both")
    after_hours = 0.0
    for field, hours in (("after_days", 24.0), ("after_hours", 1.0)):
        if field in entry:
            value = entry[field]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ConfigError(f"{where}: {field}: must be a number >= 0, got {value!r}")
            after_hours = float(value) * hours
    sources = _names(entry, "sources", where)
    if any(s not in SOURCES for s in sources):
        raise ConfigError(f"{where}: sources: each must be one of {list(SOURCES)}, got {list(sources)}")
    classes = _names(entry, "tag_classes", where)
    if kind == SENSITIVE_TAG_REMOVED and not classes:
        raise ConfigError(f"{where}: tag_classes: required for kind {SENSITIVE_TAG_REMOVED}")
    if kind != SENSITIVE_TAG_REMOVED and classes:
        raise ConfigError(f"{where}: tag_classes: only for kind {SENSITIVE_TAG_REMOVED}")
    if tag_classes is not None and any(c not in tag_classes for c in classes):
        missing = [c for c in classes if c not in tag_classes]
        raise ConfigError(
            f"{where}: tag_classes: {missing} not in governance.tag_classes {list(tag_classes)}"
        )
    new_only = entry.get("new_only", False)
    if not isinstance(new_only, bool):
        raise ConfigError(f"{where}: new_only: must be true or false, got {new_only!r}")
    if new_only and kind not in NEW_ONLY_KINDS:
        raise ConfigError(f"{where}: new_only: only for kinds {list(NEW_ONLY_KINDS)}")
    if not isinstance(entry.get("description", ""), str):
        raise ConfigError(f"{where}: description: must be text")
    return ViolationRule(
        rule_id, kind, severity, after_hours, _names(entry, "entity_types", where), sources, classes, new_only
    )


def _names(entry: dict, field: str, where: str) -> tuple[str, ...]:
    value = entry.get(field, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"{where}: {field}: must be a list of names, got {value!r}")
    return tuple(value)
