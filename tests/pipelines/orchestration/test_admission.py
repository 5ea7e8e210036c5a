"""The admission rule on its own: where a ready task starts, given the tasks running."""

from __future__ import annotations

from pipelines.core.graph import Task
from pipelines.orchestration.admission import Admission, Start

SMALL = [Task(f"small_{n}", "silver.x") for n in range(3)]
LARGE = [Task(f"large_{n}", "silver.x") for n in range(2)]


def _by_name(task: Task) -> bool:
    return task.key.startswith("small")


def test_a_fixed_width_starts_any_task_beside_others_up_to_the_width():
    admission = Admission(2)
    assert not admission.one_by_one
    assert admission.start(LARGE[0], []) is Start.BESIDE
    assert admission.start(LARGE[1], [LARGE[0]]) is Start.BESIDE
    assert admission.start(SMALL[0], LARGE) is Start.WAIT


def test_small_tasks_run_side_by_side_and_a_large_one_alone():
    admission = Admission(2, _by_name)
    assert admission.start(SMALL[0], []) is Start.BESIDE
    assert admission.start(SMALL[1], [SMALL[0]]) is Start.BESIDE
    assert admission.start(SMALL[2], SMALL[:2]) is Start.WAIT  # the width is used up
    assert admission.start(LARGE[0], []) is Start.ALONE
    assert admission.start(LARGE[0], [SMALL[0]]) is Start.WAIT  # alone means after the others
    assert admission.start(SMALL[0], [LARGE[0]]) is Start.WAIT


def test_a_width_of_one_is_one_by_one():
    assert Admission(1).one_by_one
