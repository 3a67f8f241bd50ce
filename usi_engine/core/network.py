"""The evaluator's arrays as the numba code receives them: the loaded network (NetArrays,
shared read-only by all search threads) and, per position, the accumulator stack.

numba freezes globals at compile time, so a network loaded at run time travels inside the
position (PosArrays.net).  Without a network every array is empty and info[INFO_MODE] is
MODE_HANDMADE: new_position() stays cheap and evaluate() uses the hand-made evaluation.
"""

from collections import namedtuple

import numpy as np

from .types import MAX_HISTORY, NSQ, HAND_NB

MODE_HANDMADE = 0
MODE_KP = 1  # K+P features: no refresh on king moves
MODE_HALFKP = 2  # HalfKP(Friend): a king move refreshes that side's perspective

INFO_MODE = 0
INFO_FV_SCALE = 1
INFO_HALF = 2  # H: accumulator width per perspective
INFO_L1 = 3  # outputs of the first hidden layer
INFO_L2 = 4  # outputs of the second
INFO_SUMS = 5  # byte offset of the int32 sums in the scratch buffer (a multiple of 4)
INFO_NB = 8

# Few arrays on purpose: numba passes a position's arrays to every non-inlined call, so each
# one more array costs every search function a little.
NetArrays = namedtuple(
    "NetArrays",
    [
        "info",  # int64[INFO_NB]: mode, FV_SCALE, dimensions
        "ft",  # int16[F + 1, H]: one row per feature, then the biases
        "dense",  # int8[L1*2H + L1*L2 + L2]: the three affine layers' weights, row-major
        # except the second layer's, stored transposed (core/nnue.py goes by columns)
        "bias",  # int32[L1 + L2 + 1]: their biases
    ],
)

_MODES = {"K+P": MODE_KP, "HalfKP(Friend)": MODE_HALFKP}


def no_network() -> NetArrays:
    """The hand-made evaluation: empty arrays of the same types as a loaded network."""
    info = np.zeros(INFO_NB, np.int64)
    info[INFO_FV_SCALE] = 16
    return NetArrays(info, np.zeros((0, 0), np.int16), np.zeros(0, np.int8), np.zeros(0, np.int32))


def network_arrays(net, fv_scale: int = 16) -> NetArrays:
    """NetArrays of a usi_engine.nnue.Network (copies the weights once, at load)."""
    if fv_scale < 1:
        raise ValueError(f"FV_SCALE must be at least 1, got {fv_scale}")
    h = net.half_dimensions
    l1, l2 = net.hidden
    if l1 % 4 or l2 % 4:
        raise ValueError(f"{net.name}: hidden layers must have a multiple of 4 outputs")
    info = np.zeros(INFO_NB, np.int64)
    info[INFO_MODE] = _MODES[net.feature_set]
    info[INFO_FV_SCALE] = fv_scale
    info[INFO_HALF], info[INFO_L1], info[INFO_L2] = h, l1, l2
    outputs = 2 * h + l1 + l2  # the uint8 part of the scratch buffer
    info[INFO_SUMS] = (outputs + 3) // 4 * 4
    ft = np.empty((net.ft_weight.shape[0] + 1, h), np.int16)
    ft[:-1] = net.ft_weight
    ft[-1] = net.ft_bias
    ins = (2 * h, l1, l2)
    layers = [net.weights[k][:, : ins[k]].astype(np.int8) for k in range(3)]
    dense = np.concatenate([layer.ravel() for layer in layers])
    bias = np.concatenate([b.astype(np.int32) for b in net.biases])
    return NetArrays(info, ft, dense, bias)


def accumulator_stack(net: NetArrays) -> np.ndarray:
    """int16[MAX_HISTORY, 2, H]: one accumulator per ply and perspective (empty without a
    network; np.zeros maps pages lazily, so only the plies used cost memory)."""
    return np.zeros((MAX_HISTORY if net.info[INFO_MODE] else 0, 2, net.info[INFO_HALF]), np.int16)


# The king cache (core/nnue.py): per perspective and king square, an accumulator followed by
# the board and hands it was made from, and a flag set once it holds one.
KC_BOARD = 0  # offsets after the H accumulator entries
KC_HANDS = NSQ  # hands[c, pt] at KC_HANDS + c * HAND_NB + pt
KC_VALID = NSQ + 2 * HAND_NB
KC_EXTRA = KC_VALID + 1


def king_cache(net: NetArrays) -> np.ndarray:
    """int16[2, 81, H + KC_EXTRA] for a HalfKP network, empty otherwise (one array: every
    array of a position costs each call a little)."""
    rows = NSQ if net.info[INFO_MODE] == MODE_HALFKP else 0
    return np.zeros((2, rows, net.info[INFO_HALF] + KC_EXTRA), np.int16)


def scratch(net: NetArrays) -> np.ndarray:
    """uint8 buffer of the forward pass: the transformed features after the ClippedReLU, the
    hidden layers' outputs, then (from byte info[INFO_SUMS]) a layer's int32 sums."""
    if not net.info[INFO_MODE]:
        return np.zeros(0, np.uint8)
    sums = max(net.info[INFO_L1], net.info[INFO_L2])
    return np.zeros(net.info[INFO_SUMS] + 4 * sums, np.uint8)


# EvalDir values: the network shipped in the package, or the hand-made evaluation.
SHIPPED_NAMES = ("", "<internal>", "<empty>", "internal")
HANDMADE_NAMES = ("handmade", "hand-made")


def shipped_network_path():
    """The default network's file, inside the installed package (docs/training.md says how
    it was made)."""
    from pathlib import Path

    return Path(__file__).resolve().parent.parent / "eval" / "nn.bin"


def load_eval_dir(evaldir: str):
    """The network of YaneuraOu's EvalDir option: the shipped network for '<internal>' (or
    empty), None for the hand-made evaluation ('handmade'), else the Network read from
    `evaldir`/nn.bin.  NNUEFormatError (a ValueError) names the file and the problem."""
    from pathlib import Path
    from ..nnue import read_network, NNUEFormatError

    text = str(evaldir).strip()
    if text.lower() in HANDMADE_NAMES:
        return None
    if text.lower() in SHIPPED_NAMES:
        return read_network(shipped_network_path())
    path = Path(text)
    if not path.is_file():  # a folder, as YaneuraOu means it (a file is taken too)
        path = path / "nn.bin"
    if path.is_dir():
        raise NNUEFormatError(f"{path}: is a folder, expected a file")
    return read_network(path)
