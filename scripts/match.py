#!/usr/bin/env python3
"""Engine-vs-engine matches between USI engines; see ``--help`` and docs/match.md."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from usi_engine.match.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
