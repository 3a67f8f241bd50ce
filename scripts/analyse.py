#!/usr/bin/env python3
"""Analyse a game record: evaluation graph, annotated KIF/CSA and JSON.

    python scripts/analyse.py game.kif --time 1
    python scripts/analyse.py game.csa --engine "/path/to/YaneuraOu" --depth 12 --jobs 2

Every flag: --help, and docs/analysis.md.  Same as the console script usi-engine-analyse.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from usi_engine.analysis.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
