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

from pysparksources._core.datasource import FailedStreamReader, SourceDataSource
from pysparksources._core.option_table import OptionTable, Use
from pysparksources.errors import PySparkSourcesError
from pysparksources.eventhubs.datasource import EventHubDataSource
from pysparksources.files.datasource import FileDataSource
from pysparksources.rate.datasource import RateDataSource
from support.option_tables import FORMATS

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
    except PySparkSourcesError as error:  # ours, whichever kind: none may show a secret
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


# What Spark calls for each entry point: (use, call on a data source with the options).
ENTRY_POINTS: dict[str, tuple[Use, Callable[[SourceDataSource], Any]]] = {
    "load()": (Use.READ, lambda ds: ds.schema()),
    "readStream": (Use.STREAM_READ, lambda ds: ds.streamReader(READ_SCHEMA)),
    "writeStream": (Use.STREAM_WRITE, lambda ds: ds.streamWriter(SINK_SCHEMA, False)),
    "save()": (Use.BATCH_WRITE, lambda ds: ds.writer(SINK_SCHEMA, False)),
}
DATA_SOURCES: dict[str, type[SourceDataSource]] = {
    "pyrate": RateDataSource,
    "pyfile": FileDataSource,
    "pyeventhub": EventHubDataSource,
}


def _names(table: OptionTable, use: Use) -> tuple[list[str], set[str]]:
    """The names an entry point takes (with aliases, refused Spark names and credential-like
    storage options of a family) and the secret ones among them."""
    names, secrets = [], set()
    for option in table.for_use(use):
        names += [option.name, *option.aliases]
        if option.secret:
            secrets |= {option.name, *option.aliases}
    names += list(table.unsupported)
    for family in table.families:
        if family.uses & use:
            storage = [family.prefix + name.split(".", 1)[1] for name in FS_SECRETS]
            names += storage
            secrets |= set(storage)
    return names, secrets


def _targets(tmp_path: Path) -> dict[str, tuple[list[str], set[str], Callable[[dict], Any]]]:
    """Per format and entry point: its option names, the secret ones, and what Spark calls."""
    folder = str(tmp_path)
    base = {
        "pyrate": {},
        "pyfile": {"path": folder, "sourceLogLocation": folder + "/log", "format": "text"},
        "pyeventhub": {"connectionString": EMULATOR + "k;EntityPath=h"},
    }
    sink_base = {"pyfile": {"path": folder + "/out"}}
    targets = {}
    for name, fmt in FORMATS.items():
        for entry, (use, call) in ENTRY_POINTS.items():
            if not fmt.table.for_use(use):
                continue
            names, secrets = _names(fmt.table, use)
            given = sink_base.get(name, base[name]) if use & Use.WRITE else base[name]
            source = DATA_SOURCES[name]

            def build(o: dict, source=source, given=given, call=call) -> Any:  # type: ignore[no-untyped-def]
                return call(source({**given, **o}))

            targets[f"{name} {entry}"] = (names, secrets, build)
    return targets


TARGETS = [
    f"{name} {entry}"
    for name, fmt in FORMATS.items()
    for entry, (use, _) in ENTRY_POINTS.items()
    if fmt.table.for_use(use)
]


def _all_names(target: str) -> set[str]:
    """Every name of the target's format, in any use: a misspelling that lands on one of them
    is another option, not an unknown one."""
    table = FORMATS[target.split(" ", 1)[0]].table
    return {n.lower() for o in table.options for n in (o.name, *o.aliases)} | {
        n.lower() for n in table.unsupported
    }


@pytest.mark.parametrize("target", TARGETS)
def test_a_misspelled_option_never_shows_its_value(tmp_path: Path, target: str) -> None:
    names, _, build = _targets(tmp_path)[target]
    known = _all_names(target) | {n.lower() for n in names}
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
    assert target.startswith("pyrate") or shown > 0 or "pyeventhub" in target


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
            config = FORMATS["pyeventhub"].parse(options, Use.STREAM_READ, None)
            connection = config.connection
            assert (connection.namespace, connection.event_hub) == (
                "myns.servicebus.windows.net",
                "hub",
            )
            for shown in (repr(config), str(config), config.describe(), connection.pool_key()):
                assert key not in shown
            mismatch = {**options, "eventHubName": "other"}
            message = _failures(FORMATS["pyeventhub"].parse, mismatch, Use.STREAM_READ, None)
            assert message is not None and "EntityPath" in message and key not in message
            for broken in _broken(text):
                message = _failures(
                    FORMATS["pyeventhub"].call, {"connectionString": broken}, Use.STREAM_WRITE
                )
                assert message is not None and key not in message, message
                seen += 1
    assert seen >= 4 * 29


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
        message = _failures(FORMATS["pyeventhub"].parse, options, Use.STREAM_READ, None)
        assert message is not None and key not in message, message


def test_storage_credentials_stay_out_of_configs_and_locations(tmp_path: Path) -> None:
    files = FORMATS["pyfile"]
    secret = "PLANTEDaccount" * 2
    storage = {name: secret for name in FS_SECRETS}
    sink = files.call({"path": str(tmp_path), **storage}, Use.STREAM_WRITE)
    source = files.call({"path": str(tmp_path), **storage}, Use.READ)
    for text in (repr(sink), repr(sink.location), repr(source), repr(source.location)):
        assert secret not in text
    # They do travel to executors, inside the pickled config (fsspec needs them there).
    assert secret.encode() in pickle.dumps(sink)
    # A URL carrying credentials is shown without them.
    message = _failures(files.call, {"path": f"nosuch://user:{secret}@host/out"}, Use.STREAM_WRITE)
    assert message is not None and secret not in message and "nosuch://user:***@host/out" in message


# -- credentials inside the path's URL ----------------------------------------------------
URL_SECRET = "zqPLANTEDurlValue9"


def _url_cases(port: int) -> dict[str, str]:
    """Paths that carry a credential: a password (ftp, sftp), a SAS query (https), a token
    as the whole userinfo (https). Nothing listens on ``port``."""
    return {
        "ftp": f"ftp://alice:{URL_SECRET}@127.0.0.1:{port}/data",
        "sftp": f"sftp://alice:{URL_SECRET}@127.0.0.1:{port}/data",
        "https-sas": f"https://127.0.0.1:{port}/c/data?sv=2024-05-04&sp=rl&sig={URL_SECRET}",
        "https-token": f"https://{URL_SECRET}@127.0.0.1:{port}/data",
    }


def _closed_port() -> int:
    from support.local_servers import free_port

    return free_port()


@pytest.mark.parametrize("case", ["ftp", "sftp", "https-sas", "https-token"])
def test_a_credential_in_the_path_url_is_never_shown(tmp_path: Path, case: str) -> None:
    url = _url_cases(_closed_port())[case]
    checked = 0
    for entry, (use, call) in ENTRY_POINTS.items():
        options = {"path": url}
        if not use & Use.WRITE:
            options |= {"format": "text", "sourceLogLocation": str(tmp_path / "log")}
        try:
            made = call(FileDataSource(options))
        except Exception as error:  # ours or the filesystem's: neither may quote it
            assert URL_SECRET not in f"{type(error).__name__}: {error}", (entry, error)
            checked += 1
            continue
        failed = made.error if isinstance(made, FailedStreamReader) else None
        assert URL_SECRET not in str(failed), (entry, failed)
        config = getattr(made, "config", None) or getattr(made, "_config", None)
        if config is not None:
            for shown in (repr(config), str(config), config.location.url(), repr(made)):
                assert URL_SECRET not in shown, (entry, shown)
        checked += 1
    assert checked == len(ENTRY_POINTS)


@pytest.mark.parametrize("case", ["ftp", "https-sas", "https-token"])
def test_sink_urls_and_manifest_entries_carry_no_credential(tmp_path: Path, case: str) -> None:
    """The sink's base_url (manifest entries, repr, errors) keeps the scheme, host and path a
    reader needs, and nothing of the credential. ftp against a real server (the filesystem
    connects when it is made); nothing listens for https, which fsspec does not mind yet."""
    from pysparksources.files.options import _location  # the one place base_url is made
    from pysparksources.files.sink.manifest import file_uri
    from support.ftp_server import serving_ftp

    with serving_ftp(tmp_path, "alice", URL_SECRET) as ftp:
        port = ftp.port if case == "ftp" else _closed_port()
        location, base_url = _location(_sink_options(_url_cases(port)[case]))
    assert URL_SECRET not in repr(location) and URL_SECRET not in location.url()
    expected = {
        "ftp": f"ftp://127.0.0.1:{port}/data",
        "https-sas": f"https://127.0.0.1:{port}/c/data",
        "https-token": f"https://127.0.0.1:{port}/data",
    }[case]
    assert base_url == expected
    assert file_uri(base_url, "a b/part-0.json") == f"{expected}/a%20b/part-0.json"


def _sink_options(url: str) -> Any:
    from pysparksources._core.options import Options
    from pysparksources.files._option_table import TABLE

    return Options(TABLE, {"path": url}, Use.STREAM_WRITE)


def test_local_abfs_and_s3_manifest_entries_are_unchanged(tmp_path: Path) -> None:
    """What Spark's readers find stays byte-identical where no credential was ever there."""
    from pysparksources._redact import public_url
    from pysparksources.files.sink.manifest import file_uri

    for base_url, expected in (
        (f"file://{tmp_path}/out", f"file://{tmp_path}/out/a%20b/part-0.json"),
        (
            "abfs://container@account.dfs.core.windows.net/out",
            "abfs://container@account.dfs.core.windows.net/out/a%20b/part-0.json",
        ),
        ("s3://bucket/out", "s3://bucket/out/a%20b/part-0.json"),
    ):
        assert public_url(base_url) == base_url
        assert file_uri(public_url(base_url), "a b/part-0.json") == expected
