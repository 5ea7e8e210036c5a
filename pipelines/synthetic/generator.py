"""Synthetic landing data for `lakehouse generate --out DIR --events N [--seed S]`.

Why: load tests and end-to-end checks need more events than the bundled samples,
with the dirt real feeds carry at known rates, and a story that is consistent
(no REMOVE before its ADD, nothing after a HARD_DELETE) so a reference model can
say what gold must contain. Pure Python, deterministic for a seed, no Spark.

Layout under DIR (every source gets exactly the planned number of records):
    datahub_ece/part-00000.jsonl, part-00002.jsonl.gz, ...   Entity Change Events
    datahub_audit/page-00000.json, ...                       audit search-response pages (nextScrollId chain)
    openmetadata/part-*.jsonl[.gz]                           OpenMetadata ChangeEvents
    dataworks/part-*.jsonl[.gz]                              DataWorks EventBridge CloudEvents
    dataworks/fc/msg-*.json                                  DataWorks Function Compute messages
    <source>/late/part-*.jsonl                               late arrivals (older event times), written last;
                                                             for audit also the malformed records
Rates: about 2% exact duplicates (same line again, sometimes in a later file),
1% late arrivals, 0.1% malformed records (truncated JSON or non-JSON text).
Event times are epoch milliseconds in 2024-2025 (`--start`, `--end` move the window), strictly
increasing per source.
"""

from __future__ import annotations

import argparse
import itertools
import random
from collections.abc import Iterator
from pathlib import Path

from pipelines.synthetic.common import (
    END_MS,
    RECORDS_PER_FILE,
    START_MS,
    AuditSink,
    Sink,
    make_clock,
    plan_records,
    split_events,
)
from pipelines.synthetic.datahub import EceWorld, audit_records
from pipelines.synthetic.dataworks import DataWorksWorld
from pipelines.synthetic.openmetadata import OpenMetadataWorld

# Driver ---------------------------------------------------------------------------------


def _drive(sink: Sink, lines: Iterator[str]) -> int:
    for line in itertools.islice(lines, sink.plan.unique):
        sink.emit(line)
    return sink.close()


def _drive_dataworks(sink: Sink, pairs: Iterator[tuple[str, str | None]]) -> int:
    for number, (line, fc) in enumerate(itertools.islice(pairs, sink.plan.unique)):
        if fc is None:
            sink.emit(line)
        else:
            sink.emit_document(f"fc/msg-{number:07d}.json", fc, line)
    return sink.close()


def generate(
    out_dir: str | Path,
    events: int,
    seed: int = 0,
    window: tuple[int, int] = (START_MS, END_MS),
    records_per_file: int = RECORDS_PER_FILE,
) -> dict[str, int]:
    """Write `events` landing records split over the four sources under `out_dir`; returns records per source.

    Example: `generate("/tmp/landing", 100_000, seed=7)` -> `{"datahub_ece": 55000, ...}`.
    The same arguments always write byte-identical files. `window`: the (first, last) epoch ms
    of the event times, 2024-2025 by default; a later window makes a feed's next batch.
    `records_per_file`: a data file's records (a smaller figure spreads a small landing over as
    many files as a large one has, late and repeated records across files included).
    """
    if events < 0:
        raise ValueError(f"events must be >= 0, got {events}")
    if records_per_file < 1:
        raise ValueError(f"records_per_file must be >= 1, got {records_per_file}")
    if window[1] < window[0]:
        raise ValueError(f"the time window ends before it starts: {window}")
    out = Path(out_dir)
    per_file = records_per_file
    written: dict[str, int] = {}
    for number, (source, count) in enumerate(split_events(events).items()):
        rng = random.Random(seed * 1_000_003 + number)
        plan = plan_records(rng, count)
        clock = make_clock(rng, plan.unique, *window)
        folder = out / source
        if source == "datahub_ece":
            written[source] = _drive(
                Sink(folder, plan, rng, records_per_file=per_file),
                EceWorld(rng, clock, plan.unique).records(),
            )
        elif source == "datahub_audit":
            written[source] = _drive(AuditSink(folder, plan, rng, seed, per_file), audit_records(rng, clock))
        elif source == "openmetadata":
            written[source] = _drive(
                Sink(folder, plan, rng, records_per_file=per_file), OpenMetadataWorld(rng, clock).records()
            )
        else:
            fc_budget = min(100, max(1, plan.unique // 100)) if plan.unique >= 20 else 0
            # ids continue with time: a later window (a feed's next batch) never reuses an instance id
            world = DataWorksWorld(rng, clock, fc_budget, first_serial=max(0, (window[0] - START_MS) // 1000))
            written[source] = _drive_dataworks(
                Sink(folder, plan, rng, records_per_file=per_file), world.records()
            )
    return written


def main(args: argparse.Namespace) -> int:
    """Run `lakehouse generate`; prints records per source and returns the exit code."""
    counts = generate(
        args.out,
        args.events,
        args.seed,
        window=(args.start, args.end),
        records_per_file=args.records_per_file,
    )
    for source, count in counts.items():
        print(f"{source}: {count} records")
    print(f"wrote {sum(counts.values())} records under {Path(args.out).resolve()}")
    return 0


if __name__ == "__main__":
    from pipelines.synthetic.arguments import add_arguments

    cli = argparse.ArgumentParser(prog="lakehouse generate", description=__doc__.splitlines()[0])
    add_arguments(cli)
    raise SystemExit(main(cli.parse_args()))
