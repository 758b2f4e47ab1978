"""One options toolkit for every source and sink: names, aliases, typed values, secrets, errors.

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
import re
from collections.abc import Iterable, Mapping
from typing import overload
from urllib.parse import urlsplit, urlunsplit

__all__ = [
    "LONG_MAX",
    "OptionError",
    "Options",
    "parse_duration_seconds",
    "parse_size",
    "safe_url",
]

LONG_MAX = 2**63 - 1
_MAX_DURATION_S = LONG_MAX // 1000  # Spark keeps durations as milliseconds in a long
_NOT_SHOWN = "<not shown>"

# Spark's time strings (JavaUtils.timeStringAs) plus a few spelled-out units; a bare number
# is seconds. ASCII digits only: Python's int() would also take "1_0" and Arabic digits.
_DURATION = re.compile(r"\s*([0-9]+)\s*([a-z]*)\s*", re.IGNORECASE | re.ASCII)
_UNIT_SECONDS = {
    "": 1.0,
    "us": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "sec": 1.0,
    "secs": 1.0,
    "m": 60.0,
    "min": 60.0,
    "mins": 60.0,
    "h": 3600.0,
    "d": 86400.0,
}
# java.time.Duration.parse, which the Scala connector used: PnDTnHnMn.nS, each part optional.
_ISO = re.compile(
    r"\s*([-+]?)P(?:([-+]?[0-9]+)D)?"
    r"(?:T(?:([-+]?[0-9]+)H)?(?:([-+]?[0-9]+)M)?(?:([-+]?[0-9]+(?:[.,][0-9]{0,9})?)S)?)?\s*",
    re.IGNORECASE | re.ASCII,
)
# Spark's byte strings (JavaUtils.byteStringAs): 1048576, 512k, 512kb, 128m, 1g, 2t, 1p.
_SIZE = re.compile(r"\s*([0-9]+)\s*([kmgtp]?)(?:b)?\s*", re.IGNORECASE | re.ASCII)
_SIZE_SHIFT = {"": 0, "k": 10, "m": 20, "g": 30, "t": 40, "p": 50}
_INTEGER = re.compile(r"\s*[-+]?[0-9]+\s*", re.ASCII)
_NUMBER = re.compile(r"\s*[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\s*", re.ASCII)
_MAX_DIGITS = 30  # longer numbers cannot be in range, and int() refuses > 4300 digits
# A value that looks like a credential is never quoted, even for an option that is not secret
# (a connection string pasted into the wrong option, a URL carrying a SAS token).
_CREDENTIAL = re.compile(
    r"sharedaccess|accountkey|sig=|secret|password|passwd|token|credential|[a-z]key=",
    re.IGNORECASE,
)
_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no"}


class OptionError(ValueError):
    """An option is missing, unknown, given twice or has a value its source cannot accept.

    Use the constructors :meth:`invalid`, :meth:`required`, :meth:`unknown` (or an
    :class:`Options` object, which picks the right one and knows which values are secret).
    """

    def __init__(self, source: str, option: str, message: str) -> None:
        self.source = source
        self.option = option
        super().__init__(message)

    @classmethod
    def invalid(
        cls, source: str, option: str, accepted: str, value: str | None = None
    ) -> OptionError:
        """``<source>: invalid value <value> for option '<option>': <accepted>``.

        ``value=None`` (the default) keeps the value out of the message: pass it only for an
        option that is known and not secret. Even then a value that looks like a credential
        is not shown, and a URL loses its password and query string.
        """
        showable = _showable(value)
        shown = _NOT_SHOWN if showable is None else repr(showable)
        return cls(
            source, option, f"{source}: invalid value {shown} for option '{option}': {accepted}"
        )

    @classmethod
    def required(cls, source: str, option: str, what: str) -> OptionError:
        """``<source>: option '<option>' is required: <what to give>``."""
        return cls(source, option, f"{source}: option '{option}' is required: {what}")

    @classmethod
    def unsupported(cls, source: str, option: str, reason: str) -> OptionError:
        """``<source>: option '<option>' is not supported: <reason>``."""
        return cls(source, option, f"{source}: option '{option}' is not supported: {reason}")

    @classmethod
    def unknown(cls, source: str, option: str, hint: str) -> OptionError:
        """``<source>: unknown option '<option>': <hint>`` (its value may be a secret)."""
        return cls(source, option, f"{source}: unknown option '{option}': {hint}")

    def bare(self) -> OptionError:
        """This error without its traceback, for raising out of a method Spark calls.

        Spark's worker prints the Python traceback above our sentence; without frames (and
        with ``from None``) the user sees one line naming the option.
        """
        return self.with_traceback(None)


def safe_url(url: str) -> str:
    """``url`` without a password or a query string (a SAS token), for messages and logs."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return _NOT_SHOWN
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        netloc = (user.split(":", 1)[0] + ":***@" if ":" in user else user + "@") + host
    query = "***" if parts.query else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def parse_duration_seconds(text: str, iso: bool = False) -> float:
    """A Spark-style duration (``10s``, ``500ms``, ``2m``; a bare number is seconds).

    With ``iso`` also ISO-8601 (``PT60S``, ``PT1M30S``, ``P1D``), as the Scala Event Hubs
    connector accepted. Raises ``ValueError`` for anything else, and for durations longer than
    Spark can hold (2^63 - 1 ms).
    """
    match = _DURATION.fullmatch(text)
    if match is not None:
        number, unit = match.groups()
        factor = _UNIT_SECONDS.get(unit.lower())
        if factor is None or len(number.lstrip("0")) > _MAX_DIGITS:
            raise ValueError(text)
        value = int(number) * factor
    elif iso:
        value = _iso_duration(text)
    else:
        raise ValueError(text)
    if not 0 <= value <= _MAX_DURATION_S:
        raise ValueError(text)
    return value


def _iso_duration(text: str) -> float:
    match = _ISO.fullmatch(text)
    if match is None or not any(match.groups()[1:]):
        raise ValueError(text)
    sign, days, hours, minutes, seconds = match.groups()
    if any(len((p or "").lstrip("+-0")) > _MAX_DIGITS for p in (days, hours, minutes, seconds)):
        raise ValueError(text)
    total = (
        int(days or 0) * 86400
        + int(hours or 0) * 3600
        + int(minutes or 0) * 60
        + float((seconds or "0").replace(",", "."))
    )
    return -total if sign == "-" else total


def parse_size(text: str) -> int:
    """A byte count: ``1048576``, ``512k``, ``512kb``, ``128m``, ``1g``, ``2t``, ``1p``.

    Raises ``ValueError`` for anything else and for sizes above 2^63 - 1.
    """
    match = _SIZE.fullmatch(text)
    if match is None or len(match.group(1).lstrip("0")) > _MAX_DIGITS:
        raise ValueError(text)
    value = int(match.group(1)) << _SIZE_SHIFT[match.group(2).lower()]
    if value > LONG_MAX:
        raise ValueError(text)
    return value


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
            raise OptionError(
                self.source,
                self._names.get(lowered, given),
                f"{self.source}: option '{self._names.get(lowered, given)}' is given twice, as "
                f"'{first}' and '{given}': give it once",
            )
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
        bounds = _describe_bounds(minimum, maximum)
        if _INTEGER.fullmatch(text) is None or len(text.strip().lstrip("+-0")) > _MAX_DIGITS:
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
        if _NUMBER.fullmatch(text) is None:
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
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
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


def _showable(value: str | None) -> str | None:
    """``value`` as it may appear in a message: URLs without credentials, no key-like text."""
    if value is None or _CREDENTIAL.search(value):
        return None
    return safe_url(value) if "://" in value else value


def _describe_bounds(minimum: int | None, maximum: int) -> str:
    if minimum is None:
        return f"<= {maximum}"
    if maximum == LONG_MAX:
        return f">= {minimum}"
    return f"between {minimum} and {maximum}"
