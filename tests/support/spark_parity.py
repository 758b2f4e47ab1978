"""Helpers for the tests that run Spark's own file source or sink beside pyfile's
(docs/spark-file-stream-tests.md): which session kinds compare, and Spark's archive-folder rule
as cases that both the in-process and the Spark-backed tests decide."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pysparksources._core.option_table import Use
from pysparksources.errors import OptionError
from pysparksources.files.options import parse_options


def compares_with_spark(session: Any) -> bool:
    """Spark's own source or sink runs beside pyfile's on the classic session, every scenario.
    Over Connect (same reader and writer code; what differs is how options, paths and queries
    travel) pyfile alone runs a few of them and must give the same explicit results: Spark's
    behaviour does not depend on the session kind, and this keeps the Connect half short."""
    return "connect" not in type(session).__module__


# (source path, archive folder, accepted by Spark's file source): relative to one root folder.
ARCHIVE_RULES = [
    ("a/b", "a", False),
    ("data/*/x", "data/arch/deep/er", True),
    ("in", "in/arch", False),
    ("in", "in2", True),
    ("hello*/spar?", "hello/spark/structured/streaming", False),
    ("in", "out/deep", True),
    ("in/*", "in", False),
    ("data/*/x", "data/arch", False),
]


def archive_accepted(root: Path, source: str, archive: str) -> bool:
    """Whether pyfile's option check accepts ``archive`` as sourceArchiveDir for ``source``."""
    options = {
        "path": f"{root}/{source}",
        "cleanSource": "archive",
        "sourceArchiveDir": f"{root}/{archive}",
        "sourceLogLocation": f"{root}/log",
    }
    try:
        parse_options(options, Use.STREAM_READ)
    except OptionError as error:
        assert "sourceArchiveDir" in str(error)
        return False
    return True
