"""`lakehouse notify` and the maintenance task through Spark Connect, as the Databricks job's
`notify` and `maintenance` tasks run on serverless and in standard access mode: after a batch
of the pipeline, under the compute's rules (`profiles.connect.rules`), with a webhook on
loopback as the target. The open conditions' commit carries the notify watermark as the
pipeline's own commits carry theirs, through the DataFrame writer, which serverless allows; a
refused call would fail the process and name itself on stderr."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pipelines.notifications.open_conditions import OPEN, load_watermark
from pipelines.runtime.rules_session import REFUSED
from pipelines.store import open_folder_store
from tests.support.notification_servers import start_http
from tests.support.runs import PROCESS_TIMEOUT_SECONDS, SAMPLES, lakehouse

pytestmark = [
    pytest.mark.slow,
    pytest.mark.heavy,
]  # the pipeline, notify and maintenance through Spark Connect


@pytest.fixture(scope="module")
def http():
    receiver = start_http()
    yield receiver
    receiver.server.shutdown()


def conf_for(folder: Path, server, rules: str) -> Path:
    path = folder / "connect-notify.yaml"
    settings = {
        "profile": "connect",
        "profiles": {"connect": {"remote": server.remote, "rules": rules}},
        "storage": {"engine": "delta-spark", "schema_prefix": f"{rules}_notify_"},
        "notifications": {
            "enabled": True,
            "backoff_seconds": 0.05,
            "timeout_seconds": 5,
            "targets": {"hooks": {"type": "webhook", "url_env": "TEST_HOOK_URL", "group_by": "responsible"}},
        },
    }
    path.write_text(yaml.safe_dump(settings), encoding="utf-8")
    return path


def succeeded(done: subprocess.CompletedProcess) -> list[str]:
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-3000:])
    assert REFUSED not in done.stderr, [line for line in done.stderr.splitlines() if REFUSED in line]
    return done.stdout.splitlines()


def maintenance(conf: Path, landing: Path, warehouse: Path) -> subprocess.CompletedProcess:
    """The job's maintenance task: `lakehouse-task --maintenance`, in a process of its own."""
    arguments = [f"--conf={conf}", f"--landing={landing}", f"--warehouse={warehouse}"]
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "from pipelines.cli import task_main; task_main()",
            "--maintenance",
            *arguments,
        ],
        capture_output=True,
        text=True,
        timeout=PROCESS_TIMEOUT_SECONDS,
    )


@pytest.mark.parametrize(
    "rules", ["serverless", pytest.param("standard", marks=pytest.mark.exhaustive)]
)  # standard refuses a subset of what serverless refuses
def test_notify_and_maintenance_after_a_batch_under_the_computes_rules(
    connect_server, http, tmp_path, monkeypatch, rules
):
    http.reset()
    monkeypatch.setenv("TEST_HOOK_URL", http.url("/hook"))  # the processes inherit it
    landing, warehouse = tmp_path / "landing", tmp_path / "warehouse"
    shutil.copytree(SAMPLES, landing)
    warehouse.mkdir()
    conf = conf_for(tmp_path, connect_server, rules)
    notify = ("notify", "--conf", str(conf), "--warehouse", str(warehouse))
    run = ("run", "--conf", str(conf), "--landing", str(landing), "--warehouse", str(warehouse))

    # the open set and its watermark exist before the batch: its conditions are then a replacement
    assert "baseline   target=hooks: notices from now on" in succeeded(lakehouse(*notify))
    before = load_watermark(store := open_folder_store(warehouse))
    succeeded(lakehouse(*run))
    lines = succeeded(lakehouse(*notify))
    sent = http.delivered("/hook")
    assert sent and any(line.startswith("sent       target=hooks") for line in lines), lines
    keys = [r.headers["idempotency-key"] for r in sent]
    assert len(keys) == len(set(keys))  # nothing sent twice
    watermark = load_watermark(store)
    assert before.dq_version is None and watermark.dq_version is not None
    assert watermark.recorded_at > before.recorded_at
    newest = store.history(OPEN)[0]
    assert newest["metadata"]["notifications"]["recorded_at"] == watermark.recorded_at
    assert newest.get("operation") != "MERGE"  # through the writer, as serverless allows

    lines = succeeded(maintenance(conf, landing, warehouse))
    assert any(line.startswith("maintenance") for line in lines), lines
    assert any(line.startswith("done") for line in lines), lines
    assert (warehouse / "reports" / "dq_report.html").is_file()
