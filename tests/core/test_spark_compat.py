"""The one place that knows the Spark line (``_core/compat.py``) and the calls the older lines
make (``_core/engine_calls.py``), without a JVM."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from pysparksources._core import compat
from pysparksources._core.compat import ReadAllAvailable, ReadMaxRows, spark_refusal
from pysparksources._core.engine_calls import EngineCalls

NEEDED = "pysparksources needs PySpark 4.0 or newer (any 4.x line)"


@pytest.mark.parametrize("version", ["4.0.0", "4.0.5", "4.1.4", "4.2.1", "4.3.0", "4.4.0.dev1"])
def test_every_spark_4_release_with_the_api_is_accepted(version: str) -> None:
    assert spark_refusal(version, has_data_source_api=True) is None


@pytest.mark.parametrize("version", ["3.5.8", "3.4.0", "2.4.8", "garbage"])
def test_older_spark_is_refused_naming_both_versions(version: str) -> None:
    message = spark_refusal(version, has_data_source_api=False)
    assert message is not None and f"PySpark {version};" in message and NEEDED in message
    assert "pysparksources[" not in message, "an extra cannot fix the Spark version"


def test_a_spark_4_without_the_api_is_refused_saying_so() -> None:
    message = spark_refusal("4.0.0", has_data_source_api=False)
    assert message is not None and "lacks the Python data source API" in message


def test_doctor_table_names_what_the_engine_does_on_this_line() -> None:
    features = compat.engine_features()
    assert set(features) == {
        "admission control",
        "Trigger.AvailableNow",
        "latest offset in progress (LagListener)",
        "preferred locations",
    }
    native = features["admission control"].startswith("native")
    assert native == compat.ENGINE_ADMISSION_CONTROL


def initial() -> dict[str, Any]:
    return {"n": 0}


def test_the_engines_arguments_are_used_as_given() -> None:
    calls = EngineCalls()
    limit = ReadMaxRows(5)
    assert calls.arguments({"n": 7}, limit, initial, lambda: ReadAllAvailable()) == (
        {"n": 7},
        limit,
    )


def test_without_arguments_the_start_is_the_last_planned_end_and_the_limit_the_default() -> None:
    calls = EngineCalls()
    default = ReadMaxRows(10)
    # A new query: Spark 4.0/4.1 ask latestOffset() before anything else.
    assert calls.arguments(None, None, initial, lambda: default) == ({"n": 0}, default)
    calls.planned({"n": 10})
    assert calls.arguments(None, None, initial, lambda: default) == ({"n": 10}, default)
    # A restart: Spark first names the newest offset of its log (partitions(latest, latest)).
    restarted = EngineCalls()
    restarted.planned({"n": 40})
    assert restarted.arguments(None, None, initial, lambda: default)[0] == {"n": 40}


def test_a_run_of_one_capped_batch_warns_at_stop(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    one = EngineCalls()
    one.arguments(None, None, initial, lambda: ReadMaxRows(1))
    one.capped(True)
    one.warn_if_cut_short("pyfile", "maxFilesPerTrigger")
    assert "pyfile: this run read one batch, cut short by maxFilesPerTrigger" in caplog.text
    caplog.clear()
    for cut, calls_made in ((False, 1), (True, 2)):
        calls = EngineCalls()
        for _ in range(calls_made):
            calls.arguments(None, None, initial, lambda: ReadMaxRows(1))
        calls.capped(cut)
        calls.warn_if_cut_short("pyfile", "maxFilesPerTrigger")
    engine = EngineCalls()  # the engine passed its arguments: 4.2+ runs AvailableNow itself
    engine.arguments({"n": 0}, ReadMaxRows(1), initial, lambda: ReadMaxRows(1))
    engine.capped(True)
    engine.warn_if_cut_short("pyfile", "maxFilesPerTrigger")
    assert caplog.text == ""
