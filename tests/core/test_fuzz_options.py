"""Fuzzing every parser of user input: a value comes back, or our one clear error type.

Never an IndexError, KeyError, UnicodeError, RecursionError, re.error or a hang: options
(durations, sizes, integers, positions JSON, partition maps, globs), connection strings and
whole option maps of every source and sink. Bugs found are pinned with ``@example``.
"""

from __future__ import annotations

import contextlib
import json
import string
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from pysparksources._core.option_table import (
    Choice,
    Duration,
    Flag,
    Integer,
    Number,
    OptionTable,
    Size,
    Use,
)
from pysparksources._core.option_values import LONG_MAX, parse_duration_seconds, parse_size
from pysparksources._core.options import Options
from pysparksources.errors import OptionError
from pysparksources.eventhubs._positions import PositionError, parse_position, parse_positions
from pysparksources.eventhubs.options import parse_options as eventhubs_parse
from pysparksources.files.options import parse_options as files_parse
from pysparksources.files.options import split_glob
from pysparksources.files.storage.folder_listing import glob_regex
from support.option_tables import FORMATS

# Text that looks like what people type: digits, units, signs, spaces, JSON punctuation.
NEAR = st.text(
    alphabet=string.digits + "smhdkgbtpPTHMSD.,+-_ :{}[]\"'eE" + "\u0663\uff11", max_size=24
)
ANY_TEXT = st.one_of(NEAR, st.text(max_size=40))


@given(ANY_TEXT, st.booleans())
@example("9" * 5000 + "s", False)  # int() refuses > 4300 digits: was a bare ValueError path
@example("1_000s", False)  # Python's int() takes underscores, Spark does not
@example("\u0663s", False)  # an Arabic-Indic digit: not a Spark duration
@example("P" + "9" * 400 + "D", True)
@example("PT1.5S", True)
def test_durations(text: str, iso: bool) -> None:
    try:
        value = parse_duration_seconds(text, iso)
    except ValueError:
        return
    assert 0 <= value <= LONG_MAX / 1000


@given(st.integers(0, 10**6), st.sampled_from(["", "us", "ms", "s", "m", "min", "h", "d"]))
def test_durations_round_trip(number: int, unit: str) -> None:
    factor = {"": 1, "us": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400}
    assert parse_duration_seconds(f"{number}{unit}") == number * factor[unit]


@given(ANY_TEXT)
@example("9" * 5000)
@example("8p")  # 8 << 50 fits; 8192p does not
@example("8192p")
def test_sizes(text: str) -> None:
    try:
        value = parse_size(text)
    except ValueError:
        return
    assert 0 <= value <= LONG_MAX


@given(st.integers(0, 2**30), st.sampled_from(["", "k", "kb", "m", "MB", "g", "t", "p"]))
def test_sizes_round_trip(number: int, unit: str) -> None:
    shift = {"": 0, "k": 10, "m": 20, "g": 30, "t": 40, "p": 50}[unit[:1].lower()]
    if number << shift > LONG_MAX:
        return  # refused, see test_sizes
    assert parse_size(f"{number}{unit}") == number << shift


KINDS = {
    "integer": Integer(name="x", doc="", default="0", minimum=0, maximum=10**9),
    "flag": Flag(name="x", doc="", default="false"),
    "duration": Duration(name="x", doc="", default="1s", iso=True),
    "size": Size(name="x", doc="", default="1"),
    "number": Number(name="x", doc="", default="0.5", minimum=0, maximum=1),
    "choice": Choice(name="x", doc="", default="a", choices=("a", "B")),
}


@given(ANY_TEXT, st.sampled_from(sorted(KINDS)))
@example("1" * 5000, "integer")
@example("1e999", "number")  # float('inf') is not between 0 and 1
@example("nan", "number")
def test_typed_options(text: str, kind: str) -> None:
    option = KINDS[kind]
    options = Options(OptionTable("fuzz", (option,)), {"x": text}, Use.ANY)
    try:
        options.get(option)
    except OptionError as error:
        assert str(error).startswith("fuzz: invalid value")


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
POSITION_KEYS = st.sampled_from(["seqNo", "offset", "enqueuedTime", "isInclusive", "x"])
POSITION = st.dictionaries(POSITION_KEYS, JSONISH, max_size=4)


@given(st.one_of(st.text(max_size=60), JSONISH.map(json.dumps), POSITION.map(json.dumps)))
@example("[" * 100_000)  # json.loads raised RecursionError
@example('{"enqueuedTime": 1e300}')  # datetime.fromtimestamp overflowed
@example('{"enqueuedTime": "9999-12-31T23:59:59-23:59"}')
@example('{"offset": "\u0663"}')  # a non-ASCII digit is not an offset
def test_positions(text: str) -> None:
    with contextlib.suppress(PositionError):
        parse_position(text)


@given(
    st.one_of(
        st.text(max_size=60),
        st.dictionaries(st.text(max_size=6), st.one_of(POSITION, JSONISH), max_size=4).map(
            json.dumps
        ),
    )
)
@example('{"' + "1" * 5000 + '": "start"}')  # int() of a 5000-digit partition id
@example('{"{\\"partitionId\\": []}": "start"}')
@example("{" * 50_000)
def test_partition_maps(text: str) -> None:
    with contextlib.suppress(PositionError):
        parse_positions(text)


@given(st.text(alphabet="ab*?[]{},!^\\-/", max_size=20))
@example("[]")  # an empty class was an invalid regex
@example("[z-a]")  # a reversed range
@example("{a,b")  # an unclosed alternative
@example("[[:alpha:]]")
def test_globs(pattern: str) -> None:
    try:
        regex = glob_regex(pattern)
    except ValueError:
        return
    regex.match("abc")
    base, _glob = split_glob("/data/" + pattern)
    assert base.startswith("/")


SEGMENTS = st.sampled_from(
    ["Endpoint=sb://ns.servicebus.windows.net/", "Endpoint=", "SharedAccessKeyName=k",
     "SharedAccessKey=KEY", "SharedAccessSignature=SharedAccessSignature sr=x&sig=y",
     "EntityPath=hub", "EntityPath=", "=", ";", " ", "UseDevelopmentEmulator=true", "x"]
)  # fmt: skip


@given(st.one_of(st.lists(SEGMENTS, max_size=8).map(";".join), st.text(max_size=60)))
@example("Endpoint=sb://[::1/;SharedAccessKeyName=k;SharedAccessKey=KEY")  # urlparse ValueError
@example("Endpoint=sb://h:99999/;SharedAccessKeyName=k;SharedAccessKey=KEY;EntityPath=e")
def test_connection_strings(text: str) -> None:
    try:
        config = eventhubs_parse({"connectionString": text}, Use.STREAM_READ, None)
    except OptionError as error:
        assert "KEY" not in str(error) or "KEY" not in text
        return
    assert config.connection.event_hub
    assert "KEY" not in repr(config)


def _option_maps(table: OptionTable, use: Use) -> st.SearchStrategy[dict[str, str]]:
    names = sorted(
        {n for option in table.options for n in (option.name, *option.aliases)}
        | set(table.unsupported)
        | {family.prefix + "anon" for family in table.families}
    )
    keys = st.one_of(
        st.sampled_from(names), st.sampled_from(names).map(str.upper), st.text(max_size=8)
    )
    return st.dictionaries(keys, ANY_TEXT, max_size=5)


# Every use of every format, each with the names of every use (wrong-use errors included).
CASES = [(name, use) for name, fmt in FORMATS.items() for use in fmt.uses()]


@pytest.mark.parametrize(("name", "use"), CASES, ids=[f"{n}-{u.name}" for n, u in CASES])
@given(data=st.data())
def test_option_maps_of_every_format(name: str, use: Use, data: st.DataObject) -> None:
    """Whole option maps: a config comes back, or one OptionError; nothing else escapes."""
    raw = data.draw(_option_maps(FORMATS[name].table, use))
    with contextlib.suppress(OptionError):
        FORMATS[name].call(raw, use)


@pytest.mark.parametrize(
    "raw",
    [
        {"pathGlobFilter": "[]"},
        {"path": "/tmp/{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}"},
        {"path": "/tmp/x[]"},
        {"path": "nosuch://x"},
        {"encoding": "utf-8\x00"},  # "".encode() raised ValueError, not LookupError
    ],
)
def test_pyfile_source_options_found_by_fuzzing(raw: dict[str, str]) -> None:
    with pytest.raises(OptionError):
        FORMATS["pyfile"].call(raw, Use.READ)


def test_pyfile_sink_options_found_by_fuzzing() -> None:
    with pytest.raises(OptionError):
        FORMATS["pyfile"].call({"path": "nosuch://x"}, Use.STREAM_WRITE)
    assert FORMATS["pyfile"].call({"fs.anon": "true"}, Use.STREAM_WRITE).format == "parquet"


def test_pyfile_source_globs_on_a_real_listing(tmp_path: Path) -> None:
    """The path globs that pass validation also list without an error."""
    from pysparksources.files.storage.filesystem import resolve
    from pysparksources.files.storage.folder_listing import list_files

    for name in ("a.txt", "b.csv", "c1.txt"):
        (tmp_path / name).write_text("x")
    for pattern in ("*.txt", "[ab].*", "{a,b}.*", "?.csv", "c{1,2}.txt"):
        config = files_parse({"path": f"{tmp_path}/{pattern}"}, Use.READ, None)
        listed = list_files(resolve(str(tmp_path)).filesystem(), config.base, config.pattern)
        assert listed, pattern
