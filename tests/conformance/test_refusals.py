"""Spark writer options pyfile's sink does not take are refused at start, naming the option.

They are csv reader options of pyfile's source, so the sink names where they apply."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.spark

# Spark's csv writer options beyond header, sep and timeZone (docs/pyfile-sink.md, where pyfile
# differs).
UNSUPPORTED = {
    "quote": "'",
    "escape": "#",
    "nullValue": "NA",
    "dateFormat": "dd/MM/yyyy",
    "timestampFormat": "yyyy-MM-dd HH:mm:ss",
    "encoding": "UTF-16",
}


def test_sink_refuses_csv_writer_options_it_does_not_take(session: Any, tmp_path: Path) -> None:
    df = session.range(3).selectExpr("id", "CAST(id AS STRING) AS s")
    for number, (name, value) in enumerate(UNSUPPORTED.items()):
        writer = df.write.format("pyfile").mode("append").option("format", "csv")
        with pytest.raises(Exception) as error:
            writer.option(name, value).save(str(tmp_path / str(number)))
        message = str(error.value)
        refusal = f"pyfile: option '{name}' applies only to spark.readStream and spark.read"
        assert refusal in message, message[:500]
        assert not list((tmp_path / str(number)).glob("part-*"))
