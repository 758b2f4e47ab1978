"""pyeventhub against the Event Hubs emulator: write 100 events, then read them back.

Start the emulator first, in another terminal (it prints a connection string per hub):

    .venv/bin/pysparksources-emulator --hub orders:2

then run, from the repository's root after the README's install steps (PYSPARK_PYTHON exported)

    .venv/bin/python examples/eventhubs_roundtrip.py

Against a real namespace, set EVENTHUBS_CONNECTION_STRING to a connection string that ends with
;EntityPath=<hub> (and EVENTHUBS_CONSUMER_GROUP if you do not read as $Default).
"""

import os

from pyspark.sql import SparkSession

connection = os.environ.get(
    "EVENTHUBS_CONNECTION_STRING",
    # What `pysparksources-emulator --hub orders:2` prints for hub orders.
    "Endpoint=sb://127.0.0.1:5672;SharedAccessKeyName=RootManageSharedAccessKey;"
    "SharedAccessKey=SAS_KEY_VALUE;EntityPath=orders;UseDevelopmentEmulator=true",
)
group = os.environ.get("EVENTHUBS_CONSUMER_GROUP", "$Default")

spark = SparkSession.builder.appName("eventhubs-roundtrip").getOrCreate()

# Write: 100 rows from pyrate, as events whose body is the row's value.
events = (
    spark.read.format("pyrate")
    .option("totalRows", 100)
    .load()
    .selectExpr("CAST(value AS STRING) AS body")
)
events.write.format("pyeventhub").option("connectionString", connection).mode("append").save()

# Read: everything the hub holds, from the start of each partition to its end now.
read = (
    spark.read.format("pyeventhub")
    .option("connectionString", connection)
    .option("consumerGroup", group)
    .option("startingPosition", "start")
    .load()
)
read.groupBy("partition").count().orderBy("partition").show()
print("events in the hub:", read.count())
spark.stop()
