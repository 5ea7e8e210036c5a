"""A process's resident memory, read from /proc (Linux)."""

from __future__ import annotations


def rss_mb(pid: int | str = "self") -> float | None:
    """`VmRSS` of /proc/<pid>/status in MB; None off Linux."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None
