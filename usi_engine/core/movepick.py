"""Move ordering: TT best, TT second-best, good captures (MVV-LVA, losing ones last),
killers, the CounterMove of the previous move, then quiet moves and drops by Butterfly and
continuation history.  Moves are scored once, then picked best-first by partial selection.
"""
import numpy as np
from numba import njit

from .types import DROP_BASE, PAWN
from .attacks import is_attacked
from .weights import TYPE_VALUE
from .history import quiet_score

SCORE_TT1 = 1 << 40
SCORE_TT2 = 1 << 39
SCORE_GOOD_CAPTURE = 1 << 30
SCORE_KILLER1 = 1 << 29
SCORE_KILLER2 = SCORE_KILLER1 - 1
SCORE_COUNTER = SCORE_KILLER1 - 2
SCORE_BAD_CAPTURE = -(1 << 30)


@njit(cache=True)
def is_capture_or_promotion(board, m):
    if ((m >> 7) & 127) >= DROP_BASE:
        return False
    return board[m & 127] != 0 or (m >> 14) & 1 == 1


@njit(cache=True)
def capture_score(board, m, them):
    """MVV-LVA; a capture that gives up more than it wins on a defended square goes last."""
    victim = TYPE_VALUE[board[m & 127] & 15]
    attacker = TYPE_VALUE[(m >> 15) & 15]
    promo = 0
    if (m >> 14) & 1:
        promo = TYPE_VALUE[((m >> 15) & 15) + 8] - attacker
    gain = victim + promo
    if victim < attacker and is_attacked(board, m & 127, them):
        return SCORE_BAD_CAPTURE + gain - attacker // 16
    return SCORE_GOOD_CAPTURE + gain * 16 - attacker // 16


@njit(cache=True)
def score_moves(pos, ctx, moves, scores, n, us, tt1, tt2, ply, counter, prev1, prev2):
    board = pos.board
    k1 = ctx.killers[ply, 0]
    k2 = ctx.killers[ply, 1]
    for i in range(n):
        m = moves[i]
        if m == tt1:
            scores[i] = SCORE_TT1
        elif m == tt2:
            scores[i] = SCORE_TT2
        elif is_capture_or_promotion(board, m):
            scores[i] = capture_score(board, m, 1 - us)
        elif m == k1:
            scores[i] = SCORE_KILLER1
        elif m == k2:
            scores[i] = SCORE_KILLER2
        elif m == counter:
            scores[i] = SCORE_COUNTER
        else:
            scores[i] = quiet_score(ctx, us, m, prev1, prev2)


@njit(cache=True)
def pick_next(moves, scores, start, n):
    """Swap the best-scored move of [start, n) to `start` and return it."""
    best = start
    for i in range(start + 1, n):
        if scores[i] > scores[best]:
            best = i
    if best != start:
        m = moves[best]
        moves[best] = moves[start]
        moves[start] = m
        s = scores[best]
        scores[best] = scores[start]
        scores[start] = s
    return moves[start]
