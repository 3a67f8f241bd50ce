#!/usr/bin/env python3
"""SPSA tuning of an engine's constants by game pairs; see ``--help`` and docs/scaling.md."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from usi_engine.match.tunecli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
