"""A small Azure Schema Registry double over HTTPS, with its own Entra ID token endpoint.

The real ``azure-schemaregistry`` client refuses bearer tokens over plain HTTP, so the double
serves TLS with a throwaway CA made by ``trustme``; clients trust it through the CA bundle
file (``connection_verify``). It implements what the client and azure-identity call:

- ``PUT /$schemaGroups/{group}/schemas/{name}``: register (the same definition keeps its id)
- ``POST /$schemaGroups/{group}/schemas/{name}:get-id``: properties by content, 404 if absent
- ``GET /$schemaGroups/$schemas/{id}``: the definition by id
- ``GET /{tenant}/v2.0/.well-known/openid-configuration`` and
  ``POST /{tenant}/oauth2/v2.0/token``: a client-credentials token for the known client

Registry calls without the issued bearer token get 401. Every request is counted by
(method, route), so tests can check what was fetched how often. ``answers`` makes the by-id
route answer what a broken or hostile registry would (:class:`Answer`: any status, content type
and body, or a body that never ends), after the token was checked.

Given an ``authority`` (support.entra's local Entra ID), the double serves with the run's CA
and takes only that authority's tokens, as the real registry takes Entra ID's: the bearer
token's RS256 signature, issuer, audience and expiry are verified
(``pysparksources_emulator.JwtAuthority``); ``verified_tokens`` / ``rejected_tokens`` count them.
"""

from __future__ import annotations

import json
import secrets
import ssl
import threading
import uuid
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlparse

import trustme

if TYPE_CHECKING:
    from support.entra import TestAuthority

TENANT = "00000000-0000-0000-0000-0000000000aa"
CLIENT_ID = "11111111-1111-1111-1111-1111111111bb"
CLIENT_SECRET = "double-client-secret-do-not-log"
AVRO_MEDIA = "application/json;serialization=Avro"


@dataclass(frozen=True)
class Answer:
    """What ``GET /$schemaGroups/$schemas/{id}`` answers instead of the registered schema.

    ``body=None`` sends no Content-Length and writes until the client hangs up.
    """

    status: int
    body: bytes | None = b""
    content_type: str = AVRO_MEDIA


class SchemaRegistryDouble:
    """Start with :meth:`start`, stop with :meth:`stop` (or use it as a context manager)."""

    def __init__(self, folder: Path, authority: TestAuthority | None = None) -> None:
        self.entra = authority
        self.verified_tokens = 0
        self.rejected_tokens = 0
        self.ca = authority.ca if authority is not None else trustme.CA()
        self.ca_file = folder / "registry-ca.pem"
        self.ca.cert_pem.write_to_path(str(self.ca_file))
        self.schemas: dict[str, tuple[str, str, str, int]] = {}  # id -> group, name, def, ver
        self.answers: dict[str, Answer] = {}  # id -> a canned answer of the by-id route
        self.endless_bytes = 0  # what endless answers wrote before the client hung up
        self.requests: Counter[tuple[str, str]] = Counter()
        self.tokens: set[str] = set()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def host(self) -> str:
        assert self._server is not None
        return f"127.0.0.1:{self._server.server_address[1]}"

    @property
    def authority(self) -> str:
        return f"https://{self.host}"

    def options(self, group: str = "orders") -> dict[str, str]:
        """The pyeventhub options that reach this registry with its service principal."""
        return {
            "schemaRegistry.fullyQualifiedNamespace": self.host,
            "schemaRegistry.group": group,
            "schemaRegistry.authorityHost": self.authority,
            "schemaRegistry.connectionVerify": str(self.ca_file),
            "tenantId": TENANT,
            "clientId": CLIENT_ID,
            "clientSecret": CLIENT_SECRET,
        }

    def client(self) -> Any:
        """The real SDK client, authenticated through azure-identity against this double."""
        from azure.identity import ClientSecretCredential
        from azure.schemaregistry import SchemaRegistryClient

        verify = str(self.ca_file)
        credential = ClientSecretCredential(
            TENANT,
            CLIENT_ID,
            CLIENT_SECRET,
            authority=self.authority,
            disable_instance_discovery=True,
            connection_verify=verify,
        )
        return SchemaRegistryClient(self.host, credential, connection_verify=verify)

    def start(self) -> SchemaRegistryDouble:
        handler = type("Handler", (_Handler,), {"double": self})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ca.issue_cert("127.0.0.1", "localhost").configure_cert(context)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(10)

    def __enter__(self) -> SchemaRegistryDouble:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- what the handler calls --------------------------------------------------------
    def find(self, group: str, name: str, definition: str) -> tuple[str, int] | None:
        for schema_id, (g, n, d, version) in self.schemas.items():
            if (g, n) == (group, name) and _same(d, definition):
                return schema_id, version
        return None

    def register(self, group: str, name: str, definition: str) -> tuple[str, int]:
        with self._lock:
            found = self.find(group, name, definition)
            if found is not None:
                return found
            version = 1 + sum(1 for g, n, _, _ in self.schemas.values() if (g, n) == (group, name))
            schema_id = uuid.uuid4().hex
            self.schemas[schema_id] = (group, name, definition, version)
            return schema_id, version

    def add(self, schema_id: str, definition: str, group: str = "orders") -> None:
        """Register ``definition`` under an id the test chooses."""
        with self._lock:
            self.schemas[schema_id] = (
                group,
                json.loads(definition).get("name", "x"),
                definition,
                1,
            )

    def issue_token(self) -> str:
        token = secrets.token_urlsafe(24)
        with self._lock:
            self.tokens.add(token)
        return token


def _same(a: str, b: str) -> bool:
    try:
        return bool(json.loads(a) == json.loads(b))
    except ValueError:
        return a == b


class _Handler(BaseHTTPRequestHandler):
    double: SchemaRegistryDouble
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body:
            self.wfile.write(body)

    def _error(self, status: int, code: str, message: str) -> None:
        body = json.dumps({"error": {"code": code, "message": message}}).encode()
        self._send(status, body, {"Content-Type": "application/json"})

    def _authorized(self) -> bool:
        header = self.headers.get("Authorization", "")
        token = header.removeprefix("Bearer ").strip()
        authority = self.double.entra
        if authority is not None and header.startswith("Bearer "):
            import time

            from pysparksources_emulator import JwtError

            try:
                authority.emulator_authority().verify(token, time.time())
            except JwtError as error:
                self.double.rejected_tokens += 1
                self._error(401, "Unauthorized", str(error))
                return False
            self.double.verified_tokens += 1
            return True
        if header.startswith("Bearer ") and token in self.double.tokens:
            return True
        self._error(401, "Unauthorized", "a bearer token from the tenant is required")
        return False

    def _properties(self, schema_id: str, group: str, name: str, version: int) -> dict[str, str]:
        return {
            "Schema-Id": schema_id,
            "Schema-Group-Name": group,
            "Schema-Name": name,
            "Schema-Version": str(version),
            "Schema-Id-Location": f"https://{self.double.host}/$schemaGroups/$schemas/{schema_id}",
            "Location": f"https://{self.double.host}/$schemaGroups/{group}/schemas/{name}"
            f"/versions/{version}",
        }

    def _route(self, method: str) -> None:
        parsed = urlparse(self.path)
        parts = [unquote(p) for p in parsed.path.strip("/").split("/")]
        body = self._body()
        if method == "GET" and parts[1:] == ["v2.0", ".well-known", "openid-configuration"]:
            self.double.requests[(method, "openid-configuration")] += 1
            base = f"https://{self.double.host}/{parts[0]}"
            document = {
                "token_endpoint": f"{base}/oauth2/v2.0/token",
                "authorization_endpoint": f"{base}/oauth2/v2.0/authorize",
                "issuer": f"{base}/v2.0",
            }
            self._send(200, json.dumps(document).encode(), {"Content-Type": "application/json"})
            return
        if method == "POST" and parts[1:] == ["oauth2", "v2.0", "token"]:
            self.double.requests[(method, "token")] += 1
            form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
            if parts[0] != TENANT or (form.get("client_id"), form.get("client_secret")) != (
                CLIENT_ID,
                CLIENT_SECRET,
            ):
                self._error(401, "invalid_client", "unknown client or wrong secret")
                return
            answer = {
                "token_type": "Bearer",
                "expires_in": 3600,
                "access_token": self.double.issue_token(),
            }
            self._send(200, json.dumps(answer).encode(), {"Content-Type": "application/json"})
            return
        if not parts or parts[0] != "$schemaGroups":
            self._error(404, "NotFound", f"no route {method} {parsed.path}")
            return
        if not self._authorized():
            return
        if method == "GET" and parts[1:2] == ["$schemas"] and len(parts) == 3:
            self.double.requests[(method, "schema-by-id")] += 1
            answer = self.double.answers.get(parts[2])
            if answer is not None:
                self._answer(parts[2], answer)
                return
            found = self.double.schemas.get(parts[2])
            if found is None:
                self._error(404, "ItemNotFound", f"schema {parts[2]} does not exist")
                return
            group, name, definition, version = found
            headers = self._properties(parts[2], group, name, version)
            headers["Content-Type"] = "application/json;serialization=Avro"
            self._send(200, definition.encode(), headers)
            return
        if len(parts) == 4 and parts[2] == "schemas":
            group, name = parts[1], parts[3]
            if method == "PUT":
                self.double.requests[(method, "register")] += 1
                schema_id, version = self.double.register(group, name, body.decode())
                self._send(204, b"", self._properties(schema_id, group, name, version))
                return
            if method == "POST" and name.endswith(":get-id"):
                self.double.requests[(method, "get-id")] += 1
                found = self.double.find(group, name.removesuffix(":get-id"), body.decode())
                if found is None:
                    self._error(404, "ItemNotFound", "no schema with this content")
                    return
                props = self._properties(found[0], group, name.removesuffix(":get-id"), found[1])
                self._send(204, b"", props)
                return
        self._error(404, "NotFound", f"no route {method} {parsed.path}")

    def _answer(self, schema_id: str, answer: Answer) -> None:
        # A 200 carries the schema's properties as the real registry's does.
        headers = self._properties(schema_id, "orders", "x", 1) if answer.status == 200 else {}
        headers["Content-Type"] = answer.content_type
        if answer.body is not None:
            self._send(answer.status, answer.body, headers)
            return
        self.send_response(answer.status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        chunk = b"[" * 65536
        try:
            while self.double.endless_bytes < 1 << 34:
                self.wfile.write(chunk)
                self.double.endless_bytes += len(chunk)
        except OSError:
            pass  # the client hung up: what the test wants

    def do_GET(self) -> None:
        self._route("GET")

    def do_PUT(self) -> None:
        self._route("PUT")

    def do_POST(self) -> None:
        self._route("POST")
