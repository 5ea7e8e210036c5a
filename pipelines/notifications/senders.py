"""Sending one message to one target: a JSON POST (webhook, Slack) or a mail over SMTP.

Why the keys: a webhook request carries `Idempotency-Key` and a mail its `Message-ID`, both from
the message's digest, so a message sent twice (its first outcome lost with a killed run) can be
recognised as one by the receiver. Errors are sorted into transient (tried again in the run)
and permanent (left to the next run) for `pipelines.notifications.retry`.
"""

from __future__ import annotations

import smtplib
from collections.abc import Callable
from email.message import EmailMessage
from email.utils import formatdate

import requests

from pipelines.notifications import formatting
from pipelines.notifications.messages import Message
from pipelines.notifications.retry import PermanentError, TransientError
from pipelines.notifications.secrets import resolve
from pipelines.notifications.settings import Target

MAIL_DOMAIN = "catalog-lakehouse"


def sender(target: Target, timeout: float) -> Callable[[Message], None]:
    """A function sending a message to `target`; its secret is read now, once per run."""
    what = f"notifications.targets.{target.name}"
    if target.type == "email":
        password = resolve(target.options, "password", what)
        return lambda message: send_mail(target, message, password, timeout)
    url = resolve(target.options, "url", what)
    form = formatting.slack_document if target.type == "slack" else formatting.webhook_document
    headers = dict(target.options.get("headers") or {})
    return lambda message: post(
        url, form(message), {**headers, "Idempotency-Key": message.idempotency_key}, timeout
    )


def post(url: str, document: dict, headers: dict[str, str], timeout: float) -> None:
    try:
        response = requests.post(url, json=document, headers=headers, timeout=timeout)
    except requests.RequestException as exc:  # refused, reset, timed out: the URL itself is never shown
        raise TransientError(f"request failed: {type(exc).__name__}") from None
    if response.status_code == 429 or response.status_code >= 500:
        raise TransientError(f"HTTP {response.status_code}")
    if response.status_code >= 400:
        raise PermanentError(f"HTTP {response.status_code}: {response.text[:200]}")


def mail(target: Target, message: Message) -> EmailMessage:
    to = target.options["to"]
    mail = EmailMessage()
    mail["Subject"] = formatting.mail_subject(message)
    mail["From"] = target.options["from"]
    mail["To"] = ", ".join([to] if isinstance(to, str) else to)
    mail["Date"] = formatdate(usegmt=True)
    mail["Message-ID"] = f"<{message.idempotency_key}@{MAIL_DOMAIN}>"
    mail.set_content(formatting.mail_body(message))
    return mail


def send_mail(target: Target, message: Message, password: str | None, timeout: float) -> None:
    options = target.options
    try:
        with smtplib.SMTP(options["host"], options.get("port", 25), timeout=timeout) as smtp:
            if options.get("starttls"):
                smtp.starttls()
            if options.get("username"):
                smtp.login(options["username"], password or "")
            smtp.send_message(mail(target, message))
    except smtplib.SMTPResponseException as exc:
        error = f"SMTP {exc.smtp_code}"
        raise (TransientError if 400 <= exc.smtp_code < 500 else PermanentError)(error) from None
    except (smtplib.SMTPServerDisconnected, smtplib.SMTPConnectError) as exc:
        raise TransientError(f"SMTP connection failed: {type(exc).__name__}") from None
    except smtplib.SMTPException as exc:  # refused recipients or sender, no STARTTLS, ...
        raise PermanentError(f"SMTP: {type(exc).__name__}") from None
    except OSError as exc:  # refused, reset, timed out (SMTPException is an OSError: caught above)
        raise TransientError(f"SMTP connection failed: {type(exc).__name__}") from None
