"""pyrate to the console: Spark's rate source, in Python, printed batch by batch (five batches).

From the repository's root, after the README's install steps (step 2 exports PYSPARK_PYTHON,
the Python Spark starts for the source):

    export PYSPARK_PYTHON="$PWD/.venv/bin/python"
    .venv/bin/python examples/pyrate_to_console.py
"""

from pyspark.sql import SparkSession

spark = SparkSession.builder.appName("pyrate-to-console").getOrCreate()

rows = (
    spark.readStream.format("pyrate")  # registered by itself: no import, no register()
    .option("rowsPerSecond", 5)
    .load()
)
query = rows.writeStream.format("console").trigger(processingTime="2 seconds").start()

# Five batches (one every 2 s; the first is empty, the rate starts at 0), then stop.
# awaitTermination() without a timeout runs until you stop the query (Ctrl-C here).
while query.isActive and (query.lastProgress or {}).get("batchId", -1) < 4:
    query.awaitTermination(1)
query.stop()
spark.stop()
