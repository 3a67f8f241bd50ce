"""The classic techniques of the Japanese computer-shogi texts, each behind a switch of
ctx.params and off by default (docs/EXPERIMENTS.md): multi-iterative deepening (P_MID),
YSS's half-ply extension of the TT move and its full variant (P_HALF_PLY, P_HALF_PLY_FULL),
Tsuruoka's one-side-limited PVS (P_OSL) and move ordering by a shallow search
(P_SHALLOW_ORDER).  With all of them off the tree is the one of the plain search.

Here is what each decides and keeps: when it runs, what it counts (ctx.stats), which move a
restricted node plays, how moves are ranked.  The searches they run stay in the node
(search.py): the shallow iterations, the restricted scouts, the re-search half a ply deeper
and the shallow searches that rank the moves all call `search` again, and a helper here
that did would make the two modules import each other.
"""

from .types import jit
from .board import ST_PLY, ZOBRIST_SIDE
from .movegen import generate, GEN_ALL, is_legal
from .tt import probe, BOUND_LOWER, BOUND_UPPER
from .movepick import (
    score_moves,
    PICK_N,
    PICK_STAGE,
    PICK_CUR,
    PICK_END,
    PICK_TT1,
    PICK_TT2,
    STAGE_TT1,
    STAGE_TT2,
    STAGE_EVASIONS_GEN,
    STAGE_EVASIONS,
    SCORE_TT1,
)
from .params import (
    SP_MID_DEPTH,
    SP_MID_START,
    SP_OSL_DEPTH,
    SP_OSL_SIDE,
    SP_SHALLOW_ORDER_DEPTH,
    SP_SHALLOW_ORDER_PLIES,
    SP_SHALLOW_ORDER_MARGIN,
)
from .context import (
    ONE_PLY,
    VALUE_INF,
    P_MID,
    P_HALF_PLY,
    P_HALF_PLY_FULL,
    P_OSL,
    P_SHALLOW_ORDER,
    S_MID_ACTIVE,
    S_MID_NODES,
    S_OSL_PLY,
    S_OSL_SCOUTS,
    S_OSL_RESEARCHES,
    S_OSL_RESTRICTED,
    S_OSL_UNPROVEN,
    S_SHALLOW_NODES,
)

# one-side-limited PVS: what a node of a restricted search is (see osl_restrict)
OSL_NONE = 0  # not in a restricted search
OSL_LIMITED = 1  # the limited side (OslSide): one move a node
OSL_FREE = 2  # the other side: every move
SHALLOW_RANKS = 1024  # shallow-search ordering: value * SHALLOW_RANKS + usual rank (< 593 moves)


# --- multi-iterative deepening ------------------------------------------------------------
@jit()
def mid_first_depth(ctx, hit, d_plies):
    """Multi-iterative deepening: a node not found in the TT with enough depth left deepens
    on its own from a shallow depth, unless a node above is doing so already (the guard
    against recursion).  Returns the depth of the first shallow iteration, the node then
    marked as iterating (S_MID_ACTIVE, cleared by the node), or -1 where it does not run."""
    if ctx.params[P_MID] == 0 or hit or d_plies < ctx.sp[SP_MID_DEPTH] or ctx.stats[S_MID_ACTIVE] != 0:
        return -1
    ctx.stats[S_MID_ACTIVE] = 1
    ctx.stats[S_MID_NODES] += 1
    return ctx.sp[SP_MID_START] * ONE_PLY


# --- YSS's half-ply extension -------------------------------------------------------------
@jit()
def yss_on(params):
    return params[P_HALF_PLY] != 0 or params[P_HALF_PLY_FULL] != 0


@jit()
def yss_extension(m, tt1, ext):
    """YSS: the move remembered as best (the TT move) gets half a ply more (returned); with
    the check extensions, a move is extended by one ply at most."""
    return ONE_PLY // 2 if m == tt1 and m != 0 and ext < ONE_PLY else 0


@jit()
def yss_full_again(params, half, ext, v, alpha):
    """The full variant: a move searched without the half ply (`half`, its extension `ext`)
    that raised alpha, the new best line, is searched again as deep as the TT move was."""
    return params[P_HALF_PLY_FULL] != 0 and half == 0 and ext < ONE_PLY and v > alpha


# --- one-side-limited PVS -----------------------------------------------------------------
@jit()
def osl_begin(ctx, pv_node, d_plies, ply):
    """Whether the scout of a move at `ply` is restricted, and if so it starts: PVS's
    null-window searches at PV nodes (whose fail-highs are searched again), never inside
    another restricted search.  OslSide 0 limits the refuting side (the side to move after
    the move): when its restricted replies already refute the move, more replies could only
    refute it more, so the scout's fail-low is proven and its fail-high is scouted again
    without the restriction.  OslSide 1 limits the side of the PV node: its fail-high is
    proven and its fail-low is taken as it is (an approximation)."""
    if not (
        pv_node and ctx.params[P_OSL] != 0 and d_plies >= ctx.sp[SP_OSL_DEPTH] and ctx.stats[S_OSL_PLY] == 0
    ):
        return False
    ctx.stats[S_OSL_PLY] = ply + 1
    ctx.stats[S_OSL_SCOUTS] += 1
    return True


@jit()
def osl_end(ctx, v, alpha):
    """The restricted scout ended with `v` (the PV node's view): whether it failed high
    without proof and must be scouted again unrestricted."""
    ctx.stats[S_OSL_PLY] = 0
    if ctx.stop[0] != 0 or v <= alpha or ctx.sp[SP_OSL_SIDE] != 0:
        return False
    ctx.stats[S_OSL_RESEARCHES] += 1
    return True


@jit(inline="always")
def osl_role(ctx, ply):
    """The node's role in a restricted scout: OSL_LIMITED at the nodes of the limited side,
    OSL_FREE at the other side's, OSL_NONE outside a restricted search."""
    top = ctx.stats[S_OSL_PLY]
    if top == 0 or ply < top:
        return OSL_NONE
    limited = 1 if ctx.sp[SP_OSL_SIDE] != 0 else 0  # parity of the limited side's plies
    return OSL_FREE if (ply - top) % 2 != limited else OSL_LIMITED


@jit()
def osl_restrict(pos, ctx, ply, tt1, in_check):
    """The node's role (osl_role); a limited node not in check plays one move (_osl_move):
    its picker, set up already, is left with that move alone."""
    role = osl_role(ctx, ply)
    if role != OSL_LIMITED:
        return role
    if not in_check:
        m = _osl_move(pos, ctx, tt1)
        if m != 0:
            ctx.stats[S_OSL_RESTRICTED] += 1
            ctx.moves[ply, 0] = m
            ctx.scores[ply, 0] = SCORE_TT1
            picker_list(ctx, ply, 1)
    return OSL_LIMITED


@jit()
def _osl_move(pos, ctx, tt1):
    """The one move of a limited node: the best move of the similar position, the sibling
    reached by a pass instead of the last move (its key differs only in the side to move),
    when it is legal here; else this node's TT move; 0 when there is neither."""
    ply = pos.st[ST_PLY]
    if ply >= 1:
        hit, m, _m2, _v, _e, _d, _b, _pv = probe(ctx.tt, pos.keys[ply - 1] ^ ZOBRIST_SIDE)
        if hit and m != 0 and is_legal(pos, m):
            return m
    return tt1


@jit()
def osl_unproven(ctx, role, bound):
    """Whether the node's result, of bound `bound`, is left unproven by the restricted
    search it is in (counted in S_OSL_UNPROVEN): restricting one side only raises the other
    side's values, so a restricted search proves the limited side's lower bounds and the
    free side's upper bounds; the free side's beta cuts and the limited side's fail-lows
    prove nothing and stay out of the TT."""
    if role == OSL_LIMITED:
        proven = bound == BOUND_LOWER
    elif role == OSL_FREE:
        proven = bound == BOUND_UPPER
    else:
        return False
    if proven:
        return False
    ctx.stats[S_OSL_UNPROVEN] += 1
    return True


# --- shallow-search ordering --------------------------------------------------------------
@jit()
def shallow_wanted(ctx, osl, in_check, d_plies):
    """Whether the node orders its moves by a shallow search: enough depth left, not in
    check, not a node of a restricted search's limited side."""
    return (
        osl != OSL_LIMITED
        and ctx.params[P_SHALLOW_ORDER] != 0
        and not in_check
        and d_plies >= ctx.sp[SP_SHALLOW_ORDER_DEPTH]
    )


@jit()
def tt_moves_done(pk):
    """Whether the picker has handed out its TT moves (the next move comes from a later
    stage): shallow-search ordering waits until they failed to cut off."""
    stage = pk[PICK_STAGE]
    if stage == STAGE_TT1:
        return pk[PICK_TT1] == 0 and pk[PICK_TT2] == 0
    if stage == STAGE_TT2:
        return pk[PICK_TT2] == 0
    return stage != STAGE_EVASIONS_GEN and stage != STAGE_EVASIONS


@jit()
def shallow_order_begin(pos, ctx, ply, us, alpha, beta, tt1, tt2, counter, conts):
    """The moves to rank by shallow searches: the legal moves but the TT moves (already
    searched), in ctx.moves[ply] with their usual ordering scores, so that pick_next hands
    them out in the usual order, rank by rank.  Returns (their number, the depth of the
    shallow searches, and the window around the node's that they search in)."""
    ctx.stats[S_SHALLOW_NODES] += 1
    moves = ctx.moves[ply]
    n = generate(pos, moves, GEN_ALL, False)
    k = 0
    for i in range(n):
        if moves[i] != tt1 and moves[i] != tt2:
            moves[k] = moves[i]
            k += 1
    score_moves(pos, ctx, moves, ctx.scores[ply], k, us, tt1, tt2, ply, counter, conts)
    sp = ctx.sp
    lo = max(alpha - sp[SP_SHALLOW_ORDER_MARGIN], -VALUE_INF)
    hi = min(beta + sp[SP_SHALLOW_ORDER_MARGIN], VALUE_INF)
    return k, sp[SP_SHALLOW_ORDER_PLIES] * ONE_PLY, lo, hi


@jit()
def shallow_score(v, rank):
    """Ordering score of a move searched shallowly: its value, ties by its rank in the
    usual ordering (history)."""
    return v * SHALLOW_RANKS + (SHALLOW_RANKS - 1 - rank)


@jit()
def usual_score(pos, ctx, i, us, tt1, tt2, ply, counter, conts):
    """The usual ordering score of ctx.moves[ply, i], written over its (already used)
    shallow score: the reductions and prunings that read PICK_SCORE see what they expect."""
    score_moves(
        pos,
        ctx,
        ctx.moves[ply, i : i + 1],
        ctx.scores[ply, i : i + 1],
        1,
        us,
        tt1,
        tt2,
        ply,
        counter,
        conts,
    )
    return ctx.scores[ply, i]


@jit()
def picker_list(ctx, ply, n):
    """Make the picker at `ply` hand out ctx.moves[ply, :n] best-scored first and nothing
    else (the evasion stage walks a ready list)."""
    pk = ctx.picker[ply]
    pk[PICK_STAGE] = STAGE_EVASIONS
    pk[PICK_CUR] = 0
    pk[PICK_END] = n
    pk[PICK_N] = n
