"""The performance targets, checked against the figures of one or more sizes.

Why: a reader should see at a glance which goals hold on the machine the run
came from; a goal whose size was not run says so (N/A) with the largest
size's figure instead of pretending.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    name: str
    goal: str
    value: float | None
    passed: bool | None  # None: the run did not measure what the target needs
    note: str = ""

    @property
    def verdict(self) -> str:
        return "N/A" if self.passed is None else ("PASS" if self.passed else "MISS")


def _at(results: list[dict], events: int) -> dict | None:
    return next((r for r in results if r["events"] == events), None)


def _check(name: str, goal: str, value: float | None, ok: Callable[[float], bool], note: str = "") -> Target:
    return Target(name, goal, value, None if value is None else ok(value), note)


def evaluate_targets(results: list[dict]) -> list[Target]:
    """The issue's targets against the sizes that were run; N/A (with the largest size's figure) otherwise."""
    largest = max(results, key=lambda r: r["events"])
    one_m, four_m = _at(results, 1_000_000), _at(results, 4_000_000)
    at_largest = f"not run; at {largest['events']:,}:"
    incr_share = (one_m or largest)["incremental_share_of_full"]
    one_to_four = growth(results, 1_000_000, 4_000_000)
    dq_note = f"at {largest['events']:,} events" + ("" if largest["dq_split"] else " (silver total)")
    completed = {r["events"]: not r["full"]["error"] and not r["incremental"]["error"] for r in results}
    return [
        _check(
            "full pipeline, 1M events",
            "<= 60 s wall",
            one_m and one_m["full"]["wall_s"],
            lambda v: v <= 60 and completed[1_000_000],
            "" if one_m else f"{at_largest} {largest['full']['wall_s']:.1f} s",
        ),
        _check(
            "incremental 1% on top of 1M",
            "<= 10 s and < 10% of full",
            one_m and one_m["incremental"]["wall_s"],
            lambda v: v <= 10 and incr_share < 0.10 and completed[1_000_000],
            ("" if one_m else f"{at_largest} {largest['incremental']['wall_s']:.1f} s;")
            + f" {incr_share:.1%} of full"
            + _new_process_note(one_m or largest),
        ),
        _check(
            "growth per event 1M -> 4M",
            "< 15%",
            one_to_four,
            lambda v: v < 0.15,
            "" if one_to_four is not None else "needs --sizes with 1000000,4000000",
        ),
        _check(
            "DQ share of pipeline time", "< 25%", largest["dq_share_of_pipeline"], lambda v: v < 0.25, dq_note
        ),
        _check(
            "driver memory at 4M",
            "< 4096 MB",
            four_m and four_m["driver_memory_mb"],
            lambda v: v < 4096,
            "JVM + Python RSS peak" if four_m else f"{at_largest} {largest['driver_memory_mb']} MB",
        ),
    ]


def _new_process_note(result: dict) -> str:
    cold = result.get("new_process_incremental")
    if not cold or cold.get("error"):
        return ""
    return f"; in a new process {cold['wall_s']:.1f} s"


def per_event(result: dict) -> float:
    """Seconds per event of the full run, Spark start-up excluded (a constant, not a per-event cost)."""
    return result["full"]["pipeline_s"] / result["events"]


def growth(results: list[dict], small: int, large: int) -> float | None:
    a, b = _at(results, small), _at(results, large)
    return per_event(b) / per_event(a) - 1 if a and b else None
