"""Inference reads its sample a block and a record at a time (no JVM: pure Python).

The schema must not depend on where the blocks fall: each case is inferred with blocks of a
few bytes and with one block for the whole file (what reading the file whole gave), and the
two must agree. Spark's own inference is compared in tests/files/test_golden_reads.py.
Then the bounds: the sample's bytes, the size of one record, and footers that declare more
than a footer can be.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pysparksources._core.option_table import Use
from pysparksources.errors import CorruptFileError, SchemaError
from pysparksources.files.formats import _sample_text
from pysparksources.files.formats._csv_records import split_records
from pysparksources.files.formats._sample_text import Budget, csv_records
from pysparksources.files.schema.inference import infer_schema
from support.pyfile_source import source_config


def infer(folder: Path, fmt: str, **options: str) -> str:
    config = source_config({"path": str(folder), "format": fmt, **options}, Use.READ)
    return infer_schema(config).simpleString()


def both_ways(monkeypatch: pytest.MonkeyPatch, folder: Path, fmt: str, **options: str) -> str:
    """The schema with 3-byte blocks, checked equal to the one with one block per file."""
    whole = infer(folder, fmt, **options)
    with monkeypatch.context() as patch:
        patch.setattr(_sample_text, "BLOCK_BYTES", 3)
        small = infer(folder, fmt, **options)
    assert small == whole
    return whole


# -- the same schema wherever the blocks fall ---------------------------------------------
VALUES = st.one_of(
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(alphabet=" ab\"\\'{}[],\n\r\té", max_size=5),
    st.booleans(),
    st.none(),
)
OBJECTS = st.dictionaries(
    st.sampled_from(["a", "b", "c d", "é"]),
    st.one_of(VALUES, st.lists(VALUES, max_size=2), st.dictionaries(st.just("x"), VALUES)),
    max_size=3,
)
SPACE = st.sampled_from(["", " ", "\n", "\r\n", "\t  \n"])


@settings(max_examples=40)
@given(st.lists(st.tuples(OBJECTS, SPACE), max_size=5), st.sampled_from(["", "x", "]", "[{"]))
@example([({"a": 1}, "\n")], "")
@example([], "")  # an empty array: no rows
@example([({"a": "]}"}, " "), ({"b": "'"}, "\n")], "")
def test_multiline_documents(objects: list[tuple[dict[str, Any], str]], tail: str) -> None:
    text = "[" + ",".join(s + json.dumps(o) + s for o, s in objects) + "]" + tail
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch:
        Path(folder, "a.json").write_text(text)
        both_ways(patch, Path(folder), "json", multiLine="true")


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1, "b": [1, 2]}',  # one object: one row
        "  [{'a': 'x'}, {\"b\": 2}]",  # single quotes, as Spark's allowSingleQuotes
        '[{"a": 1}, 2]',  # an array with a non-object: the file is malformed
        '[{"a": 1}, {"b": ',  # not closed
        '[{"a": 1} {"b": 2}]',  # no comma
        '[{"a": 1},]',
        "42",
        "",
        "\n \n",
        '[{"a": "\\"]"}]',
    ],
)
def test_multiline_documents_of_every_shape(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, text: str
) -> None:
    (tmp_path / "a.json").write_text(text)
    both_ways(monkeypatch, tmp_path, "json", multiLine="true")


def test_a_malformed_document_drops_what_it_read_before(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "a.json").write_text('[{"a": 1}, {"b": 2}, {"c": ]')
    (tmp_path / "b.json").write_text('[{"d": 1}]')
    schema = both_ways(monkeypatch, tmp_path, "json", multiLine="true")
    assert schema == "struct<_corrupt_record:string,d:bigint>"


@settings(max_examples=40)
@given(st.lists(st.tuples(OBJECTS | VALUES.map(str), st.sampled_from(["\n", "\r\n", "\r"]))))
def test_json_lines(lines: list[tuple[Any, str]]) -> None:
    text = "".join((json.dumps(v) if isinstance(v, dict) else v) + end for v, end in lines)
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch:
        Path(folder, "a.json").write_text(text)
        both_ways(patch, Path(folder), "json")


CELLS = st.text(alphabet='ab,"\n\r1.', max_size=6)


@settings(max_examples=60)
@given(st.lists(CELLS, min_size=1, max_size=12), st.booleans())
@example(['"a', "b\n", 'c"', "\r\n1"], True)  # a quoted value over lines, \r\n cut by a block
def test_csv_records_stream_as_the_whole_text_splits(cells: list[str], multi_line: bool) -> None:
    text = ",".join(cells)
    config = source_config({"path": "/x", "format": "csv", "multiLine": str(multi_line)}, Use.READ)
    opts = config.reader
    chunks = [text] if multi_line else text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    expected = list(split_records(chunks, opts.sep, opts.quote, "\\", opts.null_value))
    for block in (1, 2, 5, 1000):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(_sample_text, "BLOCK_BYTES", block)
            stream = _Bytes(text.encode())
            got = list(csv_records(stream, opts, Budget(2**40), "memory:///x.csv"))
        assert got == expected, block


class _Bytes:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def read(self, size: int) -> bytes:
        chunk = self.data[self.pos : self.pos + size]
        self.pos += len(chunk)
        return chunk


def test_csv_inference_with_small_blocks(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text('id,note,amount\r\n1,"two\nlines",1.5\r\n2,x,\r\n')
    for multi_line in ("true", "false"):
        schema = both_ways(
            monkeypatch, tmp_path, "csv", header="true", inferSchema="true", multiLine=multi_line
        )
        if multi_line == "true":
            assert schema == "struct<id:int,note:string,amount:double>"


# -- the bounds ---------------------------------------------------------------------------
def test_the_sample_stops_inside_a_file_once_its_bytes_are_read(tmp_path: Path) -> None:
    lines = [json.dumps({"id": i}) for i in range(1000)] + ['{"id": 1, "late": "x"}']
    (tmp_path / "big.json").write_text("\n".join(lines) + "\n")
    assert infer(tmp_path, "json") == "struct<id:bigint,late:string>"
    # 10 kB reads the first lines only; the column of the last line is not seen.
    assert infer(tmp_path, "json", schemaSampleBytes="10k") == "struct<id:bigint>"
    # Less than a line still reads the first record whole.
    assert infer(tmp_path, "json", schemaSampleBytes="1") == "struct<id:bigint>"
    (tmp_path / "big.json").write_text("\n".join(["id,late", *map(str, range(1000))]) + "\n")
    options = {"header": "true", "inferSchema": "true"}
    assert infer(tmp_path, "csv", schemaSampleBytes="1", **options) == "struct<id:int,late:string>"


def test_a_multiline_sample_stops_after_an_object(tmp_path: Path) -> None:
    objects = [{"id": i} for i in range(2000)] + [{"late": 1}]
    (tmp_path / "doc.json").write_text(json.dumps(objects))
    options = {"multiLine": "true"}
    assert infer(tmp_path, "json", **options) == "struct<id:bigint,late:bigint>"
    assert infer(tmp_path, "json", schemaSampleBytes="8", **options) == "struct<id:bigint>"


@pytest.mark.parametrize(
    ("fmt", "text", "options", "what"),
    [
        ("json", '{"id": 1}\n{"big": "' + "x" * 400 + '"}\n', {}, "a line"),
        (
            "json",
            '[{"id": 1}, {"big": "' + "x" * 400 + '"}]',
            {"multiLine": "true"},
            "an object of the document",
        ),
        ("json", '{"big": "' + "x" * 400 + '"}', {"multiLine": "true"}, "the document"),
        ("csv", 'a\n"' + "x\n" * 200 + '"\n', {"multiLine": "true"}, "a record"),
        ("csv", "a\n" + "x" * 400 + "\n", {}, "a line"),
    ],
    ids=["json-line", "json-object", "json-document", "csv-record", "csv-line"],
)
def test_a_record_over_the_limit_names_the_file(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    fmt: str,
    text: str,
    options: dict[str, str],
    what: str,
) -> None:
    monkeypatch.setattr(_sample_text, "RECORD_LIMIT", 300)
    monkeypatch.setattr(_sample_text, "BLOCK_BYTES", 64)
    (tmp_path / f"a.{fmt}").write_text(text)
    if fmt == "csv":
        options = {"header": "true", "inferSchema": "true", **options}
    with pytest.raises(SchemaError) as caught:
        infer(tmp_path, fmt, **options)
    message = str(caught.value)
    assert f"a.{fmt}: {what} is over 0 MiB" in message and ".schema(" in message


def _hostile_parquet(path: Path, declared: int) -> None:
    pq.write_table(pa.table({"id": [1]}), path)
    data = path.read_bytes()
    path.write_bytes(data[:-8] + declared.to_bytes(4, "little") + b"PAR1")


def test_parquet_footers_declaring_too_much_are_not_read(tmp_path: Path) -> None:
    big = tmp_path / "a.parquet"
    _hostile_parquet(big, 70 * 2**20)
    data = big.read_bytes()
    with open(big, "wb") as out:  # larger than the footer it declares (sparse: no disk used)
        out.truncate(80 * 2**20)
        out.seek(80 * 2**20 - len(data))
        out.write(data)
    with pytest.raises(CorruptFileError, match=r"a\.parquet declares a footer of 73400320 bytes"):
        infer(tmp_path, "parquet")
    pq.write_table(pa.table({"id": [1]}), tmp_path / "b.parquet")
    assert infer(tmp_path, "parquet", ignoreCorruptFiles="true") == "struct<id:bigint>"


def test_orc_postscripts_declaring_too_much_are_not_read(tmp_path: Path) -> None:
    orc.write_table(pa.table({"id": [1]}), tmp_path / "a.orc")
    data = (tmp_path / "a.orc").read_bytes()
    length = data[-1]
    # A PostScript that declares a 2 GiB footer (field 1) and nothing else.
    postscript = bytes([0x08]) + _varint(2**31) + _varint(8000 << 3 | 2) + bytes([3]) + b"ORC"
    (tmp_path / "a.orc").write_bytes(data[: -1 - length] + postscript + bytes([len(postscript)]))
    with pytest.raises(CorruptFileError, match=r"a\.orc declares a footer of 2147483648 bytes"):
        infer(tmp_path, "orc")


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def test_footers_count_against_the_sample_not_the_file_sizes(tmp_path: Path) -> None:
    """mergeSchema merges the footers of files much larger than schemaSampleBytes."""
    for i in range(3):
        pq.write_table(pa.table({f"c{i}": list(range(20_000))}), tmp_path / f"{i}.parquet")
    schema = infer(tmp_path, "parquet", mergeSchema="true", schemaSampleBytes="10k")
    assert schema == "struct<c0:bigint,c1:bigint,c2:bigint>"
    assert infer(tmp_path, "parquet", mergeSchema="true", schemaSampleBytes="1") == (
        "struct<c0:bigint>"
    )


def test_a_record_the_limit_cuts_is_left_out(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Records that end within schemaSampleBytes count; the one it cuts does not, in whatever
    block it ends (pyarrow's typing of a whole block included)."""
    first = '{"id": 1}\n'
    cut = '{"id": 2, "late": "' + "x" * 100 + '"}\n'
    (tmp_path / "a.json").write_text(first + cut + '{"id": 3}\n' * 50)
    for block in (4, 8 * 2**20):
        monkeypatch.setattr(_sample_text, "BLOCK_BYTES", block)
        assert infer(tmp_path, "json", schemaSampleBytes=str(len(first) + 5)) == (
            "struct<id:bigint>"
        )
    objects = [{"id": 1}, {"id": 2, "late": "x" * 100}]
    (tmp_path / "a.json").write_text(json.dumps(objects))
    options = {"multiLine": "true", "schemaSampleBytes": "20"}
    assert infer(tmp_path, "json", **options) == "struct<id:bigint>"
