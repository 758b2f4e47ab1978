"""No request outside the source's folder, whatever a notification names (issue 41, item 3).

pyfile reads ``abfs://<c>/landing/*/events`` from Azurite through a proxy that records every
request as adlfs sent it (support/recording_proxy.py), with discovery=notifications,
includeExistingFiles (a listing) and cleanSource=archive (a copy and a delete per file). The
queue also holds hostile Event Grid events: subjects that climb out with ``..`` (which the
glob's ``*`` matches), encoded and double-encoded dots, a backslash, and files in hidden
folders (``_temporary/``, ``.staging/``) that a listing skips. Only the legitimate files are
read and archived; no request names a blob outside ``landing/`` (or the archive), however a
server might decode or normalise it, and none touches a hidden folder.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import posixpath
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import pytest

from support.azurite import azurite_queue  # noqa: F401  (a fixture)
from support.notifications import AzureNotifications
from support.recording_proxy import RecordedRequest, RecordingProxy
from support.streams import to_parquet

pytestmark = [pytest.mark.spark, pytest.mark.azurite, pytest.mark.slow]
ACCOUNT = "devstoreaccount1"
HOSTILE = [
    "landing/../events/salaries.json",  # "*" matches "..": c/events/salaries.json
    "landing/x/events/../../../private/hr/salaries.json",
    "landing/%2e%2e/events/salaries.json",
    "landing/%252E%252E/events/salaries.json",  # decoded twice by some layer
    "landing/..\\private/events/salaries.json",  # Azure reads "\" as "/"
    "landing/_temporary/events/part-0.json",  # hidden folders: listing skips them
    "landing/.staging/events/part-0.json",
]
OUTSIDE = ["events/salaries.json", "private/hr/salaries.json", "private/events/salaries.json"]
HIDDEN = ["landing/_temporary/events/part-0.json", "landing/.staging/events/part-0.json"]


def _line(i: int) -> bytes:
    return json.dumps({"id": i, "name": f"n{i}"}).encode() + b"\n"


def _blob_names(request: RecordedRequest, container: str) -> list[str]:
    """Every blob a request may touch, as any layer could read its name: the path and a copy's
    source, decoded 1-3 times, backslashes as slashes, dot segments resolved."""
    names = []
    for url in (request.target, *request.named):
        path = urlsplit(url).path
        prefix = f"/{ACCOUNT}/{container}/"
        if not path.startswith(prefix):
            continue
        blob = path[len(prefix) :]
        for _ in range(3):
            blob = unquote(blob)
            names.append(posixpath.normpath("/" + blob.replace("\\", "/")).lstrip("/"))
    return names


def _allowed(name: str) -> bool:
    if name == "landing" or name.startswith("archive/"):
        return True
    parts = name.split("/")
    if parts[0] != "landing":
        return False
    return not any(p.startswith(("_", ".")) and "=" not in p for p in parts[1:])


def test_hostile_notifications_reach_nothing_outside_the_folder(
    spark: Any, azurite: Any, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    container = f"r{uuid.uuid4().hex[:10]}"
    n = AzureNotifications(azurite, request.getfixturevalue("azurite_queue"), container)
    with RecordingProxy(azurite.host, azurite.port) as proxy:
        try:
            _run(spark, n, dataclasses.replace(azurite, port=proxy.port), proxy, tmp_path)
        finally:
            n.close()


def _run(spark: Any, n: Any, through_proxy: Any, proxy: RecordingProxy, tmp_path: Path) -> None:
    c = n.container
    n.upload(f"{c}/landing/a/events/f1.json", _line(1), notify=False)  # found by listing
    n.upload(f"{c}/landing/b/events/f2.json", _line(2))
    n.upload(f"{c}/landing/b/events/f3.json", _line(3))
    for i, name in enumerate(OUTSIDE + HIDDEN):
        n.fs.pipe_file(f"{c}/{name}", _line(666 + i))
    n.publish(*(n.event(f"{c}/{subject}", size=20) for subject in HOSTILE))
    proxy.clear()

    stream = (
        spark.readStream.format("pyfile")
        .options(**n.options)
        .option("fs.connection_string", through_proxy.connection_string)
        .option("format", "json")
        .option("discovery", "notifications")
        .option("queueVisibilityTimeout", "2s")
        .option("maxFilesPerTrigger", "1")  # three batches: the first two are committed
        .option("ignoreMissingFiles", "true")  # a hostile name may name nothing at all
        .option("cleanSource", "archive")
        .option("sourceArchiveDir", f"abfs://{c}/archive")
        .option("sourceLogLocation", str(tmp_path / "log"))
        .schema("id BIGINT, name STRING")
        .load(f"abfs://{c}/landing/*/events")
    )
    out = tmp_path / "out"
    query = to_parquet(stream, out, tmp_path / "ck", availableNow=True)
    with contextlib.suppress(Exception):  # a failure is checked below, after the requests
        query.awaitTermination(300)

    # First what reached storage (a query that failed may have sent anything before).
    requests = proxy.recorded()
    touched = {name for r in requests for name in _blob_names(r, c)}
    assert not {name for name in touched if not _allowed(name)}, [
        (r.method, r.target, r.named) for r in requests if not all(map(_allowed, _blob_names(r, c)))
    ]
    assert query.exception() is None, query.exception()
    ids = sorted(r[0] for r in spark.read.parquet(str(out)).select("id").collect())
    assert ids == [1, 2, 3]
    # Not vacuous: files were read, and the committed batches' files archived (copy, delete).
    read = {_blob_names(r, c)[0] for r in requests if r.method == "GET" and "?" not in r.target}
    assert {f"landing/{f}" for f in ("a/events/f1.json", "b/events/f2.json")} <= read, read
    archived = [r for r in requests if r.named]
    deleted = [r for r in requests if r.method == "DELETE"]
    assert len(archived) >= 2 and len(deleted) >= 2, requests
    n.fs.invalidate_cache()
    assert len(n.fs.find(f"{c}/archive")) >= 2
    for name in OUTSIDE + HIDDEN:
        assert n.fs.exists(f"{c}/{name}"), name  # nothing outside was moved or deleted
    listings = [parse_qs(urlsplit(r.target).query).get("prefix", [""])[0] for r in requests]
    assert all(not p or _allowed(p.rstrip("/")) for p in listings), listings
