"""``pyfile``: Spark's file stream source and sink on any fsspec filesystem, through Arrow."""
