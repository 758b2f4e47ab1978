"""Resolve a user's path or URL to an fsspec filesystem, with options from ``fs.*``.

Both the source and the sink accept any fsspec URL (``memory://``, ``abfs://``, ``s3://``...)
or a local path; storage options come from data source options prefixed ``fs.`` so secrets
travel inside options (never in the path, never logged).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["FileLocation", "resolve", "working_directory"]


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
        """A URL for messages and manifests (the protocol plus the path)."""
        target = self.path if path is None else path
        if self.protocol in ("file", "local"):
            return "file://" + target if target.startswith("/") else target
        return f"{self.protocol}://{target}"

    def __repr__(self) -> str:
        # Storage options may hold account keys or tokens: never print them.
        return f"FileLocation({self.url()!r})"


def resolve(url: str, storage_options: dict[str, Any] | None = None) -> FileLocation:
    """Split ``url`` into protocol and path the way fsspec would, keeping storage options."""
    from fsspec.core import split_protocol
    from fsspec.utils import infer_storage_options

    protocol, _ = split_protocol(url)
    protocol = protocol or "file"
    options = dict(storage_options or {})
    if protocol == "file":
        import os

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
    import os

    pwd = os.environ.get("PWD")
    if pwd and os.path.isabs(pwd) and os.path.isdir(pwd):
        return pwd
    return os.getcwd()
