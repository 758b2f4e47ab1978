"""pyeventhub's Avro bodies: ``bodyFormat=avro`` on both sides, and the Azure Schema Registry.

``schema`` parses an Avro schema into the types every other module here works with;
``arrow_types`` maps those to Arrow and Spark; ``body_bounds`` checks a body before fastavro
reads it; ``decode`` (the source) and ``encode`` (the sink) turn bodies into columns and back;
``schema_registry`` fetches writers' schemas by id and registers the sink's.
"""
