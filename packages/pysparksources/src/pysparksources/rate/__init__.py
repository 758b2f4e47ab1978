"""``pyrate``: Spark's ``rate`` and ``rate-micro-batch`` sources with admission control."""

NAME = "pyrate"  # the format name, and the first word of every message this source writes
