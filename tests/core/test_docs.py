"""The README documents every option the code accepts."""

from __future__ import annotations

from pysparksources.rate.options import OPTIONS as RATE_OPTIONS
from support.paths import README as README_PATH

README = README_PATH.read_text()


def test_every_pyrate_option_has_a_readme_row() -> None:
    section = README.split("## `pyrate`", 1)[1].split("\n## ", 1)[0]
    for name in RATE_OPTIONS:
        assert f"| `{name}` |" in section, f"README's pyrate table lacks {name}"


def test_readme_names_the_two_commands() -> None:
    assert "./dev demo" in README and "./dev test" in README
