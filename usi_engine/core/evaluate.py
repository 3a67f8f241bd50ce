"""Static evaluation: material (kept incrementally by do_move), piece-square terms, and king
safety (defenders and attackers near each king, enemy pieces in hand).  Weights: weights.py."""
import numpy as np
from numba import njit

from .types import NSQ, BLACK, KING
from .attacks import RAY, RAY_LEN
from .board import ST_SIDE, ST_KING, ST_MATERIAL
from .weights import (PIECE_SQUARE, KING_DEFENDER, KING_ATTACKER, HAND_ATTACK,
                      KING_OPEN_SQUARE, TEMPO)


def _chebyshev():
    d = np.zeros((NSQ, NSQ), dtype=np.int64)
    for a in range(NSQ):
        for b in range(NSQ):
            d[a, b] = max(abs(a // 9 - b // 9), abs(a % 9 - b % 9))
    return d


DISTANCE = _chebyshev()     # king-move distance between two squares


@njit(cache=True)
def _king_danger(board, hands, ksq, color):
    """How exposed the king of `color` on ksq is (positive is bad for `color`)."""
    danger = 0
    for d in range(8):
        if RAY_LEN[ksq, d] > 0 and board[RAY[ksq, d, 0]] == 0:
            danger += KING_OPEN_SQUARE
    enemy_hand = 0
    for pt in range(1, 8):
        enemy_hand += HAND_ATTACK[pt] * hands[1 - color, pt]
    return danger + enemy_hand


@njit(cache=True)
def evaluate(pos):
    """Score of the position for the side to move (centipawn-like)."""
    board = pos.board
    st = pos.st
    kb = st[ST_KING]
    kw = st[ST_KING + 1]
    score = st[ST_MATERIAL]
    safety_b = 0
    safety_w = 0
    for sq in range(NSQ):
        p = board[sq]
        if p == 0:
            continue
        score += PIECE_SQUARE[p, sq]
        t = p & 15
        if t == KING:
            continue
        if (p >> 4) == BLACK:
            if kb >= 0 and DISTANCE[kb, sq] <= 2:
                safety_b += KING_DEFENDER[t]
            if kw >= 0 and DISTANCE[kw, sq] <= 2:
                safety_w -= KING_ATTACKER[t]
        else:
            if kw >= 0 and DISTANCE[kw, sq] <= 2:
                safety_w += KING_DEFENDER[t]
            if kb >= 0 and DISTANCE[kb, sq] <= 2:
                safety_b -= KING_ATTACKER[t]
    # an exposed king weighs double when few defenders stand by
    if kb >= 0:
        danger = _king_danger(board, pos.hands, kb, 0)
        safety_b -= danger if safety_b < 40 else danger // 2
    if kw >= 0:
        danger = _king_danger(board, pos.hands, kw, 1)
        safety_w -= danger if safety_w < 40 else danger // 2
    score += safety_b - safety_w
    if st[ST_SIDE] == BLACK:
        return score + TEMPO
    return -score + TEMPO
