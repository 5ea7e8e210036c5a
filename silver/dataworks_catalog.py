"""The DataWorks event catalog: eventCode -> EventBridge type, family table, blocking flag, enum names.

The data lives in `conf/catalogs/dataworks_events.yaml` so that onboarding a new
event is a config entry; this module is the only reader. `silver.dataworks_events`
uses it to derive event codes from types and to tag rows with their family;
the family tables use it to pick their rows and to name status codes.

    >>> from silver import dataworks_catalog as catalog
    >>> catalog.family_of("instance-status-changes")
    'silver.dataworks_instance_status_changes'
    >>> catalog.codes_of("silver.dataworks_node_changes")
    ('node-change-created', 'node-change-updated', 'node-change-deleted')
    >>> catalog.status_names("instance_status")[6]
    'SUCCESS'
    >>> df.where(catalog.family_col(F.col("event_code")) == "silver.dataworks_backfills")
    >>> df.select(catalog.status_name_col("instance_status", F.col("status")).alias("status_name"))
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType

import yaml
from pyspark.sql import Column
from pyspark.sql import functions as F

from pipelines.core import defaults

CATALOG_PATH = defaults.catalog_file("dataworks_events.yaml")

FAMILY_TABLES = (
    "silver.dataworks_node_changes",
    "silver.dataworks_file_changes",
    "silver.dataworks_table_changes",
    "silver.dataworks_di_job_starts",
    "silver.dataworks_node_operations",
    "silver.dataworks_backfills",
    "silver.dataworks_instance_status_changes",
    "silver.dataworks_instance_operations",
    "silver.dataworks_workflow_status_changes",
    "silver.dataworks_monitor_alerts",
    "silver.dataworks_approvals",
    "silver.dataworks_dq_check_results",
    "silver.dataworks_dq_rule_events",
    "silver.dataworks_project_changes",
    "silver.dataworks_resource_transfers",
)

_TYPE_PATTERN = re.compile(r"^dataworks:([A-Za-z]+):([A-Za-z]+)$")


class CatalogError(ValueError):
    """The catalog file is unusable; the message names the file and the entry."""


@dataclass(frozen=True)
class EventSpec:
    """One catalog entry."""

    code: str  # data.eventCode, e.g. instance-status-changes
    type: str  # EventBridge type, e.g. dataworks:InstanceStatusChanges:InstanceStatusChanges
    category: str  # <Category> of the type
    action: str  # <Action> of the type
    family: str  # silver family table, e.g. silver.dataworks_instance_status_changes
    extension_point: bool  # True: blocking pre-event sent before the operation
    module: str  # DataWorks module that emits it
    description: str


@dataclass(frozen=True)
class Catalog:
    events: Mapping[str, EventSpec]
    aliases: Mapping[str, str]
    enums: Mapping[str, Mapping[int, str]]


def load_catalog(path: Path = CATALOG_PATH) -> Catalog:
    """Read and validate a catalog file (strict: a bad entry fails loudly, naming it)."""
    try:
        raw = yaml.safe_load(defaults.readable(path).read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise CatalogError(f"{path}: cannot read the DataWorks event catalog ({exc})") from exc
    events = {code: _event(path, str(code), entry) for code, entry in (raw.get("events") or {}).items()}
    types = [spec.type for spec in events.values()]
    duplicates = sorted({t for t in types if types.count(t) > 1})
    if duplicates:
        raise CatalogError(f"{path}: types used by more than one event: {duplicates}")
    aliases = {str(k): str(v) for k, v in (raw.get("aliases") or {}).items()}
    for alias, target in aliases.items():
        if target not in events:
            raise CatalogError(f"{path}: aliases.{alias} points to unknown event '{target}'")
    enums = {str(kind): _enum(path, str(kind), values) for kind, values in (raw.get("enums") or {}).items()}
    return Catalog(
        events=MappingProxyType(events),
        aliases=MappingProxyType(aliases),
        enums=MappingProxyType(enums),
    )


def _event(path: Path, code: str, entry: object) -> EventSpec:
    where = f"{path}: events.{code}"
    if not isinstance(entry, dict):
        raise CatalogError(f"{where} must be a mapping")
    match = _TYPE_PATTERN.match(str(entry.get("type", "")))
    if not match:
        raise CatalogError(f"{where}.type must look like dataworks:<Category>:<Action>")
    if entry.get("family") not in FAMILY_TABLES:
        raise CatalogError(f"{where}.family must be one of the family tables in silver/COLUMNS.md")
    if not isinstance(entry.get("extension_point"), bool):
        raise CatalogError(f"{where}.extension_point must be true or false")
    return EventSpec(
        code=code,
        type=entry["type"],
        category=match.group(1),
        action=match.group(2),
        family=entry["family"],
        extension_point=entry["extension_point"],
        module=str(entry.get("module", "")),
        description=str(entry.get("description", "")),
    )


def _enum(path: Path, kind: str, values: object) -> Mapping[int, str]:
    if not isinstance(values, dict) or not all(
        isinstance(k, int) and not isinstance(k, bool) for k in values
    ):
        raise CatalogError(f"{path}: enums.{kind} must map integer codes to names")
    return MappingProxyType({k: str(v) for k, v in values.items()})


@cache
def catalog() -> Catalog:
    """The project catalog, read once per process."""
    return load_catalog()


EVENTS: Mapping[str, EventSpec] = catalog().events
EVENT_CODES: tuple[str, ...] = tuple(EVENTS)
EVENT_TYPES: tuple[str, ...] = tuple(spec.type for spec in EVENTS.values())
ALIASES: Mapping[str, str] = catalog().aliases
ENUM_KINDS: tuple[str, ...] = tuple(catalog().enums)


def event(code: str | None) -> EventSpec | None:
    """The entry for an eventCode (aliases accepted), None when unknown."""
    return EVENTS.get(canonical_code(code) or "")


def canonical_code(code: str | None) -> str | None:
    """The catalog spelling of an eventCode (resolves aliases; unknown codes pass through)."""
    return None if code is None else ALIASES.get(code, code)


def family_of(code: str | None) -> str | None:
    """Family table of an eventCode, e.g. 'silver.dataworks_node_changes'; None when unknown."""
    spec = event(code)
    return spec.family if spec else None


def codes_of(family: str) -> tuple[str, ...]:
    """Every eventCode whose payload belongs to `family` (a silver table name), in catalog order."""
    if family not in FAMILY_TABLES:
        raise KeyError(f"unknown DataWorks family table '{family}'; known: {', '.join(FAMILY_TABLES)}")
    return tuple(code for code, spec in EVENTS.items() if spec.family == family)


def is_extension_point(code: str | None) -> bool | None:
    """True for blocking pre-events, False for regular events, None when unknown."""
    spec = event(code)
    return spec.extension_point if spec else None


def type_of(code: str | None) -> str | None:
    """EventBridge type of an eventCode, None when unknown."""
    spec = event(code)
    return spec.type if spec else None


def code_of_type(event_type: str | None) -> str | None:
    """eventCode of an EventBridge type, None when the type is not in the catalog."""
    return next((spec.code for spec in EVENTS.values() if spec.type == event_type), None)


def status_names(kind: str) -> dict[int, str]:
    """Integer code -> name for an enum kind (see ENUM_KINDS), e.g. status_names('dag_type')[3] == 'BACKFILL'."""
    try:
        return dict(catalog().enums[kind])
    except KeyError:
        raise KeyError(f"unknown DataWorks enum kind '{kind}'; known: {', '.join(ENUM_KINDS)}") from None


def status_codes(kind: str) -> dict[str, int]:
    """Name -> integer code (the inverse of status_names), e.g. for `schedulerType` sent as 'NORMAL'."""
    return {name: code for code, name in status_names(kind).items()}


_MAP_VALUE_TYPES = {str: "string", bool: "boolean", int: "bigint"}


def _lookup(mapping: Mapping, key: Column) -> Column:
    """A literal map look-up (keys compared as text): null for keys the map lacks.

    The map travels as one JSON literal, which the optimizer folds into a map constant: a
    `create_map` of a `lit` per entry cost ~40 ms of Py4J calls every time a plan was built
    (a quarter of the time to build a DataWorks family's typing plan)."""
    if not mapping:
        return F.lit(None)
    kinds = {type(v) for v in mapping.values() if v is not None}
    if len(kinds) != 1 or next(iter(kinds)) not in _MAP_VALUE_TYPES:
        raise TypeError(f"a look-up map needs values of one type of {list(_MAP_VALUE_TYPES)}, not {kinds}")
    text = json.dumps({str(k): v for k, v in mapping.items()}, ensure_ascii=False)
    literal = F.from_json(F.lit(text), f"map<string,{_MAP_VALUE_TYPES[kinds.pop()]}>")
    return F.try_element_at(literal, key.cast("string"))


def alias_target_col(code: Column) -> Column:
    """The catalog code a known alias stands for; null for anything that is not an alias."""
    return _lookup(ALIASES, code)


def canonical_code_col(code: Column) -> Column:
    """Column version of canonical_code."""
    return F.coalesce(alias_target_col(code), code)


def code_from_type_col(event_type: Column) -> Column:
    """eventCode of a type: the catalog's code, else the kebab-case of the type's action."""
    action = F.nullif(F.regexp_extract(event_type, r"^dataworks:[^:]+:(.+)$", 1), F.lit(""))
    kebab = F.lower(F.regexp_replace(action, r"([a-z0-9])([A-Z])", "$1-$2"))
    return F.coalesce(_lookup({spec.type: spec.code for spec in EVENTS.values()}, event_type), kebab)


def type_col(code: Column) -> Column:
    """EventBridge type of an eventCode column (null when unknown)."""
    return _lookup({c: spec.type for c, spec in EVENTS.items()}, code)


def family_col(code: Column) -> Column:
    """Family table of an eventCode column (null when unknown)."""
    return _lookup({c: spec.family for c, spec in EVENTS.items()}, code)


def extension_point_col(code: Column) -> Column:
    """Blocking flag of an eventCode column (null when unknown)."""
    return _lookup({c: spec.extension_point for c, spec in EVENTS.items()}, code)


def status_name_col(kind: str, value: Column) -> Column:
    """Name of an enum code column (numbers or numeric strings); null for codes the enum lacks."""
    return _lookup(status_names(kind), value.try_cast("int"))
