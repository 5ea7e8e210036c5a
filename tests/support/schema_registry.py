"""A stand-in for a Confluent-compatible schema registry on real loopback HTTP: only what a
consumer asks, `GET /schemas/ids/{id}` -> `{"schema": "<the Avro schema as JSON text>"}`
(404 `{"error_code": 40403}` for an unknown id)."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCHEMA_BY_ID = re.compile(r"^/schemas/ids/(\d+)$")


class StandInSchemaRegistry:
    """`with StandInSchemaRegistry() as registry:` serves on `registry.url`; `register(schema)`
    gives the schema an id; `requests` counts the lookups answered."""

    def __init__(self) -> None:
        self.schemas: dict[int, dict] = {}
        self.requests = 0
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def register(self, schema: dict) -> int:
        with self.lock:
            schema_id = 100 + len(self.schemas) + 1
            self.schemas[schema_id] = schema
        return schema_id

    def __enter__(self) -> StandInSchemaRegistry:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def _handler(self):
        registry = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet tests
                pass

            def do_GET(self) -> None:
                match = SCHEMA_BY_ID.match(self.path)
                with registry.lock:
                    registry.requests += 1
                    schema = registry.schemas.get(int(match.group(1))) if match else None
                if schema is None:
                    status, answer = 404, {"error_code": 40403, "message": "Schema not found"}
                else:
                    status, answer = 200, {"schema": json.dumps(schema)}
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler
