"""A small AMQP 1.0 codec: just enough of the spec for an Event Hubs-compatible server."""
