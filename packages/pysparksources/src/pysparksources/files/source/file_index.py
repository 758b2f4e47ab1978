"""The files a pyfile source reads now: a folder's listing, or a file sink's manifest.

A plain folder (or glob) is listed by Spark's rules (``storage.folder_listing``); a folder
holding a file sink's ``_spark_metadata`` is read through its manifest, as Spark's
MetadataLogFileIndex does. Shared by the readers and by schema inference, with the check that
the folder exists at query start. (New files named by storage events instead of a listing:
``notifications.discovery``.)
"""

from __future__ import annotations

import logging
from typing import Any

from pysparksources.errors import CheckpointError, OptionError
from pysparksources.files import NAME
from pysparksources.files.config import SourceConfig
from pysparksources.files.sink.manifest import CommittedFiles, ManifestLog, uri_to_url
from pysparksources.files.storage.filesystem import FileLocation, credentials_kept_out
from pysparksources.files.storage.folder_listing import FileEntry, list_files
from pysparksources.files.storage.safe_paths import below

__all__ = ["METADATA_DIR", "SourceLister", "describe", "reads_partition_values", "require_folder"]

log = logging.getLogger(__name__)
METADATA_DIR = "_spark_metadata"


@credentials_kept_out("could not look at the source path")
def require_folder(config: SourceConfig) -> None:
    """Refuse a missing folder at query start, as Spark's file source does (a file is read alone).

    Reading a typo'd path as an empty stream would wait forever without a word. A glob may
    match nothing yet: that stays allowed, as in Spark.
    """
    fs = config.location.filesystem()
    if config.pattern is not None or fs.isdir(config.base) or fs.isfile(config.base):
        return
    raise OptionError.invalid(
        NAME,
        "path",
        "the folder (or file) does not exist: create it before the query starts, "
        "or give a glob pattern, which may match nothing yet",
        config.location.url(config.base),
    )


# -- listing: plain folders or a sink's _spark_metadata log ----------------------------
class SourceLister:
    """Lists the source's files; a file sink's output is read through its manifest.

    When the folder holds ``_spark_metadata`` only committed files count, with the sizes and
    modification times the manifest records (as Spark's MetadataLogFileIndex does): no request
    per file. Manifest files never change, so each is parsed once per query run.
    """

    def __init__(self, config: SourceConfig) -> None:
        self._config = config
        self._manifest: CommittedFiles | None = None
        self._generation = -1
        self._entries: list[FileEntry] = []

    @credentials_kept_out("could not list the source path")
    def files(self) -> list[FileEntry]:
        config = self._config
        fs: Any = config.location.filesystem()
        if config.pattern is None:
            if self._manifest is None and self._has_manifest():
                # The location carries the fs.* storage options, which the manifest needs too.
                self._manifest = CommittedFiles(ManifestLog(config.location.child(METADATA_DIR)))
            if self._manifest is not None:
                if config.clean_source != "off":
                    # Spark refuses this too: cleaning would remove files the manifest still
                    # lists, breaking every reader of the sink's output.
                    raise OptionError.invalid(
                        NAME,
                        "cleanSource",
                        f"not supported when the path is a file sink's output folder (it holds "
                        f"{METADATA_DIR}): its manifest still lists the files; use "
                        "cleanSource=off",
                        config.clean_source,
                    ).bare()
                return self._committed(self._manifest)
        return list_files(
            fs, config.base, config.pattern, config.path_glob_filter, config.recursive_file_lookup
        )

    def _has_manifest(self) -> bool:
        location = self._config.location.child(METADATA_DIR)
        try:
            return ManifestLog(location).exists()
        except OSError as error:
            # Spark assumes no manifest when looking for it fails, and reads the folder as is.
            log.warning(
                "%s: assuming no %s in %s: %s", NAME, METADATA_DIR, describe(location), error
            )
            return False

    def _committed(self, manifest: CommittedFiles) -> list[FileEntry]:
        current = manifest.refresh()
        if manifest.generation != self._generation:
            entries = []
            for f in current.values():
                if f.is_dir:
                    continue
                path = _manifest_path(uri_to_url(f.path))
                if below(path, self._config.base) is None:
                    raise _outside(self._config, manifest, path)
                entries.append(FileEntry(path, f.modification_time, f.size))
            self._entries = entries
            self._generation = manifest.generation
        return self._entries


def _outside(config: SourceConfig, manifest: CommittedFiles, path: str) -> CheckpointError:
    """A manifest entry that names a file outside the folder: never read (docs/pyfile-source.md,
    'What a manifest entry and a listed path are trusted with')."""
    return CheckpointError(
        NAME,
        f"the file sink manifest {describe(manifest.manifest.metadata)} lists "
        f"{config.location.url(path)!r}, which is not a file below "
        f"{config.location.url(config.base)}; {NAME} reads only files below the path it is "
        "given (Spark's reader would follow the entry). Was the output folder moved, or the "
        "manifest edited?",
    )


def reads_partition_values(config: SourceConfig) -> bool:
    """Spark reads ``col=value`` folder names only below a plain path (through a glob it
    passes no basePath, so nothing is discovered) and never with recursiveFileLookup."""
    return config.pattern is None and not config.recursive_file_lookup


def _manifest_path(url: str) -> str:
    """A manifest's full URI (``file:/x``, ``file:///x``, ``abfs://c@a/x``) as an fsspec path."""
    from fsspec.core import split_protocol, strip_protocol

    if url.startswith("file:"):
        return "/" + url[len("file:") :].lstrip("/")
    return str(strip_protocol(url)) if split_protocol(url)[0] else url


def describe(location: FileLocation) -> str:
    """A location for messages: the URL, never its storage options."""
    return location.url()
