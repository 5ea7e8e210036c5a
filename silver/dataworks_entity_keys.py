"""The one DataWorks entity-key rule, read from the payload JSON: what gold uses for every event.

The family tables declare their entity candidates once (`Family.entity`: kind and
column, first present wins, an array counted when it holds exactly one id) and
type `entity_key` from their typed columns. `gold.change_history` reads the
envelope table, not the families, so this module maps each family's candidates
back to the payload paths those columns are typed from and evaluates the same
rule on the JSON `data`. Candidates computed from other columns (`derived`,
exploded `items`) have no single path: a family may name payload paths for them
in `Family.payload_entity`. Events of no family (codes the catalog lacks) fall
back to the first id they name of `UNCATALOGED`, then the workspace.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from pyspark.sql import Column
from pyspark.sql import functions as F

from silver import (
    dataworks_approvals,
    dataworks_backfills,
    dataworks_di_job_starts,
    dataworks_dq_check_results,
    dataworks_dq_rule_events,
    dataworks_file_changes,
    dataworks_instance_operations,
    dataworks_instance_status_changes,
    dataworks_monitor_alerts,
    dataworks_node_changes,
    dataworks_node_operations,
    dataworks_project_changes,
    dataworks_resource_transfers,
    dataworks_table_changes,
    dataworks_workflow_status_changes,
)
from silver import dataworks_catalog as catalog
from silver.dataworks_families import COMMON_FIELDS, Family

FAMILIES: tuple[Family, ...] = tuple(
    module.FAMILY
    for module in (
        dataworks_node_changes,
        dataworks_file_changes,
        dataworks_table_changes,
        dataworks_di_job_starts,
        dataworks_node_operations,
        dataworks_backfills,
        dataworks_instance_status_changes,
        dataworks_instance_operations,
        dataworks_workflow_status_changes,
        dataworks_monitor_alerts,
        dataworks_approvals,
        dataworks_dq_check_results,
        dataworks_dq_rule_events,
        dataworks_project_changes,
        dataworks_resource_transfers,
    )
)
UNCATALOGED = (("node", "nodeId"), ("instance", "taskId"), ("dag", "dagId"), ("file", "fileId"))

# A candidate: (kind, payload paths joined by '.' or a function of the look-up, is the single
# path an array of ids)
Candidate = tuple[str, tuple[str, ...] | Callable, bool]


def _path_of(family: Family, column: str) -> tuple[str, bool] | None:
    """(payload path, is an array) a family column is typed from; None for computed columns."""
    fields = {**COMMON_FIELDS, **family.fields}
    for path, spec in fields.items():
        if isinstance(spec, str) and family.column(path) == column:
            return path, spec.startswith("array")
    return None


@cache
def candidates(table: str) -> tuple[Candidate, ...]:
    """The family's entity candidates as payload paths, in the family's order."""
    family = next(f for f in FAMILIES if f.table == table)
    out: list[Candidate] = []
    for kind, path in family.payload_entity:
        if callable(path):
            out.append((kind, path, False))
            continue
        spec = family.fields.get(path)
        out.append((kind, (path,), isinstance(spec, str) and spec.startswith("array")))
    for kind, source in family.entity:
        columns = source if isinstance(source, tuple) else (source,)
        found = [_path_of(family, c) for c in columns]
        if any(f is None for f in found):
            continue  # a computed column: no payload path
        paths = tuple(p for p, _ in found)
        out.append((kind, paths, len(found) == 1 and found[0][1]))
    return tuple(out)


def payload_paths() -> list[str]:
    """Every payload path the rule reads."""
    paths = [p for f in FAMILIES for _kind, ps, _ in candidates(f.table) if not callable(ps) for p in ps]
    paths += [p for f in FAMILIES for _kind, p in f.payload_entity if callable(p) for p in _read_by(p)]
    return list(dict.fromkeys([*paths, *[p for _kind, p in UNCATALOGED], "projectId"]))


def _read_by(function: Callable) -> tuple[str, ...]:
    """The payload paths a candidate function reads: its `reads` attribute."""
    return tuple(function.reads)


def _id_text(value: Column) -> Column:
    return F.nullif(F.trim(value.cast("string")), F.lit(""))


def _candidate_key(kind: str, paths, is_array: bool, field: Callable[[str], Column]) -> Column:
    if callable(paths):
        return F.concat(F.lit(f"dataworks:{kind}:"), _id_text(paths(field)))
    if is_array:
        value = field(paths[0])
        entity_id = F.when(F.json_array_length(value) == 1, _id_text(F.get_json_object(value, "$[0]")))
    else:
        parts = [_id_text(field(p)) for p in paths]
        entity_id = F.concat_ws(".", *parts) if len(parts) > 1 else parts[0]
        if len(parts) > 1:
            entity_id = F.when(F.greatest(*[p.isNull() for p in parts]) == F.lit(False), entity_id)
    return F.concat(F.lit(f"dataworks:{kind}:"), entity_id)


def entity_key_col(event_code: Column, project_id: Column, field: Callable[[str], Column]) -> Column:
    """`dataworks:<kind>:<id>` of an envelope row: its family's candidates on the payload
    (`field(path)` reads a payload path as text); uncataloged events by `UNCATALOGED`;
    the workspace (`project_id`) last."""
    family = catalog.family_col(catalog.canonical_code_col(event_code))
    key = F.lit(None).cast("string")
    for f in FAMILIES:
        own = F.coalesce(*[_candidate_key(k, ps, a, field) for k, ps, a in candidates(f.table)], F.lit(None))
        key = F.when(family == F.lit(f.table), own).otherwise(key)
    uncataloged = [F.when(family.isNull(), _candidate_key(k, (p,), False, field)) for k, p in UNCATALOGED]
    project = F.concat(
        F.lit("dataworks:project:"), _id_text(F.coalesce(project_id.cast("string"), field("projectId")))
    )
    return F.coalesce(key, *uncataloged, project)
