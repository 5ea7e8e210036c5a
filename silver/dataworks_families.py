"""Typed DataWorks family tables: one generic transform driven by a per-family payload schema.

`silver.dataworks_events` keeps each DataWorks payload as JSON text; the fifteen
family tables (`silver.dataworks_<family>`, see silver/COLUMNS.md) type it. The
payload schemas differ but the work does not, so each family module only declares
a `Family` (its payload fields as data, its entity key, enum names) and this
module does the rest:

- rows: the events whose event code the catalog (`conf/catalogs/dataworks_events.yaml`)
  assigns to the family;
- parsing: `from_json` with every scalar read as a string, then `try_cast`, so a
  masked or malformed value (`"9***4"`) becomes null and adds `cast:data.<path>`
  to `_errors` (the runner quarantines the row, the field named);
- schema drift: payload keys the schema does not list are kept in `data_extra`
  (map<string,string> of key -> JSON text); a listed object or array of objects
  that holds unlisted keys is kept there whole, under its key;
- times: epoch milliseconds are UTC instants; `yyyy-MM-dd HH:mm:ss` texts are
  DataWorks wall-clock times in Asia/Shanghai (UTC+8, the zone of the DataWorks
  console and scheduler) unless the family names a payload field holding the zone
  (DI jobs: `setting.timeZone`). Both become UTC timestamps;
- envelope: event_id, event_time, event_date, event_code, tenant_id, project_id and
  operator come from silver.dataworks_events; `extension_point` (true for blocking
  pre-events) and the `<column>_name` of enum codes come from the catalog;
- order: a family whose payload says when its object changed (`change_time`: modifyTime,
  finishTime, ...) gets `changed_at`, the first of them present. The CloudEvent `time` has
  whole seconds and DataWorks publishes several events of one object within a second, so
  events of one object are ordered by `change_order`: `changed_at` (else the event time), then
  the event time, then the event id.

Field types (`Spec`): "string", "json" (nested value kept as JSON text), "long",
"int", "double", "boolean", "timestamp" (epoch ms or local date-time text),
"array<long>" / "array<int>" / "array<string>" (a JSON array or a comma-separated
text), or `[{path: Spec, ...}]` for an array of objects (typed to array<struct>).
Paths are dotted for nested objects (`process.applicant`); columns are their
snake_case (`process_applicant`) unless `names` says otherwise.

    >>> FAMILY = Family(
    ...     table="silver.dataworks_project_changes",
    ...     fields={"projectName": "string", "timestamp": "timestamp"},
    ...     entity=(("project", "project_id"),),
    ... )
    >>> SPEC = family_spec(FAMILY)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType

from pipelines.core.table_specs import ERRORS_COLUMN, RowSelector, SilverTableSpec
from pipelines.runtime.sql_expressions import (
    any_of,
    coalesce_false,
    column,
    literal,
    literals,
    name,
    non_null_strings,
    when,
)
from silver import dataworks_catalog as catalog
from silver.common import LINEAGE, deterministic_id, epoch_millis_to_timestamp_text, lineage

SOURCE = "silver.dataworks_events"
DEFAULT_TIME_ZONE = "Asia/Shanghai"
LOCAL_DATETIME = "yyyy-MM-dd HH:mm:ss"
EPOCH_NUMBER = r"^\s*-?[0-9]+\s*$"  # a value of only digits is epoch milliseconds

Spec = str | list  # a scalar type name, or [dict[path, Spec]] for an array of objects

# Payload keys every family reads; typed into the envelope columns, checked here too.
COMMON_FIELDS: dict[str, str] = {
    "eventCode": "string",
    "tenantId": "long",
    "projectId": "long",
    "operator": "string",
}
CHANGED_AT = "changed_at"


def change_order(tie_breakers: tuple[Column, ...] = ()) -> Column:
    """The order of one object's events, as a struct to compare (`max_by`, windows): `changed_at`
    (else the event time), the event time, then `tie_breakers`, then the event id."""
    return F.struct(
        F.coalesce(F.col(CHANGED_AT), F.col("event_time")).alias("changed"),
        F.col("event_time").alias("event_time"),
        *[t.alias(f"tie_{n}") for n, t in enumerate(tie_breakers)],
        F.col("event_id").alias("event_id"),
    )


ENVELOPE_COLUMNS = (
    "event_id",
    "event_time",
    "event_date",
    "event_code",
    "tenant_id",
    "project_id",
    "operator",
)


@dataclass(frozen=True)
class Family:
    """What differs between family tables; everything else is `family_transform`.

    fields    payload path -> Spec, in output order (the payload schema, as data)
    entity    (kind, column) candidates for `entity_key`, first present wins; a column may be
              an array (used when it holds exactly one id) or a tuple of columns joined by '.'
    names     payload path -> output column, where snake_case of the path reads badly
    enums     output column -> catalog enum kind; adds `<column>_name` after the column
    derived   extra columns computed from the typed columns (lazy: Columns need a session)
    items     array<struct> to explode into one row per item (event_id then derives from the
              parent event_id and `item_index`; no items still gives one row)
    drop      typed columns only used to build derived columns or items
    zone_field  payload path of a time-zone id for the family's local date-times
    change_time  payload paths (typed "timestamp") saying when the object changed, in order of
              preference; the first present fills `changed_at`
    payload_entity  (kind, payload path) candidates tried before `entity` where its column is
              computed (`silver.dataworks_entity_keys`), e.g. the job id of a DI start whose
              `entity` column comes from its exploded items; instead of a path, a function of
              the payload look-up (`field(path)` -> text) giving the id, with the paths it
              reads in its `reads` attribute
    """

    table: str
    fields: Mapping[str, Spec]
    entity: tuple[tuple[str, str | tuple[str, ...]], ...]
    names: Mapping[str, str] = field(default_factory=dict)
    enums: Mapping[str, str] = field(default_factory=dict)
    derived: Callable[[], list[Column]] | None = None
    items: Callable[[], Column] | None = None
    item_index: str = "item_index"
    drop: tuple[str, ...] = ()
    zone_field: str | None = None
    change_time: tuple[str, ...] = ()
    payload_entity: tuple[tuple[str, str | Callable[[Callable[[str], Column]], Column]], ...] = ()

    def __post_init__(self) -> None:
        overlap = set(self.fields) & set(COMMON_FIELDS)
        if overlap:
            raise ValueError(f"{self.table}: {sorted(overlap)} are common fields, typed for every family")
        _tree(self.fields, self.table)  # fails on a path that is both a value and an object
        for kind in self.enums.values():
            catalog.status_names(kind)  # fails on an enum kind the catalog lacks
        for path in self.change_time:
            if self.fields.get(path) != "timestamp":
                raise ValueError(f"{self.table}: change_time {path!r} is not a timestamp field")

    def column(self, path: str) -> str:
        """Output column of a payload path."""
        return self.names.get(path) or snake_case(path)


def family_transform(family: Family) -> Callable[[DataFrame], DataFrame]:
    """`DataFrame -> DataFrame` typing the family's rows of silver.dataworks_events."""

    def transform(events: DataFrame) -> DataFrame:
        return _transform(events, family)

    transform.__doc__ = f"silver.dataworks_events rows -> {family.table} rows."
    return transform


def family_spec(family: Family) -> SilverTableSpec:
    """The SilverTableSpec of a family table. Its row selector mirrors the transform's filter (the
    catalog's family of the event code), so a batch without the family's events types nothing."""
    return SilverTableSpec(
        table=family.table,
        source=SOURCE,
        transform=family_transform(family),
        selects=RowSelector("event_code", lambda code: catalog.family_of(code) == family.table),
        source_unique=True,  # one row per envelope (or per item of it), keyed by its event_id
    )


def snake_case(path: str) -> str:
    """`process.approvalContent.applyReason` -> `process_approval_content_apply_reason`."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", path.replace(".", "_")).lower()


def spark_type(spec: str) -> str:
    """Spark SQL type of a scalar Spec's column, e.g. for a typed null in a derived struct."""
    if spec in _ELEMENT_TYPES:
        return f"array<{spark_type(_ELEMENT_TYPES[spec])}>"
    return {"long": "bigint", "json": "string"}.get(spec, spec)


# --- parsing -------------------------------------------------------------------------------------
# Values are Spark SQL expression texts (see pipelines/runtime/sql_expressions.py): a family's plan is dozens of
# casts and checks, and text makes each column one JVM call. Lambda variables carry the nesting
# depth of arrays of objects in their names, so an inner lambda never shadows an outer one.


def _tree(fields: Mapping[str, Spec], where: str) -> dict:
    """Dotted paths -> nested dict of keys (leaves are Specs)."""
    root: dict = {}
    for path, spec in fields.items():
        *parents, leaf = path.split(".")
        node = root
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ValueError(f"{where}: '{path}' nests under a field typed as a value")
        if leaf in node:
            raise ValueError(f"{where}: '{path}' is listed twice or is also an object")
        node[leaf] = spec
    return root


def _read_type(node: dict | Spec) -> str:
    """from_json type (DDL): objects as structs, every other value (arrays too) as its JSON text."""
    if isinstance(node, dict):
        return "STRUCT<" + ", ".join(f"{name(key)}: {_read_type(sub)}" for key, sub in node.items()) + ">"
    return "STRING"


def _objects(text: str, element: Mapping[str, Spec]) -> str:
    """An array of objects, from its JSON text (also when sent as a JSON-encoded string)."""
    return f"from_json({text}, {literal('ARRAY<' + _read_type(_tree(element, 'array element')) + '>')})"


def _at(value: str, path: str) -> str:
    return f"{value}.{name(*path.split('.'))}"


def _list(text: str) -> str:
    """Elements (as trimmed text) of a JSON array or a comma-separated text; null elements dropped."""
    trimmed = f"trim({text})"
    items = (
        f"CASE WHEN startswith({trimmed}, '[') THEN from_json({trimmed}, 'ARRAY<STRING>') "
        f"ELSE split({trimmed}, ',') END"
    )
    return f"filter(transform({items}, _i -> trim(_i)), _i -> _i IS NOT NULL AND _i != '')"


def _timestamp(text: str, zone: str) -> str:
    """Epoch milliseconds, or a `yyyy-MM-dd HH:mm:ss` wall-clock time in `zone`, as a UTC timestamp."""
    local = f"try_to_timestamp(concat_ws(' ', trim({text}), {zone}), {literal(LOCAL_DATETIME + ' VV')})"
    millis = epoch_millis_to_timestamp_text(f"trim({text})")
    return f"CASE WHEN {text} RLIKE {literal(EPOCH_NUMBER)} THEN {millis} ELSE {local} END"


_ELEMENT_TYPES = {"array<long>": "long", "array<int>": "int", "array<string>": "string"}
_UNFAILING = ("string", "json")


def _scalar(text: str, spec: str, zone: str) -> str:
    if spec in _UNFAILING:
        return text
    if spec in ("long", "int", "double", "boolean"):
        return f"try_cast(trim({text}) AS {spark_type(spec)})"
    if spec == "timestamp":
        return _timestamp(text, zone)
    if spec in _ELEMENT_TYPES:
        return f"transform({_list(text)}, _x -> try_cast(_x AS {spark_type(_ELEMENT_TYPES[spec])}))"
    raise ValueError(f"unknown payload field type '{spec}'")


def _scalar_bad(text: str, spec: str, zone: str) -> str:
    """True when a present value cannot be typed."""
    if spec in _ELEMENT_TYPES:
        items = _list(text)
        to = spark_type(_ELEMENT_TYPES[spec])
        return f"({text} IS NOT NULL AND ({items} IS NULL OR exists({items}, _x -> try_cast(_x AS {to}) IS NULL)))"
    return f"({text} IS NOT NULL AND {_scalar(text, spec, zone)} IS NULL)"


def _typed(value: str, spec: Spec, zone: str, depth: int = 0) -> str:
    """A parsed value (text, or array of structs of texts) typed by its Spec."""
    if isinstance(spec, list):
        element = spec[0]
        item = f"_o{depth}"
        fields = ", ".join(
            f"{literal(snake_case(p))}, {_typed(_at(item, p), s, zone, depth + 1)}"
            for p, s in element.items()
        )
        return f"transform({_objects(value, element)}, {item} -> named_struct({fields}))"
    return _scalar(value, spec, zone)


Check = Callable[[str, str], str]


def _checks(spec: Spec, path: str, depth: int = 0) -> list[tuple[str, Check]]:
    """(error name, bad(value, zone)) for every value under `spec` that a cast may reject."""
    if isinstance(spec, list):
        element = spec[0]
        item = f"_o{depth}"
        found: list[tuple[str, Check]] = [
            (f"cast:{path}", lambda v, z: f"({v} IS NOT NULL AND {_objects(v, element)} IS NULL)")
        ]
        for sub_path, sub_spec in element.items():
            for error, bad in _checks(sub_spec, f"{path}[].{sub_path}", depth + 1):
                found.append(
                    (
                        error,
                        lambda v, z, p=sub_path, bad=bad: coalesce_false(
                            f"exists({_objects(v, element)}, {item} -> {bad(_at(item, p), z)})"
                        ),
                    )
                )
        return found
    if spec in _UNFAILING:
        return []
    return [(f"cast:{path}", lambda v, z, spec=spec: _scalar_bad(v, spec, z))]


def _unlisted(text: str, node: dict | Spec, depth: int = 0) -> str:
    """True when the JSON text holds object keys the schema node does not list (at any depth)."""
    if isinstance(node, list):
        element = _tree(node[0], "array element")
        item = f"_u{depth}"
        return f"exists(from_json({text}, 'ARRAY<STRING>'), {item} -> {_unlisted(item, element, depth + 1)})"
    if not isinstance(node, dict):
        return "false"
    members = f"from_json({text}, 'MAP<STRING, STRING>')"
    key = f"_k{depth}"
    found = [f"exists(map_keys({members}), {key} -> NOT {key} IN ({literals(node)}))"]
    found += [
        _unlisted(f"{members}[{literal(k)}]", sub, depth + 1)
        for k, sub in node.items()
        if not isinstance(sub, str)
    ]
    return "(" + any_of(found) + ")"


def _data_extra(top: str, tree: dict) -> str:
    """Unlisted top-level keys, plus listed containers holding unlisted keys, as key -> JSON text."""
    unlisted_keys = f"map_filter({top}, (_k, _v) -> NOT _k IN ({literals(tree)}))"
    empty = "CAST(map() AS MAP<STRING, STRING>)"
    drifted = [
        f"coalesce({when(_unlisted(f'{top}[{literal(k)}]', sub), f'map({literal(k)}, {top}[{literal(k)}])')}, {empty})"
        for k, sub in tree.items()
        if not isinstance(sub, str)
    ]
    extra = f"map_concat({', '.join([unlisted_keys, *drifted])})"
    return when(f"size({extra}) > 0", extra)


# --- the transform -------------------------------------------------------------------------------


def _entity_key(family: Family, df: DataFrame) -> Column:
    """`dataworks:<kind>:<id>` from the first candidate that has an id (CONTRACT.md, entity keys)."""
    types = {f.name: f.dataType for f in df.schema.fields}
    keys = []
    for kind, source in family.entity:
        if isinstance(source, tuple):  # all parts present, joined by '.'
            parts = [_id_text(F.col(c)) for c in source]
            entity_id = F.concat(*[p for part in parts for p in (F.lit("."), part)][1:])
        elif isinstance(types.get(source), ArrayType):  # exactly one id in the array
            entity_id = F.when(F.size(source) == 1, _id_text(F.col(source)[0]))
        else:
            entity_id = _id_text(F.col(source))
        keys.append(F.concat(F.lit(f"dataworks:{kind}:"), entity_id))
    return F.coalesce(*keys)


def _id_text(value: Column) -> Column:
    return F.nullif(F.trim(value.cast("string")), F.lit(""))


def _transform(events: DataFrame, family: Family) -> DataFrame:
    fields = {**COMMON_FIELDS, **family.fields}
    tree = _tree(fields, family.table)
    codes = catalog.family_col(catalog.canonical_code_col(F.col("event_code")))
    parsed = events.where(codes == F.lit(family.table)).select(
        *ENVELOPE_COLUMNS,
        "data",
        *lineage(),
        F.from_json("data", _read_type(tree)).alias("_p"),
        F.from_json("data", "map<string,string>").alias("_top"),
    )
    zone = literal(DEFAULT_TIME_ZONE)
    if family.zone_field:
        zone = f"coalesce(nullif(trim({_at('_p', family.zone_field)}), ''), {zone})"

    typed_columns: list[Column] = []
    for path, spec in family.fields.items():
        column_name = family.column(path)
        typed_columns.append(column(_typed(_at("_p", path), spec, zone), column_name))
        if column_name in family.enums:
            typed_columns.append(
                catalog.status_name_col(family.enums[column_name], column(_at("_p", path))).alias(
                    f"{column_name}_name"
                )
            )
    problems = [when("data IS NOT NULL AND _top IS NULL", literal("json:data"))]
    for path, spec in fields.items():
        value = _at("_p", path)
        problems += [when(bad(value, zone), literal(error)) for error, bad in _checks(spec, f"data.{path}")]

    typed = parsed.select(
        *ENVELOPE_COLUMNS,
        *typed_columns,
        column(_data_extra("_top", tree), "data_extra"),
        *lineage(),
        column(non_null_strings(problems), ERRORS_COLUMN),
    )
    if family.change_time:
        changed_at = F.coalesce(*[F.col(family.column(path)) for path in family.change_time])
        typed = typed.select("*", changed_at.alias(CHANGED_AT))
    if family.derived:
        typed = typed.select("*", *family.derived())
    fixed = (*ENVELOPE_COLUMNS, "data_extra", *LINEAGE, ERRORS_COLUMN)
    payload_columns = [c for c in typed.columns if c not in fixed and c not in family.drop]
    event_ids: list[Column] = [F.col("event_id")]
    if family.items:
        typed = typed.select("*", F.posexplode_outer(family.items()).alias(family.item_index, "_item"))
        item_fields = [f.name for f in typed.schema["_item"].dataType.fields]
        clashes = sorted(set(item_fields) & set(typed.columns))
        if clashes:
            raise ValueError(f"{family.table}: item fields {clashes} clash with other columns")
        typed = typed.select("*", *[F.col("_item")[f].alias(f) for f in item_fields])
        event_ids = [
            deterministic_id("event_id", family.item_index).alias("event_id"),
            F.col("event_id").alias("parent_event_id"),
        ]
        payload_columns += [family.item_index, *item_fields]
    return typed.select(
        *event_ids,
        *ENVELOPE_COLUMNS[1:4],
        catalog.extension_point_col(catalog.canonical_code_col(F.col("event_code"))).alias("extension_point"),
        *ENVELOPE_COLUMNS[4:],
        _entity_key(family, typed).alias("entity_key"),
        *payload_columns,
        "data_extra",
        *lineage(),
        ERRORS_COLUMN,
    )
