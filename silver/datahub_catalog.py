"""The DataHub Entity Change Event catalog (`conf/catalogs/datahub_ece.yaml`) and the envelope parsing
shared by the two tables built from `bronze.datahub_entity_change_events`.

The catalog is data so that a new category, operation or parameter key is a YAML edit: the typed
parameter columns, `parameters_extra`, the expectation suites' (category, operation) sets and the
tests all derive from it.

    catalog = load_catalog()
    catalog.category_operation_pairs()        # [("APPLICATION", "ADD"), ...]
    typed = typed_parameters(F.col("parameters"), F.col("category"), catalog.category_parameters())
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from pipelines.config import PROJECT_ROOT
from silver.common import (
    canonical_map,
    cast_error,
    corrupt_error,
    deterministic_id,
    epoch_unit,
    event_epoch_to_timestamp,
)

CATALOG_PATH = PROJECT_ROOT / "conf" / "catalogs" / "datahub_ece.yaml"
SOURCE_NAME = "datahub_ece"

# Top-level ECE fields, all as strings: a value of the wrong JSON type stays visible as its JSON
# text instead of failing the whole record; nested objects are parsed from that text below.
_ENVELOPE_SCHEMA = (
    "entityUrn string, entityType string, category string, operation string, modifier string, "
    "parameters string, auditStamp string, version string"
)
_AUDIT_STAMP_SCHEMA = "actor string, time string, impersonator string, _corrupt_record string"
_SCHEMA_FIELD_PARENT = r"^urn:li:schemaField:\((urn:li:[^:]+:(?:\([^()]*\)|[^,()]*)),.*\)$"


@dataclass(frozen=True)
class ParameterSpec:
    """One parameter key: its catalog type, the Spark type it becomes and the silver column it fills."""

    key: str
    type: str
    spark_type: str
    json: bool
    column: str


@dataclass(frozen=True)
class ProposalType:
    """An `actionRequestType`: its own keys and whether it proposes an association on `resourceUrn`."""

    name: str
    association: bool
    parameters: tuple[ParameterSpec, ...]


@dataclass(frozen=True)
class Catalog:
    """The parsed YAML: categories (operations, keys) and proposals (operations, common keys, types)."""

    operations: Mapping[str, tuple[str, ...]]
    parameters: Mapping[str, tuple[ParameterSpec, ...]]
    proposal_entity_type: str
    proposal_category: str
    proposal_operations: tuple[str, ...]
    proposal_parameters: tuple[ParameterSpec, ...]
    proposal_results: tuple[str, ...]
    proposal_types: Mapping[str, ProposalType]

    def categories(self) -> list[str]:
        """Entity change categories, in catalog order."""
        return list(self.operations)

    def category_operation_pairs(self) -> list[tuple[str, str]]:
        """Valid (category, operation) pairs of entity change events, sorted."""
        return sorted((c, op) for c, ops in self.operations.items() for op in ops)

    def category_parameters(self) -> dict[str, tuple[ParameterSpec, ...]]:
        """Category -> the keys it lists (typed; anything else goes to `parameters_extra`)."""
        return dict(self.parameters)

    def known_keys(self, category: str) -> set[str]:
        """Parameter keys `category` lists (empty for an unknown category)."""
        return {p.key for p in self.parameters.get(category, ())}

    def proposal_operation_pairs(self) -> list[tuple[str, str]]:
        """Valid (category, operation) pairs of proposal events, sorted."""
        return sorted((self.proposal_category, op) for op in self.proposal_operations)

    def proposal_type_parameters(self) -> dict[str, tuple[ParameterSpec, ...]]:
        """actionRequestType -> its own keys (the common keys apply to every proposal)."""
        return {name: t.parameters for name, t in self.proposal_types.items()}

    def association_types(self) -> list[str]:
        """Proposal types that propose an association on `resourceUrn` (so it must be present)."""
        return sorted(name for name, t in self.proposal_types.items() if t.association)


class CatalogError(ValueError):
    """The catalog YAML is inconsistent; the message names the key at fault."""


@lru_cache(maxsize=4)
def load_catalog(path: Path = CATALOG_PATH) -> Catalog:
    """Parse and check the catalog: a typo in it must fail loudly, not mistype a column."""
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    types = data["types"]

    def specs(where: str, raw: Mapping | None) -> tuple[ParameterSpec, ...]:
        out = []
        for key, value in (raw or {}).items():
            type_name, column = (value, key) if isinstance(value, str) else (value["type"], value["column"])
            if type_name not in types:
                raise CatalogError(f"{path}: {where}.{key}: unknown type '{type_name}'")
            t = types[type_name]
            out.append(ParameterSpec(key, type_name, t["spark"], bool(t.get("json")), column))
        return tuple(out)

    categories = data["categories"]
    proposals = data["action_requests"]
    catalog = Catalog(
        operations={c: tuple(v["operations"]) for c, v in categories.items()},
        parameters={c: specs(c, v.get("parameters")) for c, v in categories.items()},
        proposal_entity_type=proposals["entity_type"],
        proposal_category=proposals["category"],
        proposal_operations=tuple(proposals["operations"]),
        proposal_parameters=specs("action_requests", proposals.get("parameters")),
        proposal_results=tuple(proposals["results"]),
        proposal_types={
            name: ProposalType(name, bool(t.get("association")), specs(name, t.get("parameters")))
            for name, t in proposals["types"].items()
        },
    )
    _check_columns(path, [s for group in catalog.parameters.values() for s in group])
    _check_columns(
        path,
        [*catalog.proposal_parameters, *(s for t in catalog.proposal_types.values() for s in t.parameters)],
    )
    return catalog


def _check_columns(path: Path, specs: list[ParameterSpec]) -> None:
    """One Spark type per column and one column per key, whichever category lists them."""
    types: dict[str, str] = {}
    columns: dict[str, str] = {}
    for spec in specs:
        if types.setdefault(spec.column, spec.spark_type) != spec.spark_type:
            raise CatalogError(f"{path}: column '{spec.column}' is fed with two types ({spec.key})")
        if columns.setdefault(spec.key, spec.column) != spec.column:
            raise CatalogError(f"{path}: key '{spec.key}' is mapped to two columns")


@dataclass(frozen=True)
class TypedParameters:
    """Typed parameter columns (by silver column name), their cast errors and the unlisted keys."""

    columns: dict[str, Column]
    errors: list[Column]
    extra: Column


def typed_parameters(
    parameters: Column,
    selector: Column,
    groups: Mapping[str, tuple[ParameterSpec, ...]],
    always: tuple[ParameterSpec, ...] = (),
) -> TypedParameters:
    """Type the keys that `groups[selector]` (plus `always`) lists; the other keys go to `extra`.

    A key is typed only where its group applies (a TECHNICAL_SCHEMA `nullable`, not an unknown
    category's), so unknown categories and proposal types keep every key in `extra`, untyped.
    """
    by_column: dict[str, list[tuple[ParameterSpec, Column]]] = {}
    errors: list[Column] = []
    for spec in [*always, *(s for group in groups.values() for s in group)]:
        sources = by_column.setdefault(spec.column, [])
        if any(known.key == spec.key for known, _ in sources):
            continue
        applies = (
            F.lit(True)
            if any(a.key == spec.key for a in always)
            else selector.isin([g for g, group in groups.items() if any(s.key == spec.key for s in group)])
        )
        value, error = _typed_value(parameters[spec.key], spec)
        sources.append((spec, F.when(applies, value)))
        errors.append(F.when(applies, error))
    columns = {
        column: F.coalesce(*[value for _, value in sources]).cast(sources[0][0].spark_type)
        for column, sources in by_column.items()
    }
    return TypedParameters(columns, errors, _unlisted(parameters, selector, groups, always))


def _typed_value(value: Column, spec: ParameterSpec) -> tuple[Column, Column]:
    """(typed value or null, `cast:parameters.<key>` when a present value cannot be typed)."""
    field = f"parameters.{spec.key}"
    if spec.json:
        typed = F.from_json(value, spec.spark_type)
        return typed, F.when(value.isNotNull() & typed.isNull(), F.lit(f"cast:{field}"))
    if spec.spark_type == "boolean":
        text = F.lower(F.trim(value))
        typed = F.when(text.isin("true", "false"), text == F.lit("true"))
        return typed, F.when(value.isNotNull() & typed.isNull(), F.lit(f"cast:{field}"))
    if spec.spark_type == "string":
        return value, F.lit(None).cast("string")
    return value.try_cast(spec.spark_type), cast_error(value, spec.spark_type, field)


def _unlisted(
    parameters: Column,
    selector: Column,
    groups: Mapping[str, tuple[ParameterSpec, ...]],
    always: tuple[ParameterSpec, ...],
) -> Column:
    common = [s.key for s in always]
    known = F.array(*[F.lit(k) for k in common]).cast("array<string>")
    for name, group in groups.items():
        keys = list(dict.fromkeys([*common, *(s.key for s in group)]))
        known = F.when(selector == F.lit(name), F.array(*[F.lit(k) for k in keys])).otherwise(known)
    return F.map_filter(parameters, lambda k, _: ~F.array_contains(known, k))


def ece_envelope(bronze: DataFrame) -> DataFrame:
    """Bronze ECE rows with the common fields parsed (explicit schema, scalars as strings).

    Adds entity_urn, entity_type, category, operation, modifier, actor, impersonator, event_version,
    parameters (map<string,string>), event_time, event_date, event_id, is_action_request and
    `_envelope_errors`; keeps the bronze columns. Corrupt rows get nulls and a raw-based event_id.
    """
    catalog = load_catalog()
    record = F.when(~F.col("is_corrupt"), F.from_json("raw", _ENVELOPE_SCHEMA))
    parsed = bronze.select("*", record.alias("_record")).select(
        "*",
        F.from_json("_record.parameters", "map<string,string>").alias("_parameters"),
        F.from_json(
            "_record.auditStamp", _AUDIT_STAMP_SCHEMA, {"columnNameOfCorruptRecord": "_corrupt_record"}
        ).alias("_stamp"),
    )
    stamp_ok = F.col("_stamp._corrupt_record").isNull()
    time = F.when(stamp_ok, F.col("_stamp.time"))
    event_time = event_epoch_to_timestamp(time)
    parameters = F.col("_parameters")
    event_id = F.when(
        F.col("is_corrupt"), deterministic_id(F.lit(SOURCE_NAME), F.coalesce("raw", "raw_base64"))
    ).otherwise(
        deterministic_id(
            F.lit(SOURCE_NAME),
            F.col("_record.entityUrn"),
            F.col("_record.category"),
            F.col("_record.operation"),
            F.col("_record.modifier"),
            canonical_map(parameters),
            F.when(stamp_ok, F.col("_stamp.actor")),
            time,
        )
    )
    return parsed.select(
        *[F.col(c) for c in bronze.columns],
        event_id.alias("event_id"),
        event_time.alias("event_time"),
        F.to_date(event_time).alias("event_date"),
        epoch_unit(time).alias("event_time_unit"),
        F.col("_record.entityUrn").alias("entity_urn"),
        F.col("_record.entityType").alias("entity_type"),
        F.col("_record.category").alias("category"),
        F.col("_record.operation").alias("operation"),
        F.col("_record.modifier").alias("modifier"),
        F.when(stamp_ok, F.col("_stamp.actor")).alias("actor"),
        F.when(stamp_ok, F.col("_stamp.impersonator")).alias("impersonator"),
        F.col("_record.version").try_cast("int").alias("event_version"),
        parameters.alias("parameters"),
        F.coalesce(F.col("_record.entityType") == F.lit(catalog.proposal_entity_type), F.lit(False)).alias(
            "is_action_request"
        ),
        F.array(
            corrupt_error(),
            F.when(~stamp_ok, F.lit("cast:auditStamp")),
            F.when(time.isNotNull() & event_time.isNull(), F.lit("cast:auditStamp.time")),
            cast_error(F.col("_record.version"), "int", "version"),
            F.when(F.col("_record.parameters").isNotNull() & parameters.isNull(), F.lit("cast:parameters")),
        ).alias("_envelope_errors"),
    )


def ece_errors(typed: TypedParameters) -> Column:
    """A row's `_errors`: the envelope's (corrupt, auditStamp, version, parameters), then the casts."""
    return F.filter(F.concat(F.col("_envelope_errors"), F.array(*typed.errors)), lambda e: e.isNotNull())


def schema_field_parent(entity_urn: Column) -> Column:
    """The dataset URN of a `urn:li:schemaField:(<dataset urn>,<field path>)`, else null."""
    return F.nullif(F.regexp_extract(entity_urn, _SCHEMA_FIELD_PARENT, 1), F.lit(""))
