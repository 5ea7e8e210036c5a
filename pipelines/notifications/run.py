"""One notify run: find what changed, plan it per target in the delivery log, send, record.

The order is what makes delivery once: (1) the notices since the last run are found
(`changes`); (2) for each target, those not in its log yet are planned as `pending` rows
together with the baselines of new targets, in one commit; (3) the open conditions and the
watermark move, in one commit (a run stopped before it repeats (1) from the old watermark, and
the log already holds its plan); (4) each message, the unfinished ones of earlier runs first, is
sent with retries and its outcome recorded. A run stopped between sending and recording leaves
the message `pending`, and the next run sends it again with the same idempotency key.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from pipelines.core.config import ConfigError
from pipelines.notifications import changes, delivery_log, formatting, open_conditions, retry, senders
from pipelines.notifications.delivery_log import BASELINE, DELIVERED, FAILED, PENDING, Entry
from pipelines.notifications.messages import Message, messages
from pipelines.notifications.notices import Notice
from pipelines.notifications.settings import Settings, Target
from pipelines.runtime.faults import checkpoint

AFTER_SEND = "notify_after_send"  # the crash tests' checkpoint: sent, outcome not yet recorded


@dataclass
class Summary:
    baselines: list[str] = field(default_factory=list)
    delivered: int = 0
    failed: int = 0
    planned: int = 0  # messages


@dataclass
class _Plan:
    target: Target
    message: Message
    entries: list[Entry]
    fresh: bool = True  # planned by this run (else: unfinished by an earlier one)


def notify(
    store,
    settings: Settings,
    dry_run: bool = False,
    out: Callable[[str], None] = print,
    sleep: Callable[[float], None] | None = None,
) -> Summary:
    """Deliver what is new to every configured target; with `dry_run`, print it instead."""
    now = dt.datetime.now(dt.timezone.utc)
    last = open_conditions.load_watermark(store)
    findings = changes.find(store, last, open_conditions.open_rows(store))
    known = delivery_log.known_targets(store)
    findings.watermark = dataclasses.replace(findings.watermark, recorded_at=now.isoformat())
    since = dt.datetime.fromisoformat(last.recorded_at) if last and last.recorded_at else None
    recorded = delivery_log.recorded_keys(store, sorted({n.key for n in findings.notices}), since)
    unfinished = defaultdict(list)
    for entry in delivery_log.unfinished(store):
        unfinished[entry.target].append(entry)
    summary, baselines, plans = Summary(), [], []
    for target in settings.targets:
        if target.name not in known:
            baselines.append(Entry(target.name, BASELINE, BASELINE, now))
            summary.baselines.append(target.name)
            continue
        plans += _earlier(target, unfinished[target.name])
        fresh = [n for n in findings.notices if target.wants(n.kind) and (target.name, n.key) not in recorded]
        for message in messages(target, fresh):
            entries = [_planned(target, message, n, now) for n in message.notices]
            plans.append(_Plan(target, message, entries))
    summary.planned = len(plans)
    if dry_run:
        _print_plan(baselines, plans, out)
        return summary
    delivery_log.write(store, baselines + [e for p in plans if p.fresh for e in p.entries])
    open_conditions.record(store, findings.opened, findings.closed, findings.watermark)
    _send_all(store, settings, plans, summary, out, sleep)
    for name in summary.baselines:
        out(f"baseline   target={name}: notices from now on")
    return summary


def _planned(target: Target, message: Message, notice: Notice, now: dt.datetime) -> Entry:
    return Entry(
        target=target.name,
        notice_key=notice.key,
        status=PENDING,
        planned_at=now,
        kind=notice.kind,
        group_key=message.group_key,
        message_digest=message.digest,
        notice=notice.to_json(),
    )


def _earlier(target: Target, entries: list[Entry]) -> list[_Plan]:
    """The unfinished messages of earlier runs, rebuilt from their notices (same digest)."""
    by_digest: dict[str, list[Entry]] = defaultdict(list)
    for entry in entries:
        if target.wants(entry.kind or ""):
            by_digest[entry.message_digest].append(entry)
    plans = []
    for digest, found in sorted(by_digest.items()):
        notices = tuple(sorted((Notice.from_json(e.notice) for e in found), key=lambda n: n.key))
        message = Message(target.name, found[0].group_key, notices)
        if message.digest != digest:  # a notice of it was recorded apart: it is a message of its own now
            for entry in found:
                entry.message_digest = message.digest
        plans.append(_Plan(target, message, found, fresh=False))
    return plans


def _send_all(store, settings, plans: list[_Plan], summary: Summary, out, sleep) -> None:
    by_target: dict[str, list[_Plan]] = defaultdict(list)
    for plan in plans:
        by_target[plan.target.name].append(plan)
    for name, target_plans in by_target.items():
        target = target_plans[0].target
        try:
            send = senders.sender(target, settings.timeout_seconds)
        except ConfigError as exc:
            for plan in target_plans:
                _record(store, plan, retry.Outcome(False, 0, str(exc)), summary, out)
            continue
        for plan in target_plans:
            tried_at = dt.datetime.now(dt.timezone.utc)
            outcome = retry.attempt(
                lambda plan=plan, send=send: send(plan.message),
                settings.max_attempts,
                settings.backoff_seconds,
                settings.max_backoff_seconds,
                **({"sleep": sleep} if sleep else {}),
            )
            checkpoint(AFTER_SEND, name)
            _record(store, plan, outcome, summary, out, tried_at)


def _record(store, plan: _Plan, outcome: retry.Outcome, summary: Summary, out, tried_at=None) -> None:
    now = dt.datetime.now(dt.timezone.utc)
    for entry in plan.entries:
        entry.status = DELIVERED if outcome.delivered else FAILED
        entry.attempts = (entry.attempts or 0) + outcome.attempts
        entry.first_tried_at = entry.first_tried_at or tried_at
        entry.delivered_at = now if outcome.delivered else None
        entry.last_error = outcome.error
    delivery_log.write(store, plan.entries)
    verb = "sent" if outcome.delivered else "failed"
    if outcome.delivered:
        summary.delivered += 1
    else:
        summary.failed += 1
    error = f"  error={outcome.error}" if outcome.error else ""
    out(
        f"{verb:<10} target={plan.target.name} group={plan.message.group_key} "
        f"notices={len(plan.message.notices)} attempts={outcome.attempts}{error}"
    )


def _print_plan(baselines: list[Entry], plans: list[_Plan], out) -> None:
    for entry in baselines:
        out(f"would record a baseline for target={entry.target} (it hears of what happens from now on)")
    for plan in plans:
        message = plan.message
        out(
            f"would send target={plan.target.name} ({plan.target.type}) group={message.group_key} "
            f"idempotency_key={message.idempotency_key}"
        )
        for text in formatting.mail_body(message).rstrip().splitlines():
            out(f"    {text}")
    if not baselines and not plans:
        out("nothing to send")
