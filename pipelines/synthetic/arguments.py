"""The options of `lakehouse generate`, apart from the generator so a CLI start does not load it."""

from __future__ import annotations

import argparse
from datetime import datetime, timezone

from pipelines.synthetic.common import END_MS, RECORDS_PER_FILE, START_MS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `lakehouse generate`."""
    parser.add_argument("--out", required=True, help="landing folder to write (one sub-folder per source)")
    parser.add_argument("--events", required=True, type=int, help="total records to write over all sources")
    parser.add_argument("--seed", type=int, default=0, help="random seed (same seed, same files)")
    parser.add_argument(
        "--start", type=_epoch_ms, default=START_MS, help="first event time, ISO (UTC); default 2024-01-01"
    )
    parser.add_argument(
        "--end", type=_epoch_ms, default=END_MS, help="last event time, ISO (UTC); default end of 2025"
    )
    parser.add_argument(
        "--records-per-file",
        type=int,
        default=RECORDS_PER_FILE,
        help=f"records in a data file (default {RECORDS_PER_FILE:,})",
    )


def _epoch_ms(text: str) -> int:
    """Epoch ms of an ISO date or time (UTC unless it names an offset)."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not an ISO date or time: {text!r}") from error
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return int(moment.timestamp() * 1000)
