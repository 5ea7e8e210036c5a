"""Which task failures a Databricks job run's result reports, and so which tasks must alert.

The Jobs service ends a run `FAILED` only when one of its leaf tasks (no task depends on them)
failed or could not run; a run whose other tasks failed but whose leaves succeeded ends
`SUCCESS_WITH_FAILURES`, which the job's `on_failure` notifications do not fire on. A task's
failure reaches a leaf through the tasks that wait for its success: those whose `run_if` does
not run them after a failed upstream (`ALL_SUCCESS`, the default, and `NONE_FAILED`); a task
after it with `run_if: ALL_DONE` runs anyway and ends the chain. The leaves of this job
(`notify`, `maintenance`) run `ALL_DONE`, so every other task's failure is left unreported
unless the task itself alerts: the bundle gives those tasks the job's failure notifications,
and the bundle check refuses a job where one has none.
"""

from __future__ import annotations

from collections.abc import Iterable

# run_if values under which a task does not run when an upstream task failed: the failure
# passes on to it (it ends "upstream failed")
PASSES_FAILURE_ON = ("ALL_SUCCESS", "NONE_FAILED")
FAILURE_KEYS = ("email_notifications", "webhook_notifications")


def leaves(tasks: Iterable[dict]) -> list[str]:
    """The keys of the tasks no other task depends on."""
    tasks = list(tasks)
    upstream = {d.get("task_key") for t in tasks for d in t.get("depends_on") or []}
    return [t.get("task_key") for t in tasks if t.get("task_key") not in upstream]


def unreported(tasks: Iterable[dict]) -> list[str]:
    """The keys of the tasks whose failure leaves the run's result a success (with failures):
    no chain of tasks waiting for success leads from them to a leaf. In the job's order."""
    tasks = list(tasks)
    after: dict[str, list[dict]] = {}
    for task in tasks:
        for dependency in task.get("depends_on") or []:
            after.setdefault(dependency.get("task_key"), []).append(task)
    reported: dict[str, bool] = {}

    def reaches_a_leaf(key: str) -> bool:
        if key not in reported:
            reported[key] = False  # a cycle reports nothing (the Jobs service refuses one anyway)
            waiting = after.get(key, [])
            reported[key] = not waiting or any(
                t.get("run_if", "ALL_SUCCESS") in PASSES_FAILURE_ON and reaches_a_leaf(t.get("task_key"))
                for t in waiting
            )
        return reported[key]

    return [t.get("task_key") for t in tasks if not reaches_a_leaf(t.get("task_key"))]


def alerts_on_failure(task: dict) -> bool:
    """Whether a task carries failure notifications of its own (mail or a notification
    destination)."""
    return any(((task.get(key) or {}).get("on_failure") or []) for key in FAILURE_KEYS)
