"""The Databricks Jobs service, as far as it orders a job's tasks on one cluster.

A task starts once the tasks it `depends_on` are done, as its `run_if` asks (`ALL_SUCCESS`
unless told otherwise: all of them succeeded; `ALL_DONE`: all of them finished, however);
every task that is ready starts at once, in its own process; a failed task starts again up to
its `max_retries` times; a task whose condition cannot hold is skipped (`UPSTREAM_FAILED`).
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass


@dataclass
class TaskRun:
    """A task's last attempt: its process's exit and output, when it ran (monotonic seconds)."""

    key: str
    state: str  # SUCCESS | FAILED | UPSTREAM_FAILED
    attempts: int = 0
    started: float = 0.0
    finished: float = 0.0
    stdout: str = ""
    stderr: str = ""

    @property
    def seconds(self) -> float:
        return self.finished - self.started


def run_job(
    tasks: list[dict], start: Callable[[dict], subprocess.CompletedProcess], width: int | None = None
) -> dict[str, TaskRun]:
    """Run `tasks` (a job's task settings) as the Jobs service orders them; `start(task)` runs one
    attempt of a task in its own process and returns when it exits. Returns each task's run."""
    by_key = {task["task_key"]: task for task in tasks}
    waits = {key: [d["task_key"] for d in task.get("depends_on") or []] for key, task in by_key.items()}
    runs: dict[str, TaskRun] = {}
    running: dict[Future, TaskRun] = {}

    def attempt(run: TaskRun) -> tuple[subprocess.CompletedProcess, float]:
        return start(by_key[run.key]), time.monotonic()

    def launch(run: TaskRun) -> None:
        run.state = "RUNNING"
        if not run.attempts:
            run.started = time.monotonic()
        run.attempts += 1
        running[pool.submit(attempt, run)] = run

    with ThreadPoolExecutor(width or len(tasks)) as pool:
        while len(runs) < len(by_key) or running:  # every task started, and every attempt's outcome in
            for key in [k for k in by_key if k not in runs]:
                upstream = [runs.get(d) for d in waits[key]]
                if any(r is None or r.state == "RUNNING" for r in upstream):
                    continue
                needs_success = by_key[key].get("run_if", "ALL_SUCCESS") == "ALL_SUCCESS"
                if needs_success and any(r.state != "SUCCESS" for r in upstream):
                    runs[key] = TaskRun(key, "UPSTREAM_FAILED")
                    continue
                runs[key] = TaskRun(key, "RUNNING")
                launch(runs[key])
            if not running:
                continue
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                run = running.pop(future)
                done, run.finished = future.result()
                run.stdout, run.stderr = done.stdout, done.stderr
                run.state = "SUCCESS" if done.returncode == 0 else "FAILED"
                if run.state == "FAILED" and run.attempts <= int(by_key[run.key].get("max_retries", 0)):
                    launch(run)
    return runs


def overlapping(runs: dict[str, TaskRun]) -> list[tuple[str, str]]:
    """The pairs of tasks whose processes ran at the same time."""
    done = sorted((r for r in runs.values() if r.attempts), key=lambda r: r.started)
    return [
        (a.key, b.key)
        for i, a in enumerate(done)
        for b in done[i + 1 :]
        if b.started < a.finished and a.started < b.finished
    ]
