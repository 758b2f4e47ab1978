"""Every error pysparksources raises to its users, under one base class.

Catch :class:`PySparkSourcesError` for all of them, or one of its subclasses for one kind of
problem. Each message starts with the short name of the source that raised it (``pyfile: ...``)
and never quotes a secret (a connection string, a key, a token, a SAS URL).

Where an error used to derive from a built-in exception (``OptionError`` from ``ValueError``,
``DataLossError`` from ``RuntimeError``, ...), it still does, so existing ``except`` clauses keep
working.

Spark wraps an error raised in its Python workers in its own exception (``PythonException``,
``StreamingQueryException``, ``AnalysisException``); the last line of its message is ours, with
the class's full name: ``pysparksources.errors.OptionError: pyrate: unknown option ...``.
:func:`cause` gives a job our error back, as its class, from Spark's exception.
"""

from __future__ import annotations

import re
from typing import TypeVar

from pysparksources._redact import NOT_SHOWN, showable

__all__ = [
    "ArgumentError",
    "CheckpointError",
    "CorruptFileError",
    "DataLossError",
    "LimitExceededError",
    "MalformedRecordError",
    "MigrationError",
    "OffsetError",
    "OperationTimeoutError",
    "OptionError",
    "PartitionLayoutError",
    "PySparkSourcesError",
    "SchemaChangedError",
    "SchemaError",
    "SchemaRegistryError",
    "ServiceError",
    "ServiceTimeoutError",
    "SourceLogInUseError",
    "UnsupportedError",
    "UnsupportedSparkError",
    "WorkerPythonError",
    "cause",
]

E = TypeVar("E", bound="PySparkSourcesError")


class PySparkSourcesError(Exception):
    """The base of every error this package raises to users.

    Parameters
    ----------
    source:
        The short name of the source or tool that raised it (``"pyfile"``), which starts the
        message.
    message:
        One sentence saying what is wrong and what is accepted or what to do.
    """

    def __init__(self, source: str, message: str) -> None:
        self.source = source
        self.detail = message
        super().__init__(f"{source}: {message}")

    def __reduce__(self) -> tuple[object, ...]:
        # Errors cross process boundaries (Spark's workers, Connect); rebuild from the parts.
        return (_rebuild, (type(self), self.__dict__.copy(), self.args))

    def bare(self: E) -> E:
        """This error without its traceback, for raising out of a method Spark calls.

        Spark's worker prints the Python traceback above our sentence; without frames (and
        raised ``from None``) the user sees a few lines that end with the sentence.
        """
        return self.with_traceback(None)


def _rebuild(
    cls: type[PySparkSourcesError], state: dict[str, object], args: tuple[object, ...]
) -> PySparkSourcesError:
    error = cls.__new__(cls)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


class OptionError(PySparkSourcesError, ValueError):
    """An option is missing, unknown, given twice or has a value its source cannot accept.

    Raised when the query is defined or starts (see the error reference for when Spark lets a
    Python source see its options). The message names the option; its value is quoted only when
    the option is known and not secret.
    """

    def __init__(self, source: str, option: str, message: str) -> None:
        self.option = option
        super().__init__(source, message)

    @classmethod
    def invalid(
        cls, source: str, option: str, accepted: str, value: str | None = None
    ) -> OptionError:
        """``<source>: invalid value <value> for option '<option>': <accepted>``.

        ``value=None`` (the default) keeps the value out of the message: pass it only for an
        option that is known and not secret. Even then a value that looks like a credential is
        not shown, and a URL loses its password and query string.
        """
        shown = showable(value)
        quoted = NOT_SHOWN if shown is None else repr(shown)
        return cls(source, option, f"invalid value {quoted} for option '{option}': {accepted}")

    @classmethod
    def required(cls, source: str, option: str, what: str) -> OptionError:
        """``<source>: option '<option>' is required: <what to give>``."""
        return cls(source, option, f"option '{option}' is required: {what}")

    @classmethod
    def unsupported(cls, source: str, option: str, reason: str) -> OptionError:
        """``<source>: option '<option>' is not supported: <reason>``."""
        return cls(source, option, f"option '{option}' is not supported: {reason}")

    @classmethod
    def unknown(cls, source: str, option: str, hint: str) -> OptionError:
        """``<source>: unknown option '<option>': <hint>`` (its value may be a secret)."""
        return cls(source, option, f"unknown option '{option}': {hint}")

    @classmethod
    def twice(cls, source: str, option: str, first: str, second: str) -> OptionError:
        """``<source>: option '<option>' is given twice, as '<first>' and '<second>'``."""
        return cls(
            source,
            option,
            f"option '{option}' is given twice, as '{first}' and '{second}': give it once",
        )

    @classmethod
    def wrong_use(cls, source: str, option: str, where: str) -> OptionError:
        """``<source>: option '<option>' applies only to <where>``."""
        return cls(source, option, f"option '{option}' applies only to {where}")


class ArgumentError(PySparkSourcesError, ValueError):
    """An argument of one of this package's functions or commands is not one it accepts."""


class UnsupportedError(PySparkSourcesError, NotImplementedError):
    """The source cannot do what was asked (writing to ``pyrate``, say): a use, not an option."""


class UnsupportedSparkError(PySparkSourcesError, ImportError):
    """The installed PySpark is older than 4.0 or lacks the Python data source API.

    An ``ImportError``, because that is what it stops: the registration shims, ``register()``
    and every source module raise it on import, with one sentence naming both versions.
    """


class SchemaError(PySparkSourcesError, ValueError):
    """A schema does not fit: the query's columns for a sink, or an Avro schema given or found."""


class SchemaChangedError(SchemaError):
    """A file holds columns the schema lacks (schemaLocation, schemaEvolutionMode).

    With addNewColumns the new schema version is recorded before this is raised: restarting
    the query reads it. A job finds it in Spark's exception with :func:`cause` and restarts
    the query.
    """


class CorruptFileError(PySparkSourcesError, RuntimeError):
    """A file cannot be parsed; the message names the file and the problem.

    ``ignoreCorruptFiles=true`` skips such files instead (and logs each one).
    """


class MalformedRecordError(PySparkSourcesError, ValueError):
    """A record cannot be decoded (an event's Avro body, with ``mode=FAILFAST``)."""


class DataLossError(PySparkSourcesError, RuntimeError):
    """Data a batch planned to read is gone (events expired by the hub's retention).

    With ``failOnDataLoss=false`` the source skips to the first data still there instead.
    """


class LimitExceededError(PySparkSourcesError, ArithmeticError):
    """A stream went past what its offsets can count (pyrate's 64-bit row count, as Spark's)."""


class PartitionLayoutError(PySparkSourcesError, ValueError):
    """Folders holding files disagree about the partition layout (Spark refuses them too)."""


class CheckpointError(PySparkSourcesError, ValueError):
    """A checkpoint, a source log or a manifest does not hold what this query expects.

    The message names the file and what was found in it: a damaged line, another query's log,
    an offset this source did not write.
    """


class OffsetError(CheckpointError):
    """An offset Spark read back from the query's checkpoint is not one this source wrote."""


class SourceLogInUseError(CheckpointError, RuntimeError):
    """Another running query holds the lease of pyfile's source log (one log per query)."""


class MigrationError(CheckpointError):
    """A Scala-connector checkpoint cannot be migrated as asked; the message says what to do."""


class OperationTimeoutError(PySparkSourcesError, TimeoutError):
    """Something waited for did not happen in time; the message names the limit that applied."""


class ServiceError(PySparkSourcesError):
    """A remote service (Event Hubs, Schema Registry) refused a request or did not answer."""


class ServiceTimeoutError(ServiceError, OperationTimeoutError):
    """A remote call did not answer within its timeout option (named in the message)."""


class SchemaRegistryError(ServiceError):
    """Azure Schema Registry refused a request or does not hold the schema."""


class WorkerPythonError(PySparkSourcesError, RuntimeError):
    """The Python that Spark starts for this session's workers cannot import pysparksources."""


# Where Spark quotes our error: a line of its message starting with the class's full name.
_QUOTED = re.compile(r"^pysparksources\.errors\.([A-Za-z]+): ([A-Za-z][\w-]*): (.*?)\r?$", re.M)
_QUOTED_OPTION = re.compile(r"option '([^']*)'")
# Spark's messages hold stack traces; what is read of one is bounded.
_MAX_TEXT = 1 << 20
_MAX_CHAIN = 16


def cause(error: BaseException) -> PySparkSourcesError | None:
    """Our error inside ``error`` (one of Spark's exceptions), or None when none is there.

    An error raised in a Spark task or in the Python process Spark starts for ``load()``
    reaches the job as Spark's own exception (``StreamingQueryException``,
    ``AnalysisException``, ``PythonException``), whose text quotes ours. This gives it back as
    its class, so a job tells a schema change from other failures with ``isinstance``::

        except StreamingQueryException as error:
            if not isinstance(errors.cause(error), errors.SchemaChangedError):
                raise

    An error of ours met in the exception's chain (``__cause__``, ``__context__``) is returned
    as it is. One rebuilt from Spark's text carries its class, its message and ``source``
    (and ``option`` for an :class:`OptionError`, when the message names one); where Spark
    quotes several, the last is the one that stopped the work.
    """
    seen: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and len(seen) < _MAX_CHAIN and current not in seen:
        if isinstance(current, PySparkSourcesError):
            return current
        seen.append(current)
        current = current.__cause__ or current.__context__
    for each in seen:
        found = _from_text(str(each)[:_MAX_TEXT])
        if found is not None:
            return found
    return None


def _from_text(text: str) -> PySparkSourcesError | None:
    for match in reversed(list(_QUOTED.finditer(text))):
        kind = globals().get(match.group(1))
        if match.group(1) not in __all__ or not (
            isinstance(kind, type) and issubclass(kind, PySparkSourcesError)
        ):
            continue
        source, detail = match.group(2), match.group(3)
        rebuilt = kind.__new__(kind)
        Exception.__init__(rebuilt, f"{source}: {detail}")
        rebuilt.source, rebuilt.detail = source, detail
        if isinstance(rebuilt, OptionError):
            named = _QUOTED_OPTION.search(detail)
            rebuilt.option = named.group(1) if named else ""
        return rebuilt
    return None
