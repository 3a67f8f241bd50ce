"""Move ordering, in stages: TT best, TT second-best, good captures (MVV-LVA, and capture
history when CaptureHistory is set), killers, the CounterMove of the previous move, quiet
moves and drops by Butterfly and continuation history (with QuietCheckBonus, a direct check
before the quiet moves of like history; with LowPlyHistory, near the root, by this search's
own history of the ply too), and losing captures last.  Each stage is generated only when
the ones before it did not cut off, and picked best-first by partial selection.  In check,
all evasions are generated at once and ordered the same way.
"""

import numpy as np

from .types import (
    jit,
    PAWN,
    PROMOTED,
    base_type,
    type_of,
    move_to,
    moved_piece,
    moved_piece_after,
    is_promotion,
)
from .weights import TYPE_VALUE, HAND_VALUE
from .history import LOW_PLY, quiet_score, capture_history, low_ply_score
from .params import (
    SP_CAPTURE_HISTORY,
    SP_QUIET_CHECK_BONUS,
    SP_QUIET_CHECK_SEE,
    SP_QUIET_CHECK_SEE_MARGIN,
    SP_LOW_PLY_HISTORY,
)
from .attacks import piece_attacks
from .board import ST_KING
from .see import see, see_ge, surely_keeps
from .movegen import generate_ref, is_legal_ref, GEN_ALL, GEN_CAPTURES, GEN_QUIETS
from .intrinsics import deref

SCORE_TT1 = 1 << 40
SCORE_TT2 = 1 << 39
SCORE_GOOD_CAPTURE = 1 << 30
SCORE_KILLER1 = 1 << 29
SCORE_KILLER2 = SCORE_KILLER1 - 1
SCORE_COUNTER = SCORE_KILLER1 - 2
SCORE_BAD_CAPTURE = -(1 << 30)


@jit()
def is_tactical(board, m):
    """A capture or a pawn promotion: exactly the moves of movegen's GEN_CAPTURES stage.
    Every other move (drops, and the non-capture promotions of the other pieces included)
    is quiet: ordered, reduced and rewarded by history like any quiet move."""
    return tactical_taking(board[move_to(m)], m)


@jit(inline="always")
def tactical_taking(victim, m):
    """is_tactical's rule for move m taking `victim` (0: nothing), so that a move already
    made, whose captured piece the position keeps, is judged the same way."""
    return victim != 0 or (is_promotion(m) == 1 and type_of(moved_piece(m)) == PAWN)


@jit()
def material_gain(board, m):
    """What move m wins at most at once: the captured piece's board value, the same piece's
    value in our hand, and the promotion gain."""
    gain = 0
    victim = type_of(board[move_to(m)])
    if victim != 0:
        gain = TYPE_VALUE[victim] + HAND_VALUE[base_type(victim)]
    if is_promotion(m):
        t = type_of(moved_piece(m))
        gain += TYPE_VALUE[t + PROMOTED] - TYPE_VALUE[t]
    return gain


@jit()
def capture_score(ctx, board, m):
    """MVV-LVA among the captures that do not lose material by SEE, plus their capture
    history weighted by CaptureHistory/64; the others go last, ordered by what the exchange
    loses."""
    if not surely_keeps(board, m, 0):
        s = see(board, m, ctx.see_buf)
        if s < 0:
            return SCORE_BAD_CAPTURE + s
    return capture_value(ctx, board, m)


@jit()
def capture_value(ctx, board, m):
    """capture_score of a capture that keeps its material by SEE: the score before SEE is
    asked (see pick_capture)."""
    victim = TYPE_VALUE[type_of(board[move_to(m)])]
    t = type_of(moved_piece(m))
    attacker = TYPE_VALUE[t]
    promo = 0
    if is_promotion(m):
        promo = TYPE_VALUE[t + PROMOTED] - attacker
    score = SCORE_GOOD_CAPTURE + (victim + promo) * 16 - attacker // 16
    weight = ctx.sp[SP_CAPTURE_HISTORY]
    if weight != 0:
        score += capture_history(ctx, board, m) * weight // 64
    return score


@jit()
def score_moves(pos, ctx, moves, scores, n, us, tt1, tt2, ply, counter, conts):
    board = pos.board
    k1 = ctx.killers[ply, 0]
    k2 = ctx.killers[ply, 1]
    for i in range(n):
        m = moves[i]
        if m == tt1:
            scores[i] = SCORE_TT1
        elif m == tt2:
            scores[i] = SCORE_TT2
        elif is_tactical(board, m):
            scores[i] = capture_score(ctx, board, m)
        elif m == k1:
            scores[i] = SCORE_KILLER1
        elif m == k2:
            scores[i] = SCORE_KILLER2
        elif m == counter:
            scores[i] = SCORE_COUNTER
        else:
            scores[i] = quiet_score(ctx, us, m, conts)


@jit(inline="always")
def checks_directly(board, m, eksq):
    """Quiet move or drop m puts its piece where it attacks the enemy king on `eksq` (the
    board before the move: the square it leaves cannot block its own line to the king,
    or the king would stand in check already)."""
    return eksq >= 0 and piece_attacks(board, move_to(m), moved_piece_after(m), eksq)


@jit(inline="always")
def _check_bonus(pos, ctx, us, m):
    """QuietCheckBonus for a quiet move that checks directly (with QuietCheckSee, only if
    SEE says it loses at most QuietCheckSeeMargin), else 0.  The quiet stage asks twice, when
    it scores the move and when it hands it out, so this must not depend on anything else."""
    sp = ctx.sp
    bonus = sp[SP_QUIET_CHECK_BONUS]
    if bonus == 0 or not checks_directly(pos.board, m, pos.st[ST_KING + 1 - us]):
        return 0
    if sp[SP_QUIET_CHECK_SEE] != 0 and not see_ge(pos.board, m, -sp[SP_QUIET_CHECK_SEE_MARGIN], ctx.see_buf):
        return 0
    return bonus


@jit(inline="always")
def _ordering_bonus(pos, ctx, us, m, ply):
    """What a quiet move's ordering score holds beside its history (QuietCheckBonus,
    LowPlyHistory): added when the quiet moves are scored, and taken off again where the
    search reads that score as history (LMR, pruning)."""
    return _check_bonus(pos, ctx, us, m) + low_ply_score(ctx, ctx.sp, ply, m)


@jit(inline="always")
def _has_ordering_bonus(sp, ply):
    """Whether any of _ordering_bonus's settings is on at `ply`."""
    return sp[SP_QUIET_CHECK_BONUS] != 0 or (sp[SP_LOW_PLY_HISTORY] != 0 and ply < LOW_PLY)


@jit(inline="always")
def _best_from(scores, start, n):
    """The index of the best score in [start, n), the first of equals."""
    best = start
    best_score = scores[start]  # kept in a register: the loop reads each score once
    for i in range(start + 1, n):
        s = scores[i]
        if s > best_score:
            best_score = s
            best = i
    return best


@jit(inline="always")
def _bring_to(moves, scores, best, start):
    """Swap entry `best` with entry `start` and return the move now at `start`."""
    if best != start:
        m = moves[best]
        moves[best] = moves[start]
        moves[start] = m
        s = scores[best]
        scores[best] = scores[start]
        scores[start] = s
    return moves[start]


@jit()
def pick_next(moves, scores, start, n):
    """Swap the best-scored move of [start, n) to `start` and return it."""
    return _bring_to(moves, scores, _best_from(scores, start, n), start)


@jit()
def score_captures(ctx, board, moves, scores, n, tt1, tt2):
    """The ordering scores of the captures stage's moves before any SEE (the TT moves on
    top, the rest by capture_value), for pick_capture."""
    for i in range(n):
        m = moves[i]
        if m == tt1:
            scores[i] = SCORE_TT1
        elif m == tt2:
            scores[i] = SCORE_TT2
        else:
            scores[i] = capture_value(ctx, board, m)


@jit()
def pick_capture(ctx, board, moves, scores, start, n):
    """pick_next over captures scored by score_captures, asking SEE only of the move it is
    about to hand out: one that loses material gets capture_score's losing score in place
    and the pick starts again. A capture's score never rises by SEE, so every move this
    returns, and every swap it makes, is the one that pick_next would make over
    capture_score's scores; most nodes cut off or stop after a capture or two, and the
    captures after that are never looked at by SEE."""
    while True:
        best = _best_from(scores, start, n)
        m = moves[best]
        if SCORE_BAD_CAPTURE < scores[best] < SCORE_TT2 and not surely_keeps(board, m, 0):
            s = see(board, m, ctx.see_buf)  # a capture SEE has not judged yet
            if s < 0:
                scores[best] = SCORE_BAD_CAPTURE + s
                continue
        return _bring_to(moves, scores, best, start)


# ctx.picker[ply] holds one picker's state:
PICK_STAGE = 0  # the stage below
PICK_CUR = 1  # next index to pick from in ctx.moves[ply]
PICK_END = 2  # end of the current stage's moves
PICK_N = 3  # moves generated so far (all of them once quiets are generated)
PICK_TT1 = 4
PICK_TT2 = 5
PICK_SCORE = 6  # ordering score of the move just returned
PICK_KILLER1 = 7  # refutations already tried as their own stage
PICK_KILLER2 = 8
PICK_COUNTER = 9
PICK_BAD = 10  # start of the losing captures kept for the last stage
PICK_BAD_END = 11
PICK_NB = 12

STAGE_TT1, STAGE_TT2, STAGE_CAPTURES_GEN, STAGE_GOOD_CAPTURES = 0, 1, 2, 3
STAGE_KILLER1, STAGE_KILLER2, STAGE_COUNTER, STAGE_QUIETS_GEN, STAGE_QUIETS = 4, 5, 6, 7, 8
STAGE_BAD_CAPTURES, STAGE_EVASIONS_GEN, STAGE_EVASIONS, STAGE_DONE = 9, 10, 11, 12


@jit()
def picker_init(ctx, ply, tt1, tt2, in_check, counter):
    """Start picking at `ply`.  tt1/tt2 must be legal here or 0."""
    pk = ctx.picker[ply]
    pk[PICK_STAGE] = STAGE_EVASIONS_GEN if in_check else STAGE_TT1
    pk[PICK_CUR] = 0
    pk[PICK_END] = 0
    pk[PICK_N] = 0
    pk[PICK_TT1] = tt1
    pk[PICK_TT2] = tt2 if tt2 != tt1 else 0
    pk[PICK_KILLER1] = ctx.killers[ply, 0]
    pk[PICK_KILLER2] = ctx.killers[ply, 1]
    pk[PICK_COUNTER] = counter


@jit()
def _is_special(pk, m):
    """Already tried in an earlier stage (TT moves, killers, counter)."""
    return (
        m == pk[PICK_TT1]
        or m == pk[PICK_TT2]
        or m == pk[PICK_KILLER1]
        or m == pk[PICK_KILLER2]
        or m == pk[PICK_COUNTER]
    )


@jit()
def _refutation(pos_ref, board, pk, m):
    """A killer or counter move worth trying here: legal, quiet, and not a TT move."""
    return (
        m != 0
        and m != pk[PICK_TT1]
        and m != pk[PICK_TT2]
        and is_legal_ref(pos_ref, m)
        and not is_tactical(board, m)
    )


@jit()
def picker_next(pos_ref, ctx_ref, ply, us, conts, skip_quiets):
    """The next move to search at `ply`, 0 when there are no more (the position and the
    context by reference: intrinsics.by_ref)."""
    pos = deref(pos_ref)
    ctx = deref(ctx_ref)
    pk = ctx.picker[ply]
    moves = ctx.moves[ply]
    scores = ctx.scores[ply]
    while True:
        stage = pk[PICK_STAGE]
        if stage == STAGE_TT1:
            pk[PICK_STAGE] = STAGE_TT2
            if pk[PICK_TT1] != 0:
                pk[PICK_SCORE] = SCORE_TT1
                return np.int32(pk[PICK_TT1])
        elif stage == STAGE_TT2:
            pk[PICK_STAGE] = STAGE_CAPTURES_GEN
            if pk[PICK_TT2] != 0:
                pk[PICK_SCORE] = SCORE_TT2
                return np.int32(pk[PICK_TT2])
        elif stage == STAGE_CAPTURES_GEN:
            n = generate_ref(pos_ref, moves, GEN_CAPTURES, False)
            score_captures(ctx, pos.board, moves, scores, n, 0, 0)
            pk[PICK_CUR] = 0
            pk[PICK_END] = n
            pk[PICK_N] = n
            pk[PICK_STAGE] = STAGE_GOOD_CAPTURES
        elif stage == STAGE_GOOD_CAPTURES:
            while pk[PICK_CUR] < pk[PICK_END]:
                i = pk[PICK_CUR]
                m = pick_capture(ctx, pos.board, moves, scores, i, pk[PICK_END])
                if scores[i] < 0:
                    break  # the rest lose material: last stage
                pk[PICK_CUR] = i + 1
                if m != pk[PICK_TT1] and m != pk[PICK_TT2]:
                    pk[PICK_SCORE] = scores[i]
                    return m
            pk[PICK_BAD] = pk[PICK_CUR]
            pk[PICK_BAD_END] = pk[PICK_END]
            pk[PICK_STAGE] = STAGE_KILLER1
        elif stage == STAGE_KILLER1:
            pk[PICK_STAGE] = STAGE_KILLER2
            m = np.int32(pk[PICK_KILLER1])
            if not skip_quiets and _refutation(pos_ref, pos.board, pk, m):
                pk[PICK_SCORE] = SCORE_KILLER1
                return m
        elif stage == STAGE_KILLER2:
            pk[PICK_STAGE] = STAGE_COUNTER
            m = np.int32(pk[PICK_KILLER2])
            if not skip_quiets and m != pk[PICK_KILLER1] and _refutation(pos_ref, pos.board, pk, m):
                pk[PICK_SCORE] = SCORE_KILLER2
                return m
        elif stage == STAGE_COUNTER:
            pk[PICK_STAGE] = STAGE_QUIETS_GEN
            m = np.int32(pk[PICK_COUNTER])
            if (
                not skip_quiets
                and m != pk[PICK_KILLER1]
                and m != pk[PICK_KILLER2]
                and _refutation(pos_ref, pos.board, pk, m)
            ):
                pk[PICK_SCORE] = SCORE_COUNTER
                return m
        elif stage == STAGE_QUIETS_GEN:
            start = pk[PICK_N]
            n = generate_ref(pos_ref, moves[start:], GEN_QUIETS, False)
            for i in range(start, start + n):
                scores[i] = quiet_score(ctx, us, moves[i], conts)
            if _has_ordering_bonus(ctx.sp, ply):
                for i in range(start, start + n):
                    scores[i] += _ordering_bonus(pos, ctx, us, moves[i], ply)
            pk[PICK_CUR] = start
            pk[PICK_END] = start + n
            pk[PICK_N] = start + n
            pk[PICK_STAGE] = STAGE_QUIETS
        elif stage == STAGE_QUIETS:
            while not skip_quiets and pk[PICK_CUR] < pk[PICK_END]:
                i = pk[PICK_CUR]
                m = pick_next(moves, scores, i, pk[PICK_END])
                pk[PICK_CUR] = i + 1
                if not _is_special(pk, m):
                    pk[PICK_SCORE] = scores[i] - _ordering_bonus(pos, ctx, us, m, ply)  # history
                    return m
            pk[PICK_CUR] = pk[PICK_BAD]
            pk[PICK_STAGE] = STAGE_BAD_CAPTURES
        elif stage == STAGE_BAD_CAPTURES:
            while pk[PICK_CUR] < pk[PICK_BAD_END]:
                i = pk[PICK_CUR]
                m = pick_next(moves, scores, i, pk[PICK_BAD_END])
                pk[PICK_CUR] = i + 1
                if m != pk[PICK_TT1] and m != pk[PICK_TT2]:
                    pk[PICK_SCORE] = scores[i]
                    return m
            pk[PICK_STAGE] = STAGE_DONE
        elif stage == STAGE_EVASIONS_GEN:
            n = generate_ref(pos_ref, moves, GEN_ALL, False)
            score_moves(
                pos,
                ctx,
                moves,
                scores,
                n,
                us,
                pk[PICK_TT1],
                pk[PICK_TT2],
                ply,
                pk[PICK_COUNTER],
                conts,
            )
            pk[PICK_CUR] = 0
            pk[PICK_END] = n
            pk[PICK_N] = n
            pk[PICK_STAGE] = STAGE_EVASIONS
        elif stage == STAGE_EVASIONS:
            if pk[PICK_CUR] < pk[PICK_END]:
                i = pk[PICK_CUR]
                m = pick_next(moves, scores, i, pk[PICK_END])
                pk[PICK_CUR] = i + 1
                pk[PICK_SCORE] = scores[i]
                return m
            pk[PICK_STAGE] = STAGE_DONE
        else:
            return np.int32(0)
