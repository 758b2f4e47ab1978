"""The one options toolkit: aliases, typed values, secrets and the two message forms."""

from __future__ import annotations

import pytest

from pysparksources._core.legacy_options import Options
from pysparksources._core.option_values import parse_duration_seconds, safe_url
from pysparksources.errors import OptionError
from pysparksources.eventhubs.options import parse_sink_options, parse_source_options
from pysparksources.files.options import parse_sink_options as file_sink
from pysparksources.files.options import parse_source_options as file_source

KNOWN = ["sep", "maxRetries", "connectionString", "timeout", "size"]


def _options(**raw: str) -> Options:
    return Options(
        "src",
        raw,
        KNOWN,
        aliases={"delimiter": "sep", "eventhubs.connectionString": "connectionString"},
        secrets=["connectionString"],
        prefixes=["fs."],
        unsupported={"inferSchema": "no inference"},
    )


def test_an_alias_is_the_same_option_and_both_is_an_error_naming_both() -> None:
    assert _options(delimiter=";").string("sep") == ";"
    assert _options(DELIMITER=";").given_as("sep") == "delimiter"
    with pytest.raises(OptionError, match="option 'sep' is given twice, as 'sep' and 'delimiter'"):
        _options(sep=",", delimiter=";")
    with pytest.raises(OptionError) as caught:
        _options(**{"connectionString": "A=KEY1", "eventhubs.connectionString": "A=KEY2"})
    assert "KEY" not in str(caught.value) and "given twice" in str(caught.value)


def test_the_same_alias_rule_in_every_source_and_sink() -> None:
    conn = "Endpoint=sb://h/;SharedAccessKeyName=n;SharedAccessKey=k;EntityPath=e"
    both = {"connectionString": conn, "eventhubs.connectionString": conn}
    for parse in (
        lambda: parse_source_options(both, True),
        lambda: parse_sink_options(both, _arrow()),
        lambda: file_source({"path": "/tmp", "sep": ",", "delimiter": ";"}, None),
        lambda: file_source({"path": "/tmp", "encoding": "utf-8", "charset": "latin1"}, None),
        lambda: file_sink({"path": "/tmp", "sep": ",", "delimiter": ";"}, ["a"], False),
    ):
        with pytest.raises(OptionError, match="is given twice"):
            parse()


def _arrow() -> object:
    import pyarrow as pa

    return pa.schema([pa.field("body", pa.string())])


def test_message_forms() -> None:
    options = _options(maxRetries="lots", connectionString="Endpoint=x;SharedAccessKey=KEY")
    assert str(options.error("maxRetries", "expected an integer")) == (
        "src: invalid value 'lots' for option 'maxRetries': expected an integer"
    )
    assert str(options.error("connectionString", "expected ...")) == (
        "src: invalid value <not shown> for option 'connectionString': expected ..."
    )
    assert str(options.required("timeout", "give a duration")) == (
        "src: option 'timeout' is required: give a duration"
    )
    with pytest.raises(
        OptionError, match=r"^src: unknown option 'maxretry': did you mean 'maxRetries'[?]$"
    ):
        _options(maxRetry="5")
    with pytest.raises(
        OptionError, match=r"^src: option 'inferSchema' is not supported: no inference$"
    ):
        _options(inferSchema="true")


def test_values_are_shown_only_for_known_non_secret_options() -> None:
    options = _options(**{"fs.account_key": "K1", "sep": "tok=SharedAccessKey=K2", "size": "x"})
    assert "K1" not in str(options.error("fs.account_key", "bad"))
    assert "K2" not in str(options.error("sep", "bad"))  # looks like a credential
    assert "'x'" in str(options.error("size", "bad"))
    assert safe_url("abfs://user:pw@acct/c/x?sig=abc") == "abfs://user:***@acct/c/x?***"


def test_typed_defaults_and_parsers() -> None:
    options = _options(maxRetries="7", timeout="PT1M30S", size="128m")
    retries: int = options.integer("maxRetries", 5, minimum=0)
    missing: int | None = options.integer("sep")
    assert (retries, missing) == (7, None)
    assert options.duration_seconds("timeout", 1.0, iso=True) == 90.0
    with pytest.raises(OptionError, match="expected a duration such as 10s"):
        options.duration_seconds("timeout", 1.0)  # ISO only where the Scala connector took it
    assert options.size("size", None) == 128 << 20
    assert parse_duration_seconds("1500ms") == 1.5
    assert parse_duration_seconds("P1DT2H", iso=True) == 93600
    for bad in ("1_000", "\u0663", "-5s", "5 fortnights"):
        with pytest.raises(ValueError):
            parse_duration_seconds(bad, iso=True)
