"""The command line's subcommands: demo, doctor and the local session they start."""
