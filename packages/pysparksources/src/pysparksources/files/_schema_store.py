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

from pysparksources.errors import CheckpointError
from pysparksources.files import NAME
from pysparksources.files._filesystem import FileLocation, create_exclusive

__all__ = ["SchemaStore", "SchemaVersion"]

FOLDER = "_schemas"


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
        numbers = []
        for name in names:
            base = str(name).rstrip("/").rsplit("/", 1)[-1]
            if base.isdigit():
                numbers.append(int(base))
        return numbers

    def read(self, number: int) -> SchemaVersion:
        fs: Any = self._location.filesystem()
        path = f"{self._location.path}/{number}"
        try:
            with fs.open(path, "rb") as f:
                record = json.loads(f.read().decode("utf-8"))
            schema = StructType.fromJson(record["schema"])
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise CheckpointError(
                NAME,
                f"schema version {number} in {self.describe()} cannot be read "
                f"({type(error).__name__}: {error}); restore it or start with a new "
                "schemaLocation",
            ) from None
        return SchemaVersion(number, schema, str(record.get("reason", "")))

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
