"""Side-by-side benchmarks against Spark's built-in sources (``pysparksources bench``)."""
