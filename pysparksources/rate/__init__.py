"""``pyrate``: Spark's ``rate`` and ``rate-micro-batch`` sources with admission control."""
