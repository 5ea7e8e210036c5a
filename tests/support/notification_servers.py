"""Real receivers on loopback for the notification tests: an HTTP server recording each POST
(answering a scripted status first, e.g. 503 then 200) and an SMTP server (aiosmtpd) recording
each mail."""

from __future__ import annotations

import email
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    body: dict
    at: float


@dataclass
class HttpReceiver:
    """`requests` as received; `script[path]`: the statuses to answer next on that path (200 after)."""

    server: ThreadingHTTPServer
    requests: list[Request] = field(default_factory=list)
    script: dict[str, list[int]] = field(default_factory=dict)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def delivered(self, path: str) -> list[Request]:
        """The requests on `path` that were answered 2xx."""
        return [r for r in self.requests if r.path == path and r.headers.get("x-answered") == "200"]

    def reset(self) -> None:
        self.requests.clear()
        self.script.clear()


def start_http() -> HttpReceiver:
    receiver: HttpReceiver

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server's name
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            statuses = receiver.script.get(self.path) or []
            status = statuses.pop(0) if statuses else 200
            headers = {k.lower(): v for k, v in self.headers.items()}
            headers["x-answered"] = str(status)
            receiver.requests.append(Request(self.path, headers, body, time.monotonic()))
            self.send_response(status)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args):  # quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver = HttpReceiver(server)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return receiver


class MailBox:
    """aiosmtpd's handler: each mail received, parsed."""

    def __init__(self):
        self.mails: list[email.message.Message] = []

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 - aiosmtpd's name
        self.mails.append(email.message_from_bytes(envelope.content))
        return "250 OK"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_smtp():
    """(controller, mailbox): a running SMTP server on loopback; stop it with `controller.stop()`."""
    from aiosmtpd.controller import Controller

    box = MailBox()
    controller = Controller(box, hostname="127.0.0.1", port=free_port())
    controller.start()
    return controller, box
