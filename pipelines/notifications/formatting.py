"""A message in each target's form: a JSON document (webhook), Slack's `text` and `blocks`, a mail.

Why one module: every form says the same things (a summary line, a line per notice), so a
reader of one target learns the same as a reader of another.
"""

from __future__ import annotations

from pipelines.notifications.messages import CHANNEL, Message
from pipelines.notifications.notices import Notice

SLACK_MAX_BLOCKS = 50  # Slack refuses a message with more blocks
PRODUCT = "catalog-lakehouse"


def summary(message: Message) -> str:
    count = len(message.notices)
    who = "" if message.group_key == CHANNEL else f" for {message.group_key}"
    return f"{count} lakehouse notice{'s' if count != 1 else ''}{who}"


def line(notice: Notice) -> str:
    return f"{notice.title} (at {notice.at})"


def webhook_document(message: Message) -> dict:
    """The generic webhook's JSON body."""
    return {
        "source": PRODUCT,
        "target": message.target,
        "group": message.group_key,
        "idempotency_key": message.idempotency_key,
        "summary": summary(message),
        "notices": [
            {
                "key": n.key,
                "kind": n.kind,
                "event": n.event,
                "severity": n.severity,
                "title": n.title,
                "at": n.at,
                "responsible": n.responsible,
                "fields": n.fields,
            }
            for n in message.notices
        ],
    }


def slack_document(message: Message) -> dict:
    """Slack's incoming webhook body: `text` (the notification's fallback) and `blocks`."""
    blocks: list[dict] = [{"type": "header", "text": {"type": "plain_text", "text": summary(message)[:150]}}]
    shown = list(message.notices)[: SLACK_MAX_BLOCKS - 2]
    for notice in shown:
        text = f"*{_escape(notice.title)}*\nat {notice.at}"
        if notice.responsible:
            text += f" · responsible: {_escape(notice.responsible)}"
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": text[:3000]}})
    hidden = len(message.notices) - len(shown)
    if hidden:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": f"and {hidden} more"}]})
    text = "\n".join([summary(message), *(line(n) for n in message.notices)])
    return {"text": text, "blocks": blocks}


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def mail_subject(message: Message) -> str:
    return f"[{PRODUCT}] {summary(message)}"


def mail_body(message: Message) -> str:
    parts = [summary(message), ""]
    for notice in message.notices:
        parts.append(f"- {line(notice)}")
        parts += [f"    {k}: {v}" for k, v in sorted(notice.fields.items())]
    return "\n".join(parts) + "\n"
