"""A driver submitted with ``--archives <packed venv>#environment``; it must not rely on this repo.

It runs pyrate on the cluster and prints one ``RESULT`` JSON line with the rows' check and, for
every task, which interpreter ran it and where that interpreter imported pysparksources from.
"""

import json

from pyspark.sql import SparkSession
from pyspark.sql.functions import udf


def origin() -> str:
    import os
    import sys

    import pysparksources

    return json.dumps([os.getcwd(), sys.executable, pysparksources.__file__])


def main() -> None:
    spark = SparkSession.builder.getOrCreate()
    df = spark.read.format("pyrate").options(totalRows="1000", numPartitions="4").load()
    rows = df.withColumn("origin", udf(origin, "string")()).collect()
    result = {
        "ok": sorted(r.value for r in rows) == list(range(1000)),
        "origins": sorted({tuple(json.loads(r.origin)) for r in rows}),
    }
    print("RESULT " + json.dumps(result))
    spark.stop()


if __name__ == "__main__":
    main()
