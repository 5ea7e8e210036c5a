"""A DataWorks CloudEvent gives one silver row however EventBridge delivers it: binary mode
(`ce-*` headers percent-encoded, data as the body), structured mode with `data`, or structured
mode with `data_base64`. Sent over real HTTP to the receiver, typed from what it landed."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from urllib.parse import quote

import requests

from silver import dataworks_events
from tests.support import FIXTURES
from tests.support.receiver import landed_files, running_receiver
from tests.support.tables import RUN_SPECIFIC, bronze_frame

ENVELOPES = FIXTURES / "envelopes"
LINEAGE = RUN_SPECIFIC | {"raw", "source_file", "record_index", "line_number", "container"}
SUBJECT = "acs:dataworks:cn-shanghai:1493189603770213:节点/ods 订单 100%"
NODE_NAME = "订单日汇总 ods_orders_daily"


def _event() -> tuple[dict, dict]:
    """(binary-mode headers, structured event) of one node change with non-ASCII text."""
    binary = json.loads((ENVELOPES / "dataworks_cloudevent_binary.json").read_text())
    structured = json.loads((ENVELOPES / "dataworks_cloudevent_structured.json").read_text())
    structured["subject"] = SUBJECT
    structured["data"]["nodeName"] = NODE_NAME
    headers = dict(binary["headers"], **{"ce-subject": quote(SUBJECT, safe="/:")})
    return headers, structured


def _landed_records(landing: Path) -> list[str]:
    lines = [line for p in landed_files(landing, "dataworks") for line in p.read_bytes().splitlines()]
    return [line.decode("utf-8") for line in lines]


def test_binary_structured_and_base64_deliveries_give_the_same_silver_rows(spark, tmp_path):
    headers, structured = _event()
    with_base64 = {k: v for k, v in structured.items() if k != "data"}
    pretty = json.dumps(structured["data"], ensure_ascii=False, indent=2).encode("utf-8")
    with_base64["data_base64"] = base64.b64encode(pretty).decode("ascii")
    deliveries = {
        "binary": (json.dumps(structured["data"], ensure_ascii=False).encode("utf-8"), headers),
        "structured": (json.dumps(structured, ensure_ascii=False).encode("utf-8"), {}),
        "base64": (json.dumps(with_base64).encode("utf-8"), {}),
    }
    records = {}
    for mode, (body, extra) in deliveries.items():
        landing = tmp_path / mode
        with running_receiver(landing) as url:
            answer = requests.post(url + "/dataworks", data=body, headers=extra, timeout=10)
        assert answer.status_code == 200, mode
        (records[mode],) = _landed_records(landing)

    bronze = bronze_frame(spark, list(records.values()))  # one record per mode, in this order
    by_mode = _by_mode(dataworks_events.transform(bronze), list(records))
    assert by_mode["structured"]["subject"] == SUBJECT and by_mode["structured"]["_errors"] == []
    assert json.loads(by_mode["structured"]["data"])["nodeName"] == NODE_NAME
    # the family tables type `data` and the envelope columns: equal envelope rows, equal family rows
    assert by_mode["binary"] == by_mode["structured"] == by_mode["base64"]


def _by_mode(frame, modes: list[str]) -> dict[str, dict]:
    """mode -> the frame's one row of that mode's record, lineage left out."""
    rows = {modes[row["record_index"]]: row.asDict() for row in frame.collect()}
    return {mode: {k: v for k, v in row.items() if k not in LINEAGE} for mode, row in rows.items()}
