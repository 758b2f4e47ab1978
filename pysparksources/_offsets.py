"""Deterministic offsets.

Spark serializes a Python source's offset with ``json.dumps(dict)`` and compares offsets as
JSON strings, so two equal dicts with a different key order look like new data (an
AvailableNow query may then never end). Every offset a source returns passes through
:func:`canonical`, which rebuilds it with sorted keys at every level.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["canonical", "canonical_offset", "dumps"]


def canonical(value: Any) -> Any:
    """Return ``value`` with every dict rebuilt in sorted key order (lists keep their order)."""
    if isinstance(value, dict):
        return {str(k): canonical(value[k]) for k in sorted(value, key=str)}
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    return value


def canonical_offset(offset: dict[str, Any]) -> dict[str, Any]:
    """:func:`canonical` for a top-level offset dict, typed as one."""
    result: dict[str, Any] = canonical(offset)
    return result


def dumps(value: Any) -> str:
    """The JSON text Spark will store for ``value`` once it is canonical."""
    return json.dumps(canonical(value))
