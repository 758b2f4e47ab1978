"""pyeventhub: the Event Hubs source and sink, on the official azure-eventhub SDK.

Importing this package imports no Azure module; the SDK is loaded where clients are built.
"""
