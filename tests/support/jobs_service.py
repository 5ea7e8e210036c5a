"""The Databricks Jobs service, as far as it orders a job's tasks on one cluster.

A task starts once the tasks it `depends_on` are done, as its `run_if` asks (`ALL_SUCCESS`
unless told otherwise: all of them succeeded; `ALL_DONE`: all of them finished, however);
every task that is ready starts at once, in its own process; a failed task starts again up to
its `max_retries` times; a task whose condition cannot hold is skipped (`UPSTREAM_FAILED`).
A run's result follows its leaf tasks (those no task depends on), as Databricks documents it:
`FAILED` when one failed or was skipped, `SUCCESS_WITH_FAILURES` when they succeeded but
another task failed; the job's `on_failure` notifications fire on `FAILED` only, a task's on
its own failure.
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


def result_state(tasks: list[dict], runs: dict[str, TaskRun]) -> str:
    """The run's result: FAILED, SUCCESS_WITH_FAILURES or SUCCESS."""
    upstream = {d["task_key"] for task in tasks for d in task.get("depends_on") or []}
    leaves = [task["task_key"] for task in tasks if task["task_key"] not in upstream]
    if any(runs[key].state != "SUCCESS" for key in leaves):
        return "FAILED"
    return "SUCCESS_WITH_FAILURES" if any(r.state == "FAILED" for r in runs.values()) else "SUCCESS"


def failure_alerts(job: dict, runs: dict[str, TaskRun]) -> dict[str, list[str]]:
    """Who is alerted of a failure, by what alerts (`job`, or a task's key): mail addresses and
    notification destination IDs."""

    def recipients(settings: dict) -> list[str]:
        mail = (settings.get("email_notifications") or {}).get("on_failure") or []
        hooks = (settings.get("webhook_notifications") or {}).get("on_failure") or []
        return [*mail, *(hook["id"] for hook in hooks)]

    alerts = {}
    if result_state(job["tasks"], runs) == "FAILED" and recipients(job):
        alerts["job"] = recipients(job)
    for task in job["tasks"]:
        if runs[task["task_key"]].state == "FAILED" and recipients(task):
            alerts[task["task_key"]] = recipients(task)
    return alerts
