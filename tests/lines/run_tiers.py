"""``./dev lines [LINE...] [-- PYTEST ARGS]``: run the older Spark lines' tiers from a shell.

Each tier prints its pytest output; the exit status is the first failing tier's (0 if all pass).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for support

from support.spark_lines import LINES, run_tier


def main(argv: list[str]) -> int:
    names, _, pytest_args = (
        (argv[: argv.index("--")], "--", argv[argv.index("--") + 1 :])
        if "--" in argv
        else (argv, "", [])
    )
    unknown = [n for n in names if n not in LINES]
    if unknown:
        print(f"unknown line(s) {', '.join(unknown)}; tiers: {', '.join(sorted(LINES))}")
        return 2
    status = 0
    for name in names or sorted(LINES):
        print(f"== Spark {name} tier (PySpark {LINES[name].pyspark})", flush=True)
        result = run_tier(LINES[name], *(pytest_args or ["-q", "-p", "no:cacheprovider"]))
        print(result.stdout + result.stderr, flush=True)
        status = status or result.returncode
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
