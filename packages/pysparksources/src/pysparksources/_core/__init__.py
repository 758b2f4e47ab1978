"""What every source shares: options, the data source base, offsets, checkpoints, workers."""
