"""Registers ``pyeventhub`` automatically: Spark imports every top-level ``pyspark_*`` module.

Keep this import-light (PySpark and the standard library only): if any ``pyspark_*`` module
fails to import, Spark skips automatic registration for all of them.
"""

from pysparksources.eventhubs.datasource import EventHubDataSource as DefaultSource

__all__ = ["DefaultSource"]
