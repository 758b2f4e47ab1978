"""The one declaration of every option: name, aliases, type, default, secrecy, uses and meaning.

Each source declares its options in its ``_option_table`` module, and
:meth:`OptionTable.declared` gathers them into the source's table: every :class:`Option` the
module binds to a name, in the order the module declares them (the order of the documentation's
tables), so declaring an option is the only edit that puts it in the table. The parser
(:class:`~pysparksources._core.options.Options`) reads values and defaults from the table, and
the documentation's option tables are rendered from it (``option_docs``), so a default is
written once, as a user would write it (``"15m"``, ``"7d"``, ``"128m"``), and parsed by the same
code as the user's value. An option whose value goes into the source's config as it is parsed
names that field (``config_field``), and :meth:`Options.fill
<pysparksources._core.options.Options.fill>` copies it there: the parser writes code only for
options that need more than that copy.

An option's type is its class: :class:`Text`, :class:`Flag`, :class:`Integer`, :class:`Number`,
:class:`Duration`, :class:`Size`, :class:`Choice`, or a source's own subclass of
:class:`Option` for values with a grammar of their own (Event Hubs positions, say). ``parse``
turns the text into the value or raises ``ValueError`` whose message says what is accepted.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

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

__all__ = [
    "Choice",
    "Duration",
    "Flag",
    "Integer",
    "Number",
    "Option",
    "OptionFamily",
    "OptionTable",
    "Size",
    "Text",
    "Use",
    "declared_in",
]

T = TypeVar("T")
D = TypeVar("D")


class Use(enum.Flag):
    """Where an option applies: which of Spark's four entry points hands it to the source."""

    STREAM_READ = enum.auto()  # spark.readStream
    BATCH_READ = enum.auto()  # spark.read
    STREAM_WRITE = enum.auto()  # df.writeStream
    BATCH_WRITE = enum.auto()  # df.write
    READ = STREAM_READ | BATCH_READ
    WRITE = STREAM_WRITE | BATCH_WRITE
    STREAM = STREAM_READ | STREAM_WRITE
    ANY = READ | WRITE

    def describe(self) -> str:
        """``spark.readStream and spark.read``: the entry points of this use, as called."""
        names = [_ENTRY_POINTS[one] for one in _SINGLE_USES if one & self]
        return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]


_SINGLE_USES = (Use.STREAM_READ, Use.BATCH_READ, Use.STREAM_WRITE, Use.BATCH_WRITE)
_ENTRY_POINTS = {
    Use.STREAM_READ: "spark.readStream",
    Use.BATCH_READ: "spark.read",
    Use.STREAM_WRITE: "df.writeStream",
    Use.BATCH_WRITE: "df.write",
}


@dataclass(frozen=True, kw_only=True)
class Option(Generic[T]):
    """One option of one source.

    Parameters
    ----------
    name:
        The documented spelling (names match case-insensitively).
    doc:
        One line for the documentation's table.
    default:
        The default as a user would write it, parsed like a given value; a mapping gives one
        default per use (``{Use.STREAM_READ: "@latest", Use.BATCH_READ: "start"}``). None: unset.
    shown_default:
        What the documentation shows when the default is computed where the value is used
        (``"driver CPU count"``) or depends on another option.
    aliases:
        Other names of the same option (the Scala connector's, Spark's synonyms); giving an alias
        together with the option is an error.
    secret:
        The value is never shown in a message, a log or a description.
    uses:
        Where the option applies; given elsewhere it is an error naming where it applies.
    config_field:
        ``"SourceConfig.latest_first"``: the config dataclass and its field that take the value
        as parsed (given, else the default), where :meth:`Options.fill
        <pysparksources._core.options.Options.fill>` copies it. None: the parser computes what
        the config holds (a unit changed, a value resolved or combined with others).
    """

    name: str
    doc: str
    default: str | Mapping[Use, str] | None = None
    shown_default: str | None = None
    aliases: tuple[str, ...] = ()
    secret: bool = False
    uses: Use = Use.ANY
    config_field: str | None = None

    def parse(self, text: str) -> T:
        """The value of ``text``; ``ValueError(what is accepted)`` when it is not one."""
        raise NotImplementedError

    def default_text(self, use: Use) -> str | None:
        """The default that applies to ``use`` (the first that overlaps it), as text."""
        if self.default is None or isinstance(self.default, str):
            return self.default
        for key, text in self.default.items():
            if key & use:
                return text
        return None

    def default_value(self, use: Use = Use.ANY) -> T | None:
        text = self.default_text(use)
        return None if text is None else self.parse(text)

    def documented_default(self) -> str:
        """The default column of the documentation's table."""
        if self.shown_default is not None:
            return self.shown_default
        if self.default is None:
            return "unset"
        if isinstance(self.default, str):
            return f"`{self.default}`" if self.default else '`""`'
        return ", ".join(f"`{text}` ({use.describe()})" for use, text in self.default.items())


@dataclass(frozen=True, kw_only=True)
class Text(Option[str]):
    """Free text, taken as given."""

    def parse(self, text: str) -> str:
        return text


@dataclass(frozen=True, kw_only=True)
class Flag(Option[bool]):
    """``true`` or ``false`` (also ``1``/``0``, ``yes``/``no``), any case."""

    def parse(self, text: str) -> bool:
        lowered = text.strip().lower()
        if lowered in TRUE_WORDS:
            return True
        if lowered in FALSE_WORDS:
            return False
        raise ValueError("expected true or false")


@dataclass(frozen=True, kw_only=True)
class Integer(Option[int]):
    """A whole number between ``minimum`` (None: no lower bound) and ``maximum``."""

    minimum: int | None = None
    maximum: int = LONG_MAX

    def parse(self, text: str) -> int:
        accepted = f"expected an integer {describe_bounds(self.minimum, self.maximum)}"
        if INTEGER.fullmatch(text) is None or len(text.strip().lstrip("+-0")) > MAX_DIGITS:
            raise ValueError(accepted)
        value = int(text)
        if (self.minimum is not None and value < self.minimum) or value > self.maximum:
            raise ValueError(accepted)
        return value


@dataclass(frozen=True, kw_only=True)
class Number(Option[float]):
    """A decimal number between ``minimum`` and ``maximum``."""

    minimum: float
    maximum: float

    def parse(self, text: str) -> float:
        accepted = f"expected a number between {self.minimum:g} and {self.maximum:g}"
        if NUMBER.fullmatch(text) is None:
            raise ValueError(accepted)
        value = float(text)
        if not self.minimum <= value <= self.maximum:
            raise ValueError(accepted)
        return value


@dataclass(frozen=True, kw_only=True)
class Duration(Option[float]):
    """A duration in seconds: ``10s``, ``500ms``, ``2m``, ``1h``, ``7d`` or a bare number (of
    seconds, or of ``bare_unit``).

    ``iso`` also accepts ISO-8601 (``PT60S``), for options the Scala connector had.
    """

    minimum: float = 0.0
    iso: bool = False
    # "ms" for Spark's own options that Spark reads with timeStringAsMs (maxFileAge,
    # retention): there "3600" means 3.6 seconds, and a user's Spark query must mean the same.
    bare_unit: str = "s"

    def parse(self, text: str) -> float:
        try:
            value = parse_duration_seconds(text, self.iso, self.bare_unit)
        except ValueError:
            bare = "milliseconds" if self.bare_unit == "ms" else "seconds"
            forms = f"10s, 500ms, 2m, 1h, 7d or a number of {bare}"
            iso = " (or ISO-8601, PT60S)" if self.iso else ""
            raise ValueError(f"expected a duration such as {forms}{iso}") from None
        if value < self.minimum:
            raise ValueError(f"expected a duration of at least {self.minimum:g}s")
        return value


@dataclass(frozen=True, kw_only=True)
class Size(Option[int]):
    """A byte count such as ``1048576``, ``512k``, ``128m`` or ``1g``, at least ``minimum``."""

    minimum: int = 1

    def parse(self, text: str) -> int:
        accepted = (
            f"expected a size of at least {self.minimum} bytes such as 1048576, 512k, 128m or 1g"
        )
        try:
            value = parse_size(text)
        except ValueError:
            raise ValueError(accepted) from None
        if value < self.minimum:
            raise ValueError(accepted)
        return value


@dataclass(frozen=True, kw_only=True)
class Choice(Option[str]):
    """One of ``choices``, matched case-insensitively, returned in its canonical spelling."""

    choices: tuple[str, ...]

    def parse(self, text: str) -> str:
        canonical = {choice.lower(): choice for choice in self.choices}
        try:
            return canonical[text.strip().lower()]
        except KeyError:
            raise ValueError("expected one of " + ", ".join(self.choices)) from None


@dataclass(frozen=True)
class OptionFamily:
    """Free-form options sharing a prefix (``fs.account_key``), passed on without their prefix.

    Their values are always treated as secrets: a family may carry credentials.
    """

    prefix: str
    doc: str
    uses: Use = Use.ANY

    @property
    def shown_name(self) -> str:
        return f"{self.prefix}<name>"


def declared_in(namespace: Mapping[str, object], kind: type[D]) -> tuple[D, ...]:
    """The instances of ``kind`` a module binds to its names (``vars(module)``, or
    ``globals()`` at its end), each once, in the order the module declares them."""
    found: dict[int, D] = {}
    for value in namespace.values():
        if isinstance(value, kind):
            found.setdefault(id(value), value)
    return tuple(found.values())


@dataclass(frozen=True)
class OptionTable:
    """Every option of one format (its source and its sink), in documentation order.

    A name may be declared twice for uses that do not overlap: a reader's ``format`` and a
    writer's accept different values. ``unsupported`` maps options that Spark's own source knows
    but this one refuses to the reason, so they fail with that reason instead of "unknown
    option".
    """

    source: str
    options: tuple[Option[Any], ...]
    families: tuple[OptionFamily, ...] = ()
    unsupported: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for use in _SINGLE_USES:
            seen: set[str] = set()
            for option in self.for_use(use):
                for name in (option.name, *option.aliases):
                    if name.lower() in seen:
                        raise ValueError(f"{self.source}: {name!r} is declared twice for {use}")
                    seen.add(name.lower())

    @classmethod
    def declared(
        cls,
        source: str,
        namespace: Mapping[str, object],
        more: Iterable[Option[Any]] = (),
        unsupported: Mapping[str, str] | None = None,
    ) -> OptionTable:
        """The table of the options and option families a module declares, in its order
        (``OptionTable.declared(NAME, globals())`` as the module's last statement), then
        ``more`` (declared elsewhere: pyfile's formats)."""
        return cls(
            source,
            (*declared_in(namespace, Option), *more),
            declared_in(namespace, OptionFamily),
            unsupported or {},
        )

    def filling(self, config: str, field_name: str, use: Use) -> Option[Any] | None:
        """The option whose value fills ``config.field_name`` as parsed, None when none does.

        When two options fill one field (one for readers, one for writers), the one of ``use``.
        """
        target = f"{config}.{field_name}"
        found = [option for option in self.options if option.config_field == target]
        if len(found) > 1:
            found = [option for option in found if option.uses & use]
        if len(found) > 1:
            names = ", ".join(option.name for option in found)
            raise TypeError(f"{self.source}: options {names} all fill {target} for {use}")
        return found[0] if found else None

    def for_use(self, use: Use) -> tuple[Option[Any], ...]:
        """The options that apply to (some part of) ``use``, in documentation order."""
        return tuple(option for option in self.options if option.uses & use)

    def lookup(self, use: Use) -> dict[str, Option[Any]]:
        """Lower-case name or alias -> option, for the options that apply to ``use``."""
        return {
            name.lower(): option
            for option in self.for_use(use)
            for name in (option.name, *option.aliases)
        }
