"""`lakehouse notify` on real Delta tables (delta-rs) and real receivers on loopback: a webhook
and a Slack-form endpoint (http.server) and an SMTP server (aiosmtpd).

The tests write `gold.governance_violations`, `gold.change_history` (its `event_time` is the
event clock) and `ops.dq_results` rows themselves, in the tables' shapes, through the table store.
"""

from __future__ import annotations

import copy
import datetime as dt
import json

import pytest

from pipelines.core.config import Config, ConfigError
from pipelines.notifications import run as notify_run
from pipelines.notifications.delivery_log import DELIVERIES, known_targets, recorded_keys, unfinished
from pipelines.notifications.open_conditions import load_watermark
from pipelines.notifications.run import notify
from pipelines.notifications.settings import settings_from
from pipelines.ops.bookkeeping import DQ_RESULTS, DQ_SCHEMA
from tests.support.notification_servers import start_http, start_smtp
from tests.support.runs import lakehouse
from tests.support.tables import spark_jobs

UTC = dt.timezone.utc
VIOLATIONS = "gold.governance_violations"
HISTORY = "gold.change_history"
VIOLATIONS_SCHEMA = (
    "violation_id string, rule_id string, rule_kind string, severity string, source string, "
    "entity_urn string, entity_type string, entity_name string, responsible string, "
    "condition_since timestamp, opened_at timestamp, resolved_at timestamp, details map<string,string>"
)
pytestmark = pytest.mark.usefixtures("small_input")


def day(n: int) -> dt.datetime:
    return dt.datetime(2024, 1, n, tzinfo=UTC)


@pytest.fixture(scope="module")
def http():
    receiver = start_http()
    yield receiver
    receiver.server.shutdown()


@pytest.fixture(scope="module")
def smtp():
    controller, box = start_smtp()
    yield controller, box
    controller.stop()


@pytest.fixture
def hooks(http, monkeypatch):
    """The webhook and Slack URLs, given to the targets through environment variables."""
    http.reset()
    monkeypatch.setenv("TEST_HOOK_URL", http.url("/hook"))
    monkeypatch.setenv("TEST_SLACK_URL", http.url("/slack"))
    return http


HOOK = {"type": "webhook", "url_env": "TEST_HOOK_URL", "group_by": "responsible"}
SLACK = {"type": "slack", "url_env": "TEST_SLACK_URL", "group_by": "channel"}


def settings(config, targets: dict, **overrides):
    raw = copy.deepcopy(config.raw)
    raw["notifications"].update(
        enabled=True, backoff_seconds=0.05, max_backoff_seconds=1, timeout_seconds=5, targets=targets
    )
    raw["notifications"].update(overrides)
    return settings_from(Config(raw).with_overrides())


def violation(vid, entity, responsible, opened, resolved=None, rule="owner-required"):
    return (
        vid, rule, "owner_missing", "warn", "datahub", entity, "dataset", entity.split(":")[-1],
        responsible, opened - dt.timedelta(hours=1), opened, resolved, {"why": "no owner"},
    )  # fmt: skip


def put_violations(store, spark, entities: list[str], rows: list[tuple]) -> None:
    """Replace the violations of `entities` by `rows`, as the violations table's group
    replacement does."""
    frame = spark.createDataFrame(rows, VIOLATIONS_SCHEMA)
    if not store.exists(VIOLATIONS):
        store.append(frame, VIOLATIONS)
        return
    groups = spark.createDataFrame([(e,) for e in entities], "entity_urn string")
    store.replace_groups(frame, VIOLATIONS, "entity_urn", groups, ["violation_id"], group_values=entities)


def events(store, spark, *items: tuple[str, dt.datetime]) -> None:
    """New `gold.change_history` rows: the entities they touch and the event clock."""
    rows = [(f"c-{entity}-{at.isoformat()}", entity, at) for entity, at in items]
    store.append(
        spark.createDataFrame(rows, "change_id string, entity_urn string, event_time timestamp"), HISTORY
    )


def go(store, config_settings, **kwargs) -> list[str]:
    lines: list[str] = []
    notify(store, config_settings, out=lines.append, **kwargs)
    return lines


def log_rows(store) -> list[dict]:
    return sorted(
        store.read(DELIVERIES).toPandas().to_dict("records"), key=lambda r: (r["target"], r["notice_key"])
    )


def keys_of(request) -> list[str]:
    return [n["key"] for n in request.body["notices"]]


@pytest.mark.slow  # servers on loopback, notify run several times
def test_each_notice_reaches_each_target_once_in_its_form_grouped_by_owner_or_channel(
    config, store, spark, hooks, smtp
):
    controller, box = smtp
    box.mails.clear()
    mail = {"type": "email", "host": "127.0.0.1", "port": controller.port, "from": "lakehouse@example.com",
            "to": ["governance@example.com"], "group_by": "responsible"}  # fmt: skip
    chosen = settings(config, {"hooks": HOOK, "chat": SLACK, "mail": mail})
    events(store, spark, ("urn:e1", day(1)))
    put_violations(store, spark, ["urn:e1"], [violation("v1", "urn:e1", "alice", day(1))])

    first = go(store, chosen)  # every target is new: a baseline each, nothing sent
    assert sorted(known_targets(store)) == ["chat", "hooks", "mail"]
    assert hooks.requests == [] and box.mails == []
    assert "baseline   target=hooks: notices from now on" in first

    events(store, spark, ("urn:e2", day(2)))
    put_violations(
        store, spark, ["urn:e2"],
        [violation("v2", "urn:e2", "bob", day(2)), violation("v3", "urn:e2", "alice", day(2), rule="domain")],
    )  # fmt: skip
    go(store, chosen)
    go(store, chosen)  # nothing new: nothing sent again

    by_owner = {r.body["group"]: keys_of(r) for r in hooks.delivered("/hook")}
    assert by_owner == {"alice": ["violation:opened:v3"], "bob": ["violation:opened:v2"]}
    (slack,) = hooks.delivered("/slack")
    assert slack.body["text"].startswith("2 lakehouse notices")
    assert [b["type"] for b in slack.body["blocks"]] == ["header", "section", "section"]
    assert sorted(m["Subject"] for m in box.mails) == [
        "[catalog-lakehouse] 1 lakehouse notice for alice",
        "[catalog-lakehouse] 1 lakehouse notice for bob",
    ]
    logged = [r for r in log_rows(store) if r["status"] != "baseline"]
    assert {(r["target"], r["notice_key"], r["status"], r["attempts"]) for r in logged} == {
        (target, f"violation:opened:{v}", "delivered", 1)
        for target in ("hooks", "chat", "mail")
        for v in ("v2", "v3")
    }
    keys = {r["message_digest"][:40] for r in logged}
    sent_keys = {r.headers["idempotency-key"] for r in hooks.requests}
    sent_keys |= {m["Message-ID"].strip("<>").split("@")[0] for m in box.mails}
    assert sent_keys == keys


@pytest.mark.slow  # servers on loopback, notify run several times
def test_resolved_withdrawn_and_clock_opened_violations_are_told(config, store, spark, hooks):
    chosen = settings(config, {"hooks": {**HOOK, "group_by": "channel"}})
    go(store, chosen)  # the baseline, on an empty warehouse
    events(store, spark, ("urn:e1", day(1)), ("urn:e2", day(1)), ("urn:e3", day(1)))
    put_violations(
        store, spark, ["urn:e1", "urn:e2", "urn:e3"],
        [violation("v1", "urn:e1", "alice", day(1)), violation("v2", "urn:e2", "bob", day(1)),
         violation("v3", "urn:e3", "carol", day(3))],  # its condition lasts long enough at day 3
    )  # fmt: skip
    go(store, chosen)
    # later events: e1's condition ended, e2's never was (its rows are gone), and the clock
    # passes v3's opening, which rewrites no row
    events(store, spark, ("urn:e1", day(4)), ("urn:e2", day(4)))
    put_violations(store, spark, ["urn:e1"], [violation("v1", "urn:e1", "alice", day(1), resolved=day(4))])
    put_violations(store, spark, ["urn:e2"], [])
    go(store, chosen)
    # nothing new: the run reads no table through Spark, only the logs and the small ops tables
    _, jobs = spark_jobs(spark, lambda: go(store, chosen))
    assert jobs == 0

    assert [keys_of(r) for r in hooks.delivered("/hook")] == [
        ["violation:opened:v1", "violation:opened:v2"],
        ["violation:opened:v3", "violation:resolved:v1", "violation:withdrawn:v2"],
    ]
    withdrawn = hooks.delivered("/hook")[1].body["notices"][2]
    assert withdrawn["responsible"] == "bob" and "withdrawn" in withdrawn["title"]


@pytest.mark.slow  # servers on loopback, notify run several times
def test_a_failing_target_is_retried_with_backoff_in_the_run_and_by_the_next_run(config, store, spark, hooks):
    chosen = settings(config, {"hooks": HOOK}, max_attempts=3)
    go(store, chosen)
    events(store, spark, ("urn:e1", day(1)))
    put_violations(store, spark, ["urn:e1"], [violation("v1", "urn:e1", "alice", day(1))])
    hooks.script["/hook"] = [503, 503]
    go(store, chosen)
    tries = [r.at for r in hooks.requests]
    assert [r.headers["x-answered"] for r in hooks.requests] == ["503", "503", "200"]
    assert tries[2] - tries[1] >= 0.1 > tries[1] - tries[0] >= 0.05  # 0.05 s, then doubled

    hooks.reset()
    events(store, spark, ("urn:e2", day(2)))
    put_violations(store, spark, ["urn:e2"], [violation("v2", "urn:e2", "alice", day(2))])
    hooks.script["/hook"] = [503, 503, 503]
    lines = go(store, chosen)
    assert any(line.startswith("failed") and "error=HTTP 503" in line for line in lines)
    (waiting,) = unfinished(store)
    assert (waiting.notice_key, waiting.status, waiting.attempts) == ("violation:opened:v2", "failed", 3)
    go(store, chosen)  # up again
    go(store, chosen)
    assert [r.headers["x-answered"] for r in hooks.requests] == ["503", "503", "503", "200"]
    assert len({r.headers["idempotency-key"] for r in hooks.requests}) == 1
    assert unfinished(store) == []
    (entry,) = [r for r in log_rows(store) if r["notice_key"] == "violation:opened:v2"]
    assert (entry["status"], entry["attempts"], entry["last_error"]) == ("delivered", 4, None)


@pytest.mark.slow  # servers on loopback, notify run several times
def test_a_run_stopped_between_sending_and_recording_sends_that_message_once_more_with_its_key(
    config, store, spark, hooks, monkeypatch
):
    chosen = settings(config, {"hooks": HOOK})
    go(store, chosen)
    events(store, spark, ("urn:e1", day(1)))
    put_violations(
        store, spark, ["urn:e1"], [violation("v1", "urn:e1", "alice", day(1)), violation("v2", "urn:e1", "bob", day(1))]
    )  # fmt: skip

    def stopped(name, target=""):
        raise SystemExit("stopped after sending")

    with monkeypatch.context() as patch:
        patch.setattr(notify_run, "checkpoint", stopped)
        with pytest.raises(SystemExit):
            go(store, chosen)
    assert len(hooks.delivered("/hook")) == 1  # the first message went out; its outcome is not recorded
    assert {e.status for e in unfinished(store)} == {"pending"}
    go(store, chosen)
    go(store, chosen)
    sent = hooks.delivered("/hook")
    assert sorted(r.body["group"] for r in sent) == ["alice", "alice", "bob"]  # alice's twice, bob's once
    alice = [r.headers["idempotency-key"] for r in sent if r.body["group"] == "alice"]
    assert alice[0] == alice[1]
    assert unfinished(store) == []


@pytest.mark.slow  # two `lakehouse notify` processes, one killed
def test_a_notify_process_killed_after_sending_sends_that_message_once_more_and_nothing_twice_after(
    config, store, spark, warehouse, hooks, tmp_path
):
    """The process dies by SIGKILL (its JVM first) right after a message went out and before its
    outcome is recorded: the next process sends that message again with the same key, the
    others once, and a third sends nothing."""
    conf = tmp_path / "notify.yaml"
    conf.write_text(
        "storage: {engine: delta-rs}\n"
        "notifications:\n  enabled: true\n  backoff_seconds: 0.05\n  timeout_seconds: 5\n"
        "  targets:\n    hooks: {type: webhook, url_env: TEST_HOOK_URL, group_by: responsible}\n",
        encoding="utf-8",
    )
    command = ("notify", "--conf", str(conf), "--warehouse", str(warehouse))
    go(store, settings(config, {"hooks": HOOK}))  # the target's baseline
    events(store, spark, ("urn:e1", day(1)))
    put_violations(
        store, spark, ["urn:e1"], [violation("v1", "urn:e1", "alice", day(1)), violation("v2", "urn:e1", "bob", day(1))]
    )  # fmt: skip
    killed = lakehouse(*command, fault="notify_after_send")
    assert killed.returncode == -9, (killed.stdout[-1000:], killed.stderr[-2000:])
    assert len(hooks.delivered("/hook")) == 1
    done = lakehouse(*command)
    assert done.returncode == 0, (done.stdout[-1000:], done.stderr[-2000:])
    go(store, settings(config, {"hooks": HOOK}))  # and then nothing more
    sent = hooks.delivered("/hook")
    groups = sorted(r.body["group"] for r in sent)
    first = sent[0].body["group"]
    assert groups == sorted([first, "alice", "bob"])  # the killed run's message twice, the other once
    keys = [r.headers["idempotency-key"] for r in sent if r.body["group"] == first]
    assert len(keys) == 2 and keys[0] == keys[1]
    assert unfinished(store) == []


@pytest.mark.slow  # servers on loopback, notify run several times
def test_a_dry_run_prints_and_sends_and_records_nothing_and_a_target_added_later_starts_then(
    config, store, spark, hooks
):
    go(store, settings(config, {"hooks": HOOK}))
    events(store, spark, ("urn:e1", day(1)))
    put_violations(store, spark, ["urn:e1"], [violation("v1", "urn:e1", "alice", day(1))])
    both = settings(config, {"hooks": HOOK, "chat": SLACK})
    version, watermark = store.version(DELIVERIES), load_watermark(store)

    lines = go(store, both, dry_run=True)
    assert hooks.requests == []
    assert (store.version(DELIVERIES), load_watermark(store)) == (version, watermark)
    assert any(line.startswith("would send target=hooks (webhook) group=alice") for line in lines)
    assert any("would record a baseline for target=chat" in line for line in lines)
    assert any("[warn] owner-required on e1: opened" in line for line in lines)

    go(store, both)  # hooks hears of v1; chat starts here
    events(store, spark, ("urn:e2", day(2)))
    put_violations(store, spark, ["urn:e2"], [violation("v2", "urn:e2", "bob", day(2))])
    go(store, both)
    assert [keys_of(r) for r in hooks.delivered("/hook")] == [
        ["violation:opened:v1"],
        ["violation:opened:v2"],
    ]
    (slack,) = hooks.delivered("/slack")
    assert "on e2: opened" in slack.body["text"] and "e1" not in slack.body["text"]
    assert recorded_keys(store, ["violation:opened:v1"]) == {("hooks", "violation:opened:v1")}


def dq_rows(run_id: str, at: dt.datetime, outcomes: list[tuple[str, str, str, bool]]) -> list[tuple]:
    return [
        (run_id, table, expectation, "expect_x", None, severity, success, 0 if success else 3, 10,
         0.0 if success else 30.0, None, at)
        for table, expectation, severity, success in outcomes
    ]  # fmt: skip


@pytest.mark.slow  # servers on loopback, notify run several times
def test_failed_checks_and_stale_feeds_are_told_once_until_they_pass_again(config, store, spark, hooks):
    chosen = settings(config, {"hooks": {**HOOK, "group_by": "channel"}})
    go(store, chosen)
    at = dt.datetime.now(UTC)  # checks are validated as a run goes
    store.append_rows(
        dq_rows("r1", at, [("silver.t", "not_null:id", "fail", False), ("silver.t", "unique:id", "warn", False),
                           ("feeds.datahub", "feed_is_fresh:ece", "warn", False),
                           ("feeds.datahub", "feed_volume_near_baseline:ece", "warn", True)]),
        DQ_SCHEMA, DQ_RESULTS,
    )  # fmt: skip
    go(store, chosen)
    store.append_rows(
        dq_rows("r2", at + dt.timedelta(hours=1), [("silver.t", "not_null:id", "fail", True),
                                                   ("feeds.datahub", "feed_is_fresh:ece", "warn", False)]),
        DQ_SCHEMA, DQ_RESULTS,
    )  # fmt: skip
    go(store, chosen)
    assert [keys_of(r) for r in hooks.delivered("/hook")] == [
        ["data_quality:failed:silver.t:not_null:id:r1", "feed:failed:feeds.datahub:feed_is_fresh:ece:r1"],
        ["data_quality:recovered:silver.t:not_null:id:r2"],  # the feed, still stale, is not told again
    ]
    failed = hooks.delivered("/hook")[0].body["notices"][0]
    assert failed["severity"] == "critical" and failed["fields"]["unexpected_count"] == "3"


@pytest.mark.slow  # servers on loopback, notify run several times
def test_a_target_whose_secret_is_missing_fails_naming_the_variable_and_sends_later(
    config, store, spark, hooks, monkeypatch
):
    chosen = settings(config, {"hooks": HOOK})
    go(store, chosen)
    events(store, spark, ("urn:e1", day(1)))
    put_violations(store, spark, ["urn:e1"], [violation("v1", "urn:e1", "alice", day(1))])
    monkeypatch.delenv("TEST_HOOK_URL")
    lines = go(store, chosen)
    assert hooks.requests == []
    assert any("environment variable TEST_HOOK_URL is not set" in line for line in lines)
    monkeypatch.setenv("TEST_HOOK_URL", hooks.url("/hook"))
    go(store, chosen)
    assert [keys_of(r) for r in hooks.delivered("/hook")] == [["violation:opened:v1"]]
    assert json.loads(log_rows(store)[-1]["notice"])["responsible"] == "alice"


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ({"type": "pager"}, "type must be one of"),
        ({"type": "webhook"}, "needs url_env or url_secret"),
        ({"type": "slack", "url_env": "X", "url_secret": {"scope": "s", "key": "k"}}, "not both"),
        ({"type": "slack", "url_secret": {"scope": "s"}}, "url_secret must be {scope: NAME, key: NAME}"),
        ({"type": "email", "host": "h", "from": "a@b"}, "needs to"),
        ({"type": "email", "host": "h", "from": "a@b", "to": "x", "port": 25}, "to must be an address"),
        ({"type": "webhook", "url_env": "X", "group_by": "team"}, "group_by must be one of"),
        (
            {"type": "webhook", "url_env": "X", "colour": "red"},
            "unknown key 'notifications.targets.t.colour'",
        ),
    ],
)
def test_a_wrong_target_is_refused_in_one_line(config, target, message):
    raw = copy.deepcopy(config.raw)
    raw["notifications"]["targets"] = {"t": target}
    with pytest.raises(ConfigError, match=message.replace("{", r"\{").replace("}", r"\}")) as caught:
        Config(raw).with_overrides()
    assert "\n" not in str(caught.value)
