"""Where files are: fsspec filesystems, the paths pyfile may touch, folder listings and
``col=value`` partition folders. Knows no format, no stream and no schema."""
