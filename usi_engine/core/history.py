"""Move-ordering statistics: Butterfly, PieceTo (continuation), CounterMove and capture
tables and killers, as YaneuraOu's movepick keeps them.

Every history entry moves by the bounded rule  entry += bonus - entry * |bonus| / D,
which keeps it within [-D, D] as long as |bonus| <= D: large entries saturate instead of
overflowing, and a long-lived statistic still follows recent results.
"""

from collections import namedtuple

import numpy as np

from .types import (
    jit,
    PIECE_NB,
    FROM_NB,
    NSQ,
    MAX_PLY,
    move_to,
    move_from,
    moved_piece,
    moved_piece_after,
    type_of,
)
from .params import SP_HISTORY_BONUS_MUL, SP_HISTORY_BONUS_ADD, SP_HISTORY_BONUS_MAX, SP_LOW_PLY_HISTORY

BUTTERFLY_D = 7183  # butterfly[color, from-or-drop, to]
CONTINUATION_D = 16384  # continuation[prev piece*81+to, piece*81+to]
CAPTURE_D = 10692  # capture[piece, to, captured type]
TYPE_NB = 16  # a piece type (types.type_of) fits in four bits
LOW_PLY = 4  # low_ply[ply, from-or-drop, to] for the first plies below the root
PIECE_TO = PIECE_NB * NSQ

Histories = namedtuple(
    "Histories",
    [
        "butterfly",  # int32[2, FROM_NB, 81]
        "continuation",  # int16[PIECE_TO, PIECE_TO]: indexed by a previous move and this move;
        # int16 since its entries stay within +-CONTINUATION_D, which halves its 27 MB
        "counter",  # int32[PIECE_TO]: the refutation last seen for a previous move
        "killers",  # int32[MAX_PLY + 8, 2]
        "capture",  # int32[PIECE_NB, 81, TYPE_NB]: captures (and pawn promotions) by the
        # moving piece, its destination and what it takes
        "low_ply",  # int32[LOW_PLY, FROM_NB, 81]: quiet moves near the root, by ply; one
        # search's only (init_root clears it), since the root changes every move
    ],
)


def new_histories() -> Histories:
    return Histories(
        np.zeros((2, FROM_NB, NSQ), np.int32),
        np.zeros((PIECE_TO, PIECE_TO), np.int16),
        np.zeros(PIECE_TO, np.int32),
        np.zeros((MAX_PLY + 8, 2), np.int32),
        np.zeros((PIECE_NB, NSQ, TYPE_NB), np.int32),
        np.zeros((LOW_PLY, FROM_NB, NSQ), np.int32),
    )


def clear_histories(h: Histories) -> None:
    for table in h:
        table.fill(0)


@jit(inline="always")
def bounded_update(entry, bonus, d):
    """The bounded history rule; returns the new entry value."""
    return entry + bonus - entry * abs(bonus) // d


@jit()
def history_bonus(sp, depth_plies):
    """Reward for a cutoff at this remaining depth (sp: params.py's constants; the cap stays
    below the smallest D)."""
    return min(
        depth_plies * depth_plies * sp[SP_HISTORY_BONUS_MUL] + sp[SP_HISTORY_BONUS_ADD],
        sp[SP_HISTORY_BONUS_MAX],
    )


@jit(inline="always")
def piece_to(m):
    """Continuation index of a move: the piece after the move and its destination."""
    return moved_piece_after(m) * NSQ + move_to(m)


# The continuation keys of a node: the piece_to of the moves 1, 2, 4 and 6 plies above it,
# -1 where there is none (above the root, a null move, or a ply the search leaves out).
# The move one ply above is the opponent's last; those two, four and six plies above are
# the side to move's own, so a quiet move is judged as a reply and as a step of a plan.
# One table serves every distance, as in Stockfish.
NO_CONTINUATION = (-1, -1, -1, -1)


@jit()
def update_quiet(h, color, m, conts, bonus):
    """Apply `bonus` to move m in the butterfly table and in the continuation table under
    each of the node's continuation keys `conts` (NO_CONTINUATION's shape)."""
    frm = move_from(m)
    to = move_to(m)
    h.butterfly[color, frm, to] = bounded_update(h.butterfly[color, frm, to], bonus, BUTTERFLY_D)
    pt = piece_to(m)
    for prev in conts:
        if prev >= 0:
            h.continuation[prev, pt] = bounded_update(h.continuation[prev, pt], bonus, CONTINUATION_D)


@jit()
def quiet_score(h, color, m, conts):
    """Ordering score of a quiet move: its butterfly entry plus its continuation entries."""
    s = np.int64(h.butterfly[color, move_from(m), move_to(m)])
    pt = piece_to(m)
    for prev in conts:
        if prev >= 0:
            s += h.continuation[prev, pt]
    return s


@jit()
def update_low_ply(h, ply, m, bonus):
    """Apply `bonus` to quiet move m in the low-ply table of `ply` (below LOW_PLY)."""
    frm = move_from(m)
    to = move_to(m)
    h.low_ply[ply, frm, to] = bounded_update(h.low_ply[ply, frm, to], bonus, BUTTERFLY_D)


@jit()
def low_ply_score(h, sp, ply, m):
    """LowPlyHistory's part of a quiet move's ordering score at `ply`: its low-ply entry
    times the setting, less the deeper the ply, as Stockfish weighs it; 0 from LOW_PLY on."""
    weight = sp[SP_LOW_PLY_HISTORY]
    if weight == 0 or ply >= LOW_PLY:
        return 0
    return weight * np.int64(h.low_ply[ply, move_from(m), move_to(m)]) // (1 + 2 * ply)


@jit()
def update_capture(h, board, m, bonus):
    """Apply `bonus` to the tactical move m (captures and pawn promotions), on the board
    before it is made."""
    p = moved_piece(m)
    to = move_to(m)
    victim = type_of(board[to])
    h.capture[p, to, victim] = bounded_update(h.capture[p, to, victim], bonus, CAPTURE_D)


@jit(inline="always")
def capture_history(h, board, m):
    """The capture-history entry of the tactical move m, on the board before it is made."""
    to = move_to(m)
    return h.capture[moved_piece(m), to, type_of(board[to])]
