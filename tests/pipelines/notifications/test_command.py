"""`lakehouse notify` and `notifications.after_run` from the command line."""

from __future__ import annotations

import json

import pytest

from pipelines.cli import main
from pipelines.notifications.delivery_log import known_targets
from pipelines.store import open_store

pytestmark = pytest.mark.usefixtures("small_input")


def test_notify_says_notifications_are_off_by_default(tmp_path, capsys):
    (tmp_path / "warehouse").mkdir()
    assert main(["notify", "--warehouse", str(tmp_path / "warehouse")]) == 0
    assert "lakehouse notify: notifications are off" in capsys.readouterr().out


@pytest.mark.slow  # runs the pipeline, then notify
def test_after_run_notifies_at_the_end_of_lakehouse_run(spark, tmp_path, capsys, monkeypatch):
    folder = tmp_path / "landing" / "datahub_audit"
    folder.mkdir(parents=True)
    record = {"eventType": "SearchEvent", "timestamp": 1767268800000, "actorUrn": "urn:li:corpuser:a"}
    (folder / "events.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    conf = tmp_path / "conf.yaml"
    conf.write_text(
        "notifications:\n  enabled: true\n  after_run: true\n"
        "  targets:\n    hooks: {type: webhook, url_env: TEST_AFTER_RUN_URL}\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("TEST_AFTER_RUN_URL", "http://127.0.0.1:9/never-called")
    warehouse = tmp_path / "warehouse"
    common = ["--conf", str(conf), "--warehouse", str(warehouse)]
    code = main(["run", *common, "--landing", str(tmp_path / "landing"), "--layers", "bronze"])
    out = capsys.readouterr().out
    assert code == 0
    assert "baseline   target=hooks: notices from now on" in out
    assert "notified   messages_sent=0  messages_failed=0  new_targets=1" in out
    assert known_targets(open_store(spark, warehouse, "delta-rs")) == {"hooks"}
    assert main(["notify", *common, "--dry-run"]) == 0
    assert "nothing to send" in capsys.readouterr().out
