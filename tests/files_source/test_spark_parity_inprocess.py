"""Counterparts of Spark's FileStreamSourceSuite tests that exercise the source's internals
(Spark's tests call FileStreamSource.latestOffset or SeenFilesMap directly): here the same
engine calls are driven on pyfile's reader in-process, with the numbers of Spark's tests.
No JVM. The mapping is in docs/spark-file-stream-tests.md."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql.types import StringType, StructField, StructType

from pysparksources.files.filesystem import resolve
from pysparksources.files.source import FileBatchReader, read_partition


def _tree(root: Path, *files: str) -> None:
    for rel in files:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"{Path(rel).name}\n")


def _listed(root: Path, path: str, recursive: bool = False) -> list[str]:
    from pysparksources.files.listing import list_files
    from pysparksources.files.source_options import split_glob

    base, pattern = split_glob(f"{root}/{path}")
    fs = resolve(str(root)).filesystem()
    return sorted(
        Path(f.path).relative_to(root).as_posix()
        for f in list_files(fs, base, pattern, recursive=recursive)
    )


def test_listing_follows_sparks_partition_discovery(tmp_path: Path) -> None:
    """What Spark 4.3's file stream source read from each layout (checked by running it, and
    compared in test_spark_parity_source.py): plain subfolders are not read, partition folders
    are (nested plain folders below them too), a glob's matched folders are read one level
    deep, and partition folders beside plain ones are refused."""
    from pysparksources.files.listing import PartitionLayoutError

    _tree(tmp_path, "l1/a", "l1/sub/b", "l1/sub/deeper/c")
    assert _listed(tmp_path, "l1") == ["l1/a"]
    assert _listed(tmp_path, "l1", recursive=True) == ["l1/a", "l1/sub/b", "l1/sub/deeper/c"]
    _tree(tmp_path, "l2/k=1/a", "l2/k=1/sub/b", "l2/k=2/c", "l2/d")
    assert _listed(tmp_path, "l2") == ["l2/d", "l2/k=1/a", "l2/k=1/sub/b", "l2/k=2/c"]
    _tree(tmp_path, "l3/top", "l3/subdir/s1", "l3/subdir/subsub/s2", "l3/subdir/subsub/x/s3")
    assert _listed(tmp_path, "l3/*/*") == ["l3/subdir/s1", "l3/subdir/subsub/s2"]
    _tree(tmp_path, "conflict/k=1/a", "conflict/plain/b")
    with pytest.raises(PartitionLayoutError, match="conflict/plain"):
        _listed(tmp_path, "conflict")
    _tree(tmp_path, "roots/x/k=1/a", "roots/y/k=2/b")  # two glob roots, each partitioned
    with pytest.raises(PartitionLayoutError, match="roots/x"):
        _listed(tmp_path, "roots/*")
    _tree(tmp_path, "names/j=1/a", "names/k=2/b")
    with pytest.raises(PartitionLayoutError, match="partition column names"):
        _listed(tmp_path, "names")


def test_partition_values_only_without_a_glob(tmp_path: Path) -> None:
    """read new files in partitioned table with/without globbing: through a glob Spark reads
    no partition values (the column comes from the files, here null)."""
    (tmp_path / "t" / "partition=foo").mkdir(parents=True)
    (tmp_path / "t" / "partition=foo" / "f.json").write_text('{"value": "v"}\n')
    schema = StructType(
        [StructField("value", StringType()), StructField("partition", StringType())]
    )
    for path, expected in ((f"{tmp_path}/t", "foo"), (f"{tmp_path}/t/*/*", None)):
        r = FileBatchReader({"path": path, "format": "json"}, schema)
        rows = [b.to_pylist() for p in r.partitions() for b in read_partition(p)]
        assert rows == [[{"value": "v", "partition": expected}]], path


def test_an_escaped_glob_character_is_a_literal(tmp_path: Path) -> None:
    """SPARK-21996/SPARK-43343: a folder named text[123]text is read through the escaped path
    text\\[123\\]text, as with Spark (the unescaped one is a glob matching text1text...)."""
    _tree(tmp_path, "text[123]text/a", "text1text/b", "a{b}c/c")
    assert _listed(tmp_path, "text\\[123\\]text") == ["text[123]text/a"]
    assert _listed(tmp_path, "text[123]text") == ["text1text/b"]
    assert _listed(tmp_path, "a\\{b\\}c") == ["a{b}c/c"]
