"""Resolve a user's path or URL to an fsspec filesystem, with options from ``fs.*``.

Both the source and the sink accept any fsspec URL (``memory://``, ``abfs://``, ``s3://``...)
or a local path; storage options come from data source options prefixed ``fs.`` so secrets
travel inside options (never in the path, never logged).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pysparksources._redact import public_url, scrubbed
from pysparksources.errors import PySparkSourcesError, ServiceError
from pysparksources.files import NAME

__all__ = [
    "FileLocation",
    "create_exclusive",
    "credentials_kept_out",
    "exclusive_create_problem",
    "resolve",
    "working_directory",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FileLocation:
    """A filesystem protocol, its storage options and a path inside it; picklable."""

    protocol: str
    path: str
    storage_options: dict[str, Any] = field(default_factory=dict)

    def filesystem(self) -> Any:
        """The fsspec filesystem (fsspec caches instances, so this is cheap to call again)."""
        import fsspec

        return fsspec.filesystem(self.protocol, **self.storage_options)

    def child(self, relative: str) -> FileLocation:
        return FileLocation(
            self.protocol, self.path.rstrip("/") + "/" + relative.lstrip("/"), self.storage_options
        )

    def url(self, path: str | None = None) -> str:
        """A URL for messages (the protocol plus the path), never with a credential in it.

        A user, password or token in the URL and a query that may hold a SAS token are left
        out (``_redact.public_url``): they belong in ``fs.*`` options.
        """
        target = self.path if path is None else path
        if self.protocol in ("file", "local"):
            return "file://" + target if target.startswith("/") else target
        if "://" in target:  # http(s): fsspec's path is the whole URL
            return public_url(target)
        host = self.storage_options.get("host")
        if isinstance(host, str) and target.startswith("/"):  # ftp, sftp: the host is an option
            port = self.storage_options.get("port")
            return public_url(f"{self.protocol}://{host}{f':{port}' if port else ''}{target}")
        return public_url(f"{self.protocol}://{target}")

    def __repr__(self) -> str:
        # Storage options may hold account keys or tokens: never print them.
        return f"FileLocation({self.url()!r})"


@contextlib.contextmanager
def credentials_kept_out(what: str) -> Iterator[None]:
    """Let a filesystem error through unchanged, unless its message quotes a URL with a
    credential (aiohttp and fsspec's HTTP filesystem quote the URL, SAS query included): that
    one becomes a :class:`ServiceError` saying ``what`` failed, the credential left out."""
    try:
        yield
    except PySparkSourcesError:
        raise
    except Exception as error:
        text = f"{type(error).__name__}: {error}"
        clean = scrubbed(text)
        if clean == text:
            raise
        raise ServiceError(NAME, f"{what}: {clean}") from None


def resolve(url: str, storage_options: dict[str, Any] | None = None) -> FileLocation:
    """Split ``url`` into protocol and path the way fsspec would, keeping storage options."""
    from fsspec.core import split_protocol
    from fsspec.utils import infer_storage_options

    protocol, _ = split_protocol(url)
    protocol = protocol or "file"
    options = dict(storage_options or {})
    if protocol == "file":
        path = infer_storage_options(url)["path"]
        return FileLocation(
            "file", os.path.normpath(os.path.join(working_directory(), path)), options
        )
    import fsspec

    cls = fsspec.get_filesystem_class(protocol)
    path = cls._strip_protocol(url)
    for key, value in cls._get_kwargs_from_urls(url).items():
        options.setdefault(key, value)
    return FileLocation(protocol, path, options)


def working_directory() -> str:
    """The driver JVM's working directory, against which Spark resolves relative paths.

    A Spark Connect server runs Python workers inside a per-session folder that is deleted
    with the session, so ``os.getcwd()`` there is the wrong base. Spark's launcher script
    (bash) exports ``PWD``, the JVM's working directory, and the workers inherit it.
    """
    pwd = os.environ.get("PWD")
    if pwd and os.path.isabs(pwd) and os.path.isdir(pwd):
        return pwd
    return os.getcwd()


# -- create-if-absent ------------------------------------------------------------------------
# The manifest and the source log rely on creating a file only if it does not exist yet. fsspec
# made that part of its API in 2024.12.0 (``pipe_file(..., mode="create")``, open mode "xb");
# the object-store backends of the same month turned it into a conditional request that the
# service itself enforces. Older backends ignore the mode (and overwrite) or fail on it.
_CONDITIONAL_BACKENDS: dict[str, tuple[str, str]] = {
    # package: (first release that sends the condition, what it sends)
    "adlfs": ("2024.12.0", "upload_blob(overwrite=False): If-None-Match: *"),
    "s3fs": ("2024.12.0", "PutObject with If-None-Match: *"),
    "gcsfs": ("2024.12.0", "upload with ifGenerationMatch=0"),
}
# s3fs passes IfNoneMatch to botocore, which knows the parameter from this release on.
_BOTOCORE_FOR_S3 = "1.35.21"
_memory_lock = threading.Lock()
_warned_protocols: set[str] = set()


def create_exclusive(location: FileLocation, path: str, data: bytes) -> None:
    """Write ``path`` whole, or raise FileExistsError: an existing file is never replaced.

    Uses the strongest primitive each backend has: on local disk a temporary file hard-linked
    into place (the link fails if the name exists, and readers never see a partial file); in
    ``memory://`` (one process) the check and the write under one lock; on object stores a
    conditional PUT the service enforces (see ``exclusive_create_problem``).
    """
    if location.protocol in ("file", "local"):
        _create_local(path, data)
        return
    fs: Any = location.filesystem()
    if location.protocol == "memory":
        with _memory_lock:
            fs.pipe_file(path, data, mode="create")
        return
    fs.pipe_file(path, data, mode="create")


def _create_local(path: str, data: bytes) -> None:
    folder, name = os.path.split(path)
    os.makedirs(folder, exist_ok=True)
    temporary = os.path.join(folder, f".{name}.{uuid.uuid4().hex}.tmp")
    try:
        with open(temporary, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.link(temporary, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)


def exclusive_create_problem(location: FileLocation) -> str | None:
    """Why ``create_exclusive`` cannot be trusted on this backend, or None when it can.

    A backend older than the release that sends the service-side condition is a problem (it
    would overwrite). A backend with no conditional write at all (sftp, webdav, ...) falls back
    to fsspec's check-then-write, which is logged once as a warning, not refused.
    """
    if location.protocol in ("file", "local", "memory"):
        return None
    fs: Any = location.filesystem()
    package = type(fs).__module__.split(".", 1)[0]
    needed = _CONDITIONAL_BACKENDS.get(package)
    if needed is None:
        if location.protocol not in _warned_protocols:
            _warned_protocols.add(location.protocol)
            log.warning(
                "%s: %s:// (%s) has no conditional create; the manifest is created by "
                "checking then writing, so two writers racing for the same file could both win",
                NAME,
                location.protocol,
                package,
            )
        return None
    problem = _too_old(package, needed[0])
    if problem is None and package == "s3fs":
        problem = _too_old("botocore", _BOTOCORE_FOR_S3)
    return problem


def _too_old(package: str, minimum: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        installed = version(package)
    except PackageNotFoundError:
        return None
    if _release(installed) >= _release(minimum):
        return None
    return (
        f"{package} {installed} cannot create a file only if it is absent (it would overwrite); "
        f"{NAME} needs {package}>={minimum}"
    )


def _release(text: str) -> tuple[int, ...]:
    parts = []
    for part in text.split(".")[:3]:
        digits = "".join(ch for ch in part if ch.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)
