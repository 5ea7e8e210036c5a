"""Build an evidence pack: the in-scope changes, their raw records, the versions, rules and code.

Every table is read at one pinned version: the versions are taken newest layer first (gold, then
silver, then bronze), so a run committing meanwhile can only add rows a pinned gold version
does not name yet, and every change read finds its silver and bronze rows. Given the versions
of an earlier pack (`versions`), the same scope is built again from them, byte for byte, however
much has landed since (as long as a vacuum has not removed those versions' files).

The pack holds no time of its own building: what identifies it is its scope and versions.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gold.change_history import COLUMNS
from gold.change_history import SOURCES as CHANGE_SOURCES
from pipelines.evidence import canonical
from pipelines.evidence.manifest import MANIFEST, write_manifest
from pipelines.evidence.scope import Scope
from pipelines.evidence.trace import bronze_records, bronze_table_of, link_key, record_key, silver_links
from pipelines.store import TableStore

CHANGES = "gold.change_history"
FILES = {
    "readme": "README.txt",
    "scope": "scope.json",
    "versions": "versions.json",
    "changes": "changes.jsonl",
    "trace": "trace.jsonl",
    "records": "raw_records.jsonl",
    "rules": "rules.json",
    "code": "code.json",
}


_FILE_NOTES = (
    (FILES["changes"], "the changes in scope, rows of gold.change_history, ordered by event_time, change_id"),
    (
        FILES["trace"],
        "per change: its silver table and row, and its bronze record (file, index, ingestion time)",
    ),
    (
        FILES["records"],
        "the bronze records the changes came from, as landed (raw), ordered by table, file, index",
    ),
    (FILES["scope"], "the scope above"),
    (FILES["versions"], "the Delta version of every table read"),
    (
        FILES["rules"],
        "digests of the configuration files and expectation suites, the governance rules in force",
    ),
    (FILES["code"], "the package version and a digest of its source files"),
    (MANIFEST, "SHA-256 and size of every other file"),
)


class PackError(RuntimeError):
    """The pack cannot be built as asked: no change history, an unusable output folder."""


def tables_read() -> list[str]:
    """The tables a pack reads, newest layer first: the change history, the silver tables it is
    built from, the bronze tables those are typed from."""
    bronze = sorted({bronze_table_of(table) for table in CHANGE_SOURCES})
    return [CHANGES, *CHANGE_SOURCES, *bronze]


def pinned_versions(store: TableStore, given: dict[str, int] | None = None) -> dict[str, int]:
    """The version each table is read at: `given` as it is (an earlier pack's), else each existing
    table's latest, asked newest layer first."""
    if given is not None:
        return dict(given)
    versions: dict[str, int] = {}
    for table in tables_read():
        version = store.version(table) if store.exists(table) else None
        if version is not None:
            versions[table] = version
    return versions


@dataclass(frozen=True)
class PackSummary:
    folder: Path
    changes: int
    records: int
    untraced: int
    versions: dict[str, int]


def _change_rows(store: TableStore, scope: Scope, version: int) -> list[dict[str, Any]]:
    rows = store.read(CHANGES, version=version, where=scope.bounds()).where(scope.condition())
    return canonical.collect(rows.select(*[c for c in COLUMNS if c in rows.columns]))


def build_pack(
    store: TableStore,
    scope: Scope,
    out: str | Path,
    rules: dict[str, Any],
    code: dict[str, Any],
    versions: dict[str, int] | None = None,
) -> PackSummary:
    """Write the pack of `scope` into `out` (a new or empty folder) and return what it holds."""
    folder = Path(out)
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise PackError(f"{folder} exists and is not an empty folder: give a new folder to --out")
    pinned = pinned_versions(store, versions)
    if CHANGES not in pinned:
        raise PackError(f"the warehouse has no {CHANGES}: run the pipeline's gold layer first")

    changes = _change_rows(store, scope, pinned[CHANGES])
    links = silver_links(store, pinned, changes) if changes else {}
    records = bronze_records(store, pinned, list(links.values()))
    found = {record_key(r) for r in records}
    trace = []
    for change in changes:
        link = links.get(change["change_id"])
        if link is None:
            trace.append({"change_id": change["change_id"], "silver_table": None, "bronze_table": None})
        else:
            trace.append({**link.document(change["change_id"]), "record_found": link_key(link) in found})
    untraced = sum(1 for t in trace if not t.get("record_found"))

    folder.mkdir(parents=True, exist_ok=True)
    texts = {
        "scope": canonical.pretty(scope.as_document()),
        "versions": canonical.pretty({"tables": pinned}),
        "changes": canonical.json_lines(changes, key=lambda r: (r["event_time"], r["change_id"])),
        "trace": canonical.json_lines(trace, key=lambda r: (r["change_id"],)),
        "records": canonical.json_lines(records, key=record_key),
        "rules": canonical.pretty(rules),
        "code": canonical.pretty(code),
    }
    texts["readme"] = readme(scope, pinned, len(changes), len(records), untraced)
    for key, text in texts.items():
        (folder / FILES[key]).write_text(text, encoding="utf-8", newline="\n")
    write_manifest(folder)
    return PackSummary(folder, len(changes), len(records), untraced, pinned)


def readme(scope: Scope, versions: dict[str, int], changes: int, records: int, untraced: int) -> str:
    """The pack's README.txt: what it is, what each file holds, how to check it."""
    document = scope.as_document()
    lines = [
        "Evidence pack: catalog changes and the raw records they came from",
        "",
        "Scope",
        f"  event_time from {document['from']} (inclusive) to {document['to']} (exclusive)",
        f"  actor:   {scope.actor or '(any)'}",
        f"  entity:  {scope.entity or '(any)'}" + ("  (and its fields)" if scope.entity else ""),
        f"  catalog: {scope.catalog or '(any)'}",
        "",
        f"Holds {changes} changes and {records} raw records"
        + (f"; {untraced} changes whose raw record was not found (see trace.jsonl)" if untraced else "")
        + ".",
        "",
        "Table versions read (every table at one pinned Delta version):",
        *[f"  {table} @ {versions[table]}" for table in sorted(versions)],
        "",
        "Files",
        *[f"  {name:<18} {what}" for name, what in _FILE_NOTES],
        "",
        "The pack holds no time of its own building: built again from the same table versions",
        "(lakehouse evidence ... --versions-from THIS_FOLDER) it is identical byte for byte.",
        "",
        "Verify",
        "  lakehouse evidence verify THIS_FOLDER",
        "  recomputes every file's SHA-256 and names each file missing, changed or not listed;",
        "  it exits non-zero when any is. Without the tool: `sha256sum FILE` of each file must equal",
        f"  its entry in {MANIFEST}, and no file may be there that the manifest does not list.",
    ]
    return "\n".join(lines) + "\n"
