"""The schema location: a stream's schema, versioned, kept beside the stream.

``<schemaLocation>/_schemas/<n>`` holds version n as JSON: the schema (Spark's JSON form),
why the version exists, and when. Version 0 is the schema inferred at the first start; a
later version adds the columns a file brought (schemaEvolutionMode=addNewColumns). A version
file is created whole or not at all, and never replaced (create-if-absent on every backend),
so two queries or tasks that race to write the same version agree on its content: the
loser reads the winner's.
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from typing import Any

from pyspark.sql.types import StructType

from pysparksources._core.checkpoint import log_number
from pysparksources.errors import CheckpointError
from pysparksources.files import NAME
from pysparksources.files.storage.filesystem import FileLocation, create_exclusive

__all__ = ["SchemaStore", "SchemaVersion"]

FOLDER = "_schemas"
# The keys of each complex type in Spark's JSON form, with the flags that must be booleans.
# Nothing else is read: a "udt" would make PySpark import the module the file names.
_COMPLEX = {
    "array": (("elementType",), ("containsNull",)),
    "map": (("keyType", "valueType"), ("valueContainsNull",)),
}


def _type_problem(value: Any, struct: bool = False) -> str | None:
    """What keeps ``value`` from being a data type in Spark's JSON form (a struct when
    ``struct``), None when nothing does; names of simple types are left to PySpark's parser."""
    if isinstance(value, str) and not struct:
        return None
    kind = value.get("type") if isinstance(value, dict) else None
    if kind == "struct":
        fields = value.get("fields")
        if not isinstance(fields, list):
            return "a struct without a list of fields"
        for field in fields:
            if not (isinstance(field, dict) and isinstance(field.get("name"), str)):
                return "a struct field without a name"
            name = field["name"][:40]
            if not isinstance(field.get("nullable", True), bool):
                return f"field {name!r}: nullable is not a boolean"
            if not isinstance(field.get("metadata", {}), dict):
                return f"field {name!r}: metadata is not an object"
            problem = _type_problem(field.get("type"))
            if problem is not None:
                return problem
        return None
    if struct or kind not in _COMPLEX:
        return f"{json.dumps(kind)[:40]} is not a {'struct' if struct else 'type'}"
    children, flags = _COMPLEX[kind]
    if not all(isinstance(value.get(flag), bool) for flag in flags):
        return f"an {kind} whose {', '.join(flags)} is not a boolean"
    problems = (_type_problem(value.get(child)) for child in children)
    return next((p for p in problems if p is not None), None)


def _version_problem(record: Any) -> str | None:
    """What keeps ``record`` from being a version file's content, None when nothing does."""
    if not isinstance(record, dict) or "schema" not in record:
        return "not a JSON object with a 'schema'"
    if not isinstance(record.get("reason", ""), str):
        return "its 'reason' is not a string"
    return _type_problem(record["schema"], struct=True)


@dataclass(frozen=True)
class SchemaVersion:
    number: int
    schema: StructType
    reason: str


class SchemaStore:
    """The versions under one schema location."""

    def __init__(self, location: FileLocation) -> None:
        self._location = location.child(FOLDER)

    def describe(self) -> str:
        return self._location.url()

    def latest(self) -> SchemaVersion | None:
        numbers = self._numbers()
        return self.read(max(numbers)) if numbers else None

    def _numbers(self) -> list[int]:
        fs: Any = self._location.filesystem()
        # Object-store filesystems cache listings per process: a version another process
        # (or task) wrote must be seen.
        fs.invalidate_cache(self._location.path)
        try:
            names = fs.ls(self._location.path, detail=False)
        except FileNotFoundError:
            return []
        numbers = (log_number(str(name).rstrip("/").rsplit("/", 1)[-1]) for name in names)
        return [number for number in numbers if number is not None]

    def read(self, number: int) -> SchemaVersion:
        fs: Any = self._location.filesystem()
        path = f"{self._location.path}/{number}"
        schema: StructType | None = None
        try:
            with fs.open(path, "rb") as f:
                record = json.loads(f.read().decode("utf-8"))
            problem = _version_problem(record)
            if problem is None:
                schema = StructType.fromJson(record["schema"])
        except RecursionError:
            problem = "its schema is nested too deeply to read"
        except (OSError, ValueError, KeyError, TypeError) as error:
            problem = f"{type(error).__name__}: {error}"
        if schema is None:
            raise CheckpointError(
                NAME,
                f"schema version {number} in {self.describe()} cannot be read "
                f"({str(problem)[:200]}); restore it or start with a new schemaLocation",
            )
        return SchemaVersion(number, schema, record.get("reason", ""))

    def record(self, number: int, schema: StructType, reason: str) -> SchemaVersion:
        """Write version ``number``, or return the one another writer recorded first."""
        body = {
            "version": number,
            "schema": schema.jsonValue(),
            "reason": reason,
            "recorded": datetime.datetime.now(datetime.timezone.utc).isoformat(),
            "writer": NAME,
        }
        data = json.dumps(body, sort_keys=True, indent=1).encode("utf-8")
        fs: Any = self._location.filesystem()
        if self._location.protocol not in ("file", "local"):
            fs.makedirs(self._location.path, exist_ok=True)
        try:
            create_exclusive(self._location, f"{self._location.path}/{number}", data)
        except FileExistsError:
            return self.read(number)
        return SchemaVersion(number, schema, reason)
