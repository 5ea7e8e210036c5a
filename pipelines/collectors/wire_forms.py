"""The forms the senders post, turned into landing records (one JSON text each).

OpenMetadata. From 1.3 on a Generic Webhook posts one ChangeEvent per request. Up to 1.2 its
publisher posted the batch it polled as the events API's list, `{"data": [events],
"paging": {...}}` (signed as a whole, `X-OM-Signature` over that body), and a bare JSON array
of events is taken the same way. A batch becomes one record per event; an empty one none.

CloudEvents (DataWorks through EventBridge), decided by `Content-Type` as the HTTP binding says:
`application/cloudevents+json` is structured mode (the body is the event, whatever `ce-*`
headers come beside it), `application/cloudevents-batch+json` is a JSON array of structured
events (one record each), and any other body with a `ce-specversion` header is binary mode: the
attributes are the `ce-*` headers, each unquoted (RFC 7230 quoted-string) and then
percent-decoded as UTF-8, the data the body; it becomes the structured form (`data`, or
`data_base64` when the body is not JSON), so bronze sees one shape. A header that is not UTF-8
or not percent-encoded UTF-8 is an `InvalidHeader` (400 with its name), never a server error.

A body that is not JSON, or a batch form whose `data` is not an array, is one record as it came:
bronze marks it corrupt and silver quarantines it with the reason.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from urllib.parse import unquote

CLOUDEVENTS_HEADER_PREFIX = "ce-"
STRUCTURED = "application/cloudevents+json"
BATCHED = "application/cloudevents-batch+json"


class InvalidHeader(ValueError):
    """A header that cannot be read as the binding says; the message names it."""


def parses_as_json(body: bytes) -> bool:
    try:
        json.loads(body)
    except (ValueError, RecursionError):
        return False
    return True


def _compact(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _loads(body: bytes) -> object:
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


def readable(name: str, value: str) -> str:
    """`value` when it is text; an `InvalidHeader` when the bytes sent were not UTF-8 (aiohttp
    hands such bytes over as surrogate escapes)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidHeader(f"header {name} is not valid UTF-8") from None
    return value


def media_type(headers: Mapping[str, str]) -> str:
    """The `Content-Type` media type, lower case, without parameters ('' when absent)."""
    value = readable("Content-Type", headers.get("Content-Type", ""))
    return value.split(";", 1)[0].strip().lower()


def unquoted(value: str) -> str:
    """A header value with an RFC 7230 quoted-string taken off (`"a\\"b"` -> `a"b`)."""
    text = value.strip()
    if len(text) < 2 or not (text.startswith('"') and text.endswith('"')):
        return text
    out, escaped = [], False
    for char in text[1:-1]:
        if escaped:
            out.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        else:
            out.append(char)
    return "".join(out)


def cloudevent_header_value(name: str, value: str) -> str:
    """A `ce-*` header's value as the HTTP binding reads it: unquoted, then percent-decoded as UTF-8."""
    text = unquoted(readable(name, value))
    try:
        return unquote(text, encoding="utf-8", errors="strict")
    except UnicodeDecodeError:
        raise InvalidHeader(f"header {name} is not percent-encoded UTF-8") from None


def structured_cloudevent(headers: Mapping[str, str], body: bytes) -> bytes:
    """A binary-mode CloudEvent in structured JSON form: the `ce-*` attributes as members,
    `datacontenttype` from Content-Type, and `data` the body when it is JSON, else `data_base64`."""
    event: dict[str, object] = {}
    for name, value in headers.items():
        lowered = name.lower()
        if lowered.startswith(CLOUDEVENTS_HEADER_PREFIX):
            event[lowered[len(CLOUDEVENTS_HEADER_PREFIX) :]] = cloudevent_header_value(name, value)
    if headers.get("Content-Type"):
        event["datacontenttype"] = readable("Content-Type", headers["Content-Type"])
    data = _loads(body)
    if data is not None or body.strip() == b"null":
        event["data"] = data
    else:
        event["data_base64"] = base64.b64encode(body).decode("ascii")
    return _compact(event)


def openmetadata_records(body: bytes) -> list[bytes]:
    """One record per ChangeEvent of an OpenMetadata body: a batch is split, a single event (or
    anything else) is one record as it came."""
    value = _loads(body)
    if isinstance(value, list):
        return [_compact(event) for event in value]
    if (
        isinstance(value, dict)
        and set(value) <= {"data", "paging", "errors"}
        and isinstance(value.get("data"), list)
    ):
        return [_compact(event) for event in value["data"]]
    return [body]


def dataworks_records(headers: Mapping[str, str], body: bytes) -> list[bytes]:
    """The CloudEvents of one request, structured, one record each (see the module docstring)."""
    kind = media_type(headers)
    if kind == BATCHED:
        value = _loads(body)
        return [_compact(event) for event in value] if isinstance(value, list) else [body]
    if kind == STRUCTURED:
        return [body]
    if "ce-specversion" in {name.lower() for name in headers}:
        return [structured_cloudevent(headers, body)]
    return [body]
