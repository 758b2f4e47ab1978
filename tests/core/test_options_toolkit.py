"""The one options toolkit: declarations, aliases, uses, typed values, secrets, message forms."""

from __future__ import annotations

import dataclasses

import pytest

from pysparksources._core.option_table import (
    Choice,
    Duration,
    Flag,
    Integer,
    Number,
    OptionFamily,
    OptionTable,
    Size,
    Text,
    Use,
)
from pysparksources._core.option_values import parse_duration_seconds
from pysparksources._core.options import Options
from pysparksources._redact import safe_url
from pysparksources.errors import OptionError

SEP = Text(name="sep", doc="separator", default=",", aliases=("delimiter",))
RETRIES = Integer(name="maxRetries", doc="retries", default="5", minimum=0, uses=Use.WRITE)
CONNECTION = Text(name="connectionString", doc="conn", aliases=("eh.conn",), secret=True)
TIMEOUT = Duration(name="timeout", doc="t", default="15m", iso=True)
SIZE = Size(name="size", doc="s", default="128m")
ENDING = Text(name="ending", doc="e", uses=Use.BATCH_READ)
START = Text(name="start", doc="s", default={Use.STREAM_READ: "@latest", Use.BATCH_READ: "start"})
MODE = Choice(name="mode", doc="m", default="off", choices=("off", "archive", "delete"))
RATIO = Number(name="ratio", doc="r", default="0.2", minimum=0, maximum=1)
FLAG = Flag(name="flag", doc="f", default="false")
FORMAT_READ = Choice(
    name="format", doc="read", default="parquet", choices=("parquet", "orc"), uses=Use.READ
)
FORMAT_WRITE = Choice(
    name="format", doc="write", default="parquet", choices=("parquet",), uses=Use.WRITE
)
TABLE = OptionTable(
    "src",
    (
        SEP,
        RETRIES,
        CONNECTION,
        TIMEOUT,
        SIZE,
        ENDING,
        START,
        MODE,
        RATIO,
        FLAG,
        FORMAT_READ,
        FORMAT_WRITE,
    ),
    families=(OptionFamily("fs.", "storage options"),),
    unsupported={"inferSchema": "no inference"},
)


def _options(use: Use = Use.STREAM_READ, **raw: str) -> Options:
    return Options(TABLE, raw, use)


def test_an_alias_is_the_same_option_and_both_is_an_error_naming_both() -> None:
    assert _options(delimiter=";").get(SEP) == ";"
    assert _options(DELIMITER=";").given_as(SEP) == "delimiter"
    with pytest.raises(OptionError, match="option 'sep' is given twice, as 'sep' and 'delimiter'"):
        _options(sep=",", delimiter=";")
    with pytest.raises(OptionError) as caught:
        _options(**{"connectionString": "A=KEY1", "eh.conn": "A=KEY2"})
    assert "KEY" not in str(caught.value) and "given twice" in str(caught.value)


def test_defaults_are_declared_once_and_parse_like_values() -> None:
    options = _options()
    assert options.value(TIMEOUT) == 900.0  # "15m"
    assert options.value(SIZE) == 128 << 20  # "128m"
    assert options.value(RATIO) == 0.2
    assert options.value(FLAG) is False
    assert options.get(CONNECTION) is None
    assert _options(Use.STREAM_READ).value(START) == "@latest"
    assert _options(Use.BATCH_READ).value(START) == "start"
    assert TIMEOUT.documented_default() == "`15m`"
    assert START.documented_default() == "`@latest` (spark.readStream), `start` (spark.read)"


def test_an_option_where_it_does_not_apply_says_where_it_does() -> None:
    with pytest.raises(OptionError, match=r"^src: option 'ending' applies only to spark\.read$"):
        _options(Use.STREAM_READ, ending="x")
    with pytest.raises(OptionError, match=r"applies only to df\.writeStream and df\.write$"):
        _options(Use.READ, maxRetries="3")
    assert _options(Use.READ, ending="x").raw(ENDING) == "x"  # load(): either kind of read
    # One name, two declarations for uses that do not overlap: each use gets its own.
    assert _options(Use.READ, format="orc").value(FORMAT_READ) == "orc"
    with pytest.raises(OptionError, match=r"expected one of parquet$"):
        _options(Use.BATCH_WRITE, format="orc").value(FORMAT_WRITE)


def test_a_table_refuses_one_name_twice_for_overlapping_uses() -> None:
    with pytest.raises(ValueError, match="'SEP' is declared twice"):
        OptionTable("src", (SEP, Text(name="SEP", doc="again", uses=Use.WRITE)))
    with pytest.raises(ValueError, match="'delimiter' is declared twice"):
        OptionTable("src", (SEP, Text(name="delimiter", doc="again")))


def test_message_forms() -> None:
    options = _options(Use.BATCH_WRITE, maxRetries="lots", connectionString="Endpoint=x;K=KEY")
    assert str(options.error(RETRIES, "expected an integer")) == (
        "src: invalid value 'lots' for option 'maxRetries': expected an integer"
    )
    assert str(options.error(CONNECTION, "expected ...")) == (
        "src: invalid value <not shown> for option 'connectionString': expected ..."
    )
    assert str(options.required(ENDING, "give a position")) == (
        "src: option 'ending' is required: give a position"
    )
    with pytest.raises(OptionError, match=r"^src: unknown option 'sepp': did you mean 'sep'[?]$"):
        _options(sepp="5")
    with pytest.raises(
        OptionError,
        match=r"^src: unknown option 'maxretry': did you mean 'maxRetries' "
        r"\(only for df\.writeStream and df\.write\)[?]$",
    ):
        _options(Use.STREAM_READ, maxRetry="5")
    with pytest.raises(OptionError, match=r"^src: unknown option 'zzz': accepted options are "):
        _options(zzz="5")
    with pytest.raises(
        OptionError, match=r"^src: option 'inferSchema' is not supported: no inference$"
    ):
        _options(inferSchema="true")
    with pytest.raises(OptionError, match=r"^src: invalid value 'lots' for option 'maxRetries'"):
        options.get(RETRIES)


def test_values_are_shown_only_for_known_non_secret_options() -> None:
    options = _options(**{"fs.account_key": "K1", "sep": "tok=SharedAccessKey=K2", "size": "x"})
    assert options.family(TABLE.families[0]) == {"account_key": "K1"}
    assert "K2" not in str(options.error(SEP, "bad"))  # looks like a credential
    assert "'x'" in str(options.error(SIZE, "bad"))
    with pytest.raises(OptionError) as caught:
        _options(connectionStrng="Endpoint=sb://x/;SharedAccessKey=K3")
    assert "K3" not in str(caught.value) and "did you mean 'connectionString'" in str(caught.value)
    assert safe_url("abfs://user:pw@acct/c/x?sig=abc") == "abfs://user:***@acct/c/x?***"


@pytest.mark.parametrize(
    ("option", "text", "value"),
    [
        (TIMEOUT, "PT1M30S", 90.0),
        (TIMEOUT, "1500ms", 1.5),
        (SIZE, "512k", 512 << 10),
        (MODE, "ARCHIVE", "archive"),
        (FLAG, "Yes", True),
        (RATIO, "1", 1.0),
        (RETRIES, "+7", 7),
    ],
)
def test_kinds_parse_what_spark_accepts(option: object, text: str, value: object) -> None:
    assert option.parse(text) == value  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("option", "text", "accepted"),
    [
        (Duration(name="d", doc="d"), "PT1M", "expected a duration such as 10s"),  # no ISO here
        (TIMEOUT, "5 fortnights", "expected a duration"),
        (SIZE, "0", "at least 1 bytes"),
        (MODE, "move", "expected one of off, archive, delete"),
        (FLAG, "maybe", "expected true or false"),
        (RATIO, "1.5", "between 0 and 1"),
        (RETRIES, "-1", "expected an integer >= 0"),
        (Integer(name="i", doc="i", minimum=1, maximum=9), "10", "between 1 and 9"),
    ],
)
def test_kinds_say_what_they_accept(option: object, text: str, accepted: str) -> None:
    with pytest.raises(ValueError, match=accepted):
        option.parse(text)  # type: ignore[attr-defined]


def test_spark_duration_grammar() -> None:
    assert parse_duration_seconds("1500ms") == 1.5
    assert parse_duration_seconds("P1DT2H", iso=True) == 93600
    for bad in ("1_000", "\u0663", "-5s", "5 fortnights"):
        with pytest.raises(ValueError):
            parse_duration_seconds(bad, iso=True)


def test_use_names_the_entry_points() -> None:
    assert Use.READ.describe() == "spark.readStream and spark.read"
    assert Use.STREAM_WRITE.describe() == "df.writeStream"
    assert Use.ANY.describe() == "spark.readStream, spark.read, df.writeStream and df.write"


# -- the table gathered from a module, and 1:1 options filled into a config --------------------
FIRST = Text(name="first", doc="f", config_field="Config.first")
SECOND = Integer(name="second", doc="s", default="2", config_field="Config.count")
STORAGE = OptionFamily("fs.", "storage options")
LATER = Flag(name="later", doc="l", default="true")
READ_ZONE = Text(name="zone", doc="r", uses=Use.READ, config_field="Config.zone")
WRITE_ZONE = Text(name="zone", doc="w", default="UTC", uses=Use.WRITE, config_field="Config.zone")


def test_a_table_is_the_options_and_families_a_module_declares_in_its_order() -> None:
    namespace = {"NAME": "src", "FIRST": FIRST, "Integer": Integer, "SECOND": SECOND}
    namespace |= {"STORAGE": STORAGE, "AGAIN": FIRST, "LATER": LATER, "GROUP": (LATER,)}
    table = OptionTable.declared("src", namespace, more=(RATIO,), unsupported={"x": "why"})
    assert table.options == (FIRST, SECOND, LATER, RATIO)  # FIRST once, classes and tuples not
    assert (table.families, table.unsupported) == ((STORAGE,), {"x": "why"})


@dataclasses.dataclass(frozen=True)
class Config:
    first: str | None
    count: int
    zone: str | None
    computed: float


FILLED = OptionTable("src", (FIRST, SECOND, READ_ZONE, WRITE_ZONE, LATER))


def test_fill_copies_each_one_to_one_option_and_takes_the_parsers_values() -> None:
    read = Options(FILLED, {"first": "a", "zone": "+01:00"}, Use.BATCH_READ)
    assert read.fill(Config, computed=1.5) == Config("a", 2, "+01:00", 1.5)
    write = Options(FILLED, {"second": "7"}, Use.STREAM_WRITE)  # the writer's zone and default
    assert write.fill(Config, computed=0.0) == Config(None, 7, "UTC", 0.0)


def test_fill_names_the_bad_value_as_get_does() -> None:
    with pytest.raises(OptionError, match="invalid value 'x' for option 'second'"):
        Options(FILLED, {"second": "x"}, Use.BATCH_READ).fill(Config, computed=0.0)


def test_fill_refuses_a_field_filled_twice_never_or_unknown() -> None:
    opts = Options(FILLED, {}, Use.BATCH_READ)
    with pytest.raises(TypeError, match=r"Config.count is filled by option 'second'"):
        opts.fill(Config, computed=0.0, count=3)
    with pytest.raises(TypeError, match=r"Config.computed: no option fills it"):
        opts.fill(Config)
    with pytest.raises(TypeError, match=r"Config has no field extra"):
        opts.fill(Config, computed=0.0, extra=1)
    both = OptionTable("src", (SECOND, Integer(name="other", doc="o", config_field="Config.count")))
    with pytest.raises(TypeError, match=r"options second, other all fill Config.count"):
        Options(both, {}, Use.BATCH_READ).fill(Config, first=None, zone=None, computed=0.0)
