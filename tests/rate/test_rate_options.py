"""Every bad pyrate option is refused with the option, the value and what is accepted.

The value is quoted only for a known option: an unknown one may be a misspelled secret.
"""

from __future__ import annotations

import pytest

from pysparksources import OptionError
from pysparksources._core.option_table import Use
from pysparksources.rate.config import RateConfig
from pysparksources.rate.options import parse_options


def stream_config(raw: dict[str, str]) -> RateConfig:
    """pyrate's config for a readStream with these options."""
    return parse_options(raw, Use.STREAM_READ)


BAD_OPTIONS = [
    ({"rowsPerSecond": "0"}, "rowsPerSecond", ">= 1"),
    ({"rowsPerSecond": "ten"}, "rowsPerSecond", "integer"),
    ({"rowsPerSecond": "-5"}, "rowsPerSecond", ">= 1"),
    ({"rampUpTime": "soon"}, "rampUpTime", "duration"),
    ({"rampUpTime": "-1s"}, "rampUpTime", "duration"),
    ({"rowsPerSecond": str(2**62), "rampUpTime": "10s"}, "rampUpTime", "overflow"),
    ({"numPartitions": "0"}, "numPartitions", "between 1 and"),
    ({"numPartitions": "3000000000"}, "numPartitions", "between 1 and"),
    ({"rowsPerBatch": "0"}, "rowsPerBatch", ">= 1"),
    ({"rowsPerBatch": "1.5"}, "rowsPerBatch", "integer"),
    ({"rowsPerBatch": "5", "startTimestamp": "-1"}, "startTimestamp", ">= 0"),
    ({"rowsPerBatch": "5", "advanceMillisPerBatch": "x"}, "advanceMillisPerBatch", "integer"),
    ({"rowsPerBatch": "5", "advanceMillisPerBatch": "2147483648"}, "advanceMillisPerBatch", "and"),
    ({"startTimestamp": "5"}, "startTimestamp", "only with rowsPerBatch"),
    ({"rowsPerBatch": "5", "rowsPerSecond": "5"}, "rowsPerSecond", "only without rowsPerBatch"),
    ({"rowsPerBatch": "5", "rampUpTime": "5s"}, "rampUpTime", "only without rowsPerBatch"),
    ({"maxRowsPerTrigger": "0"}, "maxRowsPerTrigger", ">= 1"),
    ({"totalRows": "many"}, "totalRows", "integer"),
    ({"rowsPerSecnd": "5"}, "rowspersecnd", "did you mean 'rowsPerSecond'"),
    ({"color": "red"}, "color", "accepted options are"),
]


@pytest.mark.parametrize(("options", "option", "accepted"), BAD_OPTIONS)
def test_bad_option_is_named_with_its_value(options: dict, option: str, accepted: str) -> None:
    with pytest.raises(OptionError) as caught:
        stream_config(options)
    message = str(caught.value)
    assert f"'{option}'" in message
    value = next(v for k, v in options.items() if k.lower() == option.lower())
    if "did you mean" in accepted or "accepted options" in accepted:
        assert f"unknown option '{option}'" in message and repr(value) not in message
    else:
        assert f"invalid value {value!r} for option '{option}'" in message
    assert accepted in message
    assert message.startswith("pyrate: ")


def test_options_are_case_insensitive_and_durations_parse() -> None:
    config = stream_config({"ROWSPERSECOND": "20", "rampuptime": "1m", "numpartitions": "4"})
    assert (config.rows_per_second, config.ramp_up_seconds, config.num_partitions) == (20, 60, 4)
    assert stream_config({"rampUpTime": "1500ms"}).ramp_up_seconds == 1  # whole seconds
