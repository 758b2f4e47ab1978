"""Spark's rules for values: text parsed into Spark's types and rendered back, the time zone
zone-less text is read in, and the types inference gives a value. Knows no file."""
