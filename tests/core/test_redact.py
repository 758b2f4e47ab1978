"""What may be shown or stored of a value: both sides of every rule of ``_redact``.

``showable`` refuses what looks like a credential and must keep showing ordinary values
(paths, names, option values), or errors stop being useful. ``public_url`` drops userinfo and
credential queries, and keeps what a reader needs to find a file. Pure functions.
"""

from __future__ import annotations

import base64
import random
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pysparksources._redact import public_url, safe_url, scrubbed, showable
from pysparksources.errors import ServiceError
from pysparksources.files.storage.filesystem import FileLocation, credentials_kept_out, resolve

AZURITE_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)
REFUSED = {
    "json with account_key": '{"account_name": "acct", "account_key": "abc"}',
    "python dict with key": "{'key': 'abc'}",
    "yaml": "account_key: abc",
    "pem key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
    "pem openssh": "-----BEGIN OPENSSH PRIVATE KEY-----",
    "bearer": "Bearer eyJhbGciOiJIUzI1NiJ9.e30.abc",
    "basic": "Basic dXNlcjpwYXNzd29yZA==",
    "token as userinfo": "https://ghp_abcdefghij1234567890@github.com/org/repo",
    "plain token as userinfo": "https://TOKEN@host/x",
    "azure account key": AZURITE_KEY,
    "aws secret key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "key in a sentence": f"the key is {AZURITE_KEY} ok",
    "jwt": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6Ikpv"
    "aG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "connection string": "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=abc",
    "sas": "sv=2024-05-04&sp=rl&sig=abc",
    "password word": "my password",
}
SHOWN = [
    "/data/landing/events/2024/01/01",
    "/Users/JohnSmith/Projects2024/DataLake/Landing/Events2024",
    "abfs://container@account.dfs.core.windows.net/landing/in",
    "wasbs://container@account.blob.core.windows.net/x",
    "sftp://alice@host/out",
    "s3://bucket/key=1/x.parquet",
    "part-00000-3f0c2a8e-1b2c-4d5e-9f00-123456789abc-c000.snappy.parquet",
    str(uuid.UUID(int=12345)),
    "2024-01-01T00:00:00.000Z",
    "spark.sql.streaming.fileSource.cleaner.numThreads",
    "PERMISSIVE",
    "hdfs://namenode:8020/warehouse/TableName2024/PartitionCol=Value123",
    "0123456789abcdef" * 4,  # a hash: hex, one case
    "TheQuickBrownFoxJumpsOverTheLazyDog42",
    "S3BucketNameForRawEventsInUSEast1Region",
    "monkey",
    "basic",
    "id BIGINT, name STRING",
    "yyyy-MM-dd'T'HH:mm:ss.SSSXXX",
]


@pytest.mark.parametrize("value", list(REFUSED.values()), ids=list(REFUSED))
def test_showable_refuses_keys_tokens_and_pem(value: str) -> None:
    assert showable(value) is None


@pytest.mark.parametrize("value", SHOWN)
def test_showable_keeps_ordinary_values(value: str) -> None:
    assert showable(value) == value


def test_showable_masks_a_password_but_keeps_the_url() -> None:
    assert showable("ftp://alice:pw@host:21/in") == "ftp://alice:***@host:21/in"
    assert showable("https://host/x?a=1") == "https://host/x?***"


def test_random_keys_are_refused_and_camel_case_names_are_not() -> None:
    rng = random.Random(7)
    keys = [base64.b64encode(rng.randbytes(64)).decode() for _ in range(300)]
    # token_urlsafe(40)'s shape, from the seeded generator: the count below cannot flake.
    keys += [base64.urlsafe_b64encode(rng.randbytes(40)).rstrip(b"=").decode() for _ in range(300)]
    missed = [k for k in keys if showable(k) is not None]
    assert len(missed) <= 3, missed  # a safety net: secret options are never shown anyway
    words = [
        "data",
        "landing",
        "events",
        "column",
        "name",
        "table",
        "partition",
        "value",
        "year",
        "month",
        "raw",
    ]
    names = [
        "".join(rng.choice(words).capitalize() for _ in range(rng.randint(4, 9)))
        + str(rng.randint(0, 9999))
        for _ in range(300)
    ]
    paths = [
        "/" + "/".join(rng.choice(words) + str(rng.randint(0, 99)) for _ in range(6))
        for _ in range(300)
    ]
    assert [v for v in names + paths if showable(v) is None] == []


@pytest.mark.parametrize(
    ("url", "public"),
    [
        ("ftp://alice:pw@127.0.0.1:2121/out", "ftp://127.0.0.1:2121/out"),
        ("sftp://alice:pw@host/out", "sftp://host/out"),
        ("sftp://alice@host/out", "sftp://host/out"),
        (
            "https://acct.blob.core.windows.net/c/x?sv=1&sig=abc",
            "https://acct.blob.core.windows.net/c/x",
        ),
        ("https://TOKEN@host/x", "https://host/x"),
        ("https://host?sig=1", "https://host"),
        ("https://host/x#access_token=abc", "https://host/x"),
        ("abfs://c@acct.dfs.core.windows.net/out", "abfs://c@acct.dfs.core.windows.net/out"),
        ("abfs://c:pw@acct/out", "abfs://acct/out"),
        ("s3://bucket/out", "s3://bucket/out"),
        ("s3://AKIA:secret@bucket/out", "s3://bucket/out"),
        ("s3://bucket/what?.csv", "s3://bucket/what?.csv"),  # a name, not a query
        ("s3://bucket/k?X-Amz-Signature=abc", "s3://bucket/k"),
        ("memory:///x/y", "memory:///x/y"),
        ("/local/path", "/local/path"),
    ],
)
def test_public_url(url: str, public: str) -> None:
    assert public_url(url) == public


def test_safe_url_masks_a_lone_token_but_not_a_container_or_user() -> None:
    assert safe_url("https://TOKEN@host/x") == "https://***@host/x"
    assert safe_url("abfs://c@acct/x") == "abfs://c@acct/x"
    assert safe_url("sftp://alice@host/x") == "sftp://alice@host/x"


def test_scrubbed_makes_every_url_in_a_message_public() -> None:
    message = (
        "403, message='Forbidden', url='https://h/x?sv=1&sig=abc' after ftp://u:pw@h:21/in "
        "and https://TOKEN@h/y"
    )
    assert scrubbed(message) == (
        "403, message='Forbidden', url='https://h/x' after ftp://h:21/in and https://h/y"
    )


def test_location_urls_carry_no_credential() -> None:
    assert resolve("ftp://alice:pw@127.0.0.1:2121/out").url() == "ftp://127.0.0.1:2121/out"
    assert resolve("https://host/dir/x?sv=1&sig=abc").url() == "https://host/dir/x"
    sas = resolve("https://host/dir/?sig=abc")
    assert "abc" not in repr(sas) and "abc" not in sas.url("https://host/dir/f?sig=abc")
    assert resolve("abfs://c@acct.dfs.core.windows.net/out").url() == "abfs://c/out"
    assert FileLocation("file", "/x/y").url() == "file:///x/y"  # unchanged


def test_filesystem_errors_lose_their_credentials_and_others_pass_unchanged() -> None:
    with pytest.raises(ServiceError) as caught, credentials_kept_out("could not list"):
        raise FileNotFoundError("https://h/in/?sv=1&sig=abc")
    assert "sig=abc" not in str(caught.value) and "https://h/in/" in str(caught.value)
    with pytest.raises(FileNotFoundError), credentials_kept_out("could not list"):
        raise FileNotFoundError("/plain/path")


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["https", "http", "ftp", "sftp", "s3", "abfs", "gcs"]),
    st.text("abcXYZ019-_.~", min_size=1, max_size=12),
    # What a password may hold unencoded in a URL ("/?#@" must be percent-encoded there).
    st.text("abcXYZ019-_.~+=!$*,;:%", min_size=1, max_size=24),
    st.text("abc/=&", max_size=12),
)
def test_a_password_or_sas_never_survives_public_url(
    scheme: str, user: str, secret: str, path: str
) -> None:
    planted = f"Pl4nt{secret}"
    for url in (
        f"{scheme}://{user}:{planted}@host:1/{path}",
        f"{scheme}://host/{path}?sv=1&sig={planted}",
        f"{scheme}://{user}:{planted}@host/{path}?sig={planted}#x",
    ):
        assert planted not in public_url(url), url
        assert planted not in scrubbed(f"failed on '{url}' badly")
