"""The OpenMetadata pull's durable position: what is collected, what window is under way.

One JSON file per server under `<landing>/openmetadata/_state/` (landing discovery skips `_`
folders), replaced atomically after every step. `collected_until_ms`: every change event before
it is landed. `window`: the `[start, end)` being collected, with the event-type requests already
landed (`done`). `failures_seen_ms`: per subscription, the failure time of the newest failed
event landed, and `failures_recent` the failures of its last minute already landed (event id,
failure time), so the minute read again does not land them twice. A file is renamed into place before the state that counts it is saved, so a kill
between the two leaves a file the state does not know; the pull recognises it by its name and
does not fetch it again.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pipelines.collectors.landing_writer import write_atomically

STATE_FOLDER = "_state"
FORMAT_VERSION = 1


class StateError(Exception):
    """A state file that cannot be used; the message names it."""


def server_key(server: str) -> str:
    return hashlib.sha256(server.rstrip("/").encode("utf-8")).hexdigest()[:12]


@dataclass
class PullState:
    server: str
    collected_until_ms: int | None = None
    window: list[int] | None = None
    done: list[str] = field(default_factory=list)
    failures_seen_ms: dict[str, int] = field(default_factory=dict)
    failures_recent: dict[str, list[list]] = field(default_factory=dict)
    version: int = FORMAT_VERSION

    @property
    def key(self) -> str:
        return server_key(self.server)

    def plan(self, start_ms: int, end_ms: int) -> None:
        self.window = [start_ms, end_ms]
        self.done = []

    def finish_window(self) -> None:
        assert self.window is not None
        self.collected_until_ms = self.window[1]
        self.window = None
        self.done = []


def state_path(folder: Path, server: str) -> Path:
    return folder / STATE_FOLDER / f"openmetadata-{server_key(server)}.json"


def load_state(path: Path, server: str) -> PullState:
    """The saved state, or a fresh one when there is none."""
    if not path.exists():
        return PullState(server=server.rstrip("/"))
    try:
        state = PullState(**json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, TypeError) as exc:
        raise StateError(f"pull state {path} is unreadable ({exc}); move it away to start over") from exc
    if state.version != FORMAT_VERSION:
        raise StateError(f"pull state {path} has format {state.version}, expected {FORMAT_VERSION}")
    return state


def save_state(path: Path, state: PullState) -> None:
    write_atomically(path, (json.dumps(asdict(state), indent=1) + "\n").encode("utf-8"))
