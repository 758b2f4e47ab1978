"""The stream source's parts on the driver: which files the path holds (a listing or a file
sink's manifest), which a batch takes, the source log that makes batches exactly once, and
cleanSource."""
