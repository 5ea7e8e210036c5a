"""The task graph: its checks when loaded, its order, and cutting it down to some tasks."""

from __future__ import annotations

import pytest

from pipelines.core.config import ConfigError
from pipelines.core.graph import load_graph


def write_graph(tmp_path, body: str):
    path = tmp_path / "jobs.yaml"
    path.write_text("job_name: toy\ntasks:\n" + body)
    return path


TOY = """\
  - {key: a, module: bronze.a}
  - {key: b, module: bronze.b}
  - {key: s, module: silver.s, depends_on: [a]}
  - {key: t, module: silver.t, depends_on: [b]}
  - {key: g, module: gold.g, depends_on: [s, t]}
  - {key: h, module: gold.h, depends_on: [t]}
"""


def test_up_to_keeps_the_tasks_and_everything_they_depend_on_in_declaration_order(tmp_path):
    graph = load_graph(write_graph(tmp_path, TOY))
    assert [t.key for t in graph.up_to(["h"]).tasks] == ["b", "t", "h"]
    assert [t.key for t in graph.up_to(["g"]).ordered()] == ["a", "b", "s", "t", "g"]
    assert [t.key for t in graph.up_to(["s", "h"]).tasks] == ["a", "b", "s", "t", "h"]
    assert graph.up_to(["a"]).name == "toy"


def test_up_to_names_unknown_keys(tmp_path):
    graph = load_graph(write_graph(tmp_path, TOY))
    with pytest.raises(ConfigError, match=r"unknown task keys \['nope'\]"):
        graph.up_to(["g", "nope"])


def test_every_gold_task_of_the_pipeline_reaches_bronze():
    graph = load_graph()
    for task in graph.tasks:
        if task.layer == "gold":
            layers = {t.layer for t in graph.up_to([task.key]).tasks}
            assert layers == {"bronze", "silver", "gold"}, task.key


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("  - {key: a, module: bronze.a, depends_on: [z]}\n", r"depends on unknown \['z'\]"),
        ("  - {key: a, module: bronze.a}\n  - {key: a, module: bronze.b}\n", "duplicate task keys"),
        (
            "  - {key: a, module: bronze.a, depends_on: [b]}\n  - {key: b, module: bronze.b, depends_on: [a]}\n",
            "cycle",
        ),
        ("  - {key: a, module: bronze.a, needs: [b]}\n", r"unknown keys \['needs'\]"),
    ],
)
def test_a_graph_that_cannot_run_is_refused_when_loaded(tmp_path, body, message):
    with pytest.raises(ConfigError, match=message):
        load_graph(write_graph(tmp_path, body))
