"""`lakehouse notify` and the maintenance task through Spark Connect, as the Databricks job's
`notify` and `maintenance` tasks run on serverless and in standard access mode: after the
pipeline's batches, under the compute's rules (`profiles.connect.rules`), with a webhook on
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

pytestmark = [pytest.mark.slow, pytest.mark.heavy]  # the pipeline twice through a Spark Connect server

LATER = ("datahub_ece/2024-04", "openmetadata/2024-04-01", "datahub_audit/2024-03-03")  # the second batch


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
def test_notify_and_maintenance_after_the_pipelines_batches_under_the_computes_rules(
    connect_server, http, tmp_path, monkeypatch, rules
):
    http.reset()
    monkeypatch.setenv("TEST_HOOK_URL", http.url("/hook"))  # the processes inherit it
    landing, warehouse = tmp_path / "landing", tmp_path / "warehouse"
    shutil.copytree(SAMPLES, landing, ignore=shutil.ignore_patterns(*[p.split("/")[-1] for p in LATER]))
    warehouse.mkdir()
    conf = conf_for(tmp_path, connect_server, rules)
    notify = ("notify", "--conf", str(conf), "--warehouse", str(warehouse))
    run = ("run", "--conf", str(conf), "--landing", str(landing), "--warehouse", str(warehouse))

    assert "baseline   target=hooks: notices from now on" in succeeded(lakehouse(*notify))
    succeeded(lakehouse(*run))
    first = succeeded(lakehouse(*notify))  # the conditions the batch opened: the open set's first rows
    sent = http.delivered("/hook")
    assert sent and any(line.startswith("sent       target=hooks") for line in first), first
    store = open_folder_store(warehouse)
    watermark = load_watermark(store)
    assert watermark is not None and watermark.dq_version is not None
    commits = store.history(OPEN)
    assert commits[0]["metadata"]["notifications"]["recorded_at"] == watermark.recorded_at

    for part in LATER:
        shutil.copytree(SAMPLES / part, landing / part)
    succeeded(lakehouse(*run))
    succeeded(lakehouse(*notify))
    keys = [r.headers["idempotency-key"] for r in http.delivered("/hook")]
    assert len(keys) == len(set(keys))  # nothing sent twice
    later = load_watermark(store)
    assert later.recorded_at > watermark.recorded_at and later.dq_version > watermark.dq_version

    lines = succeeded(maintenance(conf, landing, warehouse))
    assert any(line.startswith("maintenance") for line in lines), lines
    assert any(line.startswith("done") for line in lines), lines
    assert (warehouse / "reports" / "dq_report.html").is_file()
