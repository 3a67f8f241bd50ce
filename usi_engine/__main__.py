"""`python -m usi_engine`: run the USI loop (see usi_engine.cli)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
