"""The forward pass in plain numpy, written from the format description alone: the yardstick
the numba inference (core/nnue.py) is tested against.  Slow (a full refresh per call)."""

from __future__ import annotations

import numpy as np

from .features import active_features, BLACK, WHITE
from .format import Network, WEIGHT_SCALE_BITS


def accumulator(net: Network, board: np.ndarray, hands: np.ndarray, perspective: int) -> np.ndarray:
    """int16[H]: the feature transformer's bias plus the rows of the active features
    (int16 arithmetic wraps, as YaneuraOu's vector adds do)."""
    rows = net.ft_weight[active_features(net.feature_set, board, hands, perspective)]
    total = net.ft_bias.astype(np.int64) + rows.astype(np.int64).sum(axis=0)
    return total.astype(np.int16)  # modulo 2^16, like the wrapping int16 additions


def raw_output(net: Network, board: np.ndarray, hands: np.ndarray, side_to_move: int) -> int:
    """The network's int32 output for a position (board int8[81], hands int8[2, 8] in this
    project's codes), the side to move's half of the transformed features first."""
    halves = [accumulator(net, board, hands, p) for p in (side_to_move, 1 - side_to_move)]
    x = np.clip(np.concatenate(halves).astype(np.int64), 0, 127)
    for k in range(3):
        w = net.weights[k][:, : x.shape[0]].astype(np.int64)
        y = net.biases[k].astype(np.int64) + w @ x
        if k == 2:
            return int(np.int32(y[0]))
        x = np.clip(y >> WEIGHT_SCALE_BITS, 0, 127)
    raise AssertionError("unreachable")


def evaluate(
    net: Network, board: np.ndarray, hands: np.ndarray, side_to_move: int, fv_scale: int = 16
) -> int:
    """raw_output / fv_scale rounded toward zero (YaneuraOu's `e` before its clamp)."""
    raw = raw_output(net, board, hands, side_to_move)
    q = abs(raw) // fv_scale
    return q if raw >= 0 else -q


__all__ = ["accumulator", "raw_output", "evaluate", "BLACK", "WHITE"]
