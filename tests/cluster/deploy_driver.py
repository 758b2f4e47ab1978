"""A driver submitted with spark-submit by the deployment tests; it must not rely on this repo.

It runs pyrate on the cluster and prints one ``RESULT`` JSON line saying whether automatic
registration found the source and which executors imported the package.
"""

import json
import sys

from pyspark.sql import SparkSession


def main() -> None:
    spark = SparkSession.builder.getOrCreate()
    try:
        spark.read.format("pyrate").option("totalRows", 2).load().count()
        auto = True
    except Exception:
        auto = False
    import pysparksources

    pysparksources.register(spark)
    df = spark.read.format("pyrate").options(totalRows="1000", numPartitions="4").load()
    values = sorted(r.value for r in df.collect())
    print("RESULT " + json.dumps({"auto": auto, "ok": values == list(range(1000))}))
    spark.stop()


if __name__ == "__main__":
    sys.exit(main())
