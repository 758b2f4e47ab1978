"""Fuzzing what pyeventhub reads back from an Event Hubs checkpoint store (``_store_entries``).

The store's blobs are written by other programs too: a blob of a partition the query reads
gives a checkpoint whose values are -1 or a decimal 64-bit number, or a CheckpointError that
names the blob and the store. Never KeyError, ValueError, TypeError or AttributeError (the
official ``list_checkpoints`` raises those, naming nothing).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from pysparksources.errors import CheckpointError
from pysparksources.eventhubs._positions import START, Position
from pysparksources.eventhubs._store_entries import (
    StoredCheckpoint,
    blob_prefix,
    parse_checkpoint,
    parse_claim,
    partition_of,
)

WHERE = "checkpoint store container 'ckpt' of storage account devstoreaccount1"
PREFIX = blob_prefix("NS.servicebus.windows.net", "Hub", "$Default", "checkpoint")
SCALARS = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text()
NUMBERISH = st.one_of(
    st.integers(-5, 2**64).map(str),
    st.sampled_from(["-1", "", " 5", "+5", "5_0", "05", "\u0665", "1e3", "-0", "@latest"]),
    st.text(alphabet="-0123456789 \n", max_size=22),
    SCALARS,
)
METADATA = st.one_of(
    st.fixed_dictionaries({"offset": NUMBERISH, "sequencenumber": NUMBERISH}),
    st.dictionaries(st.sampled_from(["offset", "sequencenumber", "Offset", "x"]), NUMBERISH),
    st.lists(SCALARS, max_size=2),
    SCALARS,
)
CLAIM_METADATA = st.one_of(
    st.dictionaries(st.sampled_from(["ownerid", "Ownerid", "x"]), SCALARS | st.uuids().map(str)),
    SCALARS,
)
NAMES = st.one_of(
    st.builds(lambda rest: PREFIX + rest, st.text(max_size=12)),
    st.builds(lambda n: PREFIX + str(n), st.integers(-3, 2**40)),
    st.text(max_size=30),
    SCALARS,
)


def _checked(name: Any, metadata: Any) -> StoredCheckpoint | None:
    pid = partition_of(name, PREFIX)
    if pid is None:
        return None
    assert pid == str(int(pid)) and len(pid) <= 9  # a canonical partition id, nothing else
    try:
        found = parse_checkpoint(WHERE, name, pid, metadata)
    except CheckpointError as error:
        message = str(error)
        assert message.startswith("pyeventhub: blob ") and WHERE in message
        assert repr(name) in message and "\n" not in message
        return None
    assert -1 <= found.sequence_number < 2**63
    assert found.offset == "-1" or (found.offset.isdigit() and int(found.offset) < 2**63)
    return found


@given(NAMES, METADATA)
@example(PREFIX + "0", {"offset": "8", "sequencenumber": "2"})
@example(PREFIX + "0", {"offset": None, "sequencenumber": "2"})
@example(PREFIX + "0", {"sequencenumber": "2"})  # KeyError in the official listing
@example(PREFIX + "1", {"offset": "8", "sequencenumber": "two"})  # ValueError there
@example(PREFIX + "1", {"offset": 8, "sequencenumber": 2})
@example(PREFIX + "1", None)
def test_checkpoint_blobs(name: Any, metadata: Any) -> None:
    _checked(name, metadata)


@given(NAMES, CLAIM_METADATA, st.one_of(SCALARS, st.datetimes(timezones=st.just(timezone.utc))))
@example(PREFIX + "0", {"ownerid": None}, None)  # given up: Azurite answers None for ""
def test_claim_blobs(name: Any, metadata: Any, modified: Any) -> None:
    pid = partition_of(name, PREFIX)
    if pid is None:
        return
    try:
        claim = parse_claim(WHERE, name, pid, metadata, modified)
    except CheckpointError as error:
        assert WHERE in str(error) and "ownerid" in str(error)
        return
    assert isinstance(claim.owner, str)
    if not isinstance(metadata, dict) or metadata.get("ownerid") in (None, ""):
        assert claim.owner == ""
    assert claim.last_modified is None or isinstance(claim.last_modified, datetime)


def test_the_layout_is_the_official_one() -> None:
    assert PREFIX == "ns.servicebus.windows.net/hub/$default/checkpoint/"
    for rest, pid in (("0", "0"), ("31", "31"), ("01", None), ("-1", None), ("0/x", None)):
        assert partition_of(PREFIX + rest, PREFIX) == pid, rest
    assert partition_of("other/0", PREFIX) is None


@pytest.mark.parametrize(
    ("metadata", "problem"),
    [
        ({"sequencenumber": "4"}, "no 'offset' metadata"),
        ({"offset": "42"}, "no 'sequencenumber' metadata"),
        ({"offset": "", "sequencenumber": "4"}, "'offset' '', not -1 or a decimal number"),
        ({"offset": "42", "sequencenumber": " 4"}, "'sequencenumber' ' 4', not -1 or"),
        ({"offset": "42", "sequencenumber": "\u0664"}, "'sequencenumber' '\u0664', not -1 or"),
        ({"offset": "4' or 1=1", "sequencenumber": "4"}, "'offset' \"4' or 1=1\", not -1 or"),
        ({"offset": str(2**63), "sequencenumber": "4"}, "beyond a 64-bit number"),
        ({"offset": "42", "sequencenumber": 4}, "'sequencenumber' of type int"),
        ("offset=42", "metadata of type str, not names and values"),
    ],
)
def test_a_bad_checkpoint_names_its_blob_and_what_is_accepted(metadata: Any, problem: str) -> None:
    name = PREFIX + "3"
    with pytest.raises(CheckpointError) as caught:
        parse_checkpoint(WHERE, name, "3", metadata)
    message = str(caught.value)
    assert f"blob '{name}' in the {WHERE} is not a checkpoint" in message
    assert problem in message
    assert "offset and sequencenumber, each -1 or a decimal number" in message
    assert "delete it" in message


def test_where_a_processor_resumes() -> None:
    official = parse_checkpoint(WHERE, PREFIX + "0", "0", {"offset": "96", "sequencenumber": "2"})
    assert official.resume_position() == Position("offset", offset="96", inclusive=False)
    assert (official.sequence_number, official.partition_id) == (2, "0")
    nothing_read = parse_checkpoint(
        WHERE, PREFIX + "1", "1", {"offset": "-1", "sequencenumber": "-1"}
    )
    assert nothing_read.resume_position() == START
    assert nothing_read.sequence_number == -1
