#!/usr/bin/env python3
"""The same as `usi-engine match` (see its --help); kept so that recorded commands still run."""

import sys

from usi_engine.cli import main

if __name__ == "__main__":
    sys.exit(main(["match", *sys.argv[1:]]))
