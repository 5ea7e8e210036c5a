"""The benchmark's workload: synthetic landing folders, the 1% increment, and the graph to run.

Why: every size must run on data written the same way (`lakehouse generate`),
and the increment must arrive as new files in the folders the pipeline already
watches, exactly as a later landing would.

    generate_landing(Path("/tmp/b/landing"), 250_000, seed=0)
    add_increment(Path("/tmp/b/landing"), 2_500, seed=1)   # -> (counts, "incr-1")
    with_engine(load_config(), "delta-spark")              # the same settings, another table engine
"""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
import tempfile
from pathlib import Path

from pipelines.core.config import Config

MB = 1024 * 1024
ENGINES = ("delta-rs", "delta-spark")  # the table engines `storage.engine` can name besides `auto`


def generate_landing(landing: Path, events: int, seed: int) -> dict[str, int]:
    """The base landing folder, written from scratch."""
    from pipelines.synthetic.generator import generate

    if landing.exists():
        shutil.rmtree(landing)
    return generate(landing, events, seed)


def add_increment(
    landing: Path, events: int, seed: int, after_base_of: int | None = None
) -> tuple[dict[str, int], str]:
    """Generate `events` more records and move them under `<source>/incr-<n>/` (new names, same folders).

    `after_base_of`: the base's event count. The increment's times then follow the base's
    2024-2025 (and the increments before it) at the base's pace, as a live feed's next batch
    does (its own late arrivals included); None spreads them over 2024-2025, inside the history.
    """
    from pipelines.synthetic.generator import generate

    number = 1
    while any((landing / source / f"incr-{number}").exists() for source in _sources(landing)):
        number += 1
    folder = f"incr-{number}"
    window = {} if after_base_of is None else {"window": window_after_base(after_base_of, events, number)}
    with tempfile.TemporaryDirectory(prefix="bench-incr-", dir=landing.parent) as scratch:
        counts = generate(scratch, events, seed, **window)
        for path in sorted(Path(scratch).rglob("*")):
            if path.is_file():
                relative = path.relative_to(scratch)
                target = landing / relative.parts[0] / folder / Path(*relative.parts[1:])
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(str(path), str(target))
    return counts, folder


def generate_increment(folder: Path, events: int, seed: int, after_base_of: int) -> dict[str, int]:
    """`events` records in `folder` (one sub-folder per source), their times right after a base of
    `after_base_of` events' (`window_after_base`): an increment to place in several landings."""
    from pipelines.synthetic.generator import generate

    if folder.exists():
        shutil.rmtree(folder)
    return generate(folder, events, seed, window=window_after_base(after_base_of, events, 1))


def place_increment(increment: Path, landing: Path, name: str = "incr-1") -> None:
    """Copy a generated increment into `landing` as new files: `<source>/<name>/...`."""
    for path in sorted(increment.rglob("*")):
        if path.is_file():
            relative = path.relative_to(increment)
            target = landing / relative.parts[0] / name / Path(*relative.parts[1:])
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)


SMALL_FILE_RECORDS = 10


def write_small_files(landing: Path, files: int, first: int = 0, source: str = "datahub_ece") -> None:
    """`files` JSON Lines files of `SMALL_FILE_RECORDS` DataHub entity change events each in
    `landing/<source>/`, numbered from `first`: a landing such as a collector that lands a file
    per batch leaves, in one folder (where listing it costs the most)."""
    folder = landing / source
    folder.mkdir(parents=True, exist_ok=True)
    for number in range(first, first + files):
        lines = []
        for index in range(SMALL_FILE_RECORDS):
            event = number * SMALL_FILE_RECORDS + index
            record = {
                "entityUrn": f"urn:li:dataset:(urn:li:dataPlatform:hive,db.t{event % 5000},PROD)",
                "entityType": "dataset",
                "category": "TAG",
                "operation": "ADD" if event % 3 else "REMOVE",
                "modifier": f"urn:li:tag:t{event % 50}",
                "auditStamp": {"time": 1_704_067_200_000 + event * 1000, "actor": "urn:li:corpuser:bench"},
                "version": 0,
            }
            lines.append(json.dumps(record))
        (folder / f"batch-{number:08d}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def window_after_base(base_events: int, events: int, number: int) -> tuple[int, int]:
    """(first, last) epoch ms of increment `number` (1, 2, ...): the time `events` take at the
    pace of a base of `base_events` over 2024-2025, right after the previous increment's."""
    from pipelines.synthetic.generator import END_MS, START_MS

    width = max(1, (END_MS - START_MS) * events // max(base_events, 1))
    first = END_MS + 1 + (number - 1) * width
    return first, first + width - 1


def _sources(landing: Path) -> list[str]:
    return sorted(p.name for p in landing.iterdir() if p.is_dir()) if landing.is_dir() else []


def landing_stats(landing: Path) -> dict[str, float]:
    files = [p for p in landing.rglob("*") if p.is_file()]
    return {"files": len(files), "mb": round(sum(p.stat().st_size for p in files) / MB, 1)}


def landing_digest(landing: Path) -> str:
    """SHA-256 over every file's relative path and bytes: equal digests mean the same landing data
    (each engine's run generates its own folder from the same seed)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in landing.rglob("*") if p.is_file()):
        digest.update(path.relative_to(landing).as_posix().encode() + b"\0")
        with path.open("rb") as data:
            for block in iter(lambda: data.read(MB), b""):
                digest.update(block)
    return digest.hexdigest()


def with_engine(config: Config, engine: str | None) -> Config:
    """`config` with `storage.engine` set to `engine` (unchanged for None)."""
    if engine is None:
        return config
    if engine not in ENGINES:
        raise ValueError(f"unknown engine '{engine}': one of {ENGINES}")
    raw = copy.deepcopy(config.raw)
    raw["storage"]["engine"] = engine
    return Config(raw)


def comma_list(text: str) -> list[str]:
    """`a,b,,c` -> ["a", "b", "c"]: the `--tasks` and `--sizes` arguments."""
    return [part for part in text.split(",") if part]
