"""pyfile's own Avro schema rules: a file's records must be a record, and two files' types
merge for inference. The rest is shared with pyeventhub: ``_core/avro_schema.py`` parses and
bounds a schema and maps it to Spark's types, ``_core/avro_sink_schema.py`` gives the sink's.
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    DataType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
)

from pysparksources._core.avro_schema import AvroNode
from pysparksources.errors import SchemaError
from pysparksources.files import NAME

__all__ = ["columns_of", "merge_fields", "merge_types"]


def columns_of(node: AvroNode, what: str) -> tuple[tuple[str, AvroNode], ...]:
    """The fields of a file's records: its top-level type must be a record."""
    if node.kind != "record":
        raise SchemaError(
            NAME,
            f"{what}: the top-level type is {node.describe()}, not a record; Spark reads "
            "files of records only",
        )
    return node.fields


def merge_types(left: DataType, right: DataType) -> DataType | None:
    """Two files' types of one column merged (inference): struct fields by name, new ones
    appended; None when they differ otherwise. An int column and a long one merge as long (Avro
    promotes int to long, and so does a reader schema)."""
    if left == right:
        return left
    if {type(left), type(right)} == {IntegerType, LongType}:
        return LongType()
    if {type(left), type(right)} == {FloatType, DoubleType}:
        return DoubleType()
    if isinstance(left, StructType) and isinstance(right, StructType):
        merged = merge_fields(left, right)
        return merged if isinstance(merged, StructType) else None
    if isinstance(left, ArrayType) and isinstance(right, ArrayType):
        element = merge_types(left.elementType, right.elementType)
        return None if element is None else ArrayType(element)
    if isinstance(left, MapType) and isinstance(right, MapType):
        value = merge_types(left.valueType, right.valueType)
        return None if value is None else MapType(StringType(), value)
    return None


def merge_fields(
    left: StructType, right: StructType
) -> StructType | tuple[StructField, StructField]:
    """Two structs merged by field name (case-insensitively), ``right``'s new fields appended;
    or the first pair of fields (``right``'s, ``left``'s) whose types do not merge."""
    fields = list(left.fields)
    index = {f.name.lower(): i for i, f in enumerate(fields)}
    for fld in right.fields:
        at = index.get(fld.name.lower())
        if at is None:
            index[fld.name.lower()] = len(fields)
            fields.append(fld)
            continue
        merged = merge_types(fields[at].dataType, fld.dataType)
        if merged is None:
            return fld, fields[at]
        fields[at] = StructField(fields[at].name, merged)
    return StructType(fields)
