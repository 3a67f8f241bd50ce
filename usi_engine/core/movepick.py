"""Move ordering: TT best, TT second-best, good captures (MVV-LVA, losing ones last),
killers, the CounterMove of the previous move, then quiet moves and drops by Butterfly and
continuation history.  Moves are scored once, then picked best-first by partial selection.
"""
import numpy as np

from .types import jit, DROP_BASE, PAWN
from .attacks import is_attacked
from .weights import TYPE_VALUE
from .history import quiet_score
from .movegen import generate, GEN_ALL

SCORE_TT1 = 1 << 40
SCORE_TT2 = 1 << 39
SCORE_GOOD_CAPTURE = 1 << 30
SCORE_KILLER1 = 1 << 29
SCORE_KILLER2 = SCORE_KILLER1 - 1
SCORE_COUNTER = SCORE_KILLER1 - 2
SCORE_BAD_CAPTURE = -(1 << 30)


@jit()
def is_capture_or_promotion(board, m):
    if ((m >> 7) & 127) >= DROP_BASE:
        return False
    return board[m & 127] != 0 or (m >> 14) & 1 == 1


@jit()
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


@jit()
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


@jit()
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


# A move picker per ply lives in ctx.picker[ply] =
#   [stage, next index, count, tt1, tt2, score of the last move, tt moves already tried]
STAGE_TT1 = 0
STAGE_TT2 = 1
STAGE_GENERATE = 2
STAGE_REST = 3
PICK_STAGE, PICK_CUR, PICK_N, PICK_TT1, PICK_TT2, PICK_SCORE, PICK_TT_TRIED = 0, 1, 2, 3, 4, 5, 6
PICK_NB = 7


@jit()
def picker_init(ctx, ply, tt1, tt2, generate_now):
    """Start picking at `ply`: the two TT moves (already legal-checked, 0 if none) come
    before anything is generated, so a TT cutoff costs no move generation.  With
    generate_now (in check) all moves are generated at once, the TT moves ordered first."""
    pk = ctx.picker[ply]
    pk[PICK_STAGE] = STAGE_GENERATE if generate_now else STAGE_TT1
    pk[PICK_CUR] = 0
    pk[PICK_N] = -1
    pk[PICK_TT1] = tt1
    pk[PICK_TT2] = tt2 if tt2 != tt1 else 0
    pk[PICK_TT_TRIED] = 0 if generate_now else 1   # else they still lead the ordering


@jit()
def picker_next(pos, ctx, ply, us, counter, prev1, prev2):
    """The next move to search at `ply`, 0 when there are no more.  After generation,
    ctx.picker[ply][PICK_N] holds the legal move count and PICK_SCORE the move's score."""
    pk = ctx.picker[ply]
    if pk[PICK_STAGE] == STAGE_TT1:
        pk[PICK_STAGE] = STAGE_TT2
        if pk[PICK_TT1] != 0:
            pk[PICK_SCORE] = SCORE_TT1
            return np.int32(pk[PICK_TT1])
    if pk[PICK_STAGE] == STAGE_TT2:
        pk[PICK_STAGE] = STAGE_GENERATE
        if pk[PICK_TT2] != 0:
            pk[PICK_SCORE] = SCORE_TT2
            return np.int32(pk[PICK_TT2])
    moves = ctx.moves[ply]
    scores = ctx.scores[ply]
    if pk[PICK_STAGE] == STAGE_GENERATE:
        pk[PICK_STAGE] = STAGE_REST
        n = generate(pos, moves, GEN_ALL, False)
        pk[PICK_N] = n
        score_moves(pos, ctx, moves, scores, n, us, pk[PICK_TT1], pk[PICK_TT2], ply, counter,
                    prev1, prev2)
    n = pk[PICK_N]
    while pk[PICK_CUR] < n:
        i = pk[PICK_CUR]
        m = pick_next(moves, scores, i, n)
        pk[PICK_CUR] = i + 1
        if not pk[PICK_TT_TRIED] or (m != pk[PICK_TT1] and m != pk[PICK_TT2]):
            pk[PICK_SCORE] = scores[i]
            return m
    return np.int32(0)
