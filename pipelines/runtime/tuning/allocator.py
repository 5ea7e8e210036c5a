"""How delta-rs hands freed memory back: the profile's `delta_rs_allocator`, set before `deltalake` loads.

The `deltalake` wheel allocates with its own jemalloc, configured once, when the library loads,
from `_RJEM_MALLOC_CONF`. Its default keeps freed pages for reuse and returns them only as later
allocations come, so a local driver's resident memory stays high after a compaction;
`return_freed` has a background thread return dirty pages after a second. The variable is set
for this process (and the processes it starts) only when a command applies the setting, and a
value the user set wins.
"""

from __future__ import annotations

import os
import sys

ENV = "_RJEM_MALLOC_CONF"
SETTINGS = {
    "default": None,  # jemalloc as the wheel configures it
    "return_freed": "background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0",
}


def apply(setting: object) -> bool:
    """Put the allocator `setting` in force for this process; whether it is. Too late once
    `deltalake` is loaded (False, nothing changed); a `_RJEM_MALLOC_CONF` already set is kept."""
    value = SETTINGS.get(setting) if isinstance(setting, str) else None
    if value is None:
        return False
    if ENV in os.environ:
        return os.environ[ENV] == value
    if "deltalake" in sys.modules:
        return False
    os.environ[ENV] = value
    return True
