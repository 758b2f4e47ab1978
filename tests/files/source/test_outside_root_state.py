"""State files others can write cannot make pyfile read, delete or move outside its path.

The source log, a sink's manifest and the paths cleanSource takes from the log name files; an
edited one naming ``<path>/../private/...`` or another folder is refused before any request
(``_safe_paths.below``). In-process, on local folders.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

from pysparksources._core.compat import ReadMaxFiles
from pysparksources._core.option_table import Use
from pysparksources.errors import CheckpointError
from pysparksources.files.source.clean_source import SourceCleaner
from pysparksources.files.source.file_index import SourceLister
from pysparksources.files.storage.filesystem import resolve
from support.option_tables import FORMATS
from support.pyfile_source import stream_reader

SCHEMA = StructType([StructField("id", LongType()), StructField("name", StringType())])


def _private(tmp_path: Path) -> Path:
    secret = tmp_path / "private" / "salaries.csv"
    secret.parent.mkdir(parents=True)
    secret.write_text("666,secret\n")
    return secret


@pytest.mark.parametrize("how", ["dot-dot", "elsewhere"])
def test_a_source_log_entry_outside_the_path_is_never_read(tmp_path: Path, how: str) -> None:
    src, log = tmp_path / "in", tmp_path / "log"
    src.mkdir()
    (src / "f0.csv").write_text("1,a\n")
    secret = _private(tmp_path)
    options = {"path": str(src), "format": "csv", "sourceLogLocation": str(log)}
    r = stream_reader(options, SCHEMA)
    initial = r.initialOffset()
    end = r.latestOffset(initial, ReadMaxFiles(1))
    r.stop()
    edited = f"{src}/../private/salaries.csv" if how == "dot-dot" else str(secret)
    batch = log / "0"
    batch.write_text(batch.read_text().replace(json.dumps(str(src / "f0.csv")), json.dumps(edited)))
    assert edited in batch.read_text()

    r = stream_reader(options, SCHEMA)
    with pytest.raises(CheckpointError, match="not a file below the source path") as caught:
        r.partitions(initial, end)
    assert str(log) in str(caught.value)
    r.stop()


@pytest.mark.parametrize("mode", ["delete", "archive"])
def test_clean_source_never_touches_a_path_outside_the_folder(
    tmp_path: Path, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    src = tmp_path / "in"
    src.mkdir()
    inside = src / "f0.csv"
    inside.write_text("1,a\n")
    secret = _private(tmp_path)
    source = resolve(str(src))
    archive = resolve(str(tmp_path / "archive")) if mode == "archive" else None
    cleaner = SourceCleaner(mode, source, archive, source.path)
    hostile = [str(secret), f"{src}/../private/salaries.csv", f"{src}//f0.csv"]
    with caplog.at_level(logging.WARNING, "pysparksources"):
        cleaner.submit([*hostile, str(inside)])
        cleaner.close()
    assert secret.exists() and secret.read_text() == "666,secret\n"
    assert not inside.exists()  # the file below the folder was cleaned
    if mode == "archive":
        assert (tmp_path / "archive" / str(inside).lstrip("/")).exists()
    skipped = [r.getMessage() for r in caplog.records if "not a file below" in r.getMessage()]
    assert len(skipped) == len(hostile), skipped


def _manifest(out: Path, *paths: str) -> None:
    (out / "_spark_metadata").mkdir(parents=True)
    lines = ["v1"] + [
        json.dumps(
            {
                "path": p,
                "size": 4,
                "isDir": False,
                "modificationTime": 1,
                "blockReplication": 1,
                "blockSize": 1,
                "action": "add",
            }
        )
        for p in paths
    ]
    (out / "_spark_metadata" / "0").write_text("\n".join(lines))


@pytest.mark.parametrize(
    "entry",
    ["file://{tmp}/private/salaries.csv", "file://{tmp}/out/../private/salaries.csv"],
    ids=["elsewhere", "dot-dot"],
)
def test_a_manifest_entry_outside_the_folder_stops_the_read(tmp_path: Path, entry: str) -> None:
    _private(tmp_path)
    out = tmp_path / "out"
    _manifest(out, f"file://{out}/part-0.csv", entry.format(tmp=tmp_path))
    config = FORMATS["pyfile"].call({"path": str(out), "format": "csv"}, Use.READ)
    with pytest.raises(CheckpointError, match="which is not a file below") as caught:
        SourceLister(config).files()
    assert "_spark_metadata" in str(caught.value)


def test_manifest_entries_below_the_folder_are_read(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _manifest(out, f"file://{out}/part-0.csv", f"file:{out}/k=1/part-1.csv")
    config = FORMATS["pyfile"].call({"path": str(out), "format": "csv"}, Use.READ)
    assert sorted(e.path for e in SourceLister(config).files()) == [
        f"{out}/k=1/part-1.csv",
        f"{out}/part-0.csv",
    ]
