"""pyfile's formats: one module each, found by the registry, and what pyfile takes from them.

The option table's ``format`` choices, codecs and per-format option sets, the docs of those
options and the formats table of docs/pyfile-source.md all follow the formats' modules, so a
new format is its module, its tests and its docs row. In-process, no Spark.
"""

from __future__ import annotations

import ast
import dataclasses
import pathlib
import pkgutil
import re
from collections.abc import Iterator
from typing import Any, ClassVar

import pyarrow as pa
import pytest

from pysparksources._core.option_table import OptionTable, Text, Use
from pysparksources._core.options import Options
from pysparksources.errors import OptionError
from pysparksources.files import _option_table as table
from pysparksources.files import formats
from pysparksources.files.formats import (
    FORMATS,
    READ_FORMATS,
    WRITE_FORMATS,
    FileFormat,
    FileSplit,
    Fitter,
    PartWriter,
    Sample,
    WritableFormat,
    format_named,
    writable_format_named,
)
from pysparksources.files.options import format_values, parse_options
from support.paths import DOCS


def test_every_public_module_of_formats_is_the_format_of_its_name() -> None:
    modules = [m.name for m in pkgutil.iter_modules(formats.__path__) if m.name[0] != "_"]
    assert sorted(modules) == sorted(READ_FORMATS)
    for name in modules:
        assert format_named(name).name == name


def test_no_format_module_imports_another() -> None:
    """A format is a unit: what two formats share is in a ``_`` module of the package."""
    folder = formats.__path__[0]
    for name in READ_FORMATS:
        tree = ast.parse((pathlib.Path(folder) / f"{name}.py").read_text(encoding="utf-8"))
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        imported |= {
            a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names
        }
        others = {f"pysparksources.files.formats.{other}" for other in READ_FORMATS} - {
            f"pysparksources.files.formats.{name}"
        }
        assert not imported & others, (name, imported & others)


def test_formats_are_listed_in_the_order_users_read_them() -> None:
    # A new format takes its place by ``listed``; these five keep theirs (no edit here).
    assert [fmt.listed for fmt in FORMATS] == sorted(fmt.listed for fmt in FORMATS)
    first = ("parquet", "csv", "json", "text", "orc")
    assert [name for name in READ_FORMATS if name in first] == list(first)
    assert [name for name in WRITE_FORMATS if name in first] == ["parquet", "csv", "json", "text"]
    assert table.FORMAT.choices == READ_FORMATS
    assert table.SINK_FORMAT.choices == WRITE_FORMATS


def test_an_unknown_format_name_is_an_option_error() -> None:
    with pytest.raises(OptionError, match="expected one of " + ", ".join(READ_FORMATS) + "$"):
        format_named("toy")
    with pytest.raises(OptionError, match="expected one of " + ", ".join(WRITE_FORMATS) + "$"):
        writable_format_named("orc")


def test_each_format_names_the_options_it_takes() -> None:
    for fmt in FORMATS:
        taken = [option.name for option in table.READ_FORMAT_OPTIONS[fmt.name]]
        own = [o.name for o in fmt.declared_options if o.uses & Use.READ]
        assert taken == list(fmt.read_options) + own
    for fmt in FORMATS:
        if isinstance(fmt, WritableFormat):
            taken = [option.name for option in table.WRITE_FORMAT_OPTIONS[fmt.name]]
            own = [o.name for o in fmt.declared_options if o.uses & Use.WRITE]
            assert taken == list(fmt.write_options) + own
    assert table.COMPRESSION.codecs["parquet"]["lz4"] == ".lz4raw"
    defaults = table.COMPRESSION.defaults
    assert {name: defaults[name] for name in ("parquet", "csv", "json", "text")} == {
        "parquet": "snappy",
        "csv": "none",
        "json": "none",
        "text": "none",
    }
    assert set(defaults) == set(WRITE_FORMATS)


@pytest.mark.parametrize(
    ("name", "codec", "suffix"),
    [
        ("parquet", "snappy", ".snappy.parquet"),
        ("parquet", "none", ".parquet"),
        ("csv", "gzip", ".csv.gz"),
        ("json", "bzip2", ".json.bz2"),
        ("text", "zstd", ".txt.zst"),
    ],
)
def test_part_files_end_as_spark_reads_their_codec(name: str, codec: str, suffix: str) -> None:
    assert writable_format_named(name).file_suffix(codec) == suffix


def test_what_each_format_is() -> None:
    splittable = {fmt.name for fmt in FORMATS if fmt.splittable}
    parse_modes = {fmt.name for fmt in FORMATS if fmt.parse_modes}
    fixed = {fmt.name: fmt.fixed_schema for fmt in FORMATS if fmt.fixed_schema is not None}
    assert "parquet" in splittable and not {"csv", "json", "text", "orc"} & splittable
    assert parse_modes == {"csv", "json"}  # the text-based formats whose records can be malformed
    assert fixed == {"text": "value STRING"}


# -- a format of its own options, as a new format would declare them ------------------------
TOY_SCHEMA = Text(name="toySchema", doc="The toy's reader schema.", uses=Use.READ)
TOY_LEVEL = Text(name="toyLevel", doc="The toy's writer level.", default="3", uses=Use.WRITE)


class Toy(WritableFormat):
    """A format that exists only here: what the registry and the table take from a format."""

    name = "toy"
    listed = 50
    title = "toy"
    extension = ".toy"
    read_options = ("encoding",)
    codecs: ClassVar[dict[str, str]] = {
        "none": "",
        "uncompressed": "",
        "deflate": ".deflate",
        "snappy": ".snappy",
    }
    default_codec = "snappy"

    def infer(self, sample: Sample, files: list[Any]) -> Any:
        raise AssertionError("not read here")

    def batches(self, f: Any, split: FileSplit, wanted: pa.Schema, opts: Any) -> Iterator[Any]:
        raise AssertionError("not read here")

    def read_rescuing(self, f: Any, fitter: Fitter) -> Iterator[pa.RecordBatch]:
        raise AssertionError("not read here")

    def open_writer(self, stream: Any, schema: pa.Schema, config: Any) -> PartWriter:
        raise AssertionError("not written here")


def test_a_format_declares_options_of_its_own_and_gets_their_values() -> None:
    toy = Toy()
    # A format's own options are the ones its module declares (this module), in order.
    assert toy.declared_options == (TOY_SCHEMA, TOY_LEVEL)
    assert table._taken(toy, toy.read_options, Use.READ) == (table.ENCODING, TOY_SCHEMA)
    assert table._taken(toy, (), Use.WRITE) == (TOY_LEVEL,)
    options = OptionTable("pyfile", (table.ENCODING, TOY_SCHEMA, TOY_LEVEL))
    read = Options(options, {"toySchema": "a INT"}, Use.BATCH_READ)
    assert format_values(read, toy, Use.READ) == {"toySchema": "a INT"}
    write = Options(options, {}, Use.BATCH_WRITE)
    assert format_values(write, toy, Use.WRITE) == {"toyLevel": "3"}
    # ... which reach the format typed, by the option: config.format_option(OPTION)
    reader = parse_options({"path": "/tmp", "format": "csv"}, Use.BATCH_READ).reader
    reader = dataclasses.replace(reader, format_options=format_values(read, toy, Use.READ))
    assert reader.format_option(TOY_SCHEMA) == "a INT"


def test_a_format_checks_its_own_options_when_they_are_parsed() -> None:
    class Picky(Toy):
        def option_problem(self, option: Any, value: Any) -> str | None:
            return "expected a DDL schema" if option is TOY_SCHEMA and value == "?" else None

    options = OptionTable("pyfile", (TOY_SCHEMA, TOY_LEVEL))
    good = Options(options, {"toySchema": "a INT"}, Use.BATCH_READ)
    assert format_values(good, Picky(), Use.READ) == {"toySchema": "a INT"}
    bad = Options(options, {"toySchema": "?"}, Use.BATCH_READ)
    with pytest.raises(OptionError, match="'toySchema': expected a DDL schema"):
        format_values(bad, Picky(), Use.READ)


def test_a_format_naming_an_option_the_table_lacks_fails_at_import() -> None:
    class Typo(Toy):
        read_options = ("encodnig",)

    with pytest.raises(
        ValueError, match=r"format toy names options the table lacks: \['encodnig'\]"
    ):
        table._taken(Typo(), Typo.read_options, Use.READ)


def test_the_option_docs_name_the_formats_and_codecs_a_new_format_brings() -> None:
    writable = (*(f for f in FORMATS if isinstance(f, WritableFormat)), Toy())
    codecs = table._codecs_doc(writable)
    assert codecs.startswith(
        "parquet: none, snappy, gzip, zstd, lz4; csv/json/text: none, gzip, bzip2, zstd; "
    )
    assert codecs.endswith("toy: none, deflate, snappy")
    named: dict[str, str] = {}
    others = None
    for codec, names in re.findall(r"`(\w+)` \(([^)]*)\)", table._default_codecs_doc(writable)):
        if names == "others":
            others = codec
        named.update(dict.fromkeys(names.split(", "), codec))
    for fmt in writable:
        assert named.get(fmt.name, others) == fmt.default_codec, fmt.name
    assert table.FORMAT.doc.startswith(
        "parquet, csv, json (JSON Lines; one document per file with multiLine), text"
    )
    assert table.FORMAT.doc.count(" or ") == 1 and table.FORMAT.doc.endswith(".")
    assert table.SINK_FORMAT.doc.startswith("parquet, csv, json (JSON Lines)")
    for fmt in FORMATS:
        assert fmt.title in table.FORMAT.doc


def test_the_docs_have_a_row_for_each_format_that_says_what_it_is() -> None:
    page = (DOCS / "pyfile-source.md").read_text(encoding="utf-8")
    section = page.split("## Formats", 1)[1].split("\n## ", 1)[0]
    rows = {
        match.group(1): [cell.strip() for cell in match.group(2).split("|")]
        for match in re.finditer(r"^\| `(\w+)` \|(.*)\|$", section, re.MULTILINE)
    }
    assert list(rows) == list(READ_FORMATS), "docs/pyfile-source.md, ## Formats: one row each"
    for name, (_, split, modes, written) in rows.items():
        fmt: FileFormat = format_named(name)
        assert split.startswith("yes") == fmt.splittable, name
        assert modes.startswith("yes") == fmt.parse_modes, name
        assert written.startswith("yes") == isinstance(fmt, WritableFormat), name
