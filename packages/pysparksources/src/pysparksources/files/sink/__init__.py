"""The sink's parts: the part files a task writes and the ``_spark_metadata`` manifest that
makes a batch visible exactly once."""
