"""One source's landing as a run sees it: the files of the folders that changed, and what the
ingestion log knows of them; then which folders the run may mark as settled.

Why one place: a bronze task, the runner's weighing of it and its admission all ask what is
new in a source's landing; each look lists only the folders that changed since they were
marked (`pipelines.landing.listing`, `folder_marks`) and looks up the log rows of those folders
only (`ingestion_log.known_files`), so none of them pays for the files landed before.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pipelines.core.config import Config
from pipelines.landing import folder_marks
from pipelines.landing import ingestion_log as log
from pipelines.landing.folder_marks import FolderMark
from pipelines.landing.listing import Listing, folder_of, list_landing
from pipelines.store import TableStore

# Landing folders on object stores mounted as files keep no trustworthy folder times.
OBJECT_STORE_MOUNTS = ("/Volumes/", "/dbfs/")


@dataclass
class SourceView:
    """The landing `folder` of `source`: its folders' marks, the listing of the changed ones and
    the log's rows of the files there."""

    source: str
    folder: Path
    marks: dict[str, FolderMark]
    listing: Listing
    known: dict[str, list[log.KnownFile]]
    skipping: bool = True  # settled folders are skipped (and so marked)

    def settled(self, retried_keys: set[str]) -> list[FolderMark]:
        """The marks of the folders this look listed that are settled: quiet for the settle time,
        and holding no file that the next run must try again (`retried_keys`)."""
        retried = {folder_of(key) for key in retried_keys}
        return [f.mark() for f in self.listing.listed if f.quiet and f.key not in retried]

    def record(self, store: TableStore, retried_keys: set[str], run_id: str) -> None:
        """Mark the settled folders (call once the files' log rows are written)."""
        if self.skipping:
            folder_marks.record(store, self.source, self.settled(retried_keys), self.marks, run_id)


def skips_unchanged_folders(config: Config) -> bool:
    """`bronze.skip_unchanged_folders`: true, false or auto (true unless the landing is an object
    store mounted as files, whose folder times cannot be trusted)."""
    setting = config.section("bronze").get("skip_unchanged_folders", "auto")
    if isinstance(setting, bool):
        return setting
    return not str(config.landing).startswith(OBJECT_STORE_MOUNTS)


def look(store: TableStore, config: Config, source: str) -> SourceView:
    """What is in `source`'s landing folder that a run may have to read."""
    folder = config.landing / config.sources[source]["folder"]
    skipping = skips_unchanged_folders(config)
    marks = folder_marks.read_marks(store, source) if skipping else {}
    listing = list_landing(folder, marks, float(config.section("bronze").get("folder_settle_seconds", 60)))
    known = log.known_files(store, source, folder, [f.key for f in listing.listed])
    return SourceView(source, folder, marks, listing, known, skipping)
