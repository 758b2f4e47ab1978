"""Helpers the test folders share (``from support.streams import progress``).

One copy of each: Spark processes, stream helpers, the Azurite fixture, azure-eventhub clients,
pyfile and pyeventhub query helpers, crash drivers and cluster drivers. Test modules import
from here and never from each other.
"""
