"""Correction history: what searches found the static evaluation got wrong, by feature of
the position, added back to the evaluation (Stockfish's correction history, shogi keys).

Three tables learn the error (search result - static evaluation) of the side to move:
  - by the two kings' squares (the king formations an evaluation misjudges);
  - by the two hands, hashed (what pieces in hand are worth depends on the rest);
  - by the previous move's piece and destination (the threat it may have made).
Entries follow the same bounded rule as the move histories (history.bounded_update), in
units of 1/CORR_GRAIN centipawn; the correction is the sum of the three entries divided by
the tunable CorrectionDiv (params.py).  The transposition table keeps the raw evaluation.
"""

from collections import namedtuple

import numpy as np

from .types import jit, NSQ
from .board import ST_SIDE, ST_PLY, ST_KING
from .history import bounded_update, PIECE_TO
from .params import SP_CORRECTION_DIV

CORR_D = 1024  # entry bound
CORR_GRAIN = 4  # entries count quarter centipawns
CORR_BONUS_MAX = CORR_D // 4
HAND_BITS = 12  # 4096 hand pairs per side to move
HAND_MUL = np.int64(-7046029254386353131)  # 0x9E3779B97F4A7C15: Fibonacci hashing

Corrections = namedtuple(
    "Corrections",
    [
        "corr_kings",  # int32[2, 81 * 81]: by side to move, own king square * 81 + enemy's
        "corr_hands",  # int32[2, 1 << HAND_BITS]: by side to move, the two hands hashed
        "corr_cont",  # int32[PIECE_TO]: by the previous move's piece and destination
    ],
)


def new_corrections() -> Corrections:
    return Corrections(
        np.zeros((2, NSQ * NSQ), np.int32),
        np.zeros((2, 1 << HAND_BITS), np.int32),
        np.zeros(PIECE_TO, np.int32),
    )


@jit(inline="always")
def _kings_index(pos, us):
    """own king * 81 + enemy king, or -1 when a king is missing (tsume problems)."""
    own = pos.st[ST_KING + us]
    other = pos.st[ST_KING + 1 - us]
    if own < 0 or other < 0:
        return -1
    return own * NSQ + other


@jit(inline="always")
def _hands_index(pos, us):
    ply = pos.st[ST_PLY]
    h = pos.hand_packs[ply, us] * np.int64(31) + pos.hand_packs[ply, 1 - us]
    return (h * HAND_MUL >> (64 - HAND_BITS)) & ((1 << HAND_BITS) - 1)


@jit()
def correction(pos, ctx, prev_pt):
    """Centipawns to add to the static evaluation of the side to move (rounded toward
    zero); prev_pt is the previous move's continuation index (history.piece_to), -1 for
    none."""
    us = pos.st[ST_SIDE]
    s = np.int64(ctx.corr_hands[us, _hands_index(pos, us)])
    k = _kings_index(pos, us)
    if k >= 0:
        s += ctx.corr_kings[us, k]
    if prev_pt >= 0:
        s += ctx.corr_cont[prev_pt]
    div = CORR_GRAIN * ctx.sp[SP_CORRECTION_DIV]
    return s // div if s >= 0 else -((-s) // div)


@jit()
def update_correction(pos, ctx, prev_pt, error, d_plies):
    """Learn that the search found `error` centipawns more than the static evaluation,
    weighted by the depth of that search."""
    bonus = error * CORR_GRAIN * d_plies // 8
    bonus = max(-CORR_BONUS_MAX, min(CORR_BONUS_MAX, bonus))
    us = pos.st[ST_SIDE]
    h = _hands_index(pos, us)
    ctx.corr_hands[us, h] = bounded_update(ctx.corr_hands[us, h], bonus, CORR_D)
    k = _kings_index(pos, us)
    if k >= 0:
        ctx.corr_kings[us, k] = bounded_update(ctx.corr_kings[us, k], bonus, CORR_D)
    if prev_pt >= 0:
        ctx.corr_cont[prev_pt] = bounded_update(ctx.corr_cont[prev_pt], bonus, CORR_D)
