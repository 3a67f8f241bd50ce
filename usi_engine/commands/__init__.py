"""The subcommands of `usi-engine` that have no home in a domain package: one module per
command, each with ``main(argv) -> int`` and its own argparse parser (``prog`` is
``usi-engine NAME``).  `usi_engine.cli.SUBCOMMANDS` names them; a module is imported only
when its word is given, so this package imports nothing but the standard library.

The files a command reads by default ship in ``usi_engine/data/`` (`data_file`); the ones
that exist only in a checkout of the repository (``tests/``) are found next to the package
(`REPO`).
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent
# the repository root of a checkout (or an editable install); tests/ lives only there
REPO = PACKAGE.parent


def data_file(name: str) -> str:
    """The path of a file shipped in ``usi_engine/data/``."""
    return str(PACKAGE / "data" / name)
