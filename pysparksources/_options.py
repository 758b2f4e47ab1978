"""Typed, case-insensitive option parsing with one error style for every source.

Spark parses no option names for Python data sources, so each source validates its own
options when the query starts. Every bad value becomes an :class:`OptionError` that names the
option, the value and what is accepted, instead of a traceback from inside a worker.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping

__all__ = ["OptionError", "Options", "parse_duration_seconds"]

_DURATION = re.compile(r"^\s*(\d+)\s*(us|ms|s|sec|secs|m|min|mins|h|d)?\s*$", re.IGNORECASE)
_UNIT_SECONDS = {
    "us": 1e-6,
    "ms": 1e-3,
    "s": 1,
    "sec": 1,
    "secs": 1,
    "m": 60,
    "min": 60,
    "mins": 60,
    "h": 3600,
    "d": 86400,
}
_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no"}
LONG_MAX = 2**63 - 1


class OptionError(ValueError):
    """A data source option has a value the source cannot accept."""

    def __init__(self, source: str, option: str, value: object, accepted: str) -> None:
        self.source = source
        self.option = option
        self.value = value
        self.accepted = accepted
        shown = "<redacted>" if value is _REDACTED else repr(value)
        super().__init__(f"{source}: invalid value {shown} for option '{option}': {accepted}")


class _Redacted:
    def __repr__(self) -> str:
        return "<redacted>"


_REDACTED = _Redacted()


def parse_duration_seconds(text: str) -> float:
    """Parse a Spark-style duration (``10s``, ``500ms``, ``2m``; bare numbers are seconds)."""
    match = _DURATION.match(text)
    if match is None:
        raise ValueError(text)
    number, unit = match.groups()
    return int(number) * _UNIT_SECONDS[(unit or "s").lower()]


class Options:
    """Read-only, case-insensitive view over a source's options that validates as it reads.

    Parameters
    ----------
    source:
        The short name shown in error messages, e.g. ``"pyrate"``.
    raw:
        The options exactly as Spark passed them.
    known:
        Every option name the source understands (any case). Anything else is rejected so a typo
        never silently falls back to a default.
    prefixes:
        Lower-case prefixes of free-form option families (``"fs."``) that are passed through.
    secrets:
        Option names whose values must never appear in messages.
    """

    def __init__(
        self,
        source: str,
        raw: Mapping[str, str],
        known: Iterable[str],
        prefixes: Iterable[str] = (),
        secrets: Iterable[str] = (),
    ) -> None:
        self.source = source
        self._values = {str(k).lower(): str(v) for k, v in raw.items()}
        self._known = {name.lower(): name for name in known}
        self._prefixes = tuple(p.lower() for p in prefixes)
        self._secrets = {s.lower() for s in secrets}
        self._reject_unknown()

    def _reject_unknown(self) -> None:
        for key in sorted(self._values):
            if key in self._known or key.startswith(self._prefixes):
                continue
            hint = difflib.get_close_matches(key, list(self._known), n=1)
            accepted = (
                f"unknown option; did you mean '{self._known[hint[0]]}'?"
                if hint
                else "unknown option; accepted options are "
                + ", ".join(sorted(self._known.values()))
            )
            raise OptionError(self.source, key, self._values[key], accepted)

    def error(self, name: str, accepted: str) -> OptionError:
        """Build the error for option ``name`` with its current value."""
        key = name.lower()
        value: object = _REDACTED if key in self._secrets else self._values.get(key)
        return OptionError(self.source, name, value, accepted)

    def has(self, name: str) -> bool:
        return name.lower() in self._values

    def raw(self, name: str) -> str | None:
        return self._values.get(name.lower())

    def with_prefix(self, prefix: str) -> dict[str, str]:
        """Options starting with ``prefix``, the prefix removed (e.g. fsspec storage options)."""
        p = prefix.lower()
        return {k[len(p) :]: v for k, v in self._values.items() if k.startswith(p)}

    def string(self, name: str, default: str | None = None) -> str | None:
        value = self.raw(name)
        return default if value is None else value

    def integer(
        self,
        name: str,
        default: int | None = None,
        minimum: int | None = None,
        maximum: int = LONG_MAX,
    ) -> int | None:
        """An integer option, bounded on both sides; ``default`` when absent."""
        text = self.raw(name)
        if text is None:
            return default
        bounds = _describe_bounds(minimum, maximum)
        try:
            value = int(text.strip())
        except ValueError:
            raise self.error(name, f"expected an integer {bounds}") from None
        if (minimum is not None and value < minimum) or value > maximum:
            raise self.error(name, f"expected an integer {bounds}")
        return value

    def boolean(self, name: str, default: bool) -> bool:
        text = self.raw(name)
        if text is None:
            return default
        lowered = text.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise self.error(name, "expected true or false")

    def duration_seconds(self, name: str, default: float, minimum: float = 0) -> float:
        """A duration such as ``5s``, ``250ms``, ``2m`` or a bare number of seconds."""
        text = self.raw(name)
        if text is None:
            return default
        try:
            value = parse_duration_seconds(text)
        except ValueError:
            raise self.error(
                name, "expected a duration such as 10s, 500ms, 2m, 1h or a number of seconds"
            ) from None
        if value < minimum:
            raise self.error(name, f"expected a duration of at least {minimum}s")
        return value

    def choice(self, name: str, default: str, choices: Iterable[str]) -> str:
        """One of ``choices`` (matched case-insensitively), returned in its canonical spelling."""
        text = self.raw(name)
        if text is None:
            return default
        canonical = {c.lower(): c for c in choices}
        try:
            return canonical[text.strip().lower()]
        except KeyError:
            raise self.error(name, "expected one of " + ", ".join(canonical.values())) from None


def _describe_bounds(minimum: int | None, maximum: int) -> str:
    if minimum is None:
        return f"<= {maximum}"
    if maximum == LONG_MAX:
        return f">= {minimum}"
    return f"between {minimum} and {maximum}"
