"""One options toolkit for every source and sink: names, aliases, typed values, secrets, errors.

Spark parses no option names for Python data sources, so each source validates its own, all
through :class:`Options` over the source's :class:`~pysparksources._core.option_table.OptionTable`.
That gives them one behaviour: names are case-insensitive; an alias and its option are one
option (giving both is an error naming both); an unknown name is an error with a "did you mean";
an option given where it does not apply (a sink option to a reader, a batch-only option to a
stream) is an error saying where it applies; values and defaults parse through the option's
declared type; and every problem is one :class:`~pysparksources.errors.OptionError` sentence. A
value is quoted in that sentence only when the option is known and not declared secret: a
misspelled ``connectionStrng`` may hold a connection string, so the value of an unknown option
(or of a free-form ``fs.*`` storage option) is never shown.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping
from typing import Any, ClassVar, Protocol, TypeVar

from pysparksources._core.option_table import Option, OptionFamily, OptionTable, Use
from pysparksources.errors import OptionError

__all__ = ["Options"]

T = TypeVar("T")


class _Config(Protocol):
    """A dataclass (what :meth:`Options.fill` builds)."""

    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]


C = TypeVar("C", bound=_Config)


class Options:
    """Read-only, case-insensitive view over the options one query gave one source.

    Parameters
    ----------
    table:
        The source's declaration of every option.
    raw:
        The options exactly as Spark passed them.
    use:
        Where they were given. ``Use.READ`` when Spark asks for a read's schema, where a stream
        and a batch read look the same: options of either kind of read are accepted there, and
        the reader checks them again for its own kind.
    """

    def __init__(self, table: OptionTable, raw: Mapping[str, str], use: Use) -> None:
        self.table = table
        self.source = table.source
        self.use = use
        self._options = table.lookup(use)  # lower-case name or alias -> option
        self._elsewhere = table.lookup(Use.ANY)  # for "applies only to ..." and hints
        self._spellings = {
            name.lower(): name for o in table.options for name in (o.name, *o.aliases)
        }
        self._families = tuple(table.families)
        self._unsupported = {k.lower(): (k, v) for k, v in table.unsupported.items()}
        self._values: dict[str, str] = {}  # option name (lower-case) or family key -> value
        self._given_as: dict[str, str] = {}
        for key, value in raw.items():
            self._add(str(key), str(value))

    def _add(self, key: str, value: str) -> None:
        lowered = key.lower()
        if lowered in self._unsupported:
            name, reason = self._unsupported[lowered]
            raise OptionError.unsupported(self.source, name, reason)
        option = self._options.get(lowered)
        if option is not None:
            given = self._spellings[lowered]
            lowered = option.name.lower()
        elif lowered in self._elsewhere:
            where = self._elsewhere[lowered].uses.describe()
            raise OptionError.wrong_use(self.source, self._spellings[lowered], where)
        else:
            family = self._family(lowered)
            if family is None:
                raise OptionError.unknown(self.source, lowered, self._hint(lowered))
            if not family.uses & self.use:
                raise OptionError.wrong_use(self.source, family.shown_name, family.uses.describe())
            given = lowered
        if lowered in self._values:
            name = option.name if option is not None else given
            raise OptionError.twice(self.source, name, self._given_as[lowered], given)
        self._values[lowered] = value
        self._given_as[lowered] = given

    def _family(self, key: str) -> OptionFamily | None:
        return next((f for f in self._families if key.startswith(f.prefix.lower())), None)

    def _hint(self, key: str) -> str:
        close = difflib.get_close_matches(key, list(self._options), n=1)
        if close:
            return f"did you mean '{self._spellings[close[0]]}'?"
        elsewhere = difflib.get_close_matches(key, list(self._elsewhere), n=1)
        if elsewhere:
            where = self._elsewhere[elsewhere[0]].uses.describe()
            return f"did you mean '{self._spellings[elsewhere[0]]}' (only for {where})?"
        accepted = sorted({option.name for option in self.table.for_use(self.use)})
        return "accepted options are " + ", ".join(accepted)

    # -- values ---------------------------------------------------------------------------
    def has(self, option: Option[Any]) -> bool:
        """Whether the user gave ``option`` (under its name or an alias)."""
        return option.name.lower() in self._values

    def raw(self, option: Option[Any]) -> str | None:
        """The text the user gave for ``option``, None when absent."""
        return self._values.get(option.name.lower())

    def given_as(self, option: Option[Any]) -> str | None:
        """The spelling the user gave for ``option`` (an alias or the name), None if absent."""
        return self._given_as.get(option.name.lower())

    def get(self, option: Option[T]) -> T | None:
        """The value given, else the declared default for this use, else None."""
        text = self.raw(option)
        if text is None:
            return option.default_value(self.use)
        try:
            return option.parse(text)
        except ValueError as error:
            raise self.error(option, str(error)) from None

    def value(self, option: Option[T]) -> T:
        """The value of an option that always has one (given, or its declared default)."""
        value = self.get(option)
        if value is None:
            raise LookupError(f"{self.source}: option {option.name!r} declares no default")
        return value

    def require(self, option: Option[T], what: str) -> T:
        """The value of an option that must be given (and not blank): ``what`` says what to give."""
        text = self.raw(option)
        if text is None or not text.strip():
            raise self.required(option, what)
        return self.value(option)

    def fill(self, config: type[C], **computed: Any) -> C:
        """A ``config`` dataclass whose fields are the values of the options that fill them
        (``config_field``: given, else their defaults, as :meth:`get` returns them) and
        ``computed``, what the parser computed for the others.

        Each field is filled exactly once: a field no option fills and the parser does not
        give, or one both give, is the parser's mistake (``TypeError``), whatever the options.
        """
        values: dict[str, Any] = {}
        for config_field in dataclasses.fields(config):
            if not config_field.init:
                continue
            name = config_field.name
            option = self.table.filling(config.__name__, name, self.use)
            if option is not None and name in computed:
                raise TypeError(
                    f"{config.__name__}.{name} is filled by option {option.name!r}: the parser "
                    "must not give it too"
                )
            if option is None and name not in computed:
                raise TypeError(
                    f"{config.__name__}.{name}: no option fills it and the parser gives no value"
                )
            values[name] = self.get(option) if option is not None else computed[name]
        unknown = sorted(set(computed) - set(values))
        if unknown:
            raise TypeError(f"{config.__name__} has no field {', '.join(unknown)}")
        return config(**values)

    def family(self, family: OptionFamily) -> dict[str, str]:
        """The options of ``family``, its prefix removed (e.g. fsspec storage options)."""
        prefix = family.prefix.lower()
        return {k[len(prefix) :]: v for k, v in self._values.items() if k.startswith(prefix)}

    # -- errors ---------------------------------------------------------------------------
    def error(self, option: Option[Any], accepted: str) -> OptionError:
        """The error for ``option``'s value as given (shown unless it is secret)."""
        key = option.name.lower()
        shown_name = self._given_as.get(key, option.name)
        value = None if option.secret else self._values.get(key)
        return OptionError.invalid(self.source, shown_name, accepted, value)

    def required(self, option: Option[Any], what: str) -> OptionError:
        """The error for a missing ``option``: ``... is required: <what>``."""
        return OptionError.required(self.source, option.name, what)
