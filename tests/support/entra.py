"""A local stand-in for Entra ID: an HTTPS token authority whose RS256 tokens the emulator
verifies (``pysparksources_emulator.JwtAuthority``).

One server per pytest process serves what azure-identity calls, through its own flows:

- ``GET /{tenant}/v2.0/.well-known/openid-configuration`` and
  ``POST /{tenant}/oauth2/v2.0/token``: OpenID discovery and the client-credentials grant of
  ``ClientSecretCredential`` (pyeventhub's ``auth=servicePrincipal`` with ``authorityHost``
  pointing here); answers for an unknown tenant, client or secret as Entra ID words them;
- ``GET /msi/token``: App Service's managed-identity endpoint, which
  ``ManagedIdentityCredential`` finds through ``IDENTITY_ENDPOINT`` and ``IDENTITY_HEADER``.

Spark's Python workers read those variables, and trust the server's throwaway CA through
``REQUESTS_CA_BUNDLE``, only from the environment of the JVM that starts them, so this plugin
starts the server and sets them in ``pytest_configure``, before any session starts (one CA
for the whole run, made by its first process and inherited by pytest-xdist's workers; one
server per process), and stops the server in ``pytest_unconfigure``. Tokens live
:attr:`TestAuthority.lifetime_s` seconds (a test may shorten it), and every token issued is
counted by grant.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import ssl
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
import trustme
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from pysparksources_emulator import JwtAuthority

TENANT = "00000000-0000-0000-0000-0000000000e1"
EVENTHUBS_SCOPE = "https://eventhubs.azure.net//.default"  # what azure-eventhub asks for
IDENTITY_HEADER = "local-identity-header"
STORAGE_RESOURCE = "https://storage.azure.com"
CA_VARIABLE = "PYSPARKSOURCES_TEST_ENTRA_CA"  # the run's CA folder, for pytest-xdist workers


@dataclass
class Client:
    """A registered application: its secret, and the audience its tokens get (None: the
    resource asked for, as Entra ID does; set to stand for a misconfigured app)."""

    secret: str
    audience: str | None = None


class TestAuthority:
    """The token server; see the module's docstring. ``issued`` counts tokens by grant
    (``client_credentials``, ``managed_identity``), ``refused`` the requests turned down."""

    __test__ = False  # not a test class, whatever pytest thinks of its name

    def __init__(self, ca: trustme.CA) -> None:
        self.ca = ca
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.kid = uuid.uuid4().hex[:12]
        self.lifetime_s = 3600.0
        self.clients: dict[str, Client] = {}
        self.issued: Counter[str] = Counter()
        self.audiences: Counter[str] = Counter()  # tokens issued, by audience
        self.refused: Counter[str] = Counter()
        self._lock = threading.Lock()
        handler = type("Handler", (_Handler,), {"authority": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ca.issue_cert("127.0.0.1", "localhost").configure_cert(context)
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="entra-authority", daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        """The authority host (pyeventhub's ``authorityHost``)."""
        return f"https://127.0.0.1:{self._server.server_address[1]}"

    @property
    def issuer(self) -> str:
        return f"{self.url}/{TENANT}/v2.0"

    def issuer_for(self, audience: str) -> str:
        """Entra ID gives Azure Storage v1 tokens, whose issuer is ``sts.windows.net/<tenant>``
        (Azurite accepts only such issuers); every other resource here gets this authority's."""
        if audience.startswith(STORAGE_RESOURCE):
            return f"https://sts.windows.net/{TENANT}/"
        return self.issuer

    @property
    def identity_endpoint(self) -> str:
        return f"{self.url}/msi/token"

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)

    def add_client(self, audience: str | None = None) -> tuple[str, str]:
        """Register an application; its (client id, secret). A new client per test keeps the
        credentials (and tokens) cached in reused Python workers apart."""
        client_id, secret = str(uuid.uuid4()), f"entra-secret-{secrets.token_urlsafe(18)}"
        with self._lock:
            self.clients[client_id] = Client(secret, audience)
        return client_id, secret

    def jwks(self) -> dict[str, Any]:
        numbers = self.key.public_key().public_numbers()
        return {
            "keys": [
                {
                    "kty": "RSA",
                    "use": "sig",
                    "kid": self.kid,
                    "n": _b64(numbers.n.to_bytes(256, "big")),
                    "e": _b64(numbers.e.to_bytes(3, "big")),
                }
            ]
        }

    def emulator_authority(self) -> JwtAuthority:
        """What the emulator trusts: this issuer, its signing key, Event Hubs' audiences."""
        return JwtAuthority.from_jwks(self.jwks(), self.issuer)

    def token(self, audience: str, subject: str, grant: str) -> tuple[str, int]:
        """A signed access token and its expiry (seconds since the epoch)."""
        now = int(time.time())
        expires = now + int(self.lifetime_s)
        claims = {
            "iss": self.issuer_for(audience),
            "aud": audience,
            "sub": subject,
            "tid": TENANT,
            "iat": now,
            "nbf": now - 60,
            "exp": expires,
            "jti": uuid.uuid4().hex,
        }
        header = {"alg": "RS256", "typ": "JWT", "kid": self.kid}
        signed = f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(claims).encode())}"
        signature = self.key.sign(signed.encode(), padding.PKCS1v15(), hashes.SHA256())
        with self._lock:
            self.issued[grant] += 1
            self.audiences[audience] += 1
        return f"{signed}.{_b64(signature)}", expires


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def resource_of(scope: str) -> str:
    """The audience Entra ID puts in a v1 token for ``scope``: the scope without
    ``/.default`` (``https://eventhubs.azure.net//.default`` -> ``https://eventhubs.azure.net/``)."""
    return scope.removesuffix(".default").removesuffix("/")


class _Handler(BaseHTTPRequestHandler):
    authority: TestAuthority
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet

    def _json(self, status: int, document: dict[str, Any]) -> None:
        body = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: int, error: str, description: str) -> None:
        self.authority.refused[error] += 1
        self._json(status, {"error": error, "error_description": description})

    def do_GET(self) -> None:
        parsed = urlparse(self.path)
        parts = parsed.path.strip("/").split("/")
        if parts[1:] == ["v2.0", ".well-known", "openid-configuration"]:
            if parts[0] != TENANT:
                self._error(
                    400,
                    "invalid_tenant",
                    f"AADSTS90002: Tenant '{parts[0]}' not found. Check to make sure you have "
                    "the correct tenant ID and are signing into the correct cloud.",
                )
                return
            base = f"{self.authority.url}/{TENANT}"
            self._json(
                200,
                {
                    "issuer": self.authority.issuer,
                    "token_endpoint": f"{base}/oauth2/v2.0/token",
                    "authorization_endpoint": f"{base}/oauth2/v2.0/authorize",
                    "jwks_uri": f"{base}/discovery/v2.0/keys",
                },
            )
            return
        if parts == [TENANT, "discovery", "v2.0", "keys"]:
            self._json(200, self.authority.jwks())
            return
        if parts == ["msi", "token"]:
            query = {k: v[0] for k, v in parse_qs(parsed.query).items()}
            if self.headers.get("X-IDENTITY-HEADER") != IDENTITY_HEADER:
                self._error(401, "invalid_request", "the identity header is missing or wrong")
                return
            resource = query.get("resource", "")
            subject = query.get("client_id") or "system-assigned"
            token, expires = self.authority.token(resource, subject, "managed_identity")
            self._json(
                200,
                {
                    "access_token": token,
                    "expires_on": str(expires),
                    "resource": resource,
                    "token_type": "Bearer",
                    "client_id": subject,
                },
            )
            return
        self._error(404, "not_found", f"no route GET {parsed.path}")

    def do_POST(self) -> None:
        parsed = urlparse(self.path)
        parts = parsed.path.strip("/").split("/")
        length = int(self.headers.get("Content-Length") or 0)
        form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
        if parts[1:] != ["oauth2", "v2.0", "token"]:
            self._error(404, "not_found", f"no route POST {parsed.path}")
            return
        if parts[0] != TENANT:
            self._error(400, "invalid_tenant", f"AADSTS90002: Tenant '{parts[0]}' not found.")
            return
        client = self.authority.clients.get(form.get("client_id", ""))
        if client is None:
            self._error(
                400,
                "unauthorized_client",
                f"AADSTS700016: Application with identifier '{form.get('client_id')}' was not "
                f"found in the directory '{TENANT}'.",
            )
            return
        if not secrets.compare_digest(client.secret, form.get("client_secret", "")):
            self._error(
                401,
                "invalid_client",
                "AADSTS7000215: Invalid client secret provided. Ensure the secret being sent in "
                "the request is the client secret value, not the client secret ID.",
            )
            return
        scope = form.get("scope", "").split(" ")[0]
        audience = client.audience or resource_of(scope)
        token, expires = self.authority.token(audience, form["client_id"], "client_credentials")
        self._json(
            200,
            {
                "token_type": "Bearer",
                "expires_in": expires - int(time.time()),
                "ext_expires_in": expires - int(time.time()),
                "access_token": token,
            },
        )


# -- the plugin: one authority per process, in the environment before Spark starts -------
_AUTHORITY: list[TestAuthority] = []


def _run_ca() -> trustme.CA:
    """The run's CA: made by its first process, whose folder pytest-xdist's workers inherit."""
    folder = os.environ.get(CA_VARIABLE)
    if folder:
        root = Path(folder)
        return trustme.CA.from_pem(
            (root / "ca.pem").read_bytes(), (root / "ca-key.pem").read_bytes()
        )
    from support.shared_connect import run_folder

    root = run_folder() / "entra"
    root.mkdir(exist_ok=True)
    ca = trustme.CA()
    ca.cert_pem.write_to_path(str(root / "ca.pem"))
    ca.private_key_pem.write_to_path(str(root / "ca-key.pem"))
    # requests (azure-identity's transport) trusts REQUESTS_CA_BUNDLE *instead of* its own
    # roots: the bundle keeps those (or the one the user set) and adds the test CA.
    import certifi

    previous = os.environ.get("REQUESTS_CA_BUNDLE") or certifi.where()
    bundle = root / "bundle.pem"
    bundle.write_bytes(Path(previous).read_bytes() + b"\n" + ca.cert_pem.bytes())
    os.environ["REQUESTS_CA_BUNDLE"] = str(bundle)
    os.environ[CA_VARIABLE] = str(root)
    return ca


def ca_file() -> str:
    """The run CA's certificate (PEM), for clients given a CA file explicitly."""
    return str(Path(os.environ[CA_VARIABLE]) / "ca.pem")


def pytest_configure(config: pytest.Config) -> None:
    authority = TestAuthority(_run_ca())
    _AUTHORITY.append(authority)
    # This process's managed-identity endpoint (App Service's variables), for its Spark
    # session's workers; a test that sets its own (monkeypatch) still wins.
    os.environ["IDENTITY_ENDPOINT"] = authority.identity_endpoint
    os.environ["IDENTITY_HEADER"] = IDENTITY_HEADER


def pytest_unconfigure(config: pytest.Config) -> None:
    while _AUTHORITY:
        _AUTHORITY.pop().stop()


@pytest.fixture(scope="session")
def entra_authority() -> TestAuthority:
    """This process's token authority (started before any Spark session: see the module)."""
    return _AUTHORITY[0]


# -- the hub the Entra ID tests use: the emulator verifying this authority, or a real one -----
REAL_VARIABLES = (
    "PYSPARKSOURCES_ENTRA_NAMESPACE",  # <namespace>.servicebus.windows.net
    "AZURE_TENANT_ID",
    "AZURE_CLIENT_ID",
    "AZURE_CLIENT_SECRET",  # a service principal with Data Sender and Data Receiver roles
)


@dataclass
class EntraHub:
    """Where the Entra ID tests read and write, with a service principal allowed to.

    ``local``: the emulator verifying :class:`TestAuthority`'s tokens (its assertions about
    tokens issued and accepted apply); otherwise a real namespace from the environment
    (``REAL_VARIABLES``, hub ``PYSPARKSOURCES_ENTRA_HUB``, default ``eh1``), which may already
    hold events: tests tell theirs by a marker and start at a time just before sending.
    """

    namespace: str
    hub: str
    tenant_id: str
    client_id: str
    client_secret: str
    authority: TestAuthority | None
    emulator: Any = None

    @property
    def local(self) -> bool:
        return self.authority is not None

    def options(self, **extra: Any) -> dict[str, str]:
        """pyeventhub's options for this hub with ``auth=servicePrincipal``."""
        options = {
            "fullyQualifiedNamespace": self.namespace,
            "eventHubName": self.hub,
            "auth": "servicePrincipal",
            "tenantId": self.tenant_id,
            "clientId": self.client_id,
            "clientSecret": self.client_secret,
        }
        if self.authority is not None:
            options["authorityHost"] = self.authority.url
            options["useDevelopmentEmulator"] = "true"
        return {**options, **{k: str(v) for k, v in extra.items()}}

    def credential(self) -> Any:
        from azure.identity import ClientSecretCredential

        kwargs: dict[str, Any] = {}
        if self.authority is not None:
            kwargs = {"authority": self.authority.url, "disable_instance_discovery": True}
        return ClientSecretCredential(self.tenant_id, self.client_id, self.client_secret, **kwargs)

    def _client_kwargs(self) -> dict[str, Any]:
        from pysparksources_emulator.testing import FAST

        return {**FAST, "use_tls": False} if self.local else dict(FAST)

    def producer(self) -> Any:
        from azure.eventhub import EventHubProducerClient

        return EventHubProducerClient(
            self.namespace, self.hub, self.credential(), **self._client_kwargs()
        )

    def send(self, bodies: list[str], partition_id: str) -> None:
        from azure.eventhub import EventData

        with self.producer() as client:
            batch = client.create_batch(partition_id=partition_id)
            for body in bodies:
                batch.add(EventData(body))
            client.send_batch(batch)

    def receive_marked(self, marker: str, count: int, timeout: float = 60) -> list[str]:
        """Bodies starting with ``marker`` from every partition (read from the start)."""
        from azure.eventhub import EventHubConsumerClient

        from pysparksources_emulator.testing import received_by

        client = EventHubConsumerClient(
            self.namespace, self.hub, "$Default", self.credential(), **self._client_kwargs()
        )
        pairs = received_by(
            client, count, timeout, keep=lambda event: event.body_as_str().startswith(marker)
        )
        return [event.body_as_str() for _, event in pairs]

    def starting_position(self) -> str:
        """Where a test's read starts: the start of a fresh emulator, or just before now."""
        if self.local:
            return "start"
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 5))
        return json.dumps({"enqueuedTime": stamp})


def real_hub() -> EntraHub | None:
    """The real namespace the environment names, if it names one."""
    if not all(os.environ.get(name) for name in REAL_VARIABLES):
        return None
    return EntraHub(
        namespace=os.environ["PYSPARKSOURCES_ENTRA_NAMESPACE"],
        hub=os.environ.get("PYSPARKSOURCES_ENTRA_HUB", "eh1"),
        tenant_id=os.environ["AZURE_TENANT_ID"],
        client_id=os.environ["AZURE_CLIENT_ID"],
        client_secret=os.environ["AZURE_CLIENT_SECRET"],
        authority=None,
    )


def local_hub(authority: TestAuthority, emulator: Any, hub: str = "test") -> EntraHub:
    """The emulator ``emulator`` (started with ``jwt=authority.emulator_authority()``) and a
    new service principal of the authority."""
    client_id, secret = authority.add_client()
    return EntraHub(emulator.endpoint, hub, TENANT, client_id, secret, authority, emulator)
