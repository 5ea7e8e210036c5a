"""DuckDB reference: the core DataHub ECE work in one embedded SQL engine, to compare Spark against.

Why: a single-node engine on the same landing files says how much of the Spark
pipeline's time is the work itself and how much is the framework (JVM start,
per-task jobs, commits). It is also an independent second implementation of
the timeline rules, so its current tags/owners cross-check the gold tables.

Steps (each timed): ingest the `datahub_ece` files (JSON Lines, `.gz`, JSON
arrays or single documents; malformed lines skipped), drop repeats of the
contract's duplicate identity, flatten `parameters`, build the SCD2 tag and
ownership timelines with the contract's rules, write both to Parquet.

    ref = run_reference(Path("landing"), out_dir=Path("/tmp/ref"))
    ref.seconds, ref.current_tags()            # {(entity_urn, tag_urn), ...}
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

SOURCE_FOLDER = "datahub_ece"
LINE_SUFFIXES = (".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz")  # read line by line, bad lines skipped
DOCUMENT_SUFFIXES = (".json", ".json.gz")  # one document: a record or an array of records
SECONDS_BELOW = 100_000_000_000  # epochs below 1e11 are seconds, as in silver (`epoch_unit`)

COLUMNS = {
    "entityUrn": "VARCHAR",
    "entityType": "VARCHAR",
    "category": "VARCHAR",
    "operation": "VARCHAR",
    "modifier": "VARCHAR",
    "parameters": "MAP(VARCHAR, VARCHAR)",
    "auditStamp": 'STRUCT(actor VARCHAR, "time" BIGINT)',
}
SCHEMA_FIELD_PARENT = r"^urn:li:schemaField:\((urn:li:[^:]+:(?:\([^()]*\)|[^,()]*)),.*\)$"

# One association timeline: its gold table, the ECE categories feeding it and its key expressions.
TIMELINES = {
    "tag_timeline": (("TAG",), {"tag_urn": "coalesce(tag_urn, modifier)"}),
    "ownership_timeline": (
        ("OWNER", "OWNERSHIP"),
        {"owner_urn": "coalesce(owner_urn, modifier)", "owner_type": "owner_type"},
    ),
}


@dataclass
class Reference:
    """The open connection (tables `ece_events`, `tag_timeline`, `ownership_timeline`) and the timings."""

    con: duckdb.DuckDBPyConnection
    stage_seconds: dict[str, float] = field(default_factory=dict)
    records: int = 0
    events: int = 0
    skipped_documents: list[str] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        return sum(self.stage_seconds.values())

    def count(self, table: str, where: str = "TRUE") -> int:
        return self.scalar(f"SELECT count(*) FROM {table} WHERE {where}")

    def scalar(self, sql: str):
        """The single value of `sql`, the result fully consumed (DuckDB refuses new work otherwise)."""
        return self.con.execute(sql).fetchall()[0][0]

    def current_tags(self) -> set[tuple[str, str]]:
        """(entity_urn, tag_urn) of the open tag associations."""
        return set(
            self.con.execute("SELECT entity_urn, tag_urn FROM tag_timeline WHERE is_current").fetchall()
        )

    def current_owners(self) -> set[tuple[str, str, str | None]]:
        """(entity_urn, owner_urn, owner_type) of the open ownership associations."""
        rows = self.con.execute(
            "SELECT entity_urn, owner_urn, owner_type FROM ownership_timeline WHERE is_current"
        ).fetchall()
        return set(rows)

    def compare(self, table: str, other, columns: list[str], where: str = "TRUE") -> dict:
        """Rows of `table` (filtered by `where`) vs an Arrow table `other`, both ways, on `columns`.

        Returns counts and up to three examples per side: the cross-check a reader can act on.
        """
        self.con.register("_other", other)
        cols = ", ".join(columns)
        mine = f"SELECT {cols} FROM {table} WHERE {where}"
        theirs = f"SELECT {cols} FROM _other"
        try:
            only_ref = self.con.execute(f"{mine} EXCEPT ALL {theirs}").fetchall()
            only_other = self.con.execute(f"{theirs} EXCEPT ALL {mine}").fetchall()
            ref_rows = self.scalar(f"SELECT count(*) FROM ({mine})")
        finally:
            self.con.unregister("_other")
        return {
            "reference_rows": ref_rows,
            "other_rows": other.num_rows,
            "only_in_reference": len(only_ref),
            "only_in_other": len(only_other),
            "examples_only_in_reference": [list(map(str, r)) for r in only_ref[:3]],
            "examples_only_in_other": [list(map(str, r)) for r in only_other[:3]],
            "equal": not only_ref and not only_other,
        }


def _execute(con: duckdb.DuckDBPyConnection, sql: str, parameters: list | None = None) -> None:
    """Run a statement to completion: DuckDB 2 refuses new work while a result is unconsumed."""
    con.execute(sql, parameters).fetchall()


def landing_files(folder: Path, suffixes: tuple[str, ...]) -> list[str]:
    """Data files under `folder` with one of `suffixes`, in a fixed order (hidden files skipped)."""
    if not folder.is_dir():
        return []
    return sorted(
        str(p)
        for p in folder.rglob("*")
        if p.is_file() and not p.name.startswith((".", "_")) and p.name.endswith(suffixes)
    )


def _read_json_sql(fmt: str) -> str:
    return f"SELECT * FROM read_json(?, format='{fmt}', columns=?, ignore_errors=true)"


def _ingest(ref: Reference, folder: Path) -> None:
    """`ece_raw`: every record of the ECE files; a malformed line becomes an all-null row."""
    lines = landing_files(folder, LINE_SUFFIXES)
    documents = landing_files(folder, DOCUMENT_SUFFIXES)
    _execute(ref.con, _empty_raw_sql())
    if lines:
        _execute(
            ref.con, f"INSERT INTO ece_raw BY NAME {_read_json_sql('newline_delimited')}", [lines, COLUMNS]
        )
    if documents:
        _ingest_documents(ref, documents)
    ref.records = ref.count("ece_raw")


def _empty_raw_sql() -> str:
    columns = ", ".join(f'"{name}" {sql_type}' for name, sql_type in COLUMNS.items())
    return f"CREATE OR REPLACE TEMP TABLE ece_raw ({columns})"


def _ingest_documents(ref: Reference, documents: list[str]) -> None:
    """JSON documents in one read; when one is malformed (not skippable in bulk), file by file."""
    insert = f"INSERT INTO ece_raw BY NAME {_read_json_sql('auto')}"
    try:
        _execute(ref.con, insert, [documents, COLUMNS])
    except duckdb.Error:
        for path in documents:
            try:
                _execute(ref.con, insert, [[path], COLUMNS])
            except duckdb.Error:
                ref.skipped_documents.append(path)


def _events(ref: Reference) -> None:
    """`ece_events`: valid entity change events, once per duplicate identity, parameters flattened."""
    _execute(
        ref.con,
        f"""
        CREATE OR REPLACE TEMP TABLE ece_events AS
        WITH valid AS (
            SELECT entityUrn AS entity_urn, entityType AS entity_type, category, operation, modifier,
                   list_sort(map_entries(parameters)) AS params, parameters,
                   auditStamp.actor AS actor, auditStamp."time" AS time_raw
            FROM ece_raw
            WHERE entityUrn IS NOT NULL AND category IS NOT NULL AND operation IS NOT NULL
              AND auditStamp."time" IS NOT NULL
              AND entityType IS DISTINCT FROM 'actionRequest'
        ),
        unique_events AS (
            SELECT entity_urn, category, operation, modifier, params, actor, time_raw,
                   any_value(entity_type) AS entity_type, any_value(parameters) AS parameters
            FROM valid
            GROUP BY entity_urn, category, operation, modifier, params, actor, time_raw
        )
        SELECT entity_urn, entity_type, category, operation, modifier, actor,
               CASE WHEN abs(time_raw) < {SECONDS_BELOW} THEN time_raw * 1000 ELSE time_raw END AS event_ms,
               hash(entity_urn, category, operation, modifier, params, actor, time_raw) AS event_id,
               parameters['tagUrn'] AS tag_urn,
               parameters['termUrn'] AS term_urn,
               parameters['domainUrn'] AS domain_urn,
               parameters['ownerUrn'] AS owner_urn,
               parameters['ownerType'] AS owner_type,
               parameters['fieldPath'] AS field_path,
               coalesce(nullif(regexp_extract(entity_urn, '{SCHEMA_FIELD_PARENT}', 1), ''),
                        parameters['parentUrn']) AS parent_urn
        FROM unique_events
        """,
    )
    ref.events = ref.count("ece_events")


def _timeline_sql(table: str, categories: tuple[str, ...], keys: dict[str, str]) -> str:
    """SCD2 intervals: state = last action per association; a HARD_DELETE closes the entity and its fields.

    Transitions are the events whose "is ADD" differs from the previous event's; an
    interval starts at an ADD transition and ends at the next transition (the first
    later REMOVE or deletion), so no-op ADDs and REMOVEs never open or close anything.
    """
    names = list(keys)
    key_list = ", ".join(names)
    key_select = ", ".join(f"{expr} AS {name}" for name, expr in keys.items())
    key_a = ", ".join(f"a.{name}" for name in names)
    in_categories = ", ".join(f"'{c}'" for c in categories)
    window = f"PARTITION BY entity_urn, {key_list} ORDER BY event_ms, rank, event_id"
    return f"""
    CREATE OR REPLACE TEMP TABLE {table} AS
    WITH changes AS (
        SELECT entity_urn, parent_urn, {key_select}, operation AS action, event_ms, actor, event_id
        FROM ece_events
        WHERE category IN ({in_categories}) AND operation IN ('ADD', 'REMOVE')
    ),
    association_events AS (
        SELECT * EXCLUDE (parent_urn),
               max(parent_urn) OVER (PARTITION BY entity_urn, {key_list}) AS parent_urn
        FROM changes WHERE {names[0]} IS NOT NULL
    ),
    associations AS (
        SELECT entity_urn, {key_list}, max(parent_urn) AS parent_urn FROM association_events
        GROUP BY ALL
    ),
    deletions AS (
        SELECT entity_urn AS deleted_urn, event_ms, actor, event_id FROM ece_events
        WHERE category = 'LIFECYCLE' AND operation = 'HARD_DELETE'
    ),
    closing AS (
        SELECT a.entity_urn, {key_a}, a.parent_urn, 'ENTITY_DELETED' AS action, d.event_ms, d.actor, d.event_id
        FROM associations a JOIN deletions d ON d.deleted_urn = a.entity_urn
        UNION ALL
        SELECT a.entity_urn, {key_a}, a.parent_urn, 'ENTITY_DELETED' AS action, d.event_ms, d.actor, d.event_id
        FROM associations a JOIN deletions d ON d.deleted_urn = a.parent_urn
    ),
    ordered AS (
        SELECT *, CASE action WHEN 'ADD' THEN 0 WHEN 'REMOVE' THEN 1 ELSE 2 END AS rank
        FROM (SELECT entity_urn, {key_list}, parent_urn, action, event_ms, actor, event_id
              FROM association_events
              UNION ALL BY NAME SELECT * FROM closing)
    ),
    transitions AS (
        SELECT * FROM (
            SELECT *, coalesce(lag(action) OVER ({window}) = 'ADD', false) AS was_open FROM ordered
        ) WHERE (action = 'ADD') <> was_open
    ),
    intervals AS (
        SELECT *,
               lead(event_ms) OVER ({window}) AS end_ms,
               lead(action) OVER ({window}) AS end_action,
               lead(actor) OVER ({window}) AS end_actor
        FROM transitions
    )
    SELECT 'datahub' AS source, entity_urn, parent_urn, {key_list},
           make_timestamp(event_ms * 1000) AS valid_from,
           make_timestamp(end_ms * 1000) AS valid_to,
           event_ms * 1000 AS valid_from_us,
           end_ms * 1000 AS valid_to_us,
           end_ms IS NULL AS is_current,
           actor AS added_by,
           end_actor AS removed_by,
           CASE end_action WHEN 'REMOVE' THEN 'REMOVED' WHEN 'ENTITY_DELETED' THEN 'ENTITY_DELETED' END
               AS end_reason
    FROM intervals WHERE action = 'ADD'
    """


def _timelines(ref: Reference) -> None:
    for table, (categories, keys) in TIMELINES.items():
        _execute(ref.con, _timeline_sql(table, categories, keys))


def _write(ref: Reference, out_dir: Path) -> None:
    """Both timelines as Parquet: the Spark side pays for its writes too."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for table in TIMELINES:
        _execute(ref.con, f"COPY {table} TO '{out_dir / (table + '.parquet')}' (FORMAT parquet)")


def _timed(ref: Reference, name: str, step: Callable[[], None]) -> None:
    started = time.monotonic()
    step()
    ref.stage_seconds[name] = time.monotonic() - started


def run_reference(
    landing: Path, out_dir: Path | None = None, threads: int | None = None, memory_limit: str = "4GB"
) -> Reference:
    """Build the reference tables from `<landing>/datahub_ece`; timings per step in `stage_seconds`.

    `memory_limit` defaults to the Spark driver's heap (4 GB) so both engines get the same budget.
    """
    config = {"memory_limit": memory_limit}
    if threads:
        config["threads"] = str(threads)
    ref = Reference(duckdb.connect(config=config))
    folder = Path(landing) / SOURCE_FOLDER
    _timed(ref, "ingest", lambda: _ingest(ref, folder))
    _timed(ref, "dedup_flatten", lambda: _events(ref))
    _timed(ref, "timelines", lambda: _timelines(ref))
    if out_dir is not None:
        _timed(ref, "write", lambda: _write(ref, Path(out_dir)))
    return ref
