"""Databricks' Secrets API on loopback, as a task outside a cluster reaches it.

`GET /api/2.0/secrets/get?scope=&key=` answers a secret's value Base64-encoded, or 404
`RESOURCE_DOES_NOT_EXIST`; the Databricks SDK finds the server by `DATABRICKS_HOST` and
authenticates with `DATABRICKS_TOKEN`, which `secrets_api(monkeypatch, ...)` sets.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest

JOB_TOKEN = "token-of-the-job"


class SecretsApi:
    """The secrets it holds, `{(scope, key): value}`, and the secrets it was asked for, in order
    (the SDK may ask the workspace other things first, which are answered 404 and not counted)."""

    def __init__(self, secrets: dict[tuple[str, str], str]) -> None:
        self.secrets = dict(secrets)
        self.requests: list[tuple[str, str, str | None]] = []  # (scope, key, Authorization)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def _handler(self):
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - the handler's method name
                url = urlparse(self.path)
                query = {k: v[0] for k, v in parse_qs(url.query).items()}
                scope, key = query.get("scope", ""), query.get("key", "")
                if url.path == "/api/2.0/secrets/get":
                    api.requests.append((scope, key, self.headers.get("Authorization")))
                if url.path == "/api/2.0/secrets/get" and (scope, key) in api.secrets:
                    value = base64.b64encode(api.secrets[scope, key].encode()).decode()
                    status, body = 200, {"key": key, "value": value}
                else:
                    status, body = (
                        404,
                        {
                            "error_code": "RESOURCE_DOES_NOT_EXIST",
                            "message": "Secret does not exist",
                        },
                    )
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:
                pass

        return Handler


@contextmanager
def secrets_api(monkeypatch, secrets: dict[tuple[str, str], str]) -> Iterator[SecretsApi]:
    """A workspace's Secrets API holding `secrets`, which the Databricks SDK reaches by its settings."""
    pytest.importorskip("databricks.sdk")
    api = SecretsApi(secrets)
    threading.Thread(target=api.httpd.serve_forever, daemon=True).start()
    monkeypatch.setenv("DATABRICKS_HOST", api.url)
    monkeypatch.setenv("DATABRICKS_TOKEN", JOB_TOKEN)
    try:
        yield api
    finally:
        api.httpd.shutdown()
        api.httpd.server_close()
