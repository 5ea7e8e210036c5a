"""Every form the supported senders post, in the sender's exact shape, over loopback HTTP.

OpenMetadata up to 1.2 posts the batch it polled as its events list (`{"data": [...],
"paging": {"total": n}}`, signed as a whole); 1.3 on posts one event. EventBridge posts
CloudEvents structured, binary or batched, as the CloudEvents HTTP binding defines them.
"""

from __future__ import annotations

import json
from collections import Counter

import requests

from tests.support import FIXTURES
from tests.support.receiver import (
    landed_files,
    landed_lines,
    logged_losses,
    openmetadata_signature,
    running_receiver,
    sample_events,
)

SECRET = "wire-forms-secret"
ENVELOPES = FIXTURES / "envelopes"


def _compact(value) -> str:
    """JSON as OpenMetadata's `JsonUtils.pojoToJson` writes it: compact, UTF-8 kept."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _events(count: int) -> list[dict]:
    samples = sample_events("openmetadata")
    events = []
    for n in range(count):
        event = dict(samples[n % len(samples)])
        event["id"] = f"00000000-0000-4000-8000-{n:012d}"
        event["userName"] = "José"
        events.append(event)
    return events


def _landed_events(landing) -> list[dict]:
    return [json.loads(line) for line in landed_lines(landing, "openmetadata").elements()]


def test_an_openmetadata_1_2_batch_is_split_into_its_events_after_its_signature_is_checked_whole(tmp_path):
    events = _events(3)
    batch = _compact({"data": events, "paging": {"total": len(events)}})
    signed = {"X-OM-Signature": openmetadata_signature(SECRET, batch), "Content-Type": "application/json"}
    one_event_signed = {"X-OM-Signature": openmetadata_signature(SECRET, _compact(events[0]))}
    with running_receiver(tmp_path, secret=SECRET) as url:
        answer = requests.post(url + "/openmetadata", data=batch.encode(), headers=signed, timeout=10)
        forged = requests.post(
            url + "/openmetadata", data=batch.encode(), headers=one_event_signed, timeout=10
        )
    assert (answer.status_code, answer.json()) == (200, {"landed": True, "records": 3})
    assert forged.status_code == 401
    assert sorted(_landed_events(tmp_path), key=lambda e: e["id"]) == events
    assert logged_losses(tmp_path) == Counter(
        {("openmetadata", "401", "X-OM-Signature does not match the body"): 1}
    )


def test_a_bare_array_of_events_is_split_and_an_empty_batch_lands_nothing(tmp_path):
    events = _events(2)
    with running_receiver(tmp_path) as url:
        bare = requests.post(url + "/openmetadata", data=_compact(events).encode(), timeout=10)
        empty = requests.post(
            url + "/openmetadata", data=_compact({"data": [], "paging": {"total": 0}}).encode(), timeout=10
        )
    assert bare.json() == {"landed": True, "records": 2} and empty.json() == {"landed": True, "records": 0}
    assert sorted(_landed_events(tmp_path), key=lambda e: e["id"]) == events


def test_a_single_event_of_1_3_and_later_lands_as_it_came(tmp_path):
    body = _compact(_events(1)[0]).encode("utf-8")
    with running_receiver(tmp_path) as url:
        answer = requests.post(url + "/openmetadata", data=body, timeout=10)
    assert answer.json() == {"landed": True, "records": 1}
    assert landed_lines(tmp_path, "openmetadata") == Counter({body: 1})


def test_an_entity_created_event_of_a_wide_table_fits_the_default_limit(tmp_path):
    event = _events(1)[0]
    columns = [
        {"name": f"column_{n:05d}", "dataType": "VARCHAR", "dataLength": 255, "description": "x" * 300}
        for n in range(8_000)
    ]
    event.update(eventType="entityCreated", entity=_compact({"name": "wide", "columns": columns}))
    body = _compact(event).encode("utf-8")
    assert len(body) > 3_000_000
    with running_receiver(tmp_path) as url:
        answer = requests.post(url + "/openmetadata", data=body, timeout=30)
    assert answer.status_code == 200
    assert landed_lines(tmp_path, "openmetadata") == Counter({body: 1})


def test_structured_mode_is_decided_by_content_type_even_with_ce_headers_beside(tmp_path):
    structured = json.loads((ENVELOPES / "dataworks_cloudevent_structured.json").read_text())
    headers = {
        "Content-Type": "application/cloudevents+json; charset=UTF-8",
        "ce-id": structured["id"],
        "ce-specversion": "1.0",
        "ce-source": structured["source"],
        "ce-type": structured["type"],
    }
    with running_receiver(tmp_path) as url:
        answer = requests.post(
            url + "/dataworks", data=_compact(structured).encode(), headers=headers, timeout=10
        )
    assert answer.status_code == 200
    (landed,) = [json.loads(line) for line in landed_lines(tmp_path, "dataworks").elements()]
    assert landed == structured


def test_a_batched_cloudevents_body_lands_one_record_per_event(tmp_path):
    first = json.loads((ENVELOPES / "dataworks_cloudevent_structured.json").read_text())
    second = dict(first, id="second-" + first["id"], subject="文件/ods")
    headers = {"Content-Type": "application/cloudevents-batch+json"}
    with running_receiver(tmp_path) as url:
        answer = requests.post(
            url + "/dataworks", data=_compact([first, second]).encode(), headers=headers, timeout=10
        )
    assert answer.json() == {"landed": True, "records": 2}
    landed = sorted((json.loads(line) for line in landed_lines(tmp_path, "dataworks").elements()), key=str)
    assert landed == sorted([first, second], key=str)


def test_quoted_binary_mode_header_values_are_unquoted_then_percent_decoded(tmp_path):
    fixture = json.loads((ENVELOPES / "dataworks_cloudevent_binary.json").read_text())
    headers = dict(
        fixture["headers"],
        **{"ce-subject": '"acs:dataworks:cn-shanghai:1493189603770213:%E6%96%87%E4%BB%B6 \\"ods\\""'},
        **{"ce-type": '"dataworks:NodeChange:NodeChangeCreated"'},
    )
    with running_receiver(tmp_path) as url:
        answer = requests.post(
            url + "/dataworks", data=_compact(fixture["body"]).encode(), headers=headers, timeout=10
        )
    assert answer.status_code == 200
    (landed,) = [json.loads(line) for line in landed_lines(tmp_path, "dataworks").elements()]
    assert landed["subject"] == 'acs:dataworks:cn-shanghai:1493189603770213:文件 "ods"'
    assert landed["type"] == "dataworks:NodeChange:NodeChangeCreated"
    assert landed["data"] == fixture["body"]


def test_a_header_that_is_not_utf8_is_a_400_with_its_name_never_a_5xx(tmp_path):
    fixture = json.loads((ENVELOPES / "dataworks_cloudevent_binary.json").read_text())
    body = _compact(fixture["body"]).encode()
    with running_receiver(tmp_path) as url:
        bad_attribute = requests.post(
            url + "/dataworks",
            data=body,
            headers=dict(fixture["headers"], **{"ce-subject": b"\xff\xfe ods"}),
            timeout=10,
        )
        bad_type = requests.post(
            url + "/dataworks",
            data=body,
            headers=dict(fixture["headers"], **{"Content-Type": b"application/json; x=\xe9\x80"}),
            timeout=10,
        )
    assert (bad_attribute.status_code, bad_attribute.json()) == (
        400,
        {"error": "header ce-subject is not valid UTF-8"},
    )
    assert (bad_type.status_code, bad_type.json()) == (
        400,
        {"error": "header Content-Type is not valid UTF-8"},
    )
    assert landed_files(tmp_path, "dataworks") == []
    assert logged_losses(tmp_path) == Counter(
        {
            ("dataworks", "400", "header ce-subject is not valid UTF-8"): 1,
            ("dataworks", "400", "header Content-Type is not valid UTF-8"): 1,
        }
    )
