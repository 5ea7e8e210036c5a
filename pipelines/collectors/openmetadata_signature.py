"""OpenMetadata's webhook signature and test message, checked as OpenMetadata produces them.

A Generic Webhook alert with a secret key sends `X-OM-Signature: sha256=<signature>`, where the
signature is the HMAC-SHA256 of the request body (the event's JSON, UTF-8) under the secret,
Base64-encoded (OpenMetadata's `CommonUtil.calculateHMAC`). The hex form other webhooks use is
accepted too, with or without the `sha256=` prefix. The comparison is of digests as bytes, in
constant time; a header that is no signature at all (any bytes, any length) is simply no match.

"Test destination" on an alert POSTs (or PUTs) a fixed `{"message": "..."}` document, signed the
same way; it is no change event and is not landed.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json

PREFIX = b"sha256="
TEST_MESSAGE_KEYS = {"message"}


def _digest_of(given: bytes) -> bytes | None:
    """The digest a header spells, Base64 (OpenMetadata) or hex; None when it spells none."""
    text = given.strip()
    if text[: len(PREFIX)].lower() == PREFIX:
        text = text[len(PREFIX) :]
    if len(text) == 64:
        try:
            return bytes.fromhex(text.decode("ascii"))
        except (UnicodeDecodeError, ValueError):
            pass
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


def signature_matches(secret: str, body: bytes, header: bytes) -> bool:
    """Whether `header` (the `X-OM-Signature` value as bytes) signs `body` under `secret`."""
    expected = hmac.new(secret.encode("utf-8"), body, hashlib.sha256).digest()
    given = _digest_of(header)
    return given is not None and hmac.compare_digest(expected, given)


def is_test_message(body: bytes) -> bool:
    """Whether `body` is OpenMetadata's destination test: a JSON object holding only `message`."""
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return False
    return isinstance(value, dict) and set(value) == TEST_MESSAGE_KEYS and isinstance(value["message"], str)
