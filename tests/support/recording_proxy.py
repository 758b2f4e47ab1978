"""A plain HTTP proxy on 127.0.0.1 that forwards every request to one storage server (Azurite,
moto) and records it as the client sent it: method, request-target (raw, before any decoding
or normalisation) and the headers that name another object (a copy's source).

Point a client's endpoint at :attr:`RecordingProxy.endpoint` instead of the server's; the
request is forwarded unchanged (SharedKey and SigV4 signatures still match), the answer passed
back. One connection to the server per request: slow, but only tests that inspect every
request use it.
"""

from __future__ import annotations

import http.client
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["RecordedRequest", "RecordingProxy"]

_HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
}
# Headers whose value names another object the request touches.
NAMING_HEADERS = ("x-ms-copy-source", "x-ms-rename-source", "x-amz-copy-source")


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    target: str  # the request-target exactly as received: path and query, still encoded
    named: tuple[str, ...]  # values of NAMING_HEADERS


class RecordingProxy:
    def __init__(self, host: str, port: int) -> None:
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        upstream = (host, port)
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _forward(self) -> None:
                body = self._body()
                named = tuple(
                    self.headers[name] for name in NAMING_HEADERS if self.headers.get(name)
                )
                with proxy._lock:
                    proxy.requests.append(RecordedRequest(self.command, self.path, named))
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
                if body is not None:
                    headers["Content-Length"] = str(len(body))
                connection = http.client.HTTPConnection(*upstream, timeout=120)
                try:
                    connection.request(self.command, self.path, body=body, headers=headers)
                    answer = connection.getresponse()
                    data = answer.read()
                    self.send_response(answer.status, answer.reason)
                    for key, value in answer.getheaders():
                        lower = key.lower()
                        if lower in _HOP_BY_HOP:
                            continue
                        if lower == "content-length" and self.command != "HEAD":
                            continue  # set below; HEAD keeps the object's length
                        self.send_header(key, value)
                    if self.command != "HEAD":
                        self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    if self.command != "HEAD" and data:
                        self.wfile.write(data)
                finally:
                    connection.close()

            def _body(self) -> bytes | None:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    chunks = []
                    while True:
                        size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                        if size == 0:
                            self.rfile.readline()
                            return b"".join(chunks)
                        chunks.append(self.rfile.read(size))
                        self.rfile.readline()
                length = int(self.headers.get("Content-Length") or 0)
                return self.rfile.read(length) if length else None

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = do_PATCH = do_OPTIONS = _forward

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def recorded(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self.requests)

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> RecordingProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
