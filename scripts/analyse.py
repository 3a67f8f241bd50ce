#!/usr/bin/env python3
"""The same as `usi-engine analyse` (see its --help); kept so that recorded commands still run."""

import sys

from usi_engine.cli import main

if __name__ == "__main__":
    sys.exit(main(["analyse", *sys.argv[1:]]))
