"""Create-if-absent under a real race: many writers, one name, exactly one wins.

The manifest (and the source log) rest on it: a batch's file is created once and never
replaced. Local disk, memory:// and the object stores of support/object_stores.py (Azure Blob
through adlfs against Azurite, S3 through s3fs against moto, GCS through gcsfs against
fake-gcs-server), each with writer threads released together by a barrier; on the object
stores the requests race at the service.
"""

from __future__ import annotations

import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import fsspec
import pytest

from pysparksources.errors import OptionError
from pysparksources.files.sink.manifest import ManifestLog, SinkFile
from pysparksources.files.storage.filesystem import (
    FileLocation,
    create_exclusive,
    exclusive_create_problem,
    resolve,
)
from support.object_stores import ObjectStore, store_param
from support.pyfile_sink import stream_writer
from support.pyfile_source import stream_reader


def race(location: FileLocation, names: list[str], writers: int) -> dict[str, list[int]]:
    """Every writer creates every name at once; returns name -> the writers that succeeded."""
    wins: dict[str, list[int]] = {name: [] for name in names}
    failures: list[BaseException] = []
    barrier = threading.Barrier(writers)

    def write(writer: int) -> None:
        barrier.wait()
        for name in names:
            try:
                create_exclusive(location, name, f"writer {writer}".encode())
                wins[name].append(writer)
            except FileExistsError:
                pass
            except BaseException as error:
                failures.append(error)

    threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not failures, failures[:3]
    return wins


def check_one_winner(
    wins: dict[str, list[int]], read: Callable[[str], bytes], names: list[str]
) -> None:
    doubles = {name: w for name, w in wins.items() if len(w) != 1}
    shown = list(doubles.items())[:3]
    assert not doubles, f"{len(doubles)} names with other than one winner: {shown}"
    for name in names:  # the file holds the winner's bytes, never a loser's overwrite
        assert read(name) == f"writer {wins[name][0]}".encode()


@pytest.fixture
def fast_switching() -> Iterator[None]:
    """Switch threads every 10 µs so a check-then-write gap is actually hit (without the
    lock, 600 names x 8 writers gave 2-6 names with two winners in each of 5 runs)."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(before)


def test_local_disk(tmp_path: Path) -> None:
    location = resolve(str(tmp_path))
    names = [str(tmp_path / f"{i}") for i in range(200)]
    wins = race(location, names, writers=8)
    check_one_winner(wins, lambda p: Path(p).read_bytes(), names)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(Path(n).name for n in names)


def test_memory(fast_switching: None) -> None:
    root = f"/race-{uuid.uuid4().hex}"
    location = resolve(f"memory://{root}")
    names = [f"{root}/{i}" for i in range(600)]
    fs: Any = fsspec.filesystem("memory")
    try:
        wins = race(location, names, writers=8)
        check_one_winner(wins, fs.cat_file, names)
    finally:
        fs.rm(root, recursive=True)


def test_object_store(object_store: ObjectStore) -> None:
    store = object_store
    fs = store.bucket("race")
    folder = f"race/{uuid.uuid4().hex}"
    options = dict(store.storage_options)
    location = resolve(store.url(folder), options)
    assert exclusive_create_problem(location) is None
    # A second create of a name fails and leaves the first file's bytes.
    create_exclusive(location, f"{folder}/once", b"first")
    with pytest.raises(FileExistsError):
        create_exclusive(location, f"{folder}/once", b"second")
    assert fs.cat_file(f"{folder}/once") == b"first"

    names = [f"{folder}/{i}" for i in range(25)]
    wins = race(location, names, writers=8)
    check_one_winner(wins, fs.cat_file, names)

    # Two sink writers committing the same batch: one manifest file, the other is refused.
    out = store.url(f"{folder}/out")
    manifest = ManifestLog(resolve(f"{out}/_spark_metadata", options))
    outcomes: list[str] = []
    barrier = threading.Barrier(2)

    def commit(writer: int) -> None:
        entry = SinkFile(f"{out}/part-{writer}", writer, writer)
        barrier.wait()
        try:
            manifest.add(0, [entry])
            outcomes.append("won")
        except FileExistsError:
            outcomes.append("refused")

    threads = [threading.Thread(target=commit, args=(w,)) for w in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(outcomes) == ["refused", "won"]
    assert len(manifest.all_files()) == 1


@pytest.mark.parametrize(
    "object_store, old, installed, needed",
    [
        store_param("azurite", "adlfs", "2024.4.1", "2024.12.0"),
        store_param("s3", "s3fs", "2024.4.1", "2024.12.0"),
        # s3fs hands IfNoneMatch to botocore, which drops a parameter it does not know.
        store_param("s3", "botocore", "1.35.20", "1.35.21"),
        store_param("gcs", "gcsfs", "2024.4.1", "2024.12.0"),
    ],
    indirect=["object_store"],
)
def test_an_old_backend_is_refused_at_start(
    monkeypatch: pytest.MonkeyPatch,
    object_store: ObjectStore,
    old: str,
    installed: str,
    needed: str,
) -> None:
    """adlfs, s3fs and gcsfs before 2024.12 (and botocore before 1.35.21 under s3fs) ignored
    mode="create" and overwrote: the sink and the source's log refuse to start on them."""
    import importlib.metadata

    from pyspark.sql.types import LongType, StringType, StructField, StructType

    store = object_store
    real = importlib.metadata.version
    monkeypatch.setattr(
        importlib.metadata, "version", lambda name: installed if name == old else real(name)
    )
    # The bucket may not exist yet: tests in this module can run in any process (xdist).
    fs = store.bucket("race")
    fs_options = store.fs_options()
    options = {"path": store.url("race/old"), **fs_options}
    schema = StructType([StructField("id", LongType())])
    with pytest.raises(OptionError) as refused:
        stream_writer(options, schema)
    message = str(refused.value)
    assert "'path'" in message and f"{old} {installed}" in message and f"{old}>={needed}" in message
    for secret_part in store.secrets:
        assert secret_part not in message

    # The source's log on such a backend is refused too, at the first engine call.
    from pysparksources._core.compat import ReadAllAvailable

    fs.pipe_file("race/in/a.txt", b"x")
    source = {
        "path": store.url("race/in"),
        "format": "text",
        "sourceLogLocation": store.url("race/log"),
        **fs_options,
    }
    reader = stream_reader(source, StructType([StructField("value", StringType())]))
    with pytest.raises(OptionError) as refused:
        reader.latestOffset(reader.initialOffset(), ReadAllAvailable())
    assert "'sourceLogLocation'" in str(refused.value) and f"{old}>={needed}" in str(refused.value)
