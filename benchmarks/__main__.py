"""``python -m benchmarks SCENARIO [options]``: what ``./dev bench`` runs."""

import sys

from benchmarks._command import main

sys.exit(main())
