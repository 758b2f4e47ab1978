r"""Orders from Event Hubs, parsed; revenue per minute (revenue_per_minute.sql) written by pyfile.

Each event body is JSON: {"order": 17, "customer": "c3", "amount": 12.5, "at": "2026-..."}.
``spark`` is provided by ``spark-pipelines``; the sources auto-register in the pipeline's
Spark Connect server once pysparksources is installed in its Python. Run the pipeline from
its folder (spark-pipeline.yml says why the --conf):

    EVENTHUB_CONNECTION_STRING='Endpoint=sb://...;EntityPath=orders' \
      spark-pipelines run --conf spark.sql.catalogImplementation=hive
"""

import os

from pyspark import pipelines as dp
from pyspark.sql import functions as F

# Each run continues from the tables the last one left, so the catalog must outlive the Spark
# Connect server spark-pipelines starts. Its default catalog is in memory: a second run would
# not know `orders` and stop with LOCATION_ALREADY_EXISTS, after a first run that works. So
# refuse before anything is written, and name the fix.
catalog = spark.conf.get("spark.sql.catalogImplementation")  # type: ignore[name-defined]  # noqa: F821
if catalog != "hive":
    raise SystemExit(
        "examples/pipelines: the pipeline's catalog is in memory and forgets its tables when "
        "the run ends; run: spark-pipelines run --conf spark.sql.catalogImplementation=hive"
    )

# Read where the definitions are loaded (the spark-pipelines client): secrets stay out of the
# spec file and out of Spark's configuration.
CONNECTION = os.environ["EVENTHUB_CONNECTION_STRING"]
OUTPUT = os.environ.get("ORDERS_OUTPUT", os.path.abspath("output/revenue_per_minute"))
ORDER = "order BIGINT, customer STRING, amount DOUBLE, at TIMESTAMP"


@dp.table(comment="One row per Event Hubs event, the JSON body as columns.")
def orders():  # type: ignore[no-untyped-def]
    events = (
        spark.readStream.format("pyeventhub")  # type: ignore[name-defined]  # noqa: F821
        .option("connectionString", CONNECTION)
        .option("startingPosition", "start")
        .option("maxEventsPerTrigger", 10_000)
        .load()
    )
    return events.select(
        F.from_json(F.col("body").cast("string"), ORDER).alias("o"),
        "partition",
        "sequenceNumber",
        "enqueuedTime",
    ).select("o.*", "partition", "sequenceNumber", "enqueuedTime")


dp.create_sink("revenue_files", format="pyfile", options={"path": OUTPUT, "format": "parquet"})


@dp.append_flow(target="revenue_files")
def revenue_to_files():  # type: ignore[no-untyped-def]
    # revenue_per_minute.sql defines the aggregate; this flow only moves its rows to the sink.
    return spark.readStream.table("revenue_per_minute")  # type: ignore[name-defined]  # noqa: F821
