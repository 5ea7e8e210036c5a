"""The audit collector's durable position: what is collected, what is planned, where a scroll stands.

One JSON file per collection (a server and an event-type filter) under
`<landing>/datahub_audit/_state/` (landing discovery skips `_` folders), replaced atomically
after every step. Windows are half-open `[start_ms, end_ms)`; `windows` holds the planned ones
not yet finished, oldest first, so everything before `windows[0]` is collected (and
`collected_until_ms` says up to where once `windows` is empty). Inside `windows[0]`, `page` is
the number of the next page and `scroll_id` the scroll position that fetches it (None: the
window's first page); `boundaries` are the milliseconds where one of its pages ended, each read
again as its own window before the window counts as done (`paged`: its scroll is exhausted).

Why the state alone is not the whole truth: a page file is renamed into place before the state
that counts it is saved, so a kill between the two leaves a page the state does not know. The
collector's `recover` reads such pages back (their `nextScrollId` continues the scroll), which
is what makes "no page twice, none skipped" hold across kills.
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


def collection_key(server: str, event_types: list[str]) -> str:
    """A short stable name for one collection: the same server and filter continue the same state."""
    text = json.dumps({"server": server.rstrip("/"), "event_types": sorted(event_types)})
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


@dataclass
class CollectorState:
    server: str
    event_types: list[str]
    collected_until_ms: int | None = None
    windows: list[list[int]] = field(default_factory=list)
    page: int = 0
    scroll_id: str | None = None
    boundaries: list[int] = field(default_factory=list)
    paged: bool = False
    reread: list[int] | None = None
    recent_files: list[list] | None = None
    first_start_ms: int | None = None
    version: int = FORMAT_VERSION

    @property
    def key(self) -> str:
        return collection_key(self.server, self.event_types)

    def finish_window(self, landed: list[str] | None = None) -> None:
        """The first planned window is done: everything before its end is collected. `landed`:
        the window's files, kept in `recent_files` for the re-reads."""
        start, end = self.windows.pop(0)
        self.collected_until_ms = end
        self.remember([[name, end] for name in landed or []])
        self.page = 0
        self.scroll_id = None
        self.boundaries = []
        self.paged = False

    def remember(self, files: list[list], overlap_ms: int | None = None) -> None:
        """Add landed files (name, window end) to `recent_files`; with `overlap_ms`, drop those
        no re-read can reach any more."""
        known = {name for name, _ in self.recent_files or []}
        self.recent_files = [*(self.recent_files or []), *(f for f in files if f[0] not in known)]
        if overlap_ms is not None and self.collected_until_ms is not None:
            reach = self.collected_until_ms - overlap_ms
            if self.reread is not None:  # the re-read planned still needs its files
                reach = min(reach, self.reread[0])
            self.recent_files = [f for f in self.recent_files if f[1] > reach]

    def next_page(self, scroll_id: str, boundary_ms: int | None) -> None:
        """Page `page` of the first window was landed and ended at `boundary_ms`."""
        self.page += 1
        self.scroll_id = scroll_id
        if boundary_ms is not None and boundary_ms not in self.boundaries:
            self.boundaries.append(boundary_ms)

    def restart_window(self) -> None:
        """Page the first window again from its start (its scroll position was refused)."""
        self.page = 0
        self.scroll_id = None

    def split_window(self, middle: int) -> None:
        """Replace the first window (not yet paged) by its two halves at `middle`."""
        start, end = self.windows[0]
        self.windows[0:1] = [[start, middle], [middle, end]]
        self.page = 0
        self.scroll_id = None
        self.boundaries = []


def state_path(folder: Path, server: str, event_types: list[str]) -> Path:
    return folder / STATE_FOLDER / f"datahub_audit-{collection_key(server, event_types)}.json"


def load_state(path: Path, server: str, event_types: list[str]) -> CollectorState:
    """The saved state, or a fresh one when there is none."""
    if not path.exists():
        return CollectorState(server=server.rstrip("/"), event_types=sorted(event_types))
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
        state = CollectorState(**saved)
    except (ValueError, TypeError) as exc:
        raise StateError(f"collector state {path} is unreadable ({exc}); move it away to start over") from exc
    if state.version != FORMAT_VERSION:
        raise StateError(f"collector state {path} has format {state.version}, expected {FORMAT_VERSION}")
    return state


def save_state(path: Path, state: CollectorState) -> None:
    write_atomically(path, (json.dumps(asdict(state), indent=1) + "\n").encode("utf-8"))
