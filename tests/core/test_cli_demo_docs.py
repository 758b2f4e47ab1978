"""The demo output the documentation shows is what the command it shows prints: a sample of
``pysparksources demo`` (8 batches by default) must show 8 batches, and pass the same check as
a real run (tests/support/demo_output.py, which the wheel test applies to the demo it runs)."""

from __future__ import annotations

import re

import pytest

from support.demo_output import DEFAULT_BATCHES, ROWS_PER_BATCH, check_demo
from support.paths import DOCS, ROOT

PAGES = [*sorted(DOCS.glob("**/*.md")), ROOT / "README.md"]
COMMAND = re.compile(r"(?:pysparksources demo|\./dev demo)(?P<args>[^\n#]*)")
FENCE = re.compile(r"^```[^\n]*\n(?P<body>.*?)^```", re.M | re.S)


def demo_samples(text: str) -> list[tuple[int | None, str]]:
    """(batches of the demo command shown last before it, or None, sample) for each fenced
    block that shows the demo's summary."""
    samples: list[tuple[int | None, str]] = []
    batches = None
    for match in FENCE.finditer(text):
        body = match.group("body")
        if "\nSummary\n" in f"\n{body}":
            samples.append((batches, body))
            continue
        command = COMMAND.search(body)
        if command is not None:
            given = re.search(r"--batches[ =](\d+)", command.group("args"))
            batches = int(given.group(1)) if given else DEFAULT_BATCHES
    return samples


def shown_samples() -> list[tuple[str, int | None, str]]:
    return [
        (str(page.relative_to(ROOT)), batches, sample)
        for page in PAGES
        if page.exists()
        for batches, sample in demo_samples(page.read_text())
    ]


def test_the_getting_started_page_shows_a_whole_run() -> None:
    pages = [page for page, _, sample in shown_samples() if "pyrate -> pyeventhub" in sample]
    assert "docs/getting-started.md" in pages


@pytest.mark.parametrize("page, batches, sample", shown_samples())
def test_a_shown_demo_sample_matches_the_command_shown(
    page: str, batches: int | None, sample: str
) -> None:
    assert batches is not None, f"{page}: a demo sample with no demo command before it"
    if "pyrate -> pyeventhub" in sample:  # the whole output
        check_demo(sample, batches)
    else:  # the summary alone
        total = batches * ROWS_PER_BATCH
        assert f"rows in           {total} (pyrate, {batches} batches)" in sample, page
        assert f"exactly once      yes: values 0..{total - 1}, each exactly once" in sample


def test_the_check_catches_the_issues_mismatch() -> None:
    """The sample README.md showed: 2 batches, under a command that runs 8."""
    text = (
        "```bash\n./dev demo\n```\n\n"
        "```\nSummary\n  rows in           3000 (pyrate, 2 batches)\n```\n"
    )
    ((batches, sample),) = demo_samples(text)
    assert batches == 8
    with pytest.raises(AssertionError):
        test_a_shown_demo_sample_matches_the_command_shown("README.md", batches, sample)
