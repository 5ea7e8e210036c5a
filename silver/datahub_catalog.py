"""The DataHub Entity Change Event catalog (`conf/catalogs/datahub_ece.yaml`) and the envelope parsing
shared by the two tables built from `bronze.datahub_entity_change_events`.

The catalog is data so that a new category, operation or parameter key is a YAML edit: the typed
parameter columns, `parameters_extra`, the expectation suites' (category, operation) sets and the
tests all derive from it.

    catalog = load_catalog()
    catalog.category_operation_pairs()        # [("APPLICATION", "ADD"), ...]
    typed = typed_parameters(name("parameters"), name("category"), catalog.category_parameters())
    [column(text, alias) for alias, text in typed.columns.items()]   # SQL text -> Columns
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml
from pyspark.sql import Column, DataFrame

from pipelines.core import defaults
from pipelines.runtime.sql_expressions import (
    coalesce_false,
    column,
    data_type,
    literal,
    literals,
    name,
    strings,
    when,
)
from silver.common import (
    canonical_map_text,
    cast_error_text,
    corrupt_error_text,
    deterministic_id_text,
    epoch_unit_text,
    event_epoch_to_timestamp_text,
)
from silver.datahub_envelopes import bare_event_text, other_event_type_text

CATALOG_PATH = defaults.catalog_file("datahub_ece.yaml")
SOURCE_NAME = "datahub_ece"

# One parse of a record types its envelope: scalars as strings (a value of the wrong JSON type
# stays visible as its JSON text), `parameters` as a map and `auditStamp` as a struct. Spark keeps
# the other fields when one does not fit its type (`spark.sql.json.enablePartialResults`, always
# set: `pipelines/runtime/spark.py: REQUIRED_CONF`), so a misfit parameters or auditStamp is null there
# and only such rows are parsed again, as text, to tell an absent value from a wrong one.
_AUDIT_STAMP_FIELDS = ("actor", "time", "impersonator")
_AUDIT_STAMP_STRINGS = ", ".join(f"{field} string" for field in _AUDIT_STAMP_FIELDS)
_ENVELOPE_SCHEMA = (
    "entityUrn string, entityType string, category string, operation string, modifier string, "
    f"parameters map<string,string>, auditStamp struct<{_AUDIT_STAMP_STRINGS}>, version string"
)
_NESTED_AS_TEXT_SCHEMA = "parameters string, auditStamp string"
_AUDIT_STAMP_SCHEMA = f"{_AUDIT_STAMP_STRINGS}, _corrupt_record string"
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
    data = yaml.safe_load(defaults.readable(path).read_text(encoding="utf-8"))
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
    """Spark SQL text (`pipelines/runtime/sql_expressions.py`) of the typed parameter columns (by silver column
    name), of their cast errors (each a string or null, in key order) and of the unlisted keys."""

    columns: dict[str, str]
    errors: list[str]
    extra: str


def typed_parameters(
    parameters: str,
    selector: str,
    groups: Mapping[str, tuple[ParameterSpec, ...]],
    always: tuple[ParameterSpec, ...] = (),
) -> TypedParameters:
    """Type the keys that `groups[selector]` (plus `always`) lists; the other keys go to `extra`.

    `parameters` (a map<string,string>) and `selector` are SQL text, e.g. `name("category")`.
    A key is typed only where its group applies (a TECHNICAL_SCHEMA `nullable`, not an unknown
    category's), so unknown categories and proposal types keep every key in `extra`, untyped.
    Text, not Columns: each output column is then one JVM call, not dozens.
    """
    by_column: dict[str, list[tuple[ParameterSpec, str]]] = {}
    errors: list[str] = []
    for spec in [*always, *(s for group in groups.values() for s in group)]:
        sources = by_column.setdefault(spec.column, [])
        if any(known.key == spec.key for known, _ in sources):
            continue
        typed, error = _typed_value(f"{parameters}[{literal(spec.key)}]", spec)
        if not any(a.key == spec.key for a in always):
            listing = [g for g, group in groups.items() if any(s.key == spec.key for s in group)]
            applies = f"{selector} IN ({literals(listing)})"
            typed = when(applies, typed)
            error = None if error is None else when(applies, error)
        sources.append((spec, typed))
        if error is not None:
            errors.append(error)
    columns = {}
    for silver_column, sources in by_column.items():
        values = ", ".join(value for _, value in sources)  # the first key present wins
        columns[silver_column] = f"CAST(coalesce({values}) AS {data_type(sources[0][0].spark_type)})"
    return TypedParameters(columns, errors, _unlisted(parameters, selector, groups, always))


def _typed_value(value: str, spec: ParameterSpec) -> tuple[str, str | None]:
    """(typed value or null, `cast:parameters.<key>` when a present value cannot be typed; None when
    every value types, as strings do)."""
    field = f"parameters.{spec.key}"
    if spec.json:
        typed = f"from_json({value}, {literal(spec.spark_type)})"
        return typed, when(f"{value} IS NOT NULL AND {typed} IS NULL", literal(f"cast:{field}"))
    if spec.spark_type == "boolean":
        text = f"lower(trim({value}))"
        typed = when(f"{text} IN ({literals(['true', 'false'])})", f"{text} = {literal('true')}")
        return typed, when(f"{value} IS NOT NULL AND {typed} IS NULL", literal(f"cast:{field}"))
    if spec.spark_type == "string":
        return value, None
    return f"try_cast({value} AS {data_type(spec.spark_type)})", cast_error_text(
        value, spec.spark_type, field
    )


def _unlisted(
    parameters: str,
    selector: str,
    groups: Mapping[str, tuple[ParameterSpec, ...]],
    always: tuple[ParameterSpec, ...],
) -> str:
    """The entries of `parameters` whose key neither `always` nor `groups[selector]` lists."""
    common = [s.key for s in always]
    listed = " ".join(
        f"WHEN {selector} = {literal(group_name)} "
        f"THEN {_key_array(dict.fromkeys([*common, *(s.key for s in group)]))}"
        for group_name, group in groups.items()
    )
    known = f"CASE {listed} ELSE {_key_array(common)} END" if groups else _key_array(common)
    keep = f"(_unlisted_key, _unlisted_value) -> NOT array_contains({known}, _unlisted_key)"
    return f"map_filter({parameters}, {keep})"


def _key_array(keys: Iterable[str]) -> str:
    """array<string> literal of the keys."""
    return strings(literal(key) for key in keys)


def ece_envelope(bronze: DataFrame) -> DataFrame:
    """Bronze ECE rows with the common fields parsed (explicit schema, scalars as strings), from the
    bare event of each record, however it was delivered (`silver/datahub_envelopes.py`). Records
    that deliver another kind of event are left out (`silver.datahub_ignored_events` keeps them).

    Adds entity_urn, entity_type, category, operation, modifier, actor, impersonator, event_version,
    parameters (map<string,string>), event_time, event_date, event_id, is_action_request and
    `_envelope_errors`; keeps the bronze columns. Corrupt rows get nulls and a raw-based event_id.
    """
    catalog = load_catalog()
    is_corrupt = name("is_corrupt")
    entity_changes = bronze.where(f"{is_corrupt} OR ({other_event_type_text(name('raw'))}) IS NULL")
    parsed = (
        entity_changes.select(
            "*", column(when(f"NOT {is_corrupt}", bare_event_text(name("raw"))), "_bare_event")
        )
        .select(
            "*",
            column(
                when(f"NOT {is_corrupt}", f"from_json({name('_bare_event')}, {literal(_ENVELOPE_SCHEMA)})"),
                "_record",
            ),
        )
        .select("*", column(_nested_as_text(), "_nested"))
        .select("*", column(_parameters_text(), "_parameters"), column(_audit_stamp_text(), "_stamp"))
    )

    def record(field: str) -> str:
        return name("_record", field)

    stamp_ok = f"{name('_stamp', '_corrupt_record')} IS NULL"
    actor = when(stamp_ok, name("_stamp", "actor"))
    time = when(stamp_ok, name("_stamp", "time"))
    event_time = event_epoch_to_timestamp_text(time)
    parameters = name("_parameters")
    raw_id = deterministic_id_text(literal(SOURCE_NAME), f"coalesce({name('raw')}, {name('raw_base64')})")
    record_id = deterministic_id_text(
        literal(SOURCE_NAME),
        *[record(field) for field in ("entityUrn", "category", "operation", "modifier")],
        canonical_map_text(parameters),
        actor,
        time,
    )
    event_id = f"CASE WHEN {is_corrupt} THEN {raw_id} ELSE {record_id} END"
    envelope_errors = [
        corrupt_error_text(),
        when(f"NOT ({stamp_ok})", literal("cast:auditStamp")),
        when(f"{time} IS NOT NULL AND {event_time} IS NULL", literal("cast:auditStamp.time")),
        cast_error_text(record("version"), "int", "version"),
        when(
            f"{name('_nested', 'parameters')} IS NOT NULL AND {parameters} IS NULL",
            literal("cast:parameters"),
        ),
    ]
    return parsed.select(
        *bronze.columns,
        column(event_id, "event_id"),
        column(event_time, "event_time"),
        column(f"to_date({event_time})", "event_date"),
        column(epoch_unit_text(time), "event_time_unit"),
        column(record("entityUrn"), "entity_urn"),
        column(record("entityType"), "entity_type"),
        column(record("category"), "category"),
        column(record("operation"), "operation"),
        column(record("modifier"), "modifier"),
        column(actor, "actor"),
        column(when(stamp_ok, name("_stamp", "impersonator")), "impersonator"),
        column(f"try_cast({record('version')} AS INT)", "event_version"),
        column(parameters, "parameters"),
        column(
            coalesce_false(f"{record('entityType')} = {literal(catalog.proposal_entity_type)}"),
            "is_action_request",
        ),
        column(f"array({', '.join(envelope_errors)})", "_envelope_errors"),
    )


def _nested_as_text() -> str:
    """struct<parameters, auditStamp> as JSON text, for the well-formed records whose typed
    parameters or auditStamp is null (absent or a misfit): the only rows parsed twice."""
    misfit = f"{name('_record', 'parameters')} IS NULL OR {name('_record', 'auditStamp')} IS NULL"
    return when(
        f"NOT {name('is_corrupt')} AND ({misfit})",
        f"from_json({name('_bare_event')}, {literal(_NESTED_AS_TEXT_SCHEMA)})",
    )


def _parameters_text() -> str:
    """map<string,string>: the parsed map, else the field's text parsed as one (so a JSON-encoded
    object is accepted, as the text of a parsed object is), else null."""
    typed = name("_record", "parameters")
    again = f"from_json({name('_nested', 'parameters')}, {literal('map<string,string>')})"
    return f"coalesce({typed}, {again})"


def _audit_stamp_text() -> str:
    """struct<actor, time, impersonator, _corrupt_record> (strings): the parsed auditStamp, else its
    text parsed with an unparseable text kept in `_corrupt_record` (then `cast:auditStamp`)."""
    typed = name("_record", "auditStamp")
    fields = ", ".join(f"{literal(f)}, {name('_record', 'auditStamp', f)}" for f in _AUDIT_STAMP_FIELDS)
    as_parsed = f"named_struct({fields}, {literal('_corrupt_record')}, CAST(NULL AS STRING))"
    again = (
        f"from_json({name('_nested', 'auditStamp')}, {literal(_AUDIT_STAMP_SCHEMA)}, "
        f"map({literals(['columnNameOfCorruptRecord', '_corrupt_record'])}))"
    )
    return f"CASE WHEN {typed} IS NOT NULL THEN {as_parsed} ELSE {again} END"


def ece_errors(typed: TypedParameters) -> Column:
    """A row's `_errors`: the envelope's (corrupt, auditStamp, version, parameters), then the casts."""
    return column(
        f"filter(concat({name('_envelope_errors')}, {strings(typed.errors)}), _ece_error -> _ece_error IS NOT NULL)"
    )


def schema_field_parent_text(entity_urn: str) -> str:
    """The dataset URN of a `urn:li:schemaField:(<dataset urn>,<field path>)`, else null."""
    return f"nullif(regexp_extract({entity_urn}, {literal(_SCHEMA_FIELD_PARENT)}, 1), {literal('')})"
