"""The evaluator's arrays as the numba code receives them: the loaded network (NetArrays,
shared read-only by all search threads) and, per position, the accumulator stack.

numba freezes globals at compile time, so a network loaded at run time travels inside the
position (PosArrays.net).  Without a network every array is empty and info[INFO_MODE] is
MODE_HANDMADE: new_position() stays cheap and evaluate() uses the hand-made evaluation.
"""
from collections import namedtuple

import numpy as np

from .types import MAX_HISTORY

MODE_HANDMADE = 0
MODE_KP = 1          # K+P features: no refresh on king moves
MODE_HALFKP = 2      # HalfKP(Friend): a king move refreshes that side's perspective

INFO_MODE = 0
INFO_FV_SCALE = 1
INFO_NB = 4

NetArrays = namedtuple("NetArrays", [
    "info",       # int64[INFO_NB]: mode, FV_SCALE
    "ft_bias",    # int16[H]
    "ft_weight",  # int16[F, H]: one row per feature
    "b1", "w1",   # int32[L1], int16[L1, 2H]   (int16 weights: LLVM makes vpmaddwd of the dot)
    "b2", "w2",   # int32[L2], int16[L2, L1]
    "b3", "w3",   # int32[1],  int16[1, L2]
])

_MODES = {"K+P": MODE_KP, "HalfKP(Friend)": MODE_HALFKP}


def no_network() -> NetArrays:
    """The hand-made evaluation: empty arrays of the same types as a loaded network."""
    info = np.zeros(INFO_NB, np.int64)
    info[INFO_FV_SCALE] = 16
    return NetArrays(info, np.zeros(0, np.int16), np.zeros((0, 0), np.int16),
                     np.zeros(0, np.int32), np.zeros((0, 0), np.int16),
                     np.zeros(0, np.int32), np.zeros((0, 0), np.int16),
                     np.zeros(0, np.int32), np.zeros((0, 0), np.int16))


def network_arrays(net, fv_scale: int = 16) -> NetArrays:
    """NetArrays of a usi_engine.nnue.Network (the feature weights are shared, not copied)."""
    if fv_scale < 1:
        raise ValueError(f"FV_SCALE must be at least 1, got {fv_scale}")
    info = np.zeros(INFO_NB, np.int64)
    info[INFO_MODE] = _MODES[net.feature_set]
    info[INFO_FV_SCALE] = fv_scale
    ft_weight = net.ft_weight
    if not (ft_weight.flags.c_contiguous and ft_weight.flags.writeable):
        ft_weight = np.ascontiguousarray(ft_weight).copy()
    layers = []
    ins = (2 * net.half_dimensions, net.hidden[0], net.hidden[1])
    for k in range(3):
        layers.append(np.ascontiguousarray(net.biases[k], np.int32).copy())
        layers.append(np.ascontiguousarray(net.weights[k][:, :ins[k]], np.int16))
    return NetArrays(info, np.ascontiguousarray(net.ft_bias, np.int16).copy(), ft_weight, *layers)


def accumulator_stack(net: NetArrays) -> np.ndarray:
    """int16[MAX_HISTORY, 2, H]: one accumulator per ply and perspective (empty without a
    network; np.zeros maps pages lazily, so only the plies used cost memory)."""
    return np.zeros((MAX_HISTORY if net.info[INFO_MODE] else 0, 2, net.ft_bias.shape[0]), np.int16)


def scratch(net: NetArrays) -> np.ndarray:
    """int16 buffer for the transformed features and the hidden layers' outputs."""
    if not net.info[INFO_MODE]:
        return np.zeros(0, np.int16)
    return np.zeros(net.w1.shape[1] + net.w2.shape[1] + net.w3.shape[1], np.int16)


HANDMADE_NAMES = ("", "<internal>", "<empty>", "internal", "handmade")


def load_eval_dir(evaldir: str):
    """The network of YaneuraOu's EvalDir option: None for this project's default (hand-made)
    evaluation ('<internal>', empty or 'handmade'), else the Network read from
    `evaldir`/nn.bin.  NNUEFormatError (a ValueError) names the file and the problem."""
    from pathlib import Path
    from ..nnue import read_network, NNUEFormatError
    text = str(evaldir).strip()
    if text.lower() in HANDMADE_NAMES:
        return None
    path = Path(text)
    if not path.is_file():           # a folder, as YaneuraOu means it (a file is taken too)
        path = path / "nn.bin"
    if path.is_dir():
        raise NNUEFormatError(f"{path}: is a folder, expected a file")
    return read_network(path)
