"""``pyeventhub``, the Event Hubs source and sink, on the official azure-eventhub SDK.

Importing this package imports no Azure module; the SDK is loaded where clients are built.
"""

NAME = "pyeventhub"  # the format name, and the first word of every message this source writes
