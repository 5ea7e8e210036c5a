"""`python -m benchmarks.receiver` on a tiny run: a real `lakehouse receive` process takes every
post, the figures add up to what was sent and landed, the `--conf` file reaches the receiver, and
the targets judge the figures they name."""

from __future__ import annotations

import contextlib
import io
import json

from benchmarks import receiver as bench


def _run(*argv: str) -> tuple[dict, str, int]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = bench.main(list(argv))
    text = out.getvalue()
    return json.loads(text.strip().splitlines()[-1]), text, code


def test_a_tiny_run_lands_every_acknowledged_event_once_and_prints_every_figure(tmp_path):
    figures, text, _code = _run(
        "--events", "40", "--senders", "3", "--warm-up", "5", "--workdir", str(tmp_path)
    )
    sent = 5 + 40 + 40 + 3 * 40  # warm-up, one sender, the Actions action, three senders
    assert figures["events_sent"] == figures["events_acknowledged"] == figures["events_landed_once"] == sent
    assert figures["events_landed_twice_or_more"] == 0
    assert (figures["sequential_events"], figures["actions_events"], figures["concurrent_events"]) == (
        40,
        40,
        120,
    )
    for rate in ("sequential_events_per_s", "actions_events_per_s", "concurrent_events_per_s"):
        assert figures[rate] > 0
    assert 0 < figures["sequential_latency_ms_median"] <= figures["sequential_latency_ms_p99"]
    assert figures["landing_files"] == 2  # default settings: a segment per source, rolled at shutdown
    assert figures["files_per_100_events"] == round(100 * 2 / sent, 4)
    said = figures["receiver_said"]
    assert (
        f"openmetadata={sent - 40} bodies in 1 files" in said and "datahub_ece=40 bodies in 1 files" in said
    )
    assert [check["target"] for check in figures["targets"]] == [
        "sequential_events_per_s >= 200",
        "concurrent_events_per_s >= 1000",
        "files_per_100_events <= 1.0",
        "every acknowledged event landed exactly once",
    ]
    for label in (
        "one sequential sender",
        "DataHub Actions' action",
        "3 concurrent senders",
        "landing files",
    ):
        assert label in text


def test_the_conf_file_reaches_the_receiver(tmp_path):
    conf = tmp_path / "small_segments.yaml"
    conf.write_text("collectors:\n  receiver:\n    segment_max_bytes: 20000\n")
    figures, _text, _code = _run(
        "--events", "40", "--senders", "2", "--warm-up", "0", "--conf", str(conf), "--workdir", str(tmp_path)
    )
    assert figures["events_landed_once"] == figures["events_sent"] == 160
    assert figures["landing_files"] > 3  # 160 events of about 1 kB in segments of 20 kB


def test_the_targets_pass_and_fail_on_the_figures_they_name():
    figures = {
        "sequential_events_per_s": 199.9,
        "concurrent_events_per_s": 1_000.0,
        "files_per_100_events": 1.01,
        "events_sent": 10,
        "events_acknowledged": 10,
        "events_landed_once": 10,
        "events_landed_twice_or_more": 0,
    }
    assert [check["passed"] for check in bench.verdicts(figures)] == [False, True, False, True]
    figures.update(events_landed_once=9, events_landed_twice_or_more=1)
    assert bench.verdicts(figures)[-1]["passed"] is False
