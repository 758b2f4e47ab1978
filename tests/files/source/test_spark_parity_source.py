"""Spark's FileStreamSourceSuite as a checklist: each scenario that applies to pyfile, run on
pyfile and on Spark's own file source over the same files in the same query, and compared.

Every query unions pyfile streams and Spark's streams (rows as JSON text, tagged with their
reader), so one query checks many scenarios; docs/spark-file-stream-tests.md maps each Spark
test name to the test here (or elsewhere) that covers it.
"""

from __future__ import annotations

import json
import os
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest

from support.spark_parity import ARCHIVE_RULES, archive_accepted, compares_with_spark
from support.streams import progress
from support.variants import CLASSIC_ONLY

pytestmark = pytest.mark.spark
NOW = time.time()


# -- writing input files ------------------------------------------------------------------
def put(path: Path, data: str | bytes | pa.Table, mtime: float | None = None) -> Path:
    """One input file (text, or a table as parquet/orc by suffix), with a chosen mtime."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, pa.Table):
        if path.suffix == ".orc":
            orc.write_table(data, str(path))
        else:
            pq.write_table(data, path)
    elif isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def table(**columns: list[str]) -> pa.Table:
    return pa.table({k: pa.array(v, pa.string()) for k, v in columns.items()})


# -- streams ------------------------------------------------------------------------------
def pyfile(
    session: Any, path: Path | str, log: Path, fmt: str, schema: str | None = None, **options: Any
) -> Any:
    reader = session.readStream.format("pyfile").option("format", fmt)
    reader = reader.option("sourceLogLocation", str(log))
    return _load(reader, path, schema, options)


def native(
    session: Any, path: Path | str, fmt: str, schema: str | None = None, **options: Any
) -> Any:
    return _load(session.readStream.format(fmt), path, schema, options)


def _load(reader: Any, path: Path | str, schema: str | None, options: dict[str, Any]) -> Any:
    if schema is not None:
        reader = reader.schema(schema)
    for key, value in options.items():
        reader = reader.option(key, str(value))
    return reader.load(str(path))


def tagged(df: Any, tag: str) -> Any:
    """Rows as JSON text plus the reader's tag, so streams of any schema can be unioned."""
    from pyspark.sql import functions as F

    return df.select(F.to_json(F.struct(*df.columns)).alias("row"), F.lit(tag).alias("via"))


def run_union(frames: dict[str, Any], out: Path, ck: Path, **trigger: Any) -> list[dict[str, Any]]:
    """Run the tagged union of ``frames`` into Spark's parquet sink; the progress of each batch."""
    union = None
    for tag, df in frames.items():
        union = tagged(df, tag) if union is None else union.unionByName(tagged(df, tag))
    assert union is not None
    query = (
        union.writeStream.format("parquet")
        .option("path", str(out))
        .option("checkpointLocation", str(ck))
        .trigger(**(trigger or {"availableNow": True}))
        .start()
    )
    query.awaitTermination(300)
    assert query.exception() is None, query.exception()
    return progress(query)


def rows_by_tag(session: Any, out: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = defaultdict(list)
    for row in session.read.parquet(str(out)).collect():
        found[row.via].append(row.row)
    return {tag: sorted(rows) for tag, rows in found.items()}


def values(rows: list[str], column: str = "value") -> list[Any]:
    return sorted((json.loads(r).get(column) for r in rows), key=lambda v: (v is None, str(v)))


def per_source_rows(batches: list[dict[str, Any]], tags: list[str]) -> dict[str, list[int]]:
    """Rows each source read in each batch that read anything (sources in union order)."""
    out: dict[str, list[int]] = {tag: [] for tag in tags}
    for batch in batches:
        assert len(batch["sources"]) == len(tags)
        for tag, source in zip(tags, batch["sources"], strict=True):
            if source["numInputRows"]:
                out[tag].append(int(source["numInputRows"]))
    return out


# -- scenarios ------------------------------------------------------------------------------
@CLASSIC_ONLY
@pytest.mark.slow
def test_restarts_triggers_idle_sources_and_file_name_only_match_spark(
    session: Any, tmp_path: Path
) -> None:
    """read from text files (the limited sources) and parquet files; fault tolerance (stop,
    add files, restart); SPARK-26629 (restart after a batch in which one source had no data);
    fileNameOnly; input row metrics; SPARK-30669 / SPARK-46641 (Trigger.Once ignores
    maxFilesPerTrigger / maxBytesPerTrigger); SPARK-36533 (AvailableNow runs on the same
    checkpoint afterwards honour them); SPARK-18433 (option names are case-insensitive).

    The parquet source is also the fileNameOnly one and the one idle in run 2: every source
    costs a Python process per run on pyfile's side, and the three behaviours do not interfere
    (the name it has read arrives, elsewhere, in the run after the idle one)."""
    compare = compares_with_spark(session)
    names = ("parquet", "files", "bytes") if compare else ("parquet", "files")
    src = {n: tmp_path / f"in_{n}" for n in names}
    for folder in src.values():
        folder.mkdir()  # Spark's source needs a folder that exists when the query is defined
    formats = {"parquet": "parquet"}
    schemas = {"parquet": "value STRING, k INT"}
    options: dict[str, dict[str, Any]] = {
        "parquet": {"fileNameOnly": "true"},
        "files": {"maxfilespertrigger": 1},
        "bytes": {"MAXBYTESPERTRIGGER": 1},
    }
    t = NOW - 1000

    def frames() -> dict[str, Any]:
        out = {}
        for name, folder in src.items():
            fmt, schema, extra = formats.get(name, "text"), schemas.get(name), options.get(name, {})
            log = tmp_path / f"log_{name}"
            out[f"py-{name}"] = pyfile(session, folder, log, fmt, schema, **extra)
            if compare:
                out[f"spark-{name}"] = native(session, folder, fmt, schema, **extra)
        return out

    def land(*numbers: int) -> None:
        for n in numbers:
            for name in ("files", "bytes"):
                if name in src:
                    put(src[name] / f"{n}.txt", f"{n}\n", t + n)

    out, ck = tmp_path / "out", tmp_path / "ck"
    tags = list(frames())
    # Run 1 (Trigger.Once): every source has data.
    put(src["parquet"] / "k=1" / "a.parquet", table(value=["a"]), t)
    land(1, 2, 3)
    batches = run_union(frames(), out, ck, once=True)
    runs = [per_source_rows(batches, tags)]
    rates = [s.get("processedRowsPerSecond") for b in batches for s in b["sources"]]
    assert rates and all(r is not None and r >= 0 for r in rates), rates

    # Run 2 (AvailableNow): no parquet data.
    land(4, 5)
    runs.append(per_source_rows(run_union(frames(), out, ck), tags))

    # Run 3, after a run in which parquet had nothing; fileNameOnly sees a name it has read,
    # elsewhere (not read again) beside a new one.
    put(src["parquet"] / "k=2" / "a.parquet", table(value=["a-again"]), t + 20)
    put(src["parquet"] / "k=2" / "b.parquet", table(value=["b"]), t + 20)
    land(6, 7)
    runs.append(per_source_rows(run_union(frames(), out, ck), tags))

    expected_rows = {
        "parquet": [[1], [], [1]],
        "files": [[3], [1, 1], [1, 1]],
        "bytes": [[3], [1, 1], [1, 1]],
    }
    for tag in tags:
        assert [run[tag] for run in runs] == expected_rows[tag.split("-", 1)[1]], tag
    got = rows_by_tag(session, out)
    for name in src if compare else ():
        assert got[f"py-{name}"] == got[f"spark-{name}"], name
    parquet = sorted((json.loads(r)["value"], json.loads(r)["k"]) for r in got["py-parquet"])
    assert parquet == [("a", 1), ("b", 2)]
    for name in ("files", "bytes") if compare else ("files",):
        assert sorted(values(got[f"py-{name}"]), key=int) == [str(n) for n in range(1, 8)]


@CLASSIC_ONLY
@pytest.mark.slow
def test_folder_layouts_globs_and_file_names_match_spark(session: Any, tmp_path: Path) -> None:
    """Partitioned tables with and without globbing; a path that is itself a partition folder
    (the json "inside partitioned directory" test, with a given schema); nested directories
    with globbing; plain subfolders (not read unless recursiveFileLookup); file names with
    special characters (SPARK-21996/SPARK-43343); pathGlobFilter; json/parquet/orc files whose
    columns differ from the schema (the "changing schema" tests, with a given schema)."""
    t = NOW - 1000
    root = tmp_path / "in"
    put(root / "plain" / "a.txt", "a\n", t)
    put(root / "plain" / "sub" / "b.txt", "b\n", t)
    put(root / "plain" / "sub" / "deeper" / "c.txt", "c\n", t)
    put(root / "parts" / "a=1" / "b=x" / "f.json", '{"value": "f"}\n', t)
    put(root / "parts" / "a=1" / "b=x" / "sub" / "g.json", '{"value": "g"}\n', t)
    put(root / "parts" / "a=2" / "b=y" / "h.json", '{"value": "h"}\n', t)
    put(root / "nested" / "top.txt", "top\n", t)
    put(root / "nested" / "subdir" / "s1.txt", "s1\n", t)
    put(root / "nested" / "subdir" / "subsub" / "s2.txt", "s2\n", t)
    put(root / "nested" / "subdir" / "subsub" / "deeper" / "s3.txt", "s3\n", t)
    put(root / "globparts" / "partition=foo" / "f.json", '{"value": "v1"}\n', t)
    put(root / "globparts" / "partition=bar" / "g.json", '{"value": "v2"}\n', t)
    for special in (" ", "[", "[123]"):
        put(root / "names" / f"text{special}text", f"keep{special}\n", t)
    put(root / "filtered" / "foo.txt", "foo\n", t)
    # A column the schema lacks is ignored; a file without the schema's column gives nulls.
    put(root / "cols-json" / "j1.json", '{"k": "j1"}\n{"k": "j2", "v": "extra"}\n', t)
    put(root / "cols-json" / "j2.json", '{"v": "no k"}\n', t)
    for fmt in ("parquet", "orc"):
        put(root / f"cols-{fmt}" / f"a.{fmt}", table(k=["x1"]), t)
        put(root / f"cols-{fmt}" / f"b.{fmt}", table(k=["x2"], v=["extra"]), t)
        put(root / f"cols-{fmt}" / f"c.{fmt}", table(v=["no k"]), t)
    put(root / "filtered" / "bar.orc", table(value=["not text"]), t)
    cases: dict[str, tuple[str, str, str | None, dict[str, str]]] = {
        "plain": ("plain", "text", None, {}),
        "recursive": ("plain", "text", None, {"recursiveFileLookup": "true"}),
        "parts": ("parts", "json", "value STRING, a INT, b STRING", {}),
        "nested-glob": ("nested/*/*", "text", None, {}),
        "parts-glob": ("globparts/*/*", "json", "value STRING, partition STRING", {}),
        # The path itself is a col=value folder: its own name is no partition value.
        "in-part": ("globparts/partition=foo", "json", "value STRING, partition STRING", {}),
        "names": ("names", "text", None, {}),
        "filtered": ("filtered", "text", None, {"pathGlobFilter": "*.txt"}),
        "cols-json": ("cols-json", "json", "k STRING", {}),
        "cols-parquet": ("cols-parquet", "parquet", "k STRING", {}),
        "cols-orc": ("cols-orc", "orc", "k STRING", {}),
    }
    # Spark 4.3's own source reads 'text text' three times and the bracket names twice when
    # the three names share one folder (its test has one file per folder): not compared.
    only_pyfile = {"names"}
    compare = compares_with_spark(session)
    if not compare:
        cases = {k: v for k, v in cases.items() if k in ("plain", "parts", "parts-glob")}
    frames = {}
    for name, (path, fmt, schema, options) in cases.items():
        frames[f"py-{name}"] = pyfile(
            session, f"{root}/{path}", tmp_path / f"log_{name}", fmt, schema, **options
        )
        if compare and name not in only_pyfile:
            frames[f"spark-{name}"] = native(session, f"{root}/{path}", fmt, schema, **options)
    run_union(frames, tmp_path / "out", tmp_path / "ck")
    got = rows_by_tag(session, tmp_path / "out")
    for name in set(cases) - only_pyfile if compare else ():
        assert got.get(f"py-{name}") == got.get(f"spark-{name}"), name
    assert values(got["py-plain"]) == ["a"]
    # Through a glob Spark discovers no partition values: the column is read from the files.
    assert [json.loads(r).get("partition") for r in got["py-parts-glob"]] == [None, None]
    assert sorted(tuple(json.loads(r).values()) for r in got["py-parts"]) == [
        ("f", 1, "x"),
        ("g", 1, "x"),
        ("h", 2, "y"),
    ]
    if not compare:
        return
    assert values(got["py-recursive"]) == ["a", "b", "c"]
    assert values(got["py-nested-glob"]) == ["s1", "s2"]
    assert [json.loads(r).get("partition") for r in got["py-in-part"]] == [None]
    assert values(got["py-names"]) == ["keep ", "keep[", "keep[123]"]
    assert values(got["py-filtered"]) == ["foo"]
    assert values(got["py-cols-json"], "k") == ["j1", "j2", None]
    for fmt in ("parquet", "orc"):
        assert values(got[f"py-cols-{fmt}"], "k") == ["x1", "x2", None], fmt


def test_conflicting_folder_layout_fails_like_spark(session: Any, tmp_path: Path) -> None:
    """Partition folders beside a plain folder: Spark refuses the layout, and so does pyfile
    (at its first listing, naming the folders)."""
    src = tmp_path / "in"
    put(src / "k=1" / "a.json", '{"value": "a"}\n')
    put(src / "plain" / "b.json", '{"value": "b"}\n')
    if compares_with_spark(session):
        with pytest.raises(Exception, match="CONFLICTING_DIRECTORY_STRUCTURES"):
            native(session, src, "json", "value STRING, k INT").writeStream.format("noop").option(
                "checkpointLocation", str(tmp_path / "ck0")
            ).start().stop()
    df = pyfile(session, src, tmp_path / "log", "json", "value STRING, k INT")
    query = (
        df.writeStream.format("noop")
        .option("checkpointLocation", str(tmp_path / "ck"))
        .trigger(availableNow=True)
        .start()
    )
    with pytest.raises(Exception) as caught:
        query.awaitTermination(120)
    message = str(caught.value)
    assert "conflicting folder layout" in message and f"{src}/plain" in message


def numbers(session: Any, total: int, per_batch: int) -> Any:
    """``total`` rows of pyrate as strings, ``per_batch`` per micro-batch (one partition)."""
    return (
        session.readStream.format("pyrate")
        .option("rowsPerBatch", per_batch)
        .option("maxRowsPerTrigger", per_batch)
        .option("totalRows", total)
        .option("numPartitions", 1)
        .load()
        .selectExpr("CAST(value AS STRING) AS value")
    )


def write_with_pyfile(df: Any, out: Path, ck: Path) -> None:
    query = (
        df.writeStream.format("pyfile")
        .option("format", "text")
        .option("checkpointLocation", str(ck))
        .trigger(availableNow=True)
        .start(str(out))
    )
    query.awaitTermination(300)
    assert query.exception() is None, query.exception()


@CLASSIC_ONLY
@pytest.mark.slow
def test_reading_a_file_sinks_output_matches_spark(session: Any, tmp_path: Path) -> None:
    """read data from outputs of another streaming query (its manifest compacted, a stray file
    ignored); start before another streaming query, and read its output; SPARK-35565's intent
    (a glob path reads the folder as plain files); SPARK-21996/SPARK-43343 an output folder
    whose name needs escaping."""
    out = tmp_path / "sink out"
    out.mkdir()
    special = tmp_path / "text[123]text"
    escaped = str(special).replace("[", "\\[").replace("]", "\\]")
    compare = compares_with_spark(session)
    rows = 120 if compare else 20
    paths = {"plain": str(out), "glob": f"{out}/*", "special": escaped}
    if not compare:
        del paths["glob"]
    frames = {}
    for name, path in paths.items():
        frames[f"py-{name}"] = pyfile(session, path, tmp_path / f"log_{name}", "text")
        if compare:
            frames[f"spark-{name}"] = native(session, path, "text")
    union = None
    for tag, df in frames.items():
        union = tagged(df, tag) if union is None else union.unionByName(tagged(df, tag))
    assert union is not None
    # A long trigger interval: the reader's first batch runs at start, before the writer; the
    # later ones mostly after it (each batch of six sources costs CPU, whatever it reads).
    reader = (
        union.writeStream.format("parquet")
        .option("path", str(tmp_path / "read"))
        .option("checkpointLocation", str(tmp_path / "read_ck"))
        .trigger(processingTime="10 seconds")
        .start()
    )
    try:
        reader.processAllAvailable()  # started before the writer: nothing to read yet
        # 12 batches: the manifest is compacted at batch 9 (over Connect 2 batches: reading a
        # compacted manifest does not depend on the session kind).
        write_with_pyfile(numbers(session, rows, 10), out, tmp_path / "w_ck")
        (out / "should_not_keep.txt").write_text("stray\n")
        write_with_pyfile(
            numbers(session, 1, 1).selectExpr("'foo' AS value"), special, tmp_path / "w_ck2"
        )
        reader.processAllAvailable()
    finally:
        reader.stop()
    assert reader.exception() is None, reader.exception()
    assert (out / "_spark_metadata" / "9.compact").exists() or not compare
    got = rows_by_tag(session, tmp_path / "read")
    for name in paths if compare else ():
        assert got[f"py-{name}"] == got[f"spark-{name}"], name
    assert sorted(values(got["py-plain"]), key=int) == [str(i) for i in range(rows)]
    if compare:
        assert sorted(values(got["py-glob"])) == sorted([*(str(i) for i in range(rows)), "stray"])
    assert values(got["py-special"]) == ["foo"]


@CLASSIC_ONLY
@pytest.mark.slow
def test_latest_first_and_max_file_age_match_spark(session: Any, tmp_path: Path) -> None:
    """FileStreamSource - latestFirst; SPARK-19813 / SPARK-46641: maxFileAge is ignored with
    latestFirst plus maxFilesPerTrigger or maxBytesPerTrigger; without them a file older than
    maxFileAge before the newest file is never read, across a restart (SPARK-17165's rule).
    Spark's own source log (FileStreamSourceLog) is read with pyfile's log reader."""
    from pysparksources.files.source.source_log import SourceLog
    from pysparksources.files.storage.filesystem import resolve

    configs = {
        "oldest": {"maxFilesPerTrigger": 1, "maxFileAge": "1m"},
        "latest-files": {"latestFirst": "true", "maxFilesPerTrigger": 1, "maxFileAge": "1m"},
        "latest-bytes": {"latestFirst": "true", "maxBytesPerTrigger": 1, "maxFileAge": "1m"},
    }
    compare = compares_with_spark(session)
    readers = ["py", "spark"] if compare else ["py"]
    if not compare:
        configs = {"latest-files": configs["latest-files"]}
    folders = {(r, c): tmp_path / f"in-{r}-{c}" for r in readers for c in configs}

    def land(name: str, age_s: float) -> None:
        for folder in folders.values():
            put(folder / name, f"{name}\n", NOW - age_s)

    def frames() -> dict[str, Any]:
        out = {}
        for (r, c), folder in folders.items():
            if r == "py":
                out[f"py-{c}"] = pyfile(
                    session, folder, tmp_path / f"log-{c}", "text", **configs[c]
                )
            else:
                out[f"spark-{c}"] = native(session, folder, "text", **configs[c])
        return out

    out, ck = tmp_path / "out", tmp_path / "ck"
    land("f1", 3 * 3600)
    land("f2", 2 * 3600)
    run_union(frames(), out, ck)
    land("late", 1800)
    land("ancient", 2 * 3600 + 600)
    run_union(frames(), out, ck)

    def batches(log_dir: Path) -> list[list[str]]:
        log = SourceLog(resolve(str(log_dir)))
        return [
            sorted(Path(e.path).name for e in log.get(b)) for b in range(log.latest_batch_id() + 1)
        ]

    expected = {
        "oldest": [["f1"], ["f2"], ["late"]],
        "latest-files": [["f2"], ["f1"], ["late"], ["ancient"]],
        "latest-bytes": [["f2"], ["f1"], ["late"], ["ancient"]],
    }
    for c in configs:
        assert batches(tmp_path / f"log-{c}") == expected[c], c
    if compare:
        # Spark keeps a log for each of its sources in the checkpoint, numbered in union order.
        for index, tag in enumerate(frames()):
            if tag.startswith("spark-"):
                log_dir = ck / "sources" / str(index)
                assert batches(log_dir) == expected[tag.removeprefix("spark-")], tag


def snapshot(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def wait_for(check: Any, timeout_s: float = 60) -> None:
    """cleanSource works on a background thread in both sources: wait for its result."""
    deadline = time.monotonic() + timeout_s
    while not check() and time.monotonic() < deadline:
        time.sleep(0.2)


@CLASSIC_ONLY
@pytest.mark.slow
def test_clean_source_delete_and_archive_match_spark(session: Any, tmp_path: Path) -> None:
    """remove completed files when remove option is enabled; move completed files to archive
    directory when archive option is enabled (a glob source, names with spaces and %)."""
    compare = compares_with_spark(session)
    readers = ["py", "spark"] if compare else ["py"]
    t = NOW - 1000
    delete_names = ["keep1", "ke ep2 %", "keep3"]
    archive_names = ["k %1/keep1", "k %1/k 2/keep2 %", "k3/keep3"]
    src = {(r, m): tmp_path / f"src-{r}-{m}" for r in readers for m in ("delete", "archive")}
    archive = {r: tmp_path / f"archive-{r}" for r in readers}
    for (_, mode), folder in src.items():
        names = delete_names if mode == "delete" else archive_names
        for i, name in enumerate(names):
            put(folder / name, f"{Path(name).name}\n", t + i)

    def frames() -> dict[str, Any]:
        out = {}
        for (r, mode), folder in src.items():
            path = folder if mode == "delete" else f"{folder}/*/*"
            options: dict[str, Any] = {"maxFilesPerTrigger": 1, "cleanSource": mode}
            if mode == "archive":
                options["sourceArchiveDir"] = archive[r]
            if r == "py":
                out[f"py-{mode}"] = pyfile(
                    session, path, tmp_path / f"log-{mode}", "text", **options
                )
            else:
                out[f"spark-{mode}"] = native(session, path, "text", **options)
        return out

    def archived(r: str) -> list[str]:
        # Archived files keep their full path below the archive folder.
        root = archive[r] / str(src[(r, "archive")]).lstrip("/")
        return snapshot(root) if root.exists() else []

    out, ck = tmp_path / "out", tmp_path / "ck"
    run_union(frames(), out, ck)
    # The batches committed during the run are cleaned; the last one waits for the next run.
    for r in readers:
        wait_for(lambda r=r: snapshot(src[(r, "delete")]) == ["keep3"])
        wait_for(lambda r=r: len(archived(r)) == 2)
        assert snapshot(src[(r, "delete")]) == ["keep3"], r
        assert snapshot(src[(r, "archive")]) == ["k3/keep3"], r
        assert archived(r) == ["k %1/k 2/keep2 %", "k %1/keep1"], r

    for r in readers:
        put(src[(r, "delete")] / "keep4", "keep4\n", t + 10)
        put(src[(r, "archive")] / "k3" / "keep4", "keep4\n", t + 10)
    run_union(frames(), out, ck)
    for r in readers:
        wait_for(lambda r=r: snapshot(src[(r, "delete")]) == ["keep4"])
        wait_for(lambda r=r: len(archived(r)) == 3)
        assert snapshot(src[(r, "delete")]) == ["keep4"], r
        assert snapshot(src[(r, "archive")]) == ["k3/keep4"], r
        assert archived(r) == ["k %1/k 2/keep2 %", "k %1/keep1", "k3/keep3"], r
    got = rows_by_tag(session, out)
    for tag in frames():
        expected = [Path(n).name for n in (delete_names if "delete" in tag else archive_names)]
        assert values(got[tag]) == sorted([*expected, "keep4"]), tag


def fails(df: Any, ck: Path, **trigger: Any) -> str:
    """The message of a query that fails at start or in its first batch (over Connect a
    refusal at load() arrives at start)."""
    with pytest.raises(Exception) as caught:
        query = (
            df.writeStream.format("noop")
            .option("checkpointLocation", str(ck))
            .trigger(**(trigger or {"availableNow": True}))
            .start()
        )
        query.awaitTermination(120)
    return str(caught.value)


def test_clean_source_on_a_sink_output_fails_like_spark(session: Any, tmp_path: Path) -> None:
    """Throw UnsupportedOperationException on configuring delete/archive when the source path
    refers to the output folder of a file sink: cleaning would remove files its manifest lists."""
    out = tmp_path / "sink"
    part = put(out / "part-00000.txt", "kept\n")
    manifest = {
        "path": part.as_uri(),
        "size": part.stat().st_size,
        "isDir": False,
        "modificationTime": int(part.stat().st_mtime * 1000),
        "blockReplication": 1,
        "blockSize": 33554432,
        "action": "add",
    }
    put(out / "_spark_metadata" / "0", "v1\n" + json.dumps(manifest))
    if compares_with_spark(session):
        message = fails(native(session, out, "text", cleanSource="delete"), tmp_path / "ck0")
        assert "Clean up source files is not supported" in message
    for mode in ("delete", "archive") if compares_with_spark(session) else ("delete",):
        df = pyfile(
            session,
            out,
            tmp_path / f"log-{mode}",
            "text",
            cleanSource=mode,
            sourceArchiveDir=tmp_path / "archive",
        )
        message = fails(df, tmp_path / f"ck-{mode}")
        assert "cleanSource" in message and "_spark_metadata" in message
    assert part.exists()


@pytest.mark.slow
def test_schema_rules_match_spark(session: Any, tmp_path: Path) -> None:
    """FileStreamSource schema: no path / with a given schema; SPARK-20460 duplicate column
    names; SPARK-35320 JSON map keys other than STRING; SPARK-28651's subject (nullability):
    Spark makes every column nullable, pyfile keeps NOT NULL and fails a file holding a null
    (documented in docs/pyfile-source.md)."""
    from pyspark.sql.types import LongType, StructField, StructType

    src = put(tmp_path / "in" / "a.json", '{"foo": 1, "a": 2}\n{"foo": null}\n').parent
    compare = compares_with_spark(session)
    # The schema given is the stream's schema, for every format.
    for fmt in ("text", "orc", "parquet", "json"):
        given = "userColumn STRING"
        df = pyfile(session, src, tmp_path / "log", fmt, given)
        assert df.schema.simpleString() == "struct<userColumn:string>", fmt

    for schema in ("a INT, a INT", "aA INT, Aa INT") if compare else ("a INT, a INT",):
        if compare:
            with pytest.raises(Exception, match="COLUMN_ALREADY_EXISTS"):
                native(session, src, "json", schema).writeStream.format("noop").option(
                    "checkpointLocation", str(tmp_path / "ck2")
                ).trigger(availableNow=True).start().awaitTermination(120)
        try:
            df = pyfile(session, src, tmp_path / "log2", "json", schema)
        except Exception as error:  # Spark itself refuses some duplicates when defined
            assert "COLUMN_ALREADY_EXISTS" in str(error)
            continue
        assert "appears twice" in fails(df, tmp_path / "ck3")
    if not compare:
        return

    no_path = session.readStream.format("pyfile").option("sourceLogLocation", str(tmp_path / "l"))
    assert "'path'" in fails(no_path.schema("a INT").load(), tmp_path / "ck1")
    with pytest.raises(Exception, match="STRING as a key type for a MAP"):
        session.readStream.schema("col MAP<INT, STRING>").json(str(src))
    message = fails(
        pyfile(session, src, tmp_path / "log3", "json", "col MAP<INT, STRING>"), tmp_path / "ck4"
    )
    assert "'col'" in message and "STRING keys" in message

    not_null = StructType([StructField("foo", LongType(), False)])
    assert native(session, src, "json", not_null).schema.fields[0].nullable
    df = session.readStream.format("pyfile").option("format", "json")
    df = df.option("sourceLogLocation", str(tmp_path / "log4")).schema(not_null).load(str(src))
    assert not df.schema.fields[0].nullable
    message = fails(df, tmp_path / "ck5")
    assert "a.json" in message and "null" in message


def test_bad_limits_and_options_fail_at_start_naming_them(session: Any, tmp_path: Path) -> None:
    """max files per trigger - incorrect values; SPARK-46641 the same for maxBytesPerTrigger
    and both set; SPARK-31962 modifiedBefore/modifiedAfter are refused for streams. The whole
    matrix runs through the option parser the reader calls at query start; two cases run as
    real queries to show the sentence reaches the user."""
    from pysparksources.errors import OptionError
    from support.pyfile_source import source_config

    base = {"path": str(tmp_path), "sourceLogLocation": str(tmp_path / "log")}
    for option in ("maxFilesPerTrigger", "maxBytesPerTrigger"):
        for value in ("not-a-integer", "-1", "0", "10.1"):
            with pytest.raises(OptionError) as caught:
                source_config({**base, option: value})
            assert option in str(caught.value) and repr(value) in str(caught.value)
    both = {**base, "maxFilesPerTrigger": "1", "maxBytesPerTrigger": "1"}
    with pytest.raises(OptionError, match=r"maxBytesPerTrigger.*maxFilesPerTrigger"):
        source_config(both)
    for option in ("modifiedBefore", "modifiedAfter"):
        with pytest.raises(OptionError, match=option.lower()):
            source_config({**base, option: "2030-01-01T00:00:00"})

    (tmp_path / "in").mkdir()

    def refused(ck: Path, **option: str) -> str:
        """The message of a query refused at load() (a schema-less read checks its options
        there) or at start."""
        try:
            bad = pyfile(session, tmp_path / "in", tmp_path / f"log-{ck.name}", "text", **option)
        except Exception as error:
            return str(error)
        return fails(bad, ck)

    message = refused(tmp_path / "ck1", maxBytesPerTrigger="10.1")
    assert "maxBytesPerTrigger" in message and "'10.1'" in message
    if compares_with_spark(session):
        assert "modifiedafter" in refused(tmp_path / "ck2", modifiedAfter="2020").lower()


@CLASSIC_ONLY
@pytest.mark.slow
def test_limits_in_a_running_query_match_spark(session: Any, tmp_path: Path) -> None:
    """max files per trigger / SPARK-46641 max bytes per trigger in a running query: files
    listed but over the limit wait (from the unread-file cache) for the next batches; explain
    works before and after data."""
    src = tmp_path / "in"
    src.mkdir()
    staging = tmp_path / "staging"
    t = NOW - 1000
    count = [0]

    def land(files: int, group: str) -> None:
        # A whole partition folder appears at once (a rename), as Spark's test locks batching.
        for _ in range(files):
            count[0] += 1
            put(
                staging / f"batch={group}" / f"{count[0]:02d}.json",
                f'{{"value": "{count[0]:02d}"}}\n',
                t + count[0],
            )
        os.rename(staging / f"batch={group}", src / f"batch={group}")

    size = len('{"value": "01"}\n')
    limits = {"files": {"maxFilesPerTrigger": 2}, "bytes": {"maxBytesPerTrigger": 2 * size}}
    compare = compares_with_spark(session)
    frames = {}
    for name, option in limits.items():
        frames[f"py-{name}"] = pyfile(
            session, src, tmp_path / f"log-{name}", "json", "value STRING, batch INT", **option
        )
        if compare:
            frames[f"spark-{name}"] = native(
                session, src, "json", "value STRING, batch INT", **option
            )
    union = None
    for tag, df in frames.items():
        union = tagged(df, tag) if union is None else union.unionByName(tagged(df, tag))
    assert union is not None
    union.explain()
    land(3, "1")
    query = (
        union.writeStream.format("parquet")
        .option("path", str(tmp_path / "out"))
        .option("checkpointLocation", str(tmp_path / "ck"))
        .trigger(processingTime="200 milliseconds")
        .start()
    )
    try:
        query.processAllAvailable()
        land(4, "2")
        query.processAllAvailable()
        land(5, "3")
        query.processAllAvailable()
        query.explain(True)
    finally:
        query.stop()
    assert query.exception() is None, query.exception()
    rows = per_source_rows(progress(query), list(frames))
    for tag in frames:
        assert rows[tag] == [2, 1, 2, 2, 2, 2, 1], tag
    got = rows_by_tag(session, tmp_path / "out")
    for tag in frames:
        assert values(got[tag]) == [f"{i:02d}" for i in range(1, 13)], tag


def test_archive_folder_rules_match_spark(spark: Any, tmp_path: Path) -> None:
    """SourceFileArchiver - fail when base archive path matches source pattern: Spark's own
    source decides each case at query start; pyfile's option check must decide the same (its
    verdicts are pinned, without a JVM, in test_spark_parity_inprocess.py)."""
    for folder in ("a/b", "data/q/x", "in", "hello/spark"):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
    for i, (source, archive, _) in enumerate(ARCHIVE_RULES):
        df = native(
            spark,
            f"{tmp_path}/{source}",
            "text",
            cleanSource="archive",
            sourceArchiveDir=f"{tmp_path}/{archive}",
        )
        query = (
            df.writeStream.format("noop")
            .option("checkpointLocation", str(tmp_path / f"ck{i}"))
            .trigger(availableNow=True)
            .start()
        )
        try:
            query.awaitTermination(120)
            spark_accepts = True
        except Exception as error:
            assert "base archive path" in str(error).lower() or "archive" in str(error).lower()
            spark_accepts = False
        assert archive_accepted(tmp_path, source, archive) is spark_accepts, (source, archive)
