"""The object stores pyfile is tested on, each a real server on 127.0.0.1, behind one fixture.

``object_store`` runs a test once per store: Azure Blob through adlfs against Azurite
(support/azurite.py), S3 through s3fs against moto (support/moto_s3.py) and GCS through gcsfs
against fake-gcs-server (support/fake_gcs.py). Each server is session-scoped (one per pytest
process, started by the first test that needs it) and each parameter carries the server's
marker, so ``-m "not moto"`` deselects the S3 runs. tests/conftest.py loads this module as a
plugin: the fixtures are visible everywhere without an import.

A store hands a test its storage options the way a user gives them to pyfile, as ``fs.*``
options with string values, and the strings that must never appear in anything a query writes
or raises.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from support.azurite import Azurite, azurite
from support.fake_gcs import FakeGcs, fake_gcs
from support.moto_s3 import MotoS3, moto_s3

__all__ = [
    "STORES",
    "ObjectStore",
    "azurite",
    "fake_gcs",
    "moto_s3",
    "object_store",
    "store_param",
]

# Store name -> the marker of its server (pytest.ini).
MARKS = {"azurite": "azurite", "s3": "moto", "gcs": "fake_gcs"}


@dataclass(frozen=True)
class ObjectStore:
    """One store as a pyfile user reaches it."""

    name: str  # azurite | s3 | gcs
    protocol: str  # the URL scheme pyfile is given: abfs | s3 | gs
    package: str  # the fsspec backend: adlfs | s3fs | gcsfs
    storage_options: Mapping[str, str]
    # Never in an error, a checkpoint or a log. The endpoint is no secret: gcsfs and botocore
    # name it in their errors.
    secrets: tuple[str, ...] = ()
    bad_credentials: Mapping[str, str] | None = field(default=None)  # None: nothing is checked

    def url(self, path: str) -> str:
        return f"{self.protocol}://{path}"

    def fs_options(self, storage_options: Mapping[str, str] | None = None) -> dict[str, str]:
        """The storage options as pyfile options (``fs.<name>``)."""
        options = self.storage_options if storage_options is None else storage_options
        return {f"fs.{key}": value for key, value in options.items()}

    def filesystem(self) -> Any:
        import fsspec

        return fsspec.filesystem(self.protocol, **self.storage_options)

    def bucket(self, name: str) -> Any:
        """The filesystem, with the container or bucket ``name`` created if it is absent."""
        fs = self.filesystem()
        fs.invalidate_cache()
        if not fs.exists(name):
            # made meanwhile: FileExistsError (gcsfs raises its HttpError 409 for an existing one)
            with contextlib.suppress(FileExistsError):
                fs.mkdir(name)
        return fs

    def __repr__(self) -> str:
        return f"ObjectStore({self.name!r})"  # never the storage options


def _azure(server: Azurite) -> ObjectStore:
    connection = server.connection_string
    wrong = connection.replace(server.account_key, "QUJD" * 22)
    return ObjectStore(
        "azurite",
        "abfs",
        "adlfs",
        {"connection_string": connection},
        secrets=(connection, server.account_key, server.account_key[:20], "QUJD" * 22),
        bad_credentials={"connection_string": wrong},
    )


def _s3(server: MotoS3) -> ObjectStore:
    # moto accepts any signature, so a wrong key cannot fail a request there.
    return ObjectStore(
        "s3",
        "s3",
        "s3fs",
        server.storage_options,
        secrets=(server.key, server.secret, server.secret[:16]),
    )


def _gcs(server: FakeGcs) -> ObjectStore:
    # fake-gcs-server has no authentication (token=anon): no secret to leak, none to get wrong.
    return ObjectStore("gcs", "gs", "gcsfs", server.storage_options)


_BUILD = {"azurite": (_azure, "azurite"), "s3": (_s3, "moto_s3"), "gcs": (_gcs, "fake_gcs")}


def store_param(name: str, *values: Any) -> Any:
    """A ``pytest.param`` of store ``name`` (and ``values``) carrying its server's marker, for
    ``@pytest.mark.parametrize("object_store, ...", [...], indirect=["object_store"])``."""
    ids = "-".join([name, *map(str, values)])
    return pytest.param(name, *values, marks=getattr(pytest.mark, MARKS[name]), id=ids)


STORES = [store_param(name) for name in ("azurite", "s3", "gcs")]


@pytest.fixture(params=STORES)
def object_store(request: pytest.FixtureRequest) -> ObjectStore:
    build, server_fixture = _BUILD[request.param]
    return build(request.getfixturevalue(server_fixture))
