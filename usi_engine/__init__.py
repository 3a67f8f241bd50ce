"""usi_engine: a shogi engine with a numba-compiled core, speaking USI.

Importing this package is cheap: nothing here imports numba, so that a GUI's `usi` is
answered at once.  The public names below load their module on first use:

    from usi_engine import Position, Move, Engine, Limit
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing

from .version import ENGINE_AUTHOR, ENGINE_NAME, __version__

# public name -> module that defines it (imported lazily by __getattr__)
_EXPORTS = {
    "Position": "position",
    "Move": "move",
    "Piece": "piece",
    "Engine": "api",
    "Limit": "api",
    "Info": "api",
    "Score": "api",
    "Client": "usi",
    "Record": "record",
    "RecordError": "record",
    "read_record": "record",
    "parse_record": "record",
}

__all__ = sorted(_EXPORTS) + ["__version__"]

if TYPE_CHECKING:
    from .api import Engine, Info, Limit, Score
    from .move import Move
    from .piece import Piece
    from .position import Position
    from .record import Record, RecordError, parse_record, read_record
    from .usi import Client


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'usi_engine' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
