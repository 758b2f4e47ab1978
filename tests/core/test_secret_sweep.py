"""No option value is ever echoed for an unknown option or an option marked secret.

The option lists come from the tables in code (every option of every source and sink, their
aliases, and the fs.* storage options people put credentials in). Each name is misspelled
(a letter dropped, two letters swapped) and given a planted value, then handed to exactly what
Spark calls when the query is defined: the data source's constructor or ``schema()``, and the
reader and writer constructors. The planted value must never appear in the error. Known,
non-secret options must still show their value, so the errors stay useful.
"""

from __future__ import annotations

import itertools
import pickle
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

from pysparksources._core.datasource import FailedStreamReader
from pysparksources.errors import OptionError
from pysparksources.eventhubs import options as eh_options
from pysparksources.eventhubs._connection import SECRET_OPTIONS
from pysparksources.eventhubs.datasource import EventHubDataSource
from pysparksources.files import _option_tables as file_tables
from pysparksources.files.datasource import FileDataSource
from pysparksources.rate import options as rate_options
from pysparksources.rate.datasource import RateDataSource

READ_SCHEMA = StructType([StructField("value", StringType())])
SINK_SCHEMA = StructType([StructField("body", StringType()), StructField("n", LongType())])
FS_SECRETS = (
    "fs.account_key",
    "fs.sas_token",
    "fs.connection_string",
    "fs.client_secret",
    "fs.credential",
    "fs.password",
    "fs.secret",
    "fs.token",
    "fs.key",
)
EMULATOR = "Endpoint=sb://127.0.0.1:1/;SharedAccessKeyName=n;SharedAccessKey="


_COUNTER = itertools.count()


@pytest.fixture(autouse=True, scope="module")
def _in_a_scratch_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A planted value given as ``path`` is a valid relative folder, which the sink creates
    relative to ``PWD`` (the JVM's working directory, as Spark resolves it): keep it out of the
    checkout."""
    scratch = tmp_path_factory.mktemp("cwd")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(scratch)
        patch.setenv("PWD", str(scratch))
        yield


def _planted() -> str:
    # No credential-like word in it: the tests must see the rule, not the safety net.
    return f"zq{next(_COUNTER):05d}PLANTEDvalue"


def _failures(build: Callable[..., Any], *args: Any) -> str | None:
    """The message of what Spark would show, or None if the options were accepted."""
    try:
        made = build(*args)
    except OptionError as error:
        return str(error)
    if isinstance(made, FailedStreamReader):
        return str(made.error)
    return None


def _misspellings(name: str) -> set[str]:
    core = name.split(".", 1)[1] if name.startswith("fs.") else name
    prefix = name[: len(name) - len(core)]
    spelled = set()
    for i in {0, len(core) // 2, len(core) - 1}:
        spelled.add(prefix + core[:i] + core[i + 1 :])
    for i in {0, len(core) // 2 - 1}:
        if 0 <= i < len(core) - 1 and core[i] != core[i + 1]:
            spelled.add(prefix + core[:i] + core[i + 1] + core[i] + core[i + 2 :])
    return {s for s in spelled if s and s.strip(".")}


def _targets(tmp_path: Path) -> dict[str, tuple[list[str], set[str], Callable[[dict], Any]]]:
    """Per entry point: its option names, the secret ones, and what Spark calls with them."""
    folder = str(tmp_path)
    pyfile_source = [
        *file_tables.SOURCE_OPTIONS,
        *file_tables.CSV_OPTIONS,
        *file_tables.TEXT_OPTIONS,
        *file_tables.UNSUPPORTED,
    ]
    pyfile_sink = [n for n in file_tables.SINK_OPTIONS if not n.startswith("fs.")]
    eh_source = [*eh_options.SOURCE_OPTIONS, *eh_options.SOURCE_ALIASES]
    eh_sink = [*eh_options.SINK_OPTIONS, *eh_options.SINK_ALIASES]
    eh_secrets = {*SECRET_OPTIONS, "eventhubs.connectionString"}
    base_file = {"path": folder, "sourceLogLocation": folder + "/log", "format": "text"}
    base_eh = {"connectionString": EMULATOR + "k;EntityPath=h"}
    return {
        "pyrate": (list(rate_options.OPTIONS), set(), lambda o: RateDataSource(o)),
        "pyfile load()": (
            [*pyfile_source, *FS_SECRETS],
            set(FS_SECRETS),
            lambda o: FileDataSource({**base_file, **o}).schema(),
        ),
        "pyfile readStream": (
            [*pyfile_source, *FS_SECRETS],
            set(FS_SECRETS),
            lambda o: FileDataSource({**base_file, **o}).streamReader(READ_SCHEMA),
        ),
        "pyfile writeStream": (
            [*pyfile_sink, *FS_SECRETS],
            set(FS_SECRETS),
            lambda o: FileDataSource({"path": folder + "/out", **o}).streamWriter(
                SINK_SCHEMA, False
            ),
        ),
        "pyfile save()": (
            [*pyfile_sink, *FS_SECRETS],
            set(FS_SECRETS),
            lambda o: FileDataSource({"path": folder + "/out2", **o}).writer(SINK_SCHEMA, False),
        ),
        "pyeventhub load()": (
            eh_source,
            eh_secrets,
            lambda o: EventHubDataSource({**base_eh, **o}).schema(),
        ),
        "pyeventhub readStream": (
            eh_source,
            eh_secrets,
            lambda o: EventHubDataSource({**base_eh, **o}).streamReader(READ_SCHEMA),
        ),
        "pyeventhub writeStream": (
            eh_sink,
            eh_secrets,
            lambda o: EventHubDataSource({**base_eh, **o}).streamWriter(SINK_SCHEMA, False),
        ),
        "pyeventhub save()": (
            eh_sink,
            eh_secrets,
            lambda o: EventHubDataSource({**base_eh, **o}).writer(SINK_SCHEMA, False),
        ),
    }


TARGETS = [
    "pyrate",
    "pyfile load()",
    "pyfile readStream",
    "pyfile writeStream",
    "pyfile save()",
    "pyeventhub load()",
    "pyeventhub readStream",
    "pyeventhub writeStream",
    "pyeventhub save()",
]


@pytest.mark.parametrize("target", TARGETS)
def test_a_misspelled_option_never_shows_its_value(tmp_path: Path, target: str) -> None:
    names, _, build = _targets(tmp_path)[target]
    known = {n.lower() for n in names}
    checked = 0
    for name in names:
        for wrong in _misspellings(name):
            if wrong.lower() in known:
                continue
            value = _planted()
            message = _failures(build, {wrong: value})
            if wrong.lower().startswith("fs."):
                # Free-form storage options are passed to fsspec; an error must not show them.
                assert message is None or value not in message, (wrong, message)
                continue
            assert message is not None, f"{target}: {wrong!r} was accepted"
            assert f"unknown option '{wrong.lower()}'" in message, message
            assert value not in message, (wrong, message)
            checked += 1
    assert checked >= len(names)  # every name had at least one misspelling refused


@pytest.mark.parametrize("target", TARGETS)
def test_secret_values_never_appear_and_other_values_do(tmp_path: Path, target: str) -> None:
    names, secrets, build = _targets(tmp_path)[target]
    shown = 0
    for name in names:
        value = _planted()
        # Together with a bad known option, so that even an accepted secret meets an error.
        message = _failures(build, {name: value, "zzUnknownOption": "x"})
        assert message is not None
        assert value not in message, (name, message)
        message = _failures(build, {name: value})
        if message is None:
            continue
        if name in secrets or name.lower().startswith("fs."):
            assert value not in message, (name, message)
        elif f"for option '{name}'" in message:
            assert value in message, message  # known and not secret: shown
            shown += 1
    assert target == "pyrate" or shown > 0 or "pyeventhub" in target


def _connection_strings(key: str) -> Iterator[str]:
    """The same credentials with the key in every position, spacing, separators and case."""
    parts = [
        "Endpoint=sb://myns.servicebus.windows.net/",
        "SharedAccessKeyName=RootManageSharedAccessKey",
        f"SharedAccessKey={key}",
        "EntityPath=hub",
    ]
    for order in itertools.permutations(parts):
        yield ";".join(order)
    yield ";".join(parts) + ";"
    yield " ; ".join(parts)
    yield ";".join(p.upper().split("=", 1)[0] + "=" + p.split("=", 1)[1] for p in parts)
    yield ";".join(p.lower().split("=", 1)[0] + "=" + p.split("=", 1)[1] for p in parts)
    yield "  " + ";\t".join(parts) + " ;; "


def _broken(text: str) -> Iterator[str]:
    for pattern, replacement in (
        ("endpoint=sb://", "Endpoint="),  # no host
        ("endpoint", "Endpont"),  # no endpoint
        ("sharedaccesskeyname", "SharedAccessKeyNam"),  # a key without its name
        ("entitypath=hub", "garbage-without-equals"),
    ):
        broken = re.sub(pattern, replacement, text, flags=re.IGNORECASE)
        assert broken != text
        yield broken


def test_connection_strings_with_the_key_anywhere(tmp_path: Path) -> None:
    key = "kEy+" + "PLANTED" * 3 + "=="
    seen = 0
    for text in _connection_strings(key):
        for options in ({"connectionString": text}, {"eventhubs.connectionString": text}):
            config = eh_options.parse_source_options(options, streaming=True)
            connection = config.connection
            assert (connection.namespace, connection.event_hub) == (
                "myns.servicebus.windows.net",
                "hub",
            )
            for shown in (repr(config), str(config), config.describe(), connection.pool_key()):
                assert key not in shown
            mismatch = {**options, "eventHubName": "other"}
            message = _failures(eh_options.parse_source_options, mismatch, True)
            assert message is not None and "EntityPath" in message and key not in message
            for broken in _broken(text):
                message = _failures(
                    eh_options.parse_sink_options, {"connectionString": broken}, _arrow()
                )
                assert message is not None and key not in message, message
                seen += 1
    assert seen >= 4 * 29


def _arrow() -> Any:
    import pyarrow as pa

    return pa.schema([pa.field("body", pa.string())])


def test_credential_options_are_never_shown(tmp_path: Path) -> None:
    key = "PLANTEDsas" * 3
    for options in (
        {
            "fullyQualifiedNamespace": "ns.servicebus.windows.net",
            "eventHubName": "h",
            "sharedAccessKey": key,
        },  # key without its name
        {
            "fullyQualifiedNamespace": "ns.servicebus.windows.net",
            "eventHubName": "h",
            "auth": "servicePrincipal",
            "clientSecret": key,
        },  # no tenant
        {"fullyQualifiedNamespace": "ns/x", "eventHubName": "h", "sharedAccessSignature": key},
        {"connectionString": key},
        {"connectionString": EMULATOR + key, "fullyQualifiedNamespace": "x"},
        # A connection string pasted into an option that is not secret is not shown either.
        {"fullyQualifiedNamespace": EMULATOR + key + ";x=/", "eventHubName": "h"},
    ):
        message = _failures(eh_options.parse_source_options, options, True)
        assert message is not None and key not in message, message


def test_storage_credentials_stay_out_of_configs_and_locations(tmp_path: Path) -> None:
    from pysparksources.files.options import parse_sink_options, parse_source_options

    secret = "PLANTEDaccount" * 2
    storage = {name: secret for name in FS_SECRETS}
    sink = parse_sink_options({"path": str(tmp_path), **storage}, ["a"], False)
    source = parse_source_options({"path": str(tmp_path), **storage}, None)
    for text in (repr(sink), repr(sink.location), repr(source), repr(source.location)):
        assert secret not in text
    # They do travel to executors, inside the pickled config (fsspec needs them there).
    assert secret.encode() in pickle.dumps(sink)
    # A URL carrying credentials is shown without them.
    message = _failures(
        parse_sink_options, {"path": f"nosuch://user:{secret}@host/out"}, ["a"], False
    )
    assert message is not None and secret not in message and "nosuch://user:***@host/out" in message
