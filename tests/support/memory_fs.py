"""A fresh folder on fsspec's in-memory filesystem per test (``from support.memory_fs import
memory_root``); removed afterwards, since the memory filesystem lives as long as the process."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import fsspec
import pytest


@pytest.fixture
def memory_root() -> Iterator[str]:
    path = f"/pysparksources-{uuid.uuid4().hex}"
    yield path
    fs = fsspec.filesystem("memory")
    if fs.exists(path):
        fs.rm(path, recursive=True)
