#!/usr/bin/env python3
"""The same as `usi-engine node-rate` (see its --help); kept so that recorded commands still run."""

import sys

from usi_engine.cli import main

if __name__ == "__main__":
    sys.exit(main(["node-rate", *sys.argv[1:]]))
