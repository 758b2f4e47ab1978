"""``pyfile``: Spark's file stream source and sink on any fsspec filesystem, through Arrow."""

NAME = "pyfile"  # the format name, and the first word of every message this source writes
