"""The job whose JVM writes the tests' class-data-sharing archive (support/jvm_archive.py).

It touches what the suite's drivers load: Spark's file formats in batch and streaming, Python
data sources (pyrate, pyfile) as sources and sink, a shuffle and a join. A class it misses is
loaded as usual. Run by spark-submit with the working folder as its only argument.
"""

from __future__ import annotations

import sys
from pathlib import Path

from pyspark.sql import SparkSession

import pysparksources


def main(work: Path) -> None:
    spark = SparkSession.builder.appName("pysparksources-cds-archive").getOrCreate()
    pysparksources.register(spark)
    columns = ("id", "CAST(id AS STRING) AS s", "timestamp_seconds(id) AS ts")
    frame = spark.range(200).selectExpr(*columns)
    for fmt in ("parquet", "json", "csv", "orc"):
        frame.write.format(fmt).option("header", "true").save(str(work / fmt))
        spark.read.format(fmt).option("header", "true").load(str(work / fmt)).count()
    counts = frame.groupBy((frame.id % 7).alias("k")).count()
    frame.join(counts, frame.id % 7 == counts.k).collect()

    rate = spark.readStream.format("pyrate").option("rowsPerSecond", 100).load()
    query = (
        rate.writeStream.format("pyfile")
        .option("format", "parquet")
        .option("checkpointLocation", str(work / "ck-rate"))
        .trigger(availableNow=True)
        .start(str(work / "rate-out"))
    )
    query.awaitTermination(120)
    files = (
        spark.readStream.format("pyfile")
        .option("format", "parquet")
        .option("sourceLogLocation", str(work / "log"))
        .schema(frame.schema)
        .load(str(work / "parquet"))
    )
    native = spark.readStream.schema(frame.schema).parquet(str(work / "parquet"))
    union = files.unionByName(native)
    query = (
        union.writeStream.format("parquet")
        .option("checkpointLocation", str(work / "ck-files"))
        .trigger(availableNow=True)
        .start(str(work / "files-out"))
    )
    query.awaitTermination(120)
    reader = spark.read.format("pyfile").option("format", "json").schema(frame.schema)
    reader.load(str(work / "json")).count()
    spark.stop()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
