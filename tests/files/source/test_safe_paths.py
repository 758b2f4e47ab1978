"""Nothing outside the source's folder: the path rule shared by listing and notifications.

A path's part below the folder is refused when any layer that may read it (fsspec, an HTTP
client that normalises ``..``, a proxy or service that decodes ``%2e`` again, Azure reading
``\\`` as ``/``) could take it above the folder; a glob's matched folders obey the hidden-name
rule of listing. Pure functions, plus a listing of a real local folder; the request-level
proof against a storage server is test_no_request_outside_root_spark.py.
"""

from __future__ import annotations

import logging
import posixpath
import re
import unicodedata
from pathlib import Path
from urllib.parse import unquote, unquote_to_bytes

import fsspec
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pysparksources.files.storage.folder_listing import is_hidden, list_files, selects
from pysparksources.files.storage.safe_paths import DECODE_ROUNDS, below, path_problem

REFUSED = [
    "..",
    ".",
    "...",
    "a/../b",
    "a/./b",
    "a/..",
    "./a",
    "a//b",
    "/a",
    "a/",
    "",
    "a\\b",
    "..\\..\\private\\x",
    "%2e%2e/private/x",
    "%2E%2E/private/x",
    "%2e./x",
    "a/%2e/b",
    "%252e%252e/x",  # an HTTP layer that decodes twice
    "%25252E%25252E/x",
    "a%2f..%2fb",
    "a%2F%2E%2E%2Fb",
    "a%5c..%5cb",
    "a%5C%2e%2e%5Cb",
    "x/%c0%ae%c0%ae/y",  # overlong UTF-8 of "."
    "x/%e0%80%ae%e0%80%ae/y",
    "a%c0%af..%c0%afb",  # overlong UTF-8 of "/"
    "x/\uff0e\uff0e/y",  # fullwidth dots
    "x/\u2025/y",  # two-dot leader
    "x\uff0f..\uff0fy",  # fullwidth solidus
    "x/..;jsessionid=1/y",
    "x/%2e%2e;x/y",
    "x/.. /y",
    "x/ /y",
    "x/%00/y",
    "x/a\x00b",
    "x/%2525252525252e/y",  # encoded beyond any decoding we follow
]
ACCEPTED = [
    "a",
    "a/b.csv",
    "landing/x/events/f.json",
    ".hidden/f",  # hidden names are listing's rule, not this one
    "_temporary/f",
    "a..b/c.d",
    "...x/y",
    "x;y/z",
    ";v/z",
    "col=a%2Fb/part-0.parquet",  # Spark's partition folder for the value "a/b"
    "col=a%5Cb/part-0.parquet",  # ... and for "a\b"
    "col=a%2F%2Fb/part-0.parquet",
    "col=%2E%2E/part-0.parquet",  # "col=.." is a name, decoded or not
    "col=50%25/f",
    "100%41.csv",
    "caf\u00e9/\u00fc.csv",
    "a b/c d.csv",
]


@pytest.mark.parametrize("relative", REFUSED)
def test_paths_that_could_climb_out_are_refused(relative: str) -> None:
    reason = path_problem(relative)
    assert reason is not None
    assert relative.strip() not in reason or not relative.strip()  # the path is never quoted


@pytest.mark.parametrize("relative", ACCEPTED)
def test_ordinary_names_are_accepted(relative: str) -> None:
    assert path_problem(relative) is None


def test_below() -> None:
    assert below("c/in/a/f", "c/in") == "a/f"
    assert below("c/in/a/f", "c/in/") == "a/f"
    assert below("c/in", "c/in") == ""
    assert below("c/inbox/f", "c/in") is None
    assert below("c/other/f", "c/in") is None
    assert below("c/in/../private/f", "c/in") is None
    assert below("c/in//f", "c/in") is None
    assert below("/data/in/f", "/data/in") == "f"
    assert below("/data/in/f", "/") == "data/in/f"
    assert below("bucket/f", "/") == "bucket/f"  # a bucket path below a glob's root "/"


# -- the proof: what layers that read a path may make of it ------------------------------
def _decodings(text: str) -> list[str]:
    """``text`` decoded 0..N+1 times, by a strict and by a lenient (overlong) decoder."""
    views, strict, lenient = [text], text, text
    for _ in range(DECODE_ROUNDS + 1):
        strict = unquote(strict, errors="replace")
        raw = unquote_to_bytes(lenient)
        for overlong, plain in ((b"\xc0\xae", b"."), (b"\xc0\xaf", b"/"), (b"\xc1\x9c", b"\\")):
            raw = raw.replace(overlong, plain)
        for overlong, plain in ((b"\xe0\x80\xae", b"."), (b"\xe0\x80\xaf", b"/")):
            raw = raw.replace(overlong, plain)
        lenient = raw.decode("utf-8", "replace")
        views += [strict, lenient]
    return views


def _server_paths(relative: str) -> set[str]:
    """Where ``root/relative`` may land once a client, proxy or service has read it."""
    landed = set()
    for view in _decodings(relative):
        for folded in {view, unicodedata.normalize("NFKC", view)}:
            for cut in (False, True):
                text = folded.replace("\\", "/").split("\x00", 1)[0]
                segments = text.split("/")
                if cut:  # ";params" dropped, trailing dots and blanks trimmed (Windows, IIS)
                    segments = [s.split(";", 1)[0].rstrip(". ") or s for s in segments]
                    segments = [
                        ".." if re.fullmatch(r"[.\s]+", s.split(";", 1)[0]) else s for s in segments
                    ]
                landed.add(posixpath.normpath("/root/" + "/".join(segments)))
    return landed


def _inside(landed: str) -> bool:
    return landed == "/root" or landed.startswith("/root/")


TOKENS = [
    "a",
    "b",
    "_t",
    ".s",
    "..",
    ".",
    "",
    " ",
    "%2e",
    "%2E",
    "%252e",
    "%25",
    "%2f",
    "%2F",
    "%5c",
    "%5C",
    "\\",
    ";x",
    "\uff0e",
    "\uff0f",
    "%c0%ae",
    "%c0%af",
    "%00",
    "col=v",
]
paths = st.lists(st.sampled_from(TOKENS), min_size=1, max_size=8).map("".join) | st.lists(
    st.lists(st.sampled_from(TOKENS), min_size=1, max_size=3).map("".join),
    min_size=1,
    max_size=5,
).map("/".join)


@settings(max_examples=400, deadline=None)
@given(paths)
@example("..")
@example("a/%2e%2e/b")
@example("a%2F%2e%2e%2Fb")
@example("%252e%252e")
@example("\uff0e\uff0e")
@example("..;x")
@example("a/b")
def test_an_accepted_path_never_lands_outside_the_root(relative: str) -> None:
    if path_problem(relative) is not None:
        return
    for landed in _server_paths(relative):
        assert _inside(landed), (relative, landed)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=4).map("/".join), st.booleans())
@example("..", False)
@example("_t", False)
@example(".s", False)
def test_a_selected_event_path_stays_below_the_folder_and_out_of_hidden_folders(
    middle: str, recursive: bool
) -> None:
    """``landing/*/events``: whatever ``*`` matches, a selected file is below ``landing``, in
    no hidden folder, and no layer reading its path can take it above ``landing``."""
    path = f"c/landing/{middle}/events/f.json"
    if not selects(path, "c/landing", "c/landing/*/events", None, recursive):
        return
    relative = path.removeprefix("c/landing/")
    assert path_problem(relative) is None
    assert not any(is_hidden(part) for part in relative.split("/"))
    for landed in _server_paths(relative):
        assert _inside(landed), (path, landed)


# -- selection and listing agree --------------------------------------------------------
@pytest.mark.parametrize(
    ("path", "pattern", "selected"),
    [
        ("c/landing/x/events/f.json", "c/landing/*/events", True),
        ("c/landing/../events/f.json", "c/landing/*/events", False),  # "*" matched ".."
        ("c/landing/./events/f.json", "c/landing/*/events", False),
        ("c/landing/%2e%2e/events/f.json", "c/landing/*/events", False),
        ("c/landing/%252e%252e/events/f.json", "c/landing/*/events", False),
        ("c/landing/x/events/../../../private/f.json", "c/landing/*/events", False),
        ("c/landing/_temporary/events/f.json", "c/landing/*/events", False),  # hidden
        ("c/landing/.staging/events/f.json", "c/landing/*/events", False),
        ("c/landing/k=1/events/f.json", "c/landing/*/events", True),  # a partition name
        ("c/landing/x/_y/f.json", "c/landing/*/_y", False),  # hidden after the glob too
        ("c/landing/x\\..\\..\\private/events/f.json", "c/landing/*/events", False),
        ("c/landing//events/f.json", "c/landing/*/events", False),
        ("c/in/../private/f.json", None, False),
        ("c/in/%2e%2e/private/f.json", None, False),
        ("c/in/sub/..%2f..%2fprivate/f.json", None, False),
        ("c/in/col=a%2Fb/f.json", None, True),
    ],
)
def test_selection_refuses_climbing_and_hidden_glob_matches(
    path: str, pattern: str | None, selected: bool
) -> None:
    base = "c/landing" if pattern else "c/in"
    assert selects(path, base, pattern, None, False) is selected


def _write(fs: object, path: str) -> None:
    fs.pipe_file(path, b"x\n")  # type: ignore[attr-defined]


def test_listing_skips_paths_that_could_climb_out_and_hidden_glob_matches(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """On memory://, where object names are taken as written (as S3 keys are)."""
    fs = fsspec.filesystem("memory")
    root = f"/t{tmp_path.name}"
    for name in (
        "landing/a/events/ok.json",
        "landing/_temporary/events/hidden.json",
        "landing/.staging/events/hidden.json",
        "landing/a/events/sub%2f..%2f..%2fx.json",  # a name only a decoder turns into a climb
        "landing/a/events/%2e%2e",
        "landing/col=a%2Fb/events/fine.json",
    ):
        _write(fs, f"{root}/{name}")
    try:
        with caplog.at_level(logging.WARNING, "pysparksources"):
            listed = list_files(fs, f"{root}/landing", f"{root}/landing/*/events")
        found = sorted(f.path.removeprefix(f"{root}/landing/") for f in listed)
        assert found == ["a/events/ok.json", "col=a%2Fb/events/fine.json"]
        refused = [r.getMessage() for r in caplog.records if "not reading" in r.getMessage()]
        assert len(refused) == 2 and all("segment of dots" in m for m in refused), refused
        for entry in listed:  # and selection agrees with the listing on every file
            assert selects(entry.path, f"{root}/landing", f"{root}/landing/*/events")
    finally:
        fs.rm(root, recursive=True)
