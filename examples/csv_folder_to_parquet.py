"""A local folder of CSV files to parquet with pyfile, exactly once.

From the repository's root, after the README's install steps (PYSPARK_PYTHON exported):

    .venv/bin/python examples/csv_folder_to_parquet.py [FOLDER]

FOLDER (default ./pyfile-example) gets an inbox/ of CSV files (two samples are written if it
has none), the query's checkpoint and the parquet output. Run it again after dropping more
files into inbox/: only the new ones are read, and every row is in the output exactly once.
"""

import sys
from pathlib import Path

from pyspark.sql import SparkSession

folder = Path(sys.argv[1] if len(sys.argv) > 1 else "pyfile-example").resolve()
inbox = folder / "inbox"
inbox.mkdir(parents=True, exist_ok=True)
if not any(inbox.glob("*.csv")):
    (inbox / "orders-1.csv").write_text("id,customer,amount\n1,ana,9.50\n2,bo,12.00\n")
    (inbox / "orders-2.csv").write_text("id,customer,amount\n3,ana,4.25\n")

spark = SparkSession.builder.appName("csv-folder-to-parquet").getOrCreate()

orders = (
    spark.readStream.format("pyfile")
    .schema("id INT, customer STRING, amount DOUBLE")
    .option("format", "csv")
    .option("header", True)
    # pyfile keeps its own log of the files each batch read (one per query).
    .option("sourceLogLocation", str(folder / "checkpoint" / "pyfile-source"))
    .load(str(inbox))
)
query = (
    orders.writeStream.format("pyfile")
    .option("format", "parquet")
    .option("checkpointLocation", str(folder / "checkpoint"))
    .trigger(availableNow=True)  # read what is there now, then stop
    .start(str(folder / "parquet"))
)
query.awaitTermination()

# Spark's own parquet reader sees exactly the committed files.
spark.read.parquet(str(folder / "parquet")).orderBy("id").show()
spark.stop()
