"""Static evaluation: the loaded NNUE network (core/nnue.py) when the position carries one,
else the hand-made evaluation: material and piece-square terms (both kept incrementally by
do_move), and king safety: defenders and attackers within two squares of each king, open
squares next to it, and the enemy's pieces in hand.  Weights: weights.py."""

import numpy as np

from .types import jit, NSQ, BLACK, KING, color_of, type_of
from .attacks import RAY, RAY_LEN
from .board import ST_SIDE, ST_KING, ST_MATERIAL, ST_PSQ
from .network import INFO_MODE, MODE_HANDMADE
from .nnue import nnue_evaluate
from .intrinsics import by_ref, deref
from .weights import KING_DEFENDER, KING_ATTACKER, HAND_ATTACK, KING_OPEN_SQUARE, TEMPO, KING_WEAK_DEFENCE


def _king_zones():
    zone = np.full((NSQ, 25), -1, dtype=np.int64)
    for k in range(NSQ):
        n = 0
        for sq in range(NSQ):
            if max(abs(k // 9 - sq // 9), abs(k % 9 - sq % 9)) <= 2:
                zone[k, n] = sq
                n += 1
    return zone


KING_ZONE = _king_zones()  # KING_ZONE[k]: the squares within two king steps of k (-1 padded)


@jit()
def king_safety(pos, color):
    """How safe the king of `color` is (positive is good for `color`); 0 with no king."""
    board = pos.board
    ksq = pos.st[ST_KING + color]
    if ksq < 0:
        return 0
    shelter = 0
    threat = 0
    for i in range(25):
        sq = KING_ZONE[ksq, i]
        if sq < 0:
            break
        p = board[sq]
        if p == 0:
            continue
        t = type_of(p)
        if color_of(p) == color:
            shelter += KING_DEFENDER[t]
        elif t != KING:
            threat += KING_ATTACKER[t]
    open_squares = 0
    for d in range(8):
        if RAY_LEN[ksq, d] > 0 and board[RAY[ksq, d, 0]] == 0:
            open_squares += 1
    danger = open_squares * KING_OPEN_SQUARE
    for pt in range(1, 8):
        danger += HAND_ATTACK[pt] * pos.hands[1 - color, pt]
    # an exposed king weighs double when few defenders stand by
    if shelter < KING_WEAK_DEFENCE:
        danger *= 2
    return shelter - threat - danger // 2


@jit()
def evaluate(pos):
    """Score of the position for the side to move (centipawn-like).  A network needs both
    kings on the board (its features are defined from them); without, the hand-made
    evaluation answers."""
    return evaluate_ref(by_ref(pos))


@jit()
def evaluate_ref(pos_ref):
    """evaluate of a position passed by reference, as the search holds it (intrinsics.by_ref).
    The one compiled body of both forms."""
    pos = deref(pos_ref)
    st = pos.st
    if pos.net.info[INFO_MODE] != MODE_HANDMADE and st[ST_KING] >= 0 and st[ST_KING + 1] >= 0:
        return nnue_evaluate(pos)
    return handmade_evaluate(pos)


@jit()
def handmade_evaluate(pos):
    """The hand-made evaluation, for the side to move."""
    st = pos.st
    score = st[ST_MATERIAL] + st[ST_PSQ] + king_safety(pos, 0) - king_safety(pos, 1)
    if st[ST_SIDE] == BLACK:
        return score + TEMPO
    return -score + TEMPO
