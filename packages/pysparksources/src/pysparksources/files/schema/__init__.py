"""The schema of a read: inferred from the files, hinted, kept in a schema location, evolved
when files bring new columns, and what does not fit rescued."""
