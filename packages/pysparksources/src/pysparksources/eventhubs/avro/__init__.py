"""pyeventhub's Avro bodies: ``bodyFormat=avro`` on both sides, and the Azure Schema Registry.

An Avro schema is parsed by the package's one model (:mod:`pysparksources._core.avro_schema`,
shared with pyfile's Avro files) into the types every module here works with;
``arrow_types`` maps those to Arrow; ``body_bounds`` checks a body before fastavro
reads it; ``decode`` (the source) and ``encode`` (the sink) turn bodies into columns and back;
``schema_registry`` fetches writers' schemas by id and registers the sink's.
"""
