"""NNUE networks in YaneuraOu's format, numba-free: file reader and writer (format.py), the
BonaPiece feature tables (features.py) and a numpy reference forward pass (reference.py).
The engine's numba inference lives in usi_engine/core/nnue.py."""

from .format import (
    Network,
    NNUEFormatError,
    read_network,
    write_network,
    parse_network,
    network_bytes,
    random_network,
    DEFAULT_FV_SCALE,
)
from .features import active_features, FEATURE_SETS

__all__ = [
    "Network",
    "NNUEFormatError",
    "read_network",
    "write_network",
    "parse_network",
    "network_bytes",
    "random_network",
    "DEFAULT_FV_SCALE",
    "active_features",
    "FEATURE_SETS",
]
