"""Helpers for the audit collector tests: a fixed clock and a collector wired to a stand-in server."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from pipelines.collectors.datahub_audit import AuditSettings, DataHubAuditCollector
from tests.support.stand_in_datahub import StandInAuditServer

TOKEN = "dh-token-7Qx9-never-in-files"
T0 = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.timezone.utc)  # the collector's "now"
T0_MS = int(T0.timestamp() * 1000)


def collector(server: StandInAuditServer, landing: Path, token: str | None = TOKEN, **settings):
    """A collector of `server` into `landing` whose clock says T0; returns it, its waits, its report lines."""
    options = {"page_size": 500, "settle_seconds": 60, "backoff_seconds": 0.01, **settings}
    waits: list[float] = []
    lines: list[str] = []
    made = DataHubAuditCollector(
        server=server.url,
        landing=landing,
        folder_name="datahub_audit",
        settings=AuditSettings(**options),
        token=token,
        event_types=[],
        report=lines.append,
        sleep=waits.append,
        clock=lambda: T0_MS / 1000,
    )
    return made, waits, lines
