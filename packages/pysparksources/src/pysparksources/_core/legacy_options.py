"""Legacy: the options view before option tables; removed once every source reads its table.

One options toolkit for every source and sink: names, aliases, typed values, secrets, errors.

Spark parses no option names for Python data sources, so each source validates its own. They
all do it through :class:`Options`, which gives them one behaviour: names are case-insensitive;
an alias and its option are one option (giving both is an error naming both); an unknown name
is an error with a "did you mean"; sizes (``128m``), durations (``10s``, ``PT10S``), integers,
booleans and choices parse the same way everywhere; and every problem is one
:class:`OptionError` sentence. A value is quoted in that sentence only when the option is known
and not declared secret: a misspelled ``connectionStrng`` may hold a connection string, so the
value of an unknown option (or of a free-form ``fs.*`` storage option) is never shown.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import overload

from pysparksources._core.option_values import (
    FALSE_WORDS,
    INTEGER,
    LONG_MAX,
    MAX_DIGITS,
    NUMBER,
    TRUE_WORDS,
    describe_bounds,
    parse_duration_seconds,
    parse_size,
)
from pysparksources.errors import OptionError

__all__ = ["Options"]


class Options:
    """Read-only, case-insensitive view over one source's options that validates as it reads.

    Parameters
    ----------
    source:
        The short name shown in error messages, e.g. ``"pyrate"``.
    raw:
        The options exactly as Spark passed them.
    known:
        Every option name the source understands, in its documented spelling. Anything else is
        rejected so a typo never silently falls back to a default.
    aliases:
        Other names of known options (``{"delimiter": "sep"}``), e.g. the Scala connector's.
        An alias is the same option: giving it together with its option is an error.
    secrets:
        Options whose values never appear in messages (keys, tokens, connection strings).
    prefixes:
        Lower-case prefixes of free-form option families (``"fs."``) that are passed through.
        Their values are treated as secrets: a family may carry credentials.
    unsupported:
        Options the source knows but refuses, with the reason.
    """

    def __init__(
        self,
        source: str,
        raw: Mapping[str, str],
        known: Iterable[str],
        *,
        aliases: Mapping[str, str] | None = None,
        secrets: Iterable[str] = (),
        prefixes: Iterable[str] = (),
        unsupported: Mapping[str, str] | None = None,
    ) -> None:
        self.source = source
        self._names = {name.lower(): name for name in known}
        self._aliases = {a.lower(): self._names[c.lower()] for a, c in (aliases or {}).items()}
        self._alias_names = {a.lower(): a for a in (aliases or {})}
        self._secrets = {s.lower() for s in secrets}
        self._prefixes = tuple(p.lower() for p in prefixes)
        self._unsupported = {k.lower(): (k, v) for k, v in (unsupported or {}).items()}
        self._values: dict[str, str] = {}
        self._given_as: dict[str, str] = {}
        for key, value in raw.items():
            self._add(str(key), str(value))

    def _add(self, key: str, value: str) -> None:
        lowered = key.lower()
        if lowered in self._unsupported:
            name, reason = self._unsupported[lowered]
            raise OptionError.unsupported(self.source, name, reason)
        canonical = self._aliases.get(lowered)
        if canonical is not None:
            given = self._alias_names[lowered]
            lowered = canonical.lower()
        elif lowered in self._names:
            given = self._names[lowered]
        elif lowered.startswith(self._prefixes):
            given = lowered
        else:
            raise OptionError.unknown(self.source, lowered, self._hint(lowered))
        if lowered in self._values:
            first = self._given_as[lowered]
            raise OptionError.twice(self.source, self._names.get(lowered, given), first, given)
        self._values[lowered] = value
        self._given_as[lowered] = given

    def _hint(self, key: str) -> str:
        candidates = {**self._names, **self._alias_names}
        close = difflib.get_close_matches(key, list(candidates), n=1)
        if close:
            return f"did you mean '{candidates[close[0]]}'?"
        return "accepted options are " + ", ".join(sorted(self._names.values()))

    # -- errors --------------------------------------------------------------------------
    def is_secret(self, name: str) -> bool:
        key = name.lower()
        return key in self._secrets or key.startswith(self._prefixes) or key not in self._names

    def error(self, name: str, accepted: str) -> OptionError:
        """The error for option ``name``'s current value (shown unless it is secret)."""
        key = self._aliases.get(name.lower(), name).lower()
        shown = self._given_as.get(key, self._names.get(key, name))
        value = None if self.is_secret(key) else self._values.get(key)
        return OptionError.invalid(self.source, shown, accepted, value)

    def required(self, name: str, what: str) -> OptionError:
        """The error for a missing option ``name``: ``... is required: <what>``."""
        return OptionError.required(self.source, self._names.get(name.lower(), name), what)

    # -- raw access ----------------------------------------------------------------------
    def has(self, name: str) -> bool:
        return name.lower() in self._values

    def raw(self, name: str) -> str | None:
        return self._values.get(name.lower())

    def given_as(self, name: str) -> str | None:
        """The spelling the user gave for ``name`` (an alias or the name), None if absent."""
        return self._given_as.get(name.lower())

    def with_prefix(self, prefix: str) -> dict[str, str]:
        """Options starting with ``prefix``, the prefix removed (e.g. fsspec storage options)."""
        p = prefix.lower()
        return {k[len(p) :]: v for k, v in self._values.items() if k.startswith(p)}

    # -- typed values --------------------------------------------------------------------
    @overload
    def string(self, name: str) -> str | None: ...
    @overload
    def string(self, name: str, default: str) -> str: ...
    @overload
    def string(self, name: str, default: None) -> str | None: ...
    def string(self, name: str, default: str | None = None) -> str | None:
        value = self.raw(name)
        return default if value is None else value

    def require(self, name: str, what: str) -> str:
        """A string option that must be given (and not blank)."""
        value = self.raw(name)
        if value is None or not value.strip():
            raise self.required(name, what)
        return value

    @overload
    def integer(
        self, name: str, *, minimum: int | None = ..., maximum: int = ...
    ) -> int | None: ...
    @overload
    def integer(
        self, name: str, default: int, minimum: int | None = ..., maximum: int = ...
    ) -> int: ...
    @overload
    def integer(
        self, name: str, default: None, minimum: int | None = ..., maximum: int = ...
    ) -> int | None: ...
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
        bounds = describe_bounds(minimum, maximum)
        if INTEGER.fullmatch(text) is None or len(text.strip().lstrip("+-0")) > MAX_DIGITS:
            raise self.error(name, f"expected an integer {bounds}")
        value = int(text)
        if (minimum is not None and value < minimum) or value > maximum:
            raise self.error(name, f"expected an integer {bounds}")
        return value

    def number(self, name: str, default: float, minimum: float, maximum: float) -> float:
        """A decimal number between ``minimum`` and ``maximum``."""
        text = self.raw(name)
        if text is None:
            return default
        accepted = f"expected a number between {minimum:g} and {maximum:g}"
        if NUMBER.fullmatch(text) is None:
            raise self.error(name, accepted)
        value = float(text)
        if not minimum <= value <= maximum:
            raise self.error(name, accepted)
        return value

    def boolean(self, name: str, default: bool) -> bool:
        text = self.raw(name)
        if text is None:
            return default
        lowered = text.strip().lower()
        if lowered in TRUE_WORDS:
            return True
        if lowered in FALSE_WORDS:
            return False
        raise self.error(name, "expected true or false")

    @overload
    def duration_seconds(
        self, name: str, default: float, minimum: float = ..., iso: bool = ...
    ) -> float: ...
    @overload
    def duration_seconds(
        self, name: str, default: None, minimum: float = ..., iso: bool = ...
    ) -> float | None: ...
    def duration_seconds(
        self, name: str, default: float | None, minimum: float = 0, iso: bool = False
    ) -> float | None:
        """A duration such as ``5s``, ``250ms``, ``2m`` or a number of seconds.

        ``iso`` also accepts ISO-8601 (``PT60S``), for options the Scala connector had.
        """
        text = self.raw(name)
        if text is None:
            return default
        try:
            value = parse_duration_seconds(text, iso)
        except ValueError:
            forms = "10s, 500ms, 2m, 1h, 7d or a number of seconds"
            raise self.error(
                name,
                f"expected a duration such as {forms}" + (" (or ISO-8601, PT60S)" if iso else ""),
            ) from None
        if value < minimum:
            raise self.error(name, f"expected a duration of at least {minimum:g}s")
        return value

    @overload
    def size(self, name: str, default: int, minimum: int = ...) -> int: ...
    @overload
    def size(self, name: str, default: None, minimum: int = ...) -> int | None: ...
    def size(self, name: str, default: int | None, minimum: int = 1) -> int | None:
        """A byte count such as ``1048576``, ``512k``, ``128m`` or ``1g``, at least ``minimum``."""
        text = self.raw(name)
        if text is None:
            return default
        accepted = f"expected a size of at least {minimum} bytes such as 1048576, 512k, 128m or 1g"
        try:
            value = parse_size(text)
        except ValueError:
            raise self.error(name, accepted) from None
        if value < minimum:
            raise self.error(name, accepted)
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
