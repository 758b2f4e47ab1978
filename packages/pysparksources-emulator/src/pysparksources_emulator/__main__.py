"""``python -m pysparksources_emulator``: the same as the ``pysparksources-emulator`` command."""

import sys

from pysparksources_emulator._serve import main

if __name__ == "__main__":
    sys.exit(main())
