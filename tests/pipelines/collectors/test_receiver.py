"""`lakehouse receive` on loopback HTTP: every acknowledged body is landed once, durably, whole."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from urllib.parse import quote

import pytest
import requests

from tests.support import FIXTURES
from tests.support.receiver import (
    OPENMETADATA_TEST_MESSAGE,
    landed_files,
    landed_lines,
    landed_sequence_numbers,
    logged_losses,
    openmetadata_signature,
    post_all,
    running_receiver,
    sample_events,
    unique_bodies,
)

ROUTES = {"/openmetadata": "openmetadata", "/dataworks": "dataworks", "/datahub": "datahub_ece"}
SECRET = "s3cret-for-the-receiver"
LAKEHOUSE = str(Path(sys.executable).with_name("lakehouse"))
ENVELOPES = FIXTURES / "envelopes"


@pytest.mark.slow  # loads the receiver with thousands of concurrent requests
def test_thousands_of_concurrent_posts_are_each_landed_exactly_once_in_few_files(tmp_path):
    bodies = [(route, body) for route in ROUTES for body in unique_bodies(route, 1_500)]
    with running_receiver(tmp_path) as url:
        statuses = asyncio.run(post_all(url, bodies, concurrency=64))
        health = requests.get(url + "/health", timeout=10).json()
    assert statuses == Counter({200: 4_500})
    for route, folder in ROUTES.items():
        assert landed_sequence_numbers(tmp_path, folder) == Counter(f"{route}-{n}" for n in range(1_500))
        files = landed_files(tmp_path, folder)
        assert len(files) <= 1_500 // 100  # many requests to a file
        landed = health["landed"][folder]
        assert landed["bodies"] == 1_500 and landed["open_segment_bytes"] > 0
        assert landed["files"] + 1 == len(files)  # the open segment became a file at shutdown
    assert [p.name for p in tmp_path.rglob("_*")] == []


def test_bronze_discovery_never_sees_an_open_segment_or_a_half_written_file(tmp_path):
    bodies = [("/openmetadata", body) for body in unique_bodies("/openmetadata", 800)]
    torn: list[str] = []
    done = threading.Event()

    def read_like_bronze() -> None:
        while not done.is_set():
            for path in landed_files(tmp_path, "openmetadata"):
                data = path.read_bytes()
                if not data.endswith(b"\n") or any(not json.loads(line) for line in data.splitlines()):
                    torn.append(path.name)
            time.sleep(0.001)

    watcher = threading.Thread(target=read_like_bronze)
    with running_receiver(tmp_path, segment_max_bytes=20_000) as url:
        watcher.start()
        asyncio.run(post_all(url, bodies, concurrency=16))
        done.set()
        watcher.join()
        rolled_while_receiving = len(landed_files(tmp_path, "openmetadata"))
    assert torn == []
    assert rolled_while_receiving > 10  # segments of 20 kB, rolled as they filled
    assert sum(landed_sequence_numbers(tmp_path, "openmetadata").values()) == 800


def test_a_segment_rolls_by_age_while_no_request_comes(tmp_path):
    with running_receiver(tmp_path, segment_max_seconds=0.2) as url:
        assert requests.post(url + "/datahub", data=unique_bodies("/datahub", 1)[0], timeout=10).ok
        given_up = time.monotonic() + 60  # a bound against hanging, not a measure of speed
        while landed_files(tmp_path, "datahub_ece") == [] and time.monotonic() < given_up:
            time.sleep(0.05)
        health = requests.get(url + "/health", timeout=10).json()["landed"]["datahub_ece"]
    assert health == {"bodies": 1, "files": 1, "open_segment_bytes": 0}
    assert landed_sequence_numbers(tmp_path, "datahub_ece") == Counter({"/datahub-0": 1})


def test_a_malformed_body_is_landed_on_one_line_after_the_good_ones_for_the_quarantine(tmp_path):
    malformed = b'{"eventType": "entityUpdated", "entityType": \n "table", '
    good = unique_bodies("/openmetadata", 1)[0]
    with running_receiver(tmp_path) as url:
        answers = [
            requests.post(url + "/openmetadata", data=body, timeout=10).status_code
            for body in (good, malformed, b"[1, 2")
        ]
    assert answers == [200, 200, 200]
    contents = [p.read_bytes() for p in landed_files(tmp_path, "openmetadata")]
    assert len(contents) == 1  # the segment the good body opened took the malformed ones
    first, *rest = contents[0].splitlines()
    assert json.loads(first) == json.loads(good)  # a parseable first line: bronze reads JSON Lines
    assert rest == [b'{"eventType": "entityUpdated", "entityType":   "table",', b"[1, 2"]


def test_malformed_bodies_that_would_open_a_segment_get_a_file_each(tmp_path):
    good = unique_bodies("/datahub", 1)[0]
    with running_receiver(tmp_path) as url:
        answers = [
            requests.post(url + "/datahub", data=body, timeout=10).status_code
            for body in (b"not json", b"{oops", good)
        ]
    assert answers == [200, 200, 200]
    assert sorted(p.read_bytes() for p in landed_files(tmp_path, "datahub_ece")) == sorted(
        [b"not json\n", b"{oops\n", good + b"\n"]
    )


def test_empty_oversized_and_unknown_requests_get_their_answers_and_land_nothing(tmp_path):
    with running_receiver(tmp_path, max_body_bytes=10_000) as url:
        empty = requests.post(url + "/openmetadata", data=b"  \n", timeout=10)
        oversized = requests.post(url + "/dataworks", data=b"{" + b" " * 20_000 + b"}", timeout=10)
        wrong_route = requests.post(url + "/elsewhere", data=b"{}", timeout=10)
        wrong_method = requests.get(url + "/openmetadata", timeout=10)
    assert (empty.status_code, empty.json()) == (400, {"error": "empty body"})
    assert oversized.status_code == 413
    assert oversized.json()["error"].startswith(
        "a body of 20002 bytes is over the receiver's limit of 10000 bytes (collectors.receiver.max_body_bytes)"
    )
    assert wrong_route.status_code == 404 and wrong_method.status_code == 405
    assert [p for p in tmp_path.rglob("*") if p.is_file() and "_collector_log" not in p.parts] == []
    assert logged_losses(tmp_path) == {
        ("openmetadata", "400", "empty body"): 1,
        ("dataworks", "413", oversized.json()["error"]): 1,
    }


def test_with_a_secret_only_requests_carrying_it_or_a_valid_signature_are_landed(tmp_path):
    body = unique_bodies("/openmetadata", 1)[0]
    signature = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    wrong_signature = hmac.new(b"other", body, hashlib.sha256).hexdigest()
    with running_receiver(tmp_path, secret=SECRET) as url:
        answers = {
            "none": requests.post(url + "/openmetadata", data=body, timeout=10),
            "wrong bearer": requests.post(
                url + "/openmetadata", data=body, headers={"Authorization": "Bearer nope"}, timeout=10
            ),
            "wrong signature": requests.post(
                url + "/openmetadata",
                data=body,
                headers={"X-OM-Signature": f"sha256={wrong_signature}"},
                timeout=10,
            ),
            "signature elsewhere": requests.post(
                url + "/datahub", data=body, headers={"X-OM-Signature": signature}, timeout=10
            ),
            "bearer": requests.post(
                url + "/datahub", data=body, headers={"Authorization": f"Bearer {SECRET}"}, timeout=10
            ),
            "header": requests.post(
                url + "/dataworks", data=body, headers={"X-Lakehouse-Secret": SECRET}, timeout=10
            ),
            "signature": requests.post(
                url + "/openmetadata",
                data=body,
                headers={"X-OM-Signature": f"sha256={signature}"},
                timeout=10,
            ),
            "bare signature": requests.post(
                url + "/openmetadata", data=body, headers={"X-OM-Signature": signature}, timeout=10
            ),
        }
    codes = {name: answer.status_code for name, answer in answers.items()}
    assert codes == {
        "none": 401,
        "wrong bearer": 401,
        "wrong signature": 401,
        "signature elsewhere": 401,
        "bearer": 200,
        "header": 200,
        "signature": 200,
        "bare signature": 200,
    }
    assert sum(landed_lines(tmp_path, "openmetadata").values()) == 2
    assert sum(landed_lines(tmp_path, "datahub_ece").values()) == 1
    assert sum(landed_lines(tmp_path, "dataworks").values()) == 1


def test_a_binary_mode_cloudevent_lands_as_its_structured_form(tmp_path):
    structured = next(
        e for e in sample_events("dataworks") if "specversion" in e and isinstance(e.get("data"), dict)
    )
    attributes = {k: v for k, v in structured.items() if k not in ("data", "datacontenttype")}
    headers = {f"ce-{name}": str(value) for name, value in attributes.items()}
    headers["Content-Type"] = structured["datacontenttype"]
    with running_receiver(tmp_path) as url:
        binary = requests.post(
            url + "/dataworks", data=json.dumps(structured["data"]), headers=headers, timeout=10
        )
        as_structured = requests.post(
            url + "/dataworks",
            data=json.dumps(structured),
            headers={"Content-Type": "application/cloudevents+json; charset=utf-8"},
            timeout=10,
        )
    assert (binary.status_code, as_structured.status_code) == (200, 200)
    landed = [json.loads(line) for line in landed_lines(tmp_path, "dataworks").elements()]
    assert landed == [structured, structured]


# -- the receiver as a process ------------------------------------------------------------


def _start_receiver(landing: Path, *extra: str, env: dict | None = None) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(
        [LAKEHOUSE, "receive", "--landing", str(landing), "--port", "0", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    line = process.stdout.readline()
    match = re.search(r"receiving on (http://\S+)", line)
    assert match, line + process.stderr.read()
    return process, match.group(1)


def _send_until_refused(
    url: str, route: str, bodies: list[bytes], senders: int
) -> tuple[list[tuple[int, int]], list[threading.Thread]]:
    """`senders` threads post `bodies` one after another (each waiting for its answer) until the
    receiver stops answering; returns the (body number, status) of every answer, as they come,
    and the threads."""
    answers: list[tuple[int, int]] = []
    next_body = iter(range(len(bodies)))
    lock = threading.Lock()

    def sender() -> None:
        with requests.Session() as session:
            while True:
                with lock:
                    n = next(next_body, None)
                if n is None:
                    return
                try:
                    status = session.post(url + route, data=bodies[n], timeout=30).status_code
                except requests.RequestException:
                    return
                with lock:
                    answers.append((n, status))

    threads = [threading.Thread(target=sender) for _ in range(senders)]
    for thread in threads:
        thread.start()
    return answers, threads


def _acknowledged(answers: list[tuple[int, int]], route: str) -> list[str]:
    return [f"{route}-{n}" for n, status in answers if status == 200]


@pytest.mark.slow
def test_after_a_sigkill_mid_stream_and_a_restart_every_acknowledged_event_is_landed_exactly_once(tmp_path):
    process, url = _start_receiver(tmp_path)
    bodies = unique_bodies("/openmetadata", 20_000)
    answers, senders = _send_until_refused(url, "/openmetadata", bodies, senders=8)
    while len(answers) < 1_500:
        time.sleep(0.01)
    process.send_signal(signal.SIGKILL)
    for thread in senders:
        thread.join(30)
    process.wait(10)
    before_restart = _acknowledged(answers, "/openmetadata")
    assert list(tmp_path.glob("openmetadata/_open.*")) != []  # what it acknowledged was in its open segment

    process, url = _start_receiver(tmp_path)  # recovers the open segment, then receives on
    after = unique_bodies("/openmetadata", 20_200)[20_000:]
    answers_after = [
        requests.post(url + "/openmetadata", data=body, timeout=10).status_code for body in after
    ]
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=30)

    landed = landed_sequence_numbers(tmp_path, "openmetadata")
    assert answers_after == [200] * 200
    assert set(before_restart) | {f"/openmetadata-{n}" for n in range(20_000, 20_200)} <= set(landed)
    assert max(landed.values()) == 1  # none twice, acknowledged or not
    assert list(tmp_path.glob("openmetadata/_*")) == []


@pytest.mark.slow
def test_a_receiver_killed_after_a_batch_is_durable_and_before_its_answer_lands_it_once_after_a_restart(
    tmp_path,
):
    process, url = _start_receiver(tmp_path, env={"LAKEHOUSE_FAULT": "receiver_after_append@datahub_ece#5"})
    bodies = unique_bodies("/datahub", 10)
    answers, senders = _send_until_refused(url, "/datahub", bodies, senders=1)
    senders[0].join(30)
    process.wait(10)
    assert process.returncode == -signal.SIGKILL
    assert answers == [(n, 200) for n in range(4)]  # the fifth batch was written, never answered
    assert landed_files(tmp_path, "datahub_ece") == []

    process, _ = _start_receiver(tmp_path)
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=30)
    assert landed_sequence_numbers(tmp_path, "datahub_ece") == Counter(f"/datahub-{n}" for n in range(5))
    assert list(tmp_path.glob("datahub_ece/_*")) == []


@pytest.mark.slow
def test_sigterm_answers_every_request_it_landed_and_rolls_the_open_segments(tmp_path):
    landing = tmp_path / "landing"
    process, url = _start_receiver(landing)
    answers, senders = _send_until_refused(url, "/datahub", unique_bodies("/datahub", 50_000), senders=8)
    while len(answers) < 500:
        time.sleep(0.01)
    process.send_signal(signal.SIGTERM)  # with requests in flight from each sender
    for thread in senders:
        thread.join(30)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    acknowledged = _acknowledged(answers, "/datahub")
    assert len(acknowledged) == len(answers)  # every answer a 200
    assert landed_sequence_numbers(landing, "datahub_ece") == Counter(acknowledged)
    assert list(landing.glob("*/_*")) == []
    assert (
        "landed openmetadata=0 bodies in 0 files, dataworks=0 bodies in 0 files, "
        f"datahub_ece={len(acknowledged)} bodies in 1 files" in out
    )


def test_a_receiver_setting_out_of_range_is_a_one_line_config_error(tmp_path, capsys):
    from pipelines.cli import main

    conf = tmp_path / "bad.yaml"
    conf.write_text("collectors:\n  receiver:\n    max_body_bytes: -1\n")
    assert main(["receive", "--landing", str(tmp_path), "--conf", str(conf)]) == 2
    assert capsys.readouterr().err.strip() == (
        "lakehouse receive: config error: collectors.receiver.max_body_bytes must be more than 0, got -1"
    )


# -- the senders' exact forms ---------------------------------------------------------------


def _openmetadata_event_json() -> str:
    """A ChangeEvent as OpenMetadata serialises it (non-ASCII text kept as UTF-8, not escaped)."""
    event = dict(sample_events("openmetadata")[0])
    event["userName"] = "José Müller"
    event["entityFullyQualifiedName"] = "mysql_prod.shop.销售.orders"
    return json.dumps(event, ensure_ascii=False, separators=(",", ":"))


def test_openmetadatas_own_signature_is_accepted_by_post_and_put(tmp_path):
    event_json = _openmetadata_event_json()
    body = event_json.encode("utf-8")
    signed = {
        "X-OM-Signature": openmetadata_signature(SECRET, event_json),
        "Content-Type": "application/json",
    }
    with running_receiver(tmp_path, secret=SECRET) as url:
        posted = requests.post(url + "/openmetadata", data=body, headers=signed, timeout=10)
        put = requests.put(url + "/openmetadata", data=body, headers=signed, timeout=10)
        other_secret = requests.post(
            url + "/openmetadata",
            data=body,
            headers={"X-OM-Signature": openmetadata_signature("another secret", event_json)},
            timeout=10,
        )
        other_body = requests.post(url + "/openmetadata", data=body + b" ", headers=signed, timeout=10)
    assert (posted.status_code, put.status_code) == (200, 200)
    assert (other_secret.status_code, other_body.status_code) == (401, 401)
    assert landed_lines(tmp_path, "openmetadata") == Counter({body: 2})


@pytest.mark.parametrize(
    "header",
    [
        "sha256=文件".encode(),
        b"\xff\xfe garbage \x80",
        b"sha256=",
        b"sha256=" + b"A" * 5_000,
        b"sha256=not base64!",
        b"x" * 64,
    ],
    ids=["non-ascii", "not-utf8", "empty", "long", "not-base64", "hex-length-not-hex"],
)
def test_any_other_signature_header_is_a_401_never_a_500(tmp_path, header):
    body = _openmetadata_event_json().encode("utf-8")
    with running_receiver(tmp_path, secret=SECRET) as url:
        answer = requests.post(
            url + "/openmetadata", data=body, headers={"X-OM-Signature": header}, timeout=10
        )
    assert answer.status_code == 401
    assert answer.json() == {"error": "X-OM-Signature does not match the body"}
    assert landed_files(tmp_path, "openmetadata") == []


@pytest.mark.parametrize("method", ["POST", "PUT"])
@pytest.mark.parametrize("secret", [SECRET, None], ids=["with-secret", "without-secret"])
def test_openmetadatas_test_message_is_answered_and_not_landed(tmp_path, method, secret):
    headers = {"Content-Type": "application/json"}
    if secret:
        headers["X-OM-Signature"] = openmetadata_signature(secret, OPENMETADATA_TEST_MESSAGE)
    with running_receiver(tmp_path, secret=secret) as url:
        answer = requests.request(
            method,
            url + "/openmetadata",
            data=OPENMETADATA_TEST_MESSAGE.encode(),
            headers=headers,
            timeout=10,
        )
        health = requests.get(url + "/health", timeout=10).json()
    assert answer.status_code == 200 and answer.json() == {"landed": False, "test_message": True}
    assert landed_files(tmp_path, "openmetadata") == []
    assert health["landed"]["openmetadata"] == {"bodies": 0, "files": 0, "open_segment_bytes": 0}


def test_binary_mode_headers_are_percent_decoded_as_the_http_binding_says(tmp_path):
    fixture = json.loads((ENVELOPES / "dataworks_cloudevent_binary.json").read_text())
    structured = json.loads((ENVELOPES / "dataworks_cloudevent_structured.json").read_text())
    subject = "acs:dataworks:cn-shanghai:1493189603770213:文件/ods 订单 100%"
    structured["subject"] = subject
    headers = dict(fixture["headers"], **{"ce-subject": quote(subject, safe="/:")})
    assert headers["ce-subject"].isascii()
    with running_receiver(tmp_path) as url:
        answer = requests.post(
            url + "/dataworks", data=json.dumps(fixture["body"]), headers=headers, timeout=10
        )
        broken = requests.post(
            url + "/dataworks", data=b"{}", headers=dict(headers, **{"ce-subject": "%E6%96"}), timeout=10
        )
    assert answer.status_code == 200
    assert broken.status_code == 400 and "ce-subject" in broken.json()["error"]
    (landed,) = [json.loads(line) for line in landed_lines(tmp_path, "dataworks").elements()]
    assert landed == structured
