"""Alpha-beta search: PVS with quiescence, a shared TT of best and second-best moves,
sennichite and perpetual-check scoring, history-driven ordering and reductions, a static
evaluation corrected by what earlier searches found it missed (correction.py), a singular
extension of the TT move with multi-cut, and quiescence nodes that look for a mate in one
before they stand pat.

Depth is counted in half plies (ONE_PLY = 2) so that checks can be extended by half a ply,
as Yamashita's YSS does.  The search polls ctx.stop and the node limit every node and
returns at once when told; the caller throws away an interrupted result.

Four classic techniques are switches, off by default (docs/EXPERIMENTS.md):
multi-iterative deepening (P_MID), YSS's half-ply extension of the TT move (P_HALF_PLY,
P_HALF_PLY_FULL), Tsuruoka's one-side-limited PVS (P_OSL) and move ordering by a shallow
search (P_SHALLOW_ORDER).  classic.py decides and keeps what they do; the searches they run
are the node's.  With all of them off the tree is the one of the plain search.
The context, its ctx.params switches and ctx.stats counters are in context.py.
Ideas not yet shown to pay stand off by a tunable's default (params.py, docs/bench.md): LMR
of losing captures (LmrBadCaptures, measured level), capture history in the order of
captures (CaptureHistory, undecided), one ply more of LMR where the evaluation is not
improving (LmrNotImproving, measured negative), ProbCut (ProbCutDepth, undecided), a
shallower search of a TT move that is not singular where a cutoff is expected
(SingularNegative, undecided), more LMR after a capturing TT move (LmrTtCapture, undecided),
LMR by history in half plies (LmrHistoryDiv, measured level), more LMR at cut nodes
(LmrCutNode 2, undecided), the half-ply extension of checks only from depth 10 and only
of checks that lose no material (CheckExtensionDepth and CheckExtensionSee, undecided; by
default every check is extended) and the later moves of a PV node a ply shallower once one
raised alpha (AlphaRaiseReduce, undecided), LMR of quiet checks with no check extension
below 16 plies (LmrChecks with CheckExtensionDepth 16, undecided) and LMR of the root's
late quiet moves (LmrRoot, undecided); not yet measured: the null move only at expected cut
nodes (NullMoveCutOnly), the search again of a reduced move that beat alpha a ply deeper or
shallower by its score (LmrResearchAdjust) and a ply less of LMR at nodes that were on the
PV (TtPvReduce, the TT's PV flag). Futility and SEE pruning of late quiet moves judge a
move by the depth LMR would leave it (PruneLmrDepth, on), as Stockfish does; a quiescence node searches at
most QsMoveCount (2) captures besides recaptures on the last move's square, as YaneuraOu and
Stockfish do, and in check skips the quiet evasions that lose material by SEE once one
evasion has saved the king (QsEvasionSee 90), as YaneuraOu does.
"""

import numpy as np
from numba import int64

from .types import (
    jit,
    MAX_PLY,
    MOVE_NULL,
    PAWN,
    BISHOP,
    ROOK,
    move_to,
    move_from,
    moved_piece,
    is_promotion,
    type_of,
    is_drop,
    file_of,
    rank_of,
)
from .board import (
    do_move,
    do_move_ref,
    undo_move_ref,
    do_null_move,
    undo_null_move,
    repetition_state,
    ST_SIDE,
    ST_KING,
    ST_PLY,
    ST_MOVENUM,
    REP_NONE,
    REP_DRAW,
    REP_WIN,
    REP_LOSE,
    REP_SUPERIOR,
)
from .movegen import (
    generate,
    generate_ref,
    generate_checks_ref,
    ALL_TYPES,
    GEN_ALL,
    GEN_CAPTURES,
    is_legal_ref,
    gives_check,
    has_legal_move,
)
from .evaluate import evaluate_ref
from .tt import (
    prefetch,
    probe,
    store,
    value_to_tt,
    value_from_tt,
    VALUE_MATE,
    VALUE_MATE_IN_MAX,
    BOUND_NONE,
    BOUND_UPPER,
    BOUND_LOWER,
    BOUND_EXACT,
    EVAL_NONE,
)
from .history import (
    NO_CONTINUATION,
    LOW_PLY,
    update_quiet,
    update_low_ply,
    update_capture,
    history_bonus,
    piece_to,
)
from .correction import correction, update_correction
from .movepick import (
    score_moves,
    score_captures,
    pick_next,
    pick_capture,
    is_tactical,
    tactical_taking,
    material_gain,
    picker_init,
    picker_next,
    PICK_N,
    PICK_SCORE,
    PICK_CUR,
)
from .short_mate import mate_in_1_ref
from .intrinsics import by_ref, deref
from .see import see_ge
from .params import (
    SP_RAZOR_MARGIN,
    SP_FUTILITY_MARGIN,
    SP_FUTILITY_DEPTH,
    SP_FAIL_HIGH_DAMP,
    SP_QS_FAIL_HIGH_DAMP,
    SP_QS_STAND_PAT_STORE,
    SP_FUTILITY_TT_GUARD,
    SP_NULL_MOVE_DEPTH,
    SP_NULL_MOVE_BASE,
    SP_NULL_MOVE_DIV,
    SP_IIR_DEPTH,
    SP_NULL_MOVE_EVAL_DIV,
    SP_NULL_MOVE_EVAL_MAX,
    SP_NULL_MOVE_CUT_ONLY,
    SP_NULL_MOVE_MARGIN,
    SP_NULL_MOVE_MARGIN_DEPTH,
    SP_TT_VALUE_EVAL,
    SP_PROB_CUT_DEPTH,
    SP_PROB_CUT_MARGIN,
    SP_MATE1_DEPTH,
    SP_SINGULAR_DEPTH,
    SP_SINGULAR_EXTRA,
    SP_SINGULAR_MARGIN,
    SP_LMP_DEPTH,
    SP_LMP_BASE,
    SP_LMP_NOT_IMPROVING,
    SP_LMP_CHECKS,
    SP_PV_PRUNE,
    SP_FUTILITY_MOVE_DEPTH,
    SP_FUTILITY_MOVE_BASE,
    SP_FUTILITY_MOVE_MARGIN,
    SP_HISTORY_PRUNE_DEPTH,
    SP_HISTORY_PRUNE,
    SP_LMR_MIN_DEPTH,
    SP_LMR_HISTORY_GOOD,
    SP_LMR_HISTORY_BAD,
    SP_LMR_NOT_IMPROVING,
    SP_LMR_BAD_CAPTURES,
    SP_LMR_TT_CAPTURE,
    SP_LMR_CUT_NODE,
    SP_LMR_PV_NODE,
    SP_LMR_CHECKS,
    SP_SINGULAR_NEGATIVE,
    SP_CHECK_EXTENSION_DEPTH,
    SP_CHECK_EXTENSION_SEE,
    SP_ALPHA_RAISE_REDUCE,
    SP_LMR_RESEARCH_ADJUST,
    SP_TT_PV_REDUCE,
    SP_LMR_ROOT,
    SP_LMR_DEEPER_MARGIN,
    SP_LMR_SHALLOWER_MARGIN,
    SP_PRUNE_LMR_DEPTH,
    SP_LMR_HISTORY_DIV,
    SP_DELTA_MARGIN,
    SP_QS_MATE1_FIRST_PLY,
    SP_QS_MOVE_COUNT,
    SP_QS_EVASION_SEE,
    SP_QS_QUIET_EVASIONS,
    SP_QS_QUIET_EVASION_HISTORY,
    SP_QS_CHECKS,
    SP_LOW_PLY_HISTORY,
    SP_SUPERIOR_VALUE,
    SP_CAPTURE_HISTORY,
    SP_CONTINUATION_FAR,
    SP_SEE_DEPTH,
    SP_SEE_CAPTURE_MARGIN,
    SP_SEE_QUIET_MARGIN,
    SP_SEE_QUIET_CHECK,
    SP_SEE_EVASIONS,
    SP_LMR_EVASIONS,
    SP_TT_CUTOFF_HISTORY,
    SP_FAIL_LOW_PRIOR_BONUS,
    SP_LMR_PARENT_LATE,
    SP_LMR_PARENT_LATE_MOVES,
    SP_LMR_ROOT_REPLIES,
    SP_LMR_DROP_NEAR_KING,
    SP_LMR_DROP_NEAR_KING_DISTANCE,
    SP_MATE_THREAT_EXTENSION,
)
from .context import (
    POS_T,
    CTX_T,
    POS_REF,
    CTX_REF,
    ONE_PLY,
    VALUE_INF,
    LMR_TABLE,
    QUIETS_KEPT,
    CAPTURES_KEPT,
    P_GENERATION,
    P_ROOT_SIDE,
    P_DRAW_VALUE,
    P_NODE_LIMIT,
    P_NULL_MOVE,
    P_LMR,
    P_FUTILITY,
    P_RAZORING,
    P_CHECK_EXT,
    P_MATE1,
    P_ROOT_N,
    P_PV_INDEX,
    P_ROOT_PLY,
    P_ROOT_DEPTH,
    P_IIR,
    P_MAX_GAME_PLY,
    P_CORRECTION,
    P_QS_MATE1,
    S_NODES,
    S_SELDEPTH,
    S_ABORTED,
    S_ROOT_DONE,
    S_FULL_PLY,
    S_MID_ACTIVE,
    S_MID_ITERS,
    S_OSL_PLY,
)
from .classic import (
    mid_first_depth,
    yss_on,
    yss_extension,
    yss_full_again,
    osl_begin,
    osl_end,
    osl_restrict,
    osl_role,
    osl_unproven,
    shallow_wanted,
    tt_moves_done,
    shallow_order_begin,
    shallow_score,
    usual_score,
    picker_list,
)

# The context's layout is the driver's view of the search: search/searcher.py, the tests and
# usi-engine experiments name it through this module (cs.new_context, cs.P_MID, cs.S_*).
from .context import (
    SearchCtx as SearchCtx,
    new_context as new_context,
    set_search_params as set_search_params,
    STACK as STACK,
    P_NB as P_NB,
    S_NB as S_NB,
    P_MID as P_MID,
    P_HALF_PLY as P_HALF_PLY,
    P_HALF_PLY_FULL as P_HALF_PLY_FULL,
    P_OSL as P_OSL,
    P_SHALLOW_ORDER as P_SHALLOW_ORDER,
    S_MID_NODES as S_MID_NODES,
    S_OSL_SCOUTS as S_OSL_SCOUTS,
    S_OSL_RESEARCHES as S_OSL_RESEARCHES,
    S_OSL_RESTRICTED as S_OSL_RESTRICTED,
    S_OSL_UNPROVEN as S_OSL_UNPROVEN,
    S_SHALLOW_NODES as S_SHALLOW_NODES,
    S_CUTOFFS as S_CUTOFFS,
    S_FIRST_MOVE_CUTOFFS as S_FIRST_MOVE_CUTOFFS,
    S_CUTOFF_MOVE_SUM as S_CUTOFF_MOVE_SUM,
)

# A perpetual check decided by the path (the checker loses): a win, but no proven mate, so it
# stays below the mate scores and is never printed as `score mate`.
VALUE_PERPETUAL = VALUE_MATE_IN_MAX - MAX_PLY - 1
REPETITION_SCAN = 32  # plies scanned back for an in-tree repetition
PROBCUT_SHALLOWER = 4  # ProbCut's search is this many plies shallower than its node


@jit(inline="always")
def mated_in(ply):
    return -VALUE_MATE + ply


@jit(inline="always")
def mate_in(ply):
    return VALUE_MATE - ply


@jit()
def _draw_value(pos, ctx):
    v = ctx.params[P_DRAW_VALUE]
    return v if pos.st[ST_SIDE] == ctx.params[P_ROOT_SIDE] else -v


@jit()
def _should_stop(ctx):
    if ctx.stop[0] != 0:
        return True
    limit = ctx.params[P_NODE_LIMIT]
    if limit > 0 and ctx.stats[S_NODES] >= limit:
        ctx.stop[0] = 1
        return True
    return False


@jit()
def _repetition_scan(pos, ply):
    """Plies to scan back for a repetition: REPETITION_SCAN, but never across a null move
    of the tree (a pass changes nothing on the board and would fake a repetition)."""
    now = pos.st[ST_PLY]
    for j in range(1, min(ply, REPETITION_SCAN) + 1):
        if pos.moves[now - j] == MOVE_NULL:
            return j - 1
    return REPETITION_SCAN


@jit()
def _repetition_score(pos, ctx, ply):
    """Score of an in-tree repetition, or VALUE_INF when there is none.  Every score but
    the draw depends on the path and marks ctx.path_dep[ply]."""
    rep = repetition_state(pos, _repetition_scan(pos, ply), 1)
    if rep == REP_NONE:
        return VALUE_INF
    if rep == REP_DRAW:
        return _draw_value(pos, ctx)
    if rep != REP_WIN and rep != REP_LOSE and ply <= 1:
        return VALUE_INF
    ctx.path_dep[ply] = 1
    if rep == REP_WIN:
        return VALUE_PERPETUAL - ply
    if rep == REP_LOSE:
        return -VALUE_PERPETUAL + ply
    if rep == REP_SUPERIOR:
        return ctx.sp[SP_SUPERIOR_VALUE]
    return -ctx.sp[SP_SUPERIOR_VALUE]


@jit()
def _game_ply_limit(pos, ctx, ply):
    """VALUE_INF, or the score of a node that reached MaxMovesToDraw (P_MAX_GAME_PLY plies
    of the game): a draw, unless the last move mated.  The score depends on the game ply,
    which the TT key ignores, so it marks the node path-dependent."""
    limit = ctx.params[P_MAX_GAME_PLY]
    if limit <= 0 or pos.st[ST_MOVENUM] - 1 + pos.st[ST_PLY] < limit:
        return VALUE_INF
    ctx.path_dep[ply] = 1
    if pos.checks[pos.st[ST_PLY]] != 0 and not has_legal_move(pos, ctx.moves[ply]):
        return mated_in(ply)
    return _draw_value(pos, ctx)


@jit()
def _plies_to_limit(pos, ctx):
    """Game plies left before MaxMovesToDraw ends the game (a large number when unlimited)."""
    limit = ctx.params[P_MAX_GAME_PLY]
    if limit <= 0:
        return 1 << 30
    return limit - (pos.st[ST_MOVENUM] - 1 + pos.st[ST_PLY])


@jit()
def _update_pv(ctx, ply, m):
    ctx.pv[ply, ply] = m
    end = ctx.pv_len[ply + 1]
    for i in range(ply + 1, end):
        ctx.pv[ply, i] = ctx.pv[ply + 1, i]
    ctx.pv_len[ply] = end if end > ply + 1 else ply + 1


@jit()
def _mate_in_1_found(ctx, key, m, ply, raw, depth, was_pv):
    """The score of a node whose move `m` mates at once: stored as exact, and the PV."""
    v = mate_in(ply + 1)
    store(ctx.tt, key, m, value_to_tt(v, ply), raw, depth, BOUND_EXACT, ctx.params[P_GENERATION], was_pv)
    ctx.pv_len[ply + 1] = ply + 1
    _update_pv(ctx, ply, m)
    return v


@jit(inline="always")
def _needless_non_promotion(m, prev):
    """Is m the non-promotion of a pawn, bishop or rook whose promotion `prev` came just
    before it?  generate_checks lists both (tsume needs them); promoting is never worse."""
    if is_drop(m) or is_promotion(m):
        return False
    t = type_of(moved_piece(m))
    if t != PAWN and t != BISHOP and t != ROOK:
        return False
    return is_promotion(prev) == 1 and move_from(prev) == move_from(m) and move_to(prev) == move_to(m)


@jit()
def _safe_quiet_checks(pos_ref, ctx_ref, moves):
    """QsChecks' moves, written over `moves`: the first QsChecks quiet checks (board moves
    and drops) that lose nothing by SEE; return how many.  The captures and pawn promotions
    among the checks were the captures' stage's."""
    pos = deref(pos_ref)
    ctx = deref(ctx_ref)
    n = generate_checks_ref(pos_ref, moves, ALL_TYPES)
    kept = 0
    prev = 0
    for i in range(n):
        m = moves[i]
        needless = _needless_non_promotion(m, prev)
        prev = m
        if is_tactical(pos.board, m) or needless:
            continue
        if kept >= ctx.sp[SP_QS_CHECKS]:
            break
        if see_ge(pos.board, m, 0, ctx.see_buf):
            moves[kept] = m  # kept <= i: nothing unread is overwritten
            kept += 1
    return kept


@jit(inline="always")
def _qs_damped(sp, best, beta, weight, total):
    """QsFailHighDamp: a quiescence fail-high pulled towards beta, best's weight out of total
    (a mate score, or with the setting off, stays as it is)."""
    if sp[SP_QS_FAIL_HIGH_DAMP] == 0 or abs(best) >= VALUE_MATE_IN_MAX:
        return best
    return (best * weight + beta * (total - weight)) // total


@jit(int64(POS_REF, CTX_REF, int64, int64, int64, int64), apart=True)
def qsearch(pos_ref, ctx_ref, alpha, beta, ply, first):
    """Captures and pawn promotions until the position is quiet; all evasions in check (with
    QsEvasionSee, not the losing quiet ones once the king is safe); and, below beta, a mate
    in one (P_QS_MATE1), the king attack a stand pat would miss.  `first` is 1 at the
    quiescence search's first ply, the one a full-width node of depth 0 enters (QsChecks
    searches quiet checks there, and with QsMate1FirstPly only it looks for a mate in one),
    and 0 below it; as in `search`, a typed value, never a literal."""
    pos = deref(pos_ref)  # the position and the context, passed by reference
    ctx = deref(ctx_ref)
    NOT_FIRST = np.int64(0)
    ctx.stats[S_NODES] += 1
    ctx.pv_len[ply] = ply
    ctx.path_dep[ply] = 0
    if ply > ctx.stats[S_SELDEPTH]:
        ctx.stats[S_SELDEPTH] = ply
    if _should_stop(ctx):
        return 0
    in_check = pos.checks[pos.st[ST_PLY]] != 0
    if ply >= MAX_PLY:
        return 0 if in_check else evaluate_ref(pos_ref)
    limit = _game_ply_limit(pos, ctx, ply)
    if limit != VALUE_INF:
        return limit
    key = pos.keys[pos.st[ST_PLY]]
    hit, tt1, tt2, tt_value, tt_eval, tt_depth, tt_bound, tt_was_pv = probe(ctx.tt, key)
    if hit:
        v = value_from_tt(tt_value, ply)
        if (
            tt_bound == BOUND_EXACT
            or (tt_bound == BOUND_LOWER and v >= beta)
            or (tt_bound == BOUND_UPPER and v <= alpha)
        ) and beta - alpha == 1:
            return v
    us = pos.st[ST_SIDE]
    raw = EVAL_NONE
    if in_check:
        best = -VALUE_INF
        stand_pat = -VALUE_INF
    else:
        raw, stand_pat = _static_eval(pos_ref, ctx, hit, tt_eval, ply)
        stand_pat = _tt_refined(ctx.sp, stand_pat, hit, value_from_tt(tt_value, ply), tt_bound)
        if _plies_to_limit(pos, ctx) <= 1:
            # every move ends the game in a draw (or mates): standing pat is a draw
            ctx.path_dep[ply] = 1
            stand_pat = _draw_value(pos, ctx)
        if stand_pat >= beta:
            if ctx.path_dep[ply]:
                return stand_pat  # the draw that every move ends in: exact, not a guess
            stand_pat = _qs_damped(ctx.sp, stand_pat, beta, 1, 2)
            if not hit and ctx.sp[SP_QS_STAND_PAT_STORE] != 0:
                gen = ctx.params[P_GENERATION]
                store(ctx.tt, key, 0, value_to_tt(stand_pat, ply), raw, 0, BOUND_LOWER, gen, False)
            return stand_pat
        # a mate in one is the attack standing pat would miss (only below beta: above, the
        # stand-pat cutoff holds whatever a mate adds)
        if ctx.params[P_QS_MATE1] and (first != 0 or ctx.sp[SP_QS_MATE1_FIRST_PLY] == 0):
            m = mate_in_1_ref(pos_ref, ctx.mate_buf)
            if m != 0:
                return _mate_in_1_found(ctx, key, m, ply, raw, 0, tt_was_pv)
        if stand_pat > alpha:
            alpha = stand_pat
        best = stand_pat
    moves = ctx.moves[ply]
    scores = ctx.scores[ply]
    # each mode a constant: numba compiles generate once per constant mode, without the
    # other modes' branches (a mode chosen at run time took a slower, generic copy)
    if in_check:
        n = generate_ref(pos_ref, moves, GEN_ALL, False)
    else:
        n = generate_ref(pos_ref, moves, GEN_CAPTURES, False)
    if in_check and n == 0:
        return mated_in(ply)
    if in_check:
        score_moves(pos, ctx, moves, scores, n, us, tt1, tt2, ply, -1, NO_CONTINUATION)
    else:
        score_captures(ctx, pos.board, moves, scores, n, tt1, tt2)  # SEE when picked
    best_move = 0
    # QsMoveCount: past this many captures, only recaptures on the last move's square
    move_cap = ctx.sp[SP_QS_MOVE_COUNT]
    evasion_margin = ctx.sp[SP_QS_EVASION_SEE]
    last_to = move_to(pos.moves[pos.st[ST_PLY] - 1]) if pos.st[ST_PLY] > 0 else -1
    searched = 0
    # the captures (in check, the evasions); then, at the first ply and still below beta,
    # QsChecks' quiet checks: the attack on the king that captures alone miss, their
    # replies searched in full as evasions one ply down
    checks_stage = False
    i = 0
    while True:
        if i == n:
            if checks_stage or not first or in_check or best >= beta or ctx.sp[SP_QS_CHECKS] == 0:
                break
            n = _safe_quiet_checks(pos_ref, ctx_ref, moves)
            checks_stage = True
            i = 0
            continue
        if checks_stage:
            m = moves[i]
        elif in_check:
            m = pick_next(moves, scores, i, n)
        else:
            m = pick_capture(ctx, pos.board, moves, scores, i, n)
        i += 1
        if checks_stage:
            pass  # safe quiet checks, chosen as they were made
        elif not in_check:
            # delta pruning: even winning the piece (board + hand value) and the promotion
            # cannot lift alpha
            if stand_pat + material_gain(pos.board, m) + ctx.sp[SP_DELTA_MARGIN] < alpha:
                continue
            if scores[i - 1] < 0:
                i = n  # losing captures are left alone
                continue
            if move_cap > 0 and searched >= move_cap and move_to(m) != last_to:
                continue
        elif best > -VALUE_MATE_IN_MAX and not is_tactical(pos.board, m):
            # the king is safe already: QsEvasionSee leaves out a quiet evasion that loses
            # material, QsQuietEvasions one that the continuation history does not vouch for
            if evasion_margin > 0 and not see_ge(pos.board, m, -evasion_margin, ctx.see_buf):
                continue
            if (
                ctx.sp[SP_QS_QUIET_EVASIONS] != 0
                and _continuation_score(ctx, ply, m) <= ctx.sp[SP_QS_QUIET_EVASION_HISTORY]
            ):
                continue
        searched += 1
        ctx.stack_pt[ply] = piece_to(m)
        do_move_ref(pos_ref, m)
        prefetch(ctx.tt, pos.keys[pos.st[ST_PLY]])
        v = -qsearch(pos_ref, ctx_ref, -beta, -alpha, ply + 1, NOT_FIRST)
        undo_move_ref(pos_ref)
        if ctx.stop[0] != 0:
            return 0
        if v > best:
            best = v
            if v > alpha:
                best_move = m
                alpha = v
                _update_pv(ctx, ply, m)
                if v >= beta:
                    break
    bound = BOUND_LOWER if best >= beta else BOUND_UPPER
    if best >= beta:
        best = _qs_damped(ctx.sp, best, beta, 3, 4)
    if ctx.path_dep[ply]:
        return best  # a score of this path (MaxMovesToDraw): not for the TT
    store(ctx.tt, key, best_move, value_to_tt(best, ply), raw, 0, bound, ctx.params[P_GENERATION], tt_was_pv)
    return best


@jit(inline="always")
def _null_move_hopeful(sp, static, beta, d_plies):
    """NullMoveMargin: the static evaluation stands far enough above beta for a pass to be
    likely to hold (less far at depth, where the pass is searched deeper); always with 0."""
    margin = sp[SP_NULL_MOVE_MARGIN]
    return margin == 0 or static >= beta + margin - sp[SP_NULL_MOVE_MARGIN_DEPTH] * d_plies


@jit()
def null_move_reduction(sp, d_plies, static, beta):
    """Plies the null-move search is reduced by: more at depth, and more the further the
    static evaluation stands above beta, since a pass is then the more likely to fail high."""
    by_eval = min((static - beta) // sp[SP_NULL_MOVE_EVAL_DIV], sp[SP_NULL_MOVE_EVAL_MAX])
    return sp[SP_NULL_MOVE_BASE] + d_plies // sp[SP_NULL_MOVE_DIV] + by_eval


@jit()
def _probcut_wanted(sp, d_plies, beta, hit, tt_depth, depth, tt_v, pc_beta):
    """ProbCut is on, the node deep enough, beta no mate score, and no TT entry from a
    search at least as deep as ProbCut's saying the node stays below its bar."""
    if sp[SP_PROB_CUT_DEPTH] == 0 or d_plies < sp[SP_PROB_CUT_DEPTH] or abs(beta) >= VALUE_MATE_IN_MAX:
        return False
    return not (hit and tt_depth >= depth - (PROBCUT_SHALLOWER - 1) * ONE_PLY and tt_v < pc_beta)


@jit(inline="always")
def _depth_after_reduced_fail_high(sp, new_depth, v, best):
    """The depth a late move is searched again to after its reduced search beat alpha: with
    LmrResearchAdjust, a ply deeper where it beat the node's best by far (LmrDeeperMargin
    plus 2 a ply), as the move is likely to be the new best and worth the look, a ply
    shallower where it only just beat it (LmrShallowerMargin), as Stockfish and YaneuraOu
    do; the unreduced depth otherwise."""
    if sp[SP_LMR_RESEARCH_ADJUST] == 0:
        return new_depth
    plies = new_depth // ONE_PLY
    if v > best + sp[SP_LMR_DEEPER_MARGIN] + 2 * plies:
        return new_depth + ONE_PLY
    if v < best + sp[SP_LMR_SHALLOWER_MARGIN]:
        return new_depth - ONE_PLY
    return new_depth


@jit(inline="always")
def _depth_after_alpha_raised(sp, depth, beta, v):
    """The depth the later moves of a PV node get once a move raised alpha to `v`:
    AlphaRaiseReduce plies less at nodes 3 to 11 plies deep, as Stockfish and YaneuraOu do,
    since a later move must now beat a real score, and a shallower look says whether it
    might; never where a mate score is in sight."""
    r = sp[SP_ALPHA_RAISE_REDUCE]
    if r > 0 and 3 * ONE_PLY <= depth < 12 * ONE_PLY and beta < VALUE_MATE_IN_MAX and v > -VALUE_MATE_IN_MAX:
        return depth - r * ONE_PLY
    return depth


@jit(inline="always")
def _table_reduction(ctx, d_plies, move_count):
    """The reduction table's plies for the move_count-th move of a node d_plies deep."""
    return ctx.reductions[min(d_plies, LMR_TABLE - 1), min(move_count, LMR_TABLE - 1)]


@jit()
def late_move_reduction(
    ctx, d_plies, move_count, history, pv_node, cut_node, improving, tt_capture, checks, tt_pv
):
    """Half plies a late move is searched shallower by: the table's, by depth and move
    number; LmrPvNode plies less at PV nodes, LmrCutNode plies more at an expected cut node; by the
    move's history (a ply less where it is good, a ply more where it is bad; with
    LmrHistoryDiv in half plies, in proportion); LmrNotImproving plies more where the static
    evaluation is no better than two plies before, since fewer moves there will fail high;
    LmrTtCapture more where the TT move is a capture, which the later moves rarely beat; a
    ply less for a check (reduced only with LmrChecks), likelier than a quiet move to
    matter; TtPvReduce plies less at a non-PV node that is or was on the PV (`tt_pv`)."""
    sp = ctx.sp
    r = _table_reduction(ctx, d_plies, move_count) * ONE_PLY
    if pv_node:
        r -= sp[SP_LMR_PV_NODE] * ONE_PLY
    if cut_node:
        r += sp[SP_LMR_CUT_NODE] * ONE_PLY
    if sp[SP_LMR_HISTORY_DIV] > 0:
        by_history = abs(history) * ONE_PLY // sp[SP_LMR_HISTORY_DIV]  # rounded towards 0
        r -= min(by_history, ONE_PLY) if history > 0 else -min(by_history, 2 * ONE_PLY)
    elif history > sp[SP_LMR_HISTORY_GOOD]:
        r -= ONE_PLY
    elif history < -sp[SP_LMR_HISTORY_BAD]:
        r += ONE_PLY
    if not improving:
        r += sp[SP_LMR_NOT_IMPROVING] * ONE_PLY
    if tt_capture:
        r += sp[SP_LMR_TT_CAPTURE] * ONE_PLY
    if checks:
        r -= ONE_PLY
    if tt_pv and not pv_node:
        r -= sp[SP_TT_PV_REDUCE] * ONE_PLY
    return max(r, 0)


@jit(inline="always")
def _parent_late_relief(ctx, ply):
    """LmrParentLate: half plies less LMR at a node the opponent reached by a late move,
    whose refutation is likely to be a late move too."""
    sp = ctx.sp
    if sp[SP_LMR_PARENT_LATE] == 0 or ply == 0 or ctx.stack_count[ply - 1] <= sp[SP_LMR_PARENT_LATE_MOVES]:
        return 0
    return sp[SP_LMR_PARENT_LATE] * ONE_PLY


@jit(inline="always")
def _root_replies_relief(ctx, ply):
    """LmrRootReplies: half plies less LMR for the replies to a root move (ply 1), where a
    reduced refutation makes the root's choice."""
    if ply != 1:
        return 0
    return ctx.sp[SP_LMR_ROOT_REPLIES] * ONE_PLY


@jit(inline="always")
def _drop_near_king_relief(ctx, pos, m):
    """LmrDropNearKing: half plies less LMR for a drop (just made) near the king of the side
    now to move, the attack a drop refutes a late root move with."""
    sp = ctx.sp
    if sp[SP_LMR_DROP_NEAR_KING] == 0 or not is_drop(m):
        return 0
    ksq = pos.st[ST_KING + pos.st[ST_SIDE]]
    if ksq < 0:
        return 0
    to = move_to(m)
    near = sp[SP_LMR_DROP_NEAR_KING_DISTANCE]
    if abs(file_of(to) - file_of(ksq)) > near or abs(rank_of(to) - rank_of(ksq)) > near:
        return 0
    return sp[SP_LMR_DROP_NEAR_KING] * ONE_PLY


@jit(inline="always")
def _mate_threat_extension(ctx, null_value, ply):
    """MateThreatExtension: half plies more for a node where passing loses to a mate (the
    null move's search found the opponent's mate), the classic mate-threat extension: a
    static evaluation above beta with a mate threat under it is the optimism that loses
    games to attacks on the king.  Only within the extensions' bound (twice the root
    depth)."""
    ext = ctx.sp[SP_MATE_THREAT_EXTENSION]
    if ext == 0 or null_value > -VALUE_MATE_IN_MAX or ply >= 2 * ctx.params[P_ROOT_DEPTH]:
        return 0
    return ext


@jit(inline="always")
def _count_cutoff(ctx, move_count):
    """The move ordering's record: a beta cutoff by the node's move number `move_count`."""
    ctx.stats[S_CUTOFFS] += 1
    ctx.stats[S_CUTOFF_MOVE_SUM] += move_count
    if move_count == 1:
        ctx.stats[S_FIRST_MOVE_CUTOFFS] += 1


@jit(inline="always")
def _at_least_one_ply(new_depth, r):
    """The reduction r of a move searched to new_depth, cut back so that the reduced search
    keeps at least one ply, in whole plies (a reduction that leaves only qsearch would judge
    the move by its captures alone)."""
    if new_depth - r < ONE_PLY:
        return max(new_depth - ONE_PLY, 0) // ONE_PLY * ONE_PLY
    return r


@jit(inline="always")
def _pruning_depth(ctx, d_plies, move_count):
    """The depth, in plies, that futility and SEE pruning judge a late quiet move by: the
    node's, or with PruneLmrDepth the one LMR's table would leave it, since a move that a
    reduced search would barely look at is not worth a full margin."""
    if ctx.sp[SP_PRUNE_LMR_DEPTH] == 0:
        return d_plies
    return max(d_plies - 1 - _table_reduction(ctx, d_plies, move_count), 0)


@jit(inline="always")
def _check_extension(pos, ctx, m, d_plies):
    """Half a ply for a checking move `m` at a node of `d_plies` plies: at every depth by
    default; with CheckExtensionDepth only from that depth on, and with CheckExtensionSee
    only for a check that loses no material, as YaneuraOu keeps checks from piling up
    extensions in shogi, where one check follows another."""
    if d_plies < ctx.sp[SP_CHECK_EXTENSION_DEPTH]:
        return 0
    if ctx.sp[SP_CHECK_EXTENSION_SEE] != 0 and not see_ge(pos.board, m, 0, ctx.see_buf):
        return 0
    return ONE_PLY // 2


@jit(inline="always")
def _piece_to_before(ctx, ply, back):
    """The continuation index (history.piece_to) of the move `back` plies above this node,
    -1 above the root."""
    return ctx.stack_pt[ply - back] if ply >= back else -1


@jit(inline="always")
def _continuation_score(ctx, ply, m):
    """The continuation history of move m after the moves one and two plies above `ply`."""
    pt = piece_to(m)
    s = np.int64(0)
    for back in range(1, 3):
        prev = _piece_to_before(ctx, ply, back)
        if prev >= 0:
            s += ctx.continuation[prev, pt]
    return s


@jit(inline="always")
def _continuation_keys(ctx, ply):
    """The node's continuation keys (history.NO_CONTINUATION's shape): the moves one and two
    plies above it, and with ContinuationFar the moves four and six plies above, whose
    follow-ups Stockfish and YaneuraOu also learn."""
    far = ctx.sp[SP_CONTINUATION_FAR]
    return (
        _piece_to_before(ctx, ply, 1),
        _piece_to_before(ctx, ply, 2),
        _piece_to_before(ctx, ply, 4) if far >= 1 else -1,
        _piece_to_before(ctx, ply, 6) if far >= 2 else -1,
    )


@jit()
def _static_eval(pos_ref, ctx, hit, tt_eval, ply):
    """(raw, corrected) static evaluation of a position not in check: the TT keeps the raw
    one, the search prunes with the corrected one."""
    raw = tt_eval if hit and tt_eval != EVAL_NONE else evaluate_ref(pos_ref)
    pos = deref(pos_ref)
    if ctx.params[P_CORRECTION] == 0:
        return raw, raw
    prev = _piece_to_before(ctx, ply, 1)
    v = raw + correction(pos, ctx, prev)
    return raw, max(-VALUE_MATE_IN_MAX + 1, min(VALUE_MATE_IN_MAX - 1, v))


@jit(inline="always")
def _damped_fail_high(sp, best, alpha, beta, d_plies):
    """FailHighDamp: a non-PV node's fail-high value pulled towards beta, the more the
    shallower the node, since a fail-soft value far above beta is the least sure part of a
    cutoff; mate scores as they are."""
    if sp[SP_FAIL_HIGH_DAMP] == 0 or max(abs(best), abs(alpha), abs(beta)) >= VALUE_MATE_IN_MAX:
        return best
    return (best * d_plies + beta) // (d_plies + 1)


@jit(inline="always")
def _futility_guarded(pos, sp, tt_pv, tt1):
    """FutilityTtGuard: no reverse futility at a node that is or was on the PV, where a wrong
    cutoff costs the most, nor where the TT move is quiet, since a quiet move that once beat
    this node's bound is what a static margin cannot see."""
    if sp[SP_FUTILITY_TT_GUARD] == 0:
        return False
    return tt_pv or (tt1 != 0 and not is_tactical(pos.board, tt1))


@jit()
def _tt_refined(sp, static, hit, tt_v, tt_bound):
    """The static evaluation, or with TtValueEval the TT's value where the entry's bound says
    the true value lies beyond the static one on the TT's side: a search result is a better
    guess than the evaluation for pruning, as Stockfish and YaneuraOu use it."""
    if sp[SP_TT_VALUE_EVAL] == 0 or not hit or abs(tt_v) >= VALUE_MATE_IN_MAX:
        return static
    if (tt_bound & (BOUND_LOWER if tt_v > static else BOUND_UPPER)) != 0:
        return tt_v
    return static


@jit()
def _learn_correction(pos, ctx, ply, static, best, best_move, bound, d_plies):
    """A search result that the static evaluation missed, by a quiet (or no) best move and
    within what the bound proves, corrects later evaluations."""
    if ctx.params[P_CORRECTION] == 0 or abs(best) >= VALUE_MATE_IN_MAX:
        return
    if best_move != 0 and is_tactical(pos.board, best_move):
        return
    if (bound == BOUND_LOWER and best <= static) or (bound == BOUND_UPPER and best >= static):
        return
    prev = _piece_to_before(ctx, ply, 1)
    update_correction(pos, ctx, prev, best - static, d_plies)


@jit()
def _reward_cutoff(ctx, us, m, ply, conts, d_plies, failed, n_failed):
    """Reward the quiet move that cut off; penalise the quiet moves tried before it."""
    bonus = history_bonus(ctx.sp, d_plies)
    update_quiet(ctx, us, m, conts, bonus)
    for j in range(n_failed):
        update_quiet(ctx, us, failed[j], conts, -bonus)
    if ply < LOW_PLY and ctx.sp[SP_LOW_PLY_HISTORY] != 0:
        update_low_ply(ctx, ply, m, bonus)
        for j in range(n_failed):
            update_low_ply(ctx, ply, failed[j], -bonus)
    if ctx.killers[ply, 0] != m:
        ctx.killers[ply, 1] = ctx.killers[ply, 0]
        ctx.killers[ply, 0] = m
    if conts[0] >= 0:
        ctx.counter[conts[0]] = m


@jit()
def _reward_tt_cutoff(pos_ref, ctx_ref, ply, m, d_plies):
    """TtCutoffHistory: a quiet TT move whose stored bound ends the node is rewarded as a
    searched cutoff would be. It is checked first: the entry may be another position's."""
    pos = deref(pos_ref)
    if is_tactical(pos.board, m) or not is_legal_ref(pos_ref, m):
        return
    ctx = deref(ctx_ref)
    conts = _continuation_keys(ctx, ply)
    _reward_cutoff(ctx, pos.st[ST_SIDE], m, ply, conts, d_plies, ctx.quiets[ply], 0)


@jit()
def _reward_prior_move(pos, ctx, ply, d_plies):
    """FailLowPriorBonus: every move here failed low, so the opponent's quiet move that led
    here refuted them all; it is rewarded in the opponent's histories, under the continuation
    keys of the node it was played from."""
    if ply < 1 or ctx.stack_pt[ply - 1] < 0:
        return  # the root, or after a null move
    before = pos.st[ST_PLY] - 1
    prior = pos.moves[before]
    if tactical_taking(pos.captures[before], prior):
        return  # a capture or a pawn promotion: not a quiet move
    them = 1 - pos.st[ST_SIDE]
    update_quiet(ctx, them, prior, _continuation_keys(ctx, ply - 1), history_bonus(ctx.sp, d_plies))


@jit()
def _capture_stats(ctx, board, best_move, tactical, d_plies, tried, n_tried):
    """At a cutoff (CaptureHistory on): reward the capture that cut off; penalise the
    captures tried before the move that did."""
    bonus = history_bonus(ctx.sp, d_plies)
    if tactical:
        update_capture(ctx, board, best_move, bonus)
    for j in range(n_tried):
        update_capture(ctx, board, tried[j], -bonus)


@jit(int64(POS_REF, CTX_REF, int64, int64, int64, int64, int64), apart=True, after=(qsearch,))
def search(pos_ref, ctx_ref, alpha, beta, depth, ply, cut_node):
    """Negamax alpha-beta (PVS) to `depth` half plies; returns the score for the side to move.
    cut_node is 1 where a cutoff is expected.  Every argument of a recursive call must be a
    typed value, never a literal (True, 1): a literal-typed call is left unresolved in numba's
    on-disk cache and the next start aborts with 'Symbol not found'.

    The node runs in seven phases, each under its heading below: entering the node, the TT,
    before the moves (a mate in one, the static evaluation, pruning), a move to try first,
    the TT move and the picker, the move loop, and the result."""
    pos = deref(pos_ref)  # the position and the context, passed by reference
    ctx = deref(ctx_ref)
    YES = np.int64(1)  # typed, not literal, arguments for the recursive calls
    NO = np.int64(0)
    if depth < ONE_PLY:
        return qsearch(pos_ref, ctx_ref, alpha, beta, ply, YES)
    pv_node = beta - alpha > 1

    # ---- 1. entering the node: counters, the stop, the horizon, repetitions, the game's
    # length, mate distance
    ctx.stats[S_NODES] += 1
    ctx.pv_len[ply] = ply
    ctx.path_dep[ply] = 0
    ctx.stack_count[ply] = 0  # no move yet: the null move and ProbCut see none
    if ply > ctx.stats[S_SELDEPTH]:
        ctx.stats[S_SELDEPTH] = ply
    if ply > ctx.stats[S_FULL_PLY]:
        ctx.stats[S_FULL_PLY] = ply
    if _should_stop(ctx):
        return 0
    pos_ply = pos.st[ST_PLY]
    in_check = pos.checks[pos_ply] != 0
    if ply >= MAX_PLY:
        return 0 if in_check else evaluate_ref(pos_ref)
    rep = _repetition_score(pos, ctx, ply)
    if rep != VALUE_INF:
        return rep
    limit = _game_ply_limit(pos, ctx, ply)
    if limit != VALUE_INF:
        return limit
    # mate distance pruning
    if alpha < mated_in(ply):
        alpha = mated_in(ply)
    if beta > mate_in(ply + 1):
        beta = mate_in(ply + 1)
    if alpha >= beta:
        return alpha

    # ---- 2. the TT: an entry at least as deep ends a non-PV node
    key = pos.keys[pos_ply]
    hit, tt1, tt2, tt_value, tt_eval, tt_depth, tt_bound, tt_was_pv = probe(ctx.tt, key)
    tt_v = value_from_tt(tt_value, ply) if hit else 0
    tt_pv = pv_node or tt_was_pv  # on the PV now or in an earlier search (TtPvReduce)
    # a singular-extension search of this node without one move: no cutoff by the TT entry
    # of the whole node, no pruning before the move loop, nothing stored
    excluded = ctx.excluded[ply]
    if hit and not pv_node and tt_depth >= depth and excluded == 0:
        if (
            tt_bound == BOUND_EXACT
            or (tt_bound == BOUND_LOWER and tt_v >= beta)
            or (tt_bound == BOUND_UPPER and tt_v <= alpha)
        ):
            if ctx.sp[SP_TT_CUTOFF_HISTORY] != 0 and tt1 != 0 and tt_v >= beta:
                _reward_tt_cutoff(pos_ref, ctx_ref, ply, tt1, depth // ONE_PLY)
            return tt_v
    params = ctx.params
    sp = ctx.sp
    us = pos.st[ST_SIDE]
    d_plies = depth // ONE_PLY

    # ---- 3. before the moves: a mate in one, the static evaluation, and the pruning it
    # allows (razoring, reverse futility, null move, ProbCut)
    # a mate in one ends the node at once (the TT remembers it)
    if params[P_MATE1] and not in_check and not hit and d_plies >= sp[SP_MATE1_DEPTH]:
        m = mate_in_1_ref(pos_ref, ctx.mate_buf)
        if m != 0:
            return _mate_in_1_found(ctx, key, m, ply, EVAL_NONE, depth, tt_pv)

    # static evaluation and the pruning it allows
    raw = EVAL_NONE
    if in_check:
        static = -VALUE_INF
    else:
        raw, static = _static_eval(pos_ref, ctx, hit, tt_eval, ply)
    ctx.stack_eval[ply] = static
    improving = ply >= 2 and not in_check and static > ctx.stack_eval[ply - 2]
    # what razoring, reverse futility and the null move judge the node by (TtValueEval)
    judged = static if in_check else _tt_refined(sp, static, hit, tt_v, tt_bound)
    # within reach of MaxMovesToDraw the static eval says nothing about the result
    near_end = _plies_to_limit(pos, ctx) <= d_plies + 1
    if not in_check and not pv_node and not near_end and excluded == 0:
        if params[P_RAZORING] and d_plies <= 2 and judged + sp[SP_RAZOR_MARGIN] * d_plies < alpha:
            v = qsearch(pos_ref, ctx_ref, alpha - 1, alpha, ply, NO)
            if v < alpha:
                return v
        if (
            params[P_FUTILITY]
            and d_plies <= sp[SP_FUTILITY_DEPTH]
            and judged - sp[SP_FUTILITY_MARGIN] * (d_plies - improving) >= beta
            and judged < VALUE_MATE_IN_MAX
            and not _futility_guarded(pos, sp, tt_pv, tt1)
        ):
            return (judged + beta) // 2 if sp[SP_FAIL_HIGH_DAMP] != 0 else judged
        # null move: never twice in a row (the previous move's continuation index is -1);
        # with NullMoveCutOnly only where a cutoff is expected
        if (
            params[P_NULL_MOVE]
            and d_plies >= sp[SP_NULL_MOVE_DEPTH]
            and (cut_node or sp[SP_NULL_MOVE_CUT_ONLY] == 0)
            and judged >= beta
            and _null_move_hopeful(sp, static, beta, d_plies)
            and ply > 0
            and ctx.stack_pt[ply - 1] >= 0
            and beta > -VALUE_MATE_IN_MAX
        ):
            r = null_move_reduction(sp, d_plies, judged, beta)
            ctx.stack_pt[ply] = -1
            do_null_move(pos)
            v = -search(pos_ref, ctx_ref, -beta, -beta + 1, depth - r * ONE_PLY, ply + 1, 1 - cut_node)
            undo_null_move(pos)
            if ctx.stop[0] != 0:
                return 0
            if v >= beta:
                ctx.path_dep[ply] = ctx.path_dep[ply + 1]
                return beta if v >= VALUE_MATE_IN_MAX else v
            depth += _mate_threat_extension(ctx, v, ply)
            d_plies = depth // ONE_PLY
        # ProbCut: a capture that beats beta by a margin in a search PROBCUT_SHALLOWER plies
        # shallower very likely beats beta in the full one. Not where the TT already says a
        # search that deep stays below that bar.
        pc_beta = beta + sp[SP_PROB_CUT_MARGIN]
        if _probcut_wanted(sp, d_plies, beta, hit, tt_depth, depth, tt_v, pc_beta):
            moves = ctx.moves[ply]
            scores = ctx.scores[ply]
            n = generate_ref(pos_ref, moves, GEN_CAPTURES, False)
            score_moves(pos, ctx, moves, scores, n, us, tt1, tt2, ply, -1, NO_CONTINUATION)
            pc_depth = depth - PROBCUT_SHALLOWER * ONE_PLY
            for i in range(n):
                m = pick_next(moves, scores, i, n)
                if not see_ge(pos.board, m, pc_beta - static, ctx.see_buf):
                    continue  # even the exchange's gain leaves it short of the bar
                ctx.stack_pt[ply] = piece_to(m)
                do_move_ref(pos_ref, m)
                # a quiescence search first: most captures fail there, cheaply
                v = -qsearch(pos_ref, ctx_ref, -pc_beta, -pc_beta + 1, ply + 1, NO)
                if v >= pc_beta and pc_depth >= ONE_PLY:
                    v = -search(pos_ref, ctx_ref, -pc_beta, -pc_beta + 1, pc_depth, ply + 1, 1 - cut_node)
                undo_move_ref(pos_ref)
                if ctx.stop[0] != 0:
                    return 0
                if v >= pc_beta:
                    ctx.path_dep[ply] = ctx.path_dep[ply + 1]
                    # a path's score, or a bound a restricted scout does not prove: not stored
                    unproven = osl_unproven(ctx, osl_role(ctx, ply), BOUND_LOWER)
                    if ctx.path_dep[ply] == 0 and not unproven:
                        store(
                            ctx.tt,
                            key,
                            m,
                            value_to_tt(v, ply),
                            raw,
                            pc_depth + ONE_PLY,
                            BOUND_LOWER,
                            params[P_GENERATION],
                            tt_pv,
                        )
                    return v

    # ---- 4. a move to try first
    # multi-iterative deepening (classic.py): iterations from a shallow depth leave a move to
    # try first
    d = mid_first_depth(ctx, hit, d_plies)
    if d >= 0:
        while d < depth and ctx.stop[0] == 0:
            ctx.stats[S_MID_ITERS] += 1
            search(pos_ref, ctx_ref, alpha, beta, d, ply, cut_node)
            d += ONE_PLY
        ctx.stats[S_MID_ACTIVE] = 0
        if ctx.stop[0] != 0:
            return 0
        ctx.stack_eval[ply] = static
        hit, tt1, tt2, _v, _e, _d, _b, _pv = probe(ctx.tt, key)

    # internal iterative reduction: with no move to try first, a deep search is a guess
    if params[P_IIR] and tt1 == 0 and d_plies >= sp[SP_IIR_DEPTH]:
        depth -= ONE_PLY
        d_plies -= 1

    # ---- 5. the TT move and the picker: legality, the singular extension, the picker (and
    # what one-side-limited PVS and shallow-search ordering change of it)
    extend_ok = ply < 2 * params[P_ROOT_DEPTH]
    if tt1 != 0 and not is_legal_ref(pos_ref, tt1):
        tt1 = 0
    if tt2 != 0 and not is_legal_ref(pos_ref, tt2):
        tt2 = 0
    tt_capture = tt1 != 0 and is_tactical(pos.board, tt1)
    # singular extension: if no other move comes near the TT move's value, extend the TT move;
    # if another move also beats beta, the node fails high at once (multi-cut). Searched
    # before the picker starts, since the search of this node without tt1 uses this ply's
    # move list, picker and killers.
    tt_ext = 0  # the TT move's extension by the singular test
    if (
        sp[SP_SINGULAR_DEPTH] > 0
        and d_plies >= sp[SP_SINGULAR_DEPTH]
        and tt1 != 0
        and ply > 0
        and excluded == 0
        and (tt_bound & BOUND_LOWER) != 0
        and tt_depth >= depth - 3 * ONE_PLY
        and abs(tt_v) < VALUE_MATE_IN_MAX
        and extend_ok
    ):
        s_beta = tt_v - sp[SP_SINGULAR_MARGIN] * d_plies
        ctx.excluded[ply] = tt1
        v = search(pos_ref, ctx_ref, s_beta - 1, s_beta, (depth - ONE_PLY) // 2, ply, cut_node)
        ctx.excluded[ply] = 0
        if ctx.stop[0] != 0:
            return 0
        ctx.stack_eval[ply] = static
        if v < s_beta:
            # singular: a ply, and SingularExtra more away from the PV, where the search is
            # narrowest and a forced line the likeliest to be cut short
            tt_ext = ONE_PLY if pv_node else (1 + sp[SP_SINGULAR_EXTRA]) * ONE_PLY
        elif s_beta >= beta:
            return s_beta  # ctx.path_dep[ply] is that search's
        elif tt_v >= beta or cut_node:
            # another move comes near it, and a cutoff is expected anyway: if the TT move
            # does not give it at less depth, another move will (SingularNegative)
            tt_ext = -sp[SP_SINGULAR_NEGATIVE] * ONE_PLY
    conts = _continuation_keys(ctx, ply)
    counter = ctx.counter[conts[0]] if conts[0] >= 0 else 0
    picker_init(ctx, ply, tt1, tt2, in_check, counter)
    picker = ctx.picker[ply]
    osl = osl_restrict(pos, ctx, ply, tt1, in_check)  # one-side-limited PVS (classic.py)
    # shallow-search ordering (classic.py) waits until the TT moves failed to cut off
    shallow_pending = shallow_wanted(ctx, osl, in_check, d_plies)
    shallow_ordered = False

    # ---- 6. the move loop: ordering, pruning of late moves, extensions, PVS with reductions
    best = -VALUE_INF
    best_move = 0
    quiets_tried = 0
    captures_tried = 0
    path_dep = 0
    move_count = 0
    skip_quiets = False
    yss = extend_ok and yss_on(params)  # YSS's half-ply extension (classic.py)
    # late moves are pruned away from the PV, and with PvPrune on the PV too (the root, in
    # root_search, prunes none)
    prune_late = not pv_node or sp[SP_PV_PRUNE] != 0
    while True:
        if shallow_pending and tt_moves_done(picker):
            # order the other moves by a shallow search of each in a window around the
            # node's, ties by the usual order
            shallow_pending = False
            shallow_ordered = True
            n, shallow, lo, hi = shallow_order_begin(pos, ctx, ply, us, alpha, beta, tt1, tt2, counter, conts)
            for i in range(n):
                m = pick_next(ctx.moves[ply], ctx.scores[ply], i, n)  # rank i, usual order
                ctx.stack_pt[ply] = piece_to(m)
                do_move_ref(pos_ref, m)
                v = -search(pos_ref, ctx_ref, -hi, -lo, shallow, ply + 1, NO)
                undo_move_ref(pos_ref)
                if ctx.stop[0] != 0:
                    return 0
                ctx.scores[ply, i] = shallow_score(v, i)
            picker_list(ctx, ply, n)
        m = picker_next(pos_ref, ctx_ref, ply, us, conts, skip_quiets)
        if m == 0:
            break
        if m == excluded:
            continue
        if shallow_ordered:
            picker[PICK_SCORE] = usual_score(
                pos, ctx, picker[PICK_CUR] - 1, us, tt1, tt2, ply, counter, conts
            )
        quiet = not is_tactical(pos.board, m)
        if quiet and skip_quiets:
            continue
        move_count += 1
        ctx.stack_count[ply] = move_count
        checks = gives_check(pos, m)
        prune_d = _pruning_depth(ctx, d_plies, move_count)
        # shallow pruning of late quiet moves: by their number (with LmpChecks the quiet
        # checks too), futility and history
        late_quiet = prune_late and not in_check and quiet and best > -VALUE_MATE_IN_MAX and not near_end
        if (
            late_quiet
            and (not checks or sp[SP_LMP_CHECKS] != 0)
            and params[P_FUTILITY]
            and d_plies <= sp[SP_LMP_DEPTH]
            and move_count
            > (sp[SP_LMP_BASE] + d_plies * d_plies)
            // (1 + (sp[SP_LMP_NOT_IMPROVING] if not improving else 0))
        ):
            skip_quiets = True
            continue
        if late_quiet and not checks:
            if (
                params[P_FUTILITY]
                and prune_d <= sp[SP_FUTILITY_MOVE_DEPTH]
                and static + sp[SP_FUTILITY_MOVE_BASE] + sp[SP_FUTILITY_MOVE_MARGIN] * prune_d <= alpha
            ):
                continue
            # history pruning: a quiet move that keeps failing here is not worth a look
            if (
                params[P_FUTILITY]
                and d_plies <= sp[SP_HISTORY_PRUNE_DEPTH]
                and picker[PICK_SCORE] < -sp[SP_HISTORY_PRUNE] * d_plies
            ):
                continue
        # SEE pruning at shallow depth: captures that lose material, quiet moves and checks
        # that put a piece where it is lost (with SeeEvasions in check too, once the king is
        # safe; with SeeQuietCheck a quiet check by the captures' rule, as it is never reduced)
        if (
            prune_late
            and best > -VALUE_MATE_IN_MAX
            and params[P_FUTILITY]
            and not near_end
            and (not in_check or sp[SP_SEE_EVASIONS] != 0)
            and d_plies <= sp[SP_SEE_DEPTH]
            and move_count > 1
        ):
            check_as_capture = checks and sp[SP_SEE_QUIET_CHECK] != 0
            if quiet and not check_as_capture:
                if not see_ge(pos.board, m, -sp[SP_SEE_QUIET_MARGIN] * prune_d * prune_d, ctx.see_buf):
                    continue
            elif picker[PICK_SCORE] < 0 or checks:
                if not see_ge(pos.board, m, -sp[SP_SEE_CAPTURE_MARGIN] * d_plies, ctx.see_buf):
                    continue
        ext = 0
        if extend_ok and params[P_CHECK_EXT]:
            if checks:
                ext = _check_extension(pos, ctx, m, d_plies)
            if in_check and picker[PICK_N] == 1:
                ext = ONE_PLY
        if tt_ext != 0 and m == tt1:
            ext = tt_ext
        half_ply = yss_extension(m, tt1, ext) if yss else 0
        ext += half_ply
        new_depth = depth - ONE_PLY + ext
        ctx.stack_pt[ply] = piece_to(m)
        do_move_ref(pos_ref, m)
        prefetch(ctx.tt, pos.keys[pos.st[ST_PLY]])
        if move_count == 1:
            v = -search(pos_ref, ctx_ref, -beta, -alpha, new_depth, ply + 1, NO if pv_node else 1 - cut_node)
        else:
            r = 0
            # a capture that loses material by SEE is tried after the quiet moves and rarely
            # wins: LmrBadCaptures reduces it as a late quiet move (without its history)
            bad_capture = not quiet and picker[PICK_SCORE] < 0
            if (
                params[P_LMR]
                and d_plies >= sp[SP_LMR_MIN_DEPTH]
                and (not in_check or sp[SP_LMR_EVASIONS] != 0)
                and (not checks or (quiet and sp[SP_LMR_CHECKS] != 0))
                and (quiet or (bad_capture and sp[SP_LMR_BAD_CAPTURES] != 0))
            ):
                r = late_move_reduction(
                    ctx,
                    d_plies,
                    move_count,
                    picker[PICK_SCORE] if quiet else 0,
                    pv_node,
                    cut_node,
                    improving,
                    tt_capture,
                    checks,
                    tt_pv,
                )
                relief = (
                    _parent_late_relief(ctx, ply)
                    + _root_replies_relief(ctx, ply)
                    + _drop_near_king_relief(ctx, pos, m)
                )
                r = _at_least_one_ply(new_depth, max(r - relief, 0))
            restricted = osl_begin(ctx, pv_node, d_plies, ply)
            reduced = new_depth - r
            v = -search(pos_ref, ctx_ref, -alpha - 1, -alpha, reduced, ply + 1, YES)
            if v > alpha and r > 0:
                new_depth = _depth_after_reduced_fail_high(sp, new_depth, v, best)
                if new_depth > reduced:
                    v = -search(pos_ref, ctx_ref, -alpha - 1, -alpha, new_depth, ply + 1, 1 - cut_node)
            if restricted and osl_end(ctx, v, alpha):
                # an unproven fail-high: the same scout without the restriction
                v = -search(pos_ref, ctx_ref, -alpha - 1, -alpha, new_depth, ply + 1, YES)
            if v > alpha and v < beta and pv_node:
                v = -search(pos_ref, ctx_ref, -beta, -alpha, new_depth, ply + 1, NO)
        if yss and pv_node and yss_full_again(params, half_ply, ext, v, alpha) and ctx.stop[0] == 0:
            # full half-ply extension: a move that becomes the best of a PV node is searched
            # again as deep as the TT move was (elsewhere a move above alpha refutes, it is
            # no new best line; re-searching those too cost as much: docs/EXPERIMENTS.md)
            v = -search(pos_ref, ctx_ref, -beta, -alpha, new_depth + ONE_PLY // 2, ply + 1, NO)
        undo_move_ref(pos_ref)
        if ctx.stop[0] != 0:
            return 0
        path_dep |= ctx.path_dep[ply + 1]
        if v > best:
            best = v
            if v > alpha:
                best_move = m
                if pv_node:
                    _update_pv(ctx, ply, m)
                if v >= beta:
                    _count_cutoff(ctx, move_count)
                    break
                alpha = v
                depth = _depth_after_alpha_raised(sp, depth, beta, v)
                d_plies = depth // ONE_PLY
        if quiet and m != best_move and quiets_tried < QUIETS_KEPT:
            ctx.quiets[ply, quiets_tried] = m  # penalised if a later move cuts off
            quiets_tried += 1
        elif not quiet and m != best_move and captures_tried < CAPTURES_KEPT:
            ctx.captures[ply, captures_tried] = m
            captures_tried += 1

    # ---- 7. the result: mated, or the history of a cutoff, the correction history, the TT
    if move_count == 0:
        if excluded != 0:
            return alpha  # the left-out move is the only one: singular
        return mated_in(ply)  # no legal move loses in shogi, in check or not
    if excluded != 0:
        ctx.path_dep[ply] = path_dep
        return best
    if best >= beta and best_move != 0:
        tactical = is_tactical(pos.board, best_move)
        if not tactical:
            _reward_cutoff(ctx, us, best_move, ply, conts, d_plies, ctx.quiets[ply], quiets_tried)
        if sp[SP_CAPTURE_HISTORY] != 0:
            _capture_stats(ctx, pos.board, best_move, tactical, d_plies, ctx.captures[ply], captures_tried)
    if best >= beta and not pv_node:
        best = _damped_fail_high(sp, best, alpha, beta, d_plies)
    bound = BOUND_LOWER if best >= beta else (BOUND_EXACT if pv_node and best_move != 0 else BOUND_UPPER)
    ctx.path_dep[ply] = path_dep
    if osl_unproven(ctx, osl, bound):
        return best  # a restricted search did not prove this bound
    if bound == BOUND_UPPER and sp[SP_FAIL_LOW_PRIOR_BONUS] != 0 and (d_plies >= 3 or pv_node):
        _reward_prior_move(pos, ctx, ply, d_plies)
    if path_dep:
        bound = BOUND_NONE  # a score of this path only: keep the move, not the value
    elif not in_check:
        _learn_correction(pos, ctx, ply, static, best, best_move, bound, d_plies)
    store(ctx.tt, key, best_move, value_to_tt(best, ply), raw, depth, bound, params[P_GENERATION], tt_pv)
    return best


@jit()
def _root_reduction(pos, ctx, m, move_count, depth, new_depth, in_check, checks):
    """Half plies the root's move_count-th move `m` is searched shallower by (LmrRoot):
    from the third move on, a quiet move that does not check, reduced as at a PV node; never
    below one ply.  0 with LmrRoot off, where every root move goes to the full depth."""
    sp = ctx.sp
    d_plies = depth // ONE_PLY
    if (
        sp[SP_LMR_ROOT] == 0
        or ctx.params[P_LMR] == 0
        or move_count < 3
        or d_plies < sp[SP_LMR_MIN_DEPTH]
        or in_check
        or checks
        or is_tactical(pos.board, m)
    ):
        return 0
    # typed arguments, the same kinds as the move loop's call: one compiled signature
    yes = move_count > 0
    no = move_count < 0
    r = late_move_reduction(ctx, d_plies, move_count, np.int64(0), yes, np.int64(0), yes, no, no, yes)
    return _at_least_one_ply(new_depth, r)


@jit(int64(POS_T, CTX_T, int64, int64, int64), after=(search, qsearch), nogil=True)
def root_search(pos, ctx, alpha, beta, depth):
    """One iteration over the root moves from P_PV_INDEX on (ctx.root_moves, ordered by the
    previous iteration).  A move that raises alpha moves to the front; ctx.pv[0] is its line.
    Returns the best score (a fail-low returns <= alpha).  On stop, S_ABORTED is set and
    S_ROOT_DONE tells how many moves were finished."""
    pos_ref = by_ref(pos)  # what the searches below the root are given
    ctx_ref = by_ref(ctx)
    params = ctx.params
    YES = np.int64(1)  # typed, not literal, arguments for the recursive calls
    NO = np.int64(0)
    ONE = np.int64(1)
    ctx.stats[S_ABORTED] = 0
    ctx.stats[S_ROOT_DONE] = 0
    ctx.stats[S_MID_ACTIVE] = 0
    ctx.stats[S_OSL_PLY] = 0
    params[P_ROOT_DEPTH] = depth // ONE_PLY
    first = params[P_PV_INDEX]
    n = params[P_ROOT_N]
    best = -VALUE_INF
    alpha_in = alpha
    path_dep = 0
    in_check = pos.checks[pos.st[ST_PLY]] != 0
    for i in range(first, n):
        m = ctx.root_moves[i]
        ctx.stack_count[0] = i - first + 1
        ext = 0
        checks = gives_check(pos, m)
        if params[P_CHECK_EXT]:
            if checks:
                ext = _check_extension(pos, ctx, m, depth // ONE_PLY)
            if in_check and n == 1:
                ext = ONE_PLY
        # YSS: the first move is the best of the previous iteration
        half_ply = yss_extension(m, m, ext) if i == first and yss_on(params) else 0
        ext += half_ply
        new_depth = depth - ONE_PLY + ext
        r = _root_reduction(pos, ctx, m, i - first + 1, depth, new_depth, in_check, checks)
        ctx.stack_pt[0] = piece_to(m)
        do_move(pos, m)
        if i == first:
            v = -search(pos_ref, ctx_ref, -beta, -alpha, new_depth, ONE, NO)
        else:
            restricted = osl_begin(ctx, True, depth // ONE_PLY, 0)
            v = -search(pos_ref, ctx_ref, -alpha - 1, -alpha, new_depth - r, ONE, YES)
            if v > alpha and r > 0 and ctx.stop[0] == 0:
                v = -search(pos_ref, ctx_ref, -alpha - 1, -alpha, new_depth, ONE, YES)
            if restricted and osl_end(ctx, v, alpha):
                v = -search(pos_ref, ctx_ref, -alpha - 1, -alpha, new_depth, ONE, YES)
            if v > alpha and v < beta and ctx.stop[0] == 0:
                v = -search(pos_ref, ctx_ref, -beta, -alpha, new_depth, ONE, NO)
        if yss_full_again(params, half_ply, ext, v, alpha) and ctx.stop[0] == 0:
            v = -search(pos_ref, ctx_ref, -beta, -alpha, new_depth + ONE_PLY // 2, ONE, NO)
        undo_move_ref(pos_ref)
        if ctx.stop[0] != 0:
            ctx.stats[S_ABORTED] = 1
            break
        ctx.stats[S_ROOT_DONE] += 1
        path_dep |= ctx.path_dep[1]
        ctx.root_scores[i] = v
        if v > best:
            best = v
            if v > alpha or i == first:
                # bring the move to the front of the unsearched part, keep the others' order
                for j in range(i, first, -1):
                    ctx.root_moves[j] = ctx.root_moves[j - 1]
                    ctx.root_scores[j] = ctx.root_scores[j - 1]
                ctx.root_moves[first] = m
                ctx.root_scores[first] = v
                _update_pv(ctx, 0, m)
                if v > alpha:
                    alpha = v
                if v >= beta:
                    break
    ctx.path_dep[0] = path_dep
    if not ctx.stats[S_ABORTED] and best > -VALUE_INF and first == 0:
        key = pos.keys[pos.st[ST_PLY]]
        bound = BOUND_LOWER if best >= beta else (BOUND_EXACT if best > alpha_in else BOUND_UPPER)
        if path_dep:
            bound = BOUND_NONE
        store(
            ctx.tt,
            key,
            ctx.root_moves[0],
            value_to_tt(best, 0),
            EVAL_NONE if in_check else evaluate_ref(by_ref(pos)),  # not `evaluate`: one compile less
            depth,
            bound,
            params[P_GENERATION],
            True,  # the root is on the PV
        )
    return best


@jit()
def init_root(pos, ctx):
    """Fill ctx.root_moves with the legal root moves ordered by a quick score; return n."""
    n = generate(pos, ctx.root_moves, GEN_ALL, False)
    hit, tt1, tt2, _v, _e, _d, _b, _pv = probe(ctx.tt, pos.keys[pos.st[ST_PLY]])
    us = pos.st[ST_SIDE]
    score_moves(pos, ctx, ctx.root_moves, ctx.root_scores, n, us, tt1, tt2, 0, 0, NO_CONTINUATION)
    for i in range(n):
        pick_next(ctx.root_moves, ctx.root_scores, i, n)
    ctx.params[P_ROOT_N] = n
    ctx.params[P_ROOT_PLY] = pos.st[ST_PLY]
    ctx.low_ply[:] = 0  # a history of this search's plies: the root is a new one
    for i in range(ctx.stack_pt.shape[0]):
        ctx.stack_pt[i] = -1
    for i in range(ctx.stats.shape[0]):
        ctx.stats[i] = 0
    return n
