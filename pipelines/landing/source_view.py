"""One source's landing as a run sees it: the files of the folders that changed, and what the
ingestion log knows of them; then which folders the run may mark as settled. Where the
driver cannot see the landing, Spark lists it and reads the files to inspect
(`pipelines.landing.through_spark`).

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
from pipelines.landing.discovery import FileScan, LandingFile, changed_since_discovery, scan, stored_in_memory
from pipelines.landing.folder_marks import FolderMark
from pipelines.landing.listing import Listing, folder_of, list_landing
from pipelines.landing.through_spark import fetch_through_spark, list_through_spark
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
    spark: object | None = None  # the session that reads the landing, where the driver cannot
    fetched: dict[str, bytes] | None = None  # the bytes read through it, by path

    @property
    def through_spark(self) -> bool:
        return self.spark is not None

    def fetch(self, files: list[LandingFile]) -> None:
        """Read the bytes of the files about to be scanned, in one Spark job (through Spark only)."""
        if self.through_spark:
            self.fetched = fetch_through_spark(self.spark, files)

    def scan(self, file: LandingFile, wrappers: tuple[str, ...]) -> FileScan:
        """`discovery.scan` of `file`, from the disk or from the bytes fetched through Spark
        (FileNotFoundError when Spark no longer found it)."""
        if not self.through_spark:
            return scan(file, wrappers)
        if self.fetched is None or file.path not in self.fetched:
            raise FileNotFoundError(file.path)
        return scan(file, wrappers, stored_in_memory(self.fetched[file.path]))

    def changed_since_listing(self, file: LandingFile) -> str | None:
        """Why `file` no longer is as listed (`discovery.changed_since_discovery`); through Spark,
        Spark reads what it listed and nothing is checked here."""
        return None if self.through_spark else changed_since_discovery(file)

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


def reads_through_spark(config: Config, spark) -> bool:
    """`bronze.read_landing`: `driver` (its file system), `spark` (the Spark server's) or `auto`:
    through Spark where the driver cannot see the landing folder and Spark runs elsewhere (a
    Spark Connect client such as Databricks Connect on a laptop, the landing a volume)."""
    setting = config.section("bronze").get("read_landing", "auto")
    if setting != "auto":
        return setting == "spark"
    from pipelines.runtime.spark import is_connect

    return not config.landing.is_dir() and spark is not None and is_connect(spark)


def look(store: TableStore, config: Config, source: str) -> SourceView:
    """What is in `source`'s landing folder that a run may have to read."""
    folder = config.landing / config.sources[source]["folder"]
    if reads_through_spark(config, store.spark):
        listing = list_through_spark(store.spark, folder)
        known = log.known_files(store, source, folder)
        return SourceView(source, folder, {}, listing, known, skipping=False, spark=store.spark)
    skipping = skips_unchanged_folders(config)
    marks = folder_marks.read_marks(store, source) if skipping else {}
    listing = list_landing(folder, marks, float(config.section("bronze").get("folder_settle_seconds", 60)))
    known = log.known_files(store, source, folder, [f.key for f in listing.listed])
    return SourceView(source, folder, marks, listing, known, skipping)
