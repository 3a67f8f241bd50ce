"""The search context: one thread's tables and buffers (`SearchCtx`), the fields of
ctx.params that the driver sets before a search (P_*, switches among them), the counters of
ctx.stats that the search writes (S_*), and the units of depth and score the search counts
in.  The driver (search/searcher.py) knows these by core/search.py's names, which are the
same objects.
"""

from collections import namedtuple
import math

import numba
import numpy as np

from .types import MAX_PLY, MAX_MOVES
from .board import new_position, POS_T, POS_REF  # noqa: F401 (re-exported beside CTX_T and CTX_REF)
from .tt import new_table, VALUE_MATE
from .movepick import PICK_NB
from .short_mate import MATE_BUF_SIZE
from .see import SEE_BUF
from .params import defaults, SP_NB, SP_LMR_BASE, SP_LMR_DIV

ONE_PLY = 2  # depth is counted in half plies: checks extend by half a ply
VALUE_INF = VALUE_MATE + 1
STACK = MAX_PLY + 8
LMR_TABLE = 64  # reductions[depth, move number], both capped at 63
QUIETS_KEPT = 64  # quiet moves remembered per node for the history penalty
CAPTURES_KEPT = 32  # ... and captures, for the capture-history penalty

# ctx.params fields (set by the Python driver)
P_GENERATION = 0
P_ROOT_SIDE = 1
P_DRAW_VALUE = 2  # value of a draw for the root side
P_NODE_LIMIT = 3  # 0: none
P_NULL_MOVE = 4  # switches: 1 on, 0 off
P_LMR = 5
P_FUTILITY = 6
P_RAZORING = 7
P_CHECK_EXT = 8
P_MATE1 = 9
P_ROOT_N = 10  # number of root moves
P_PV_INDEX = 11  # MultiPV: root moves before this index are already searched
P_ROOT_PLY = 12  # pos ply at the root
P_ROOT_DEPTH = 13
P_IIR = 14
P_MAX_GAME_PLY = 15  # MaxMovesToDraw: a node this many game plies in is a draw; 0: no limit
P_MID = 16  # multi-iterative deepening at nodes not in the TT
P_HALF_PLY = 17  # YSS: the TT move is extended by half a ply
P_HALF_PLY_FULL = 18  # ... and a move that becomes the best is searched again, extended
P_OSL = 19  # one-side-limited PVS (Tsuruoka)
P_SHALLOW_ORDER = 20  # moves ordered by a shallow search at nodes with much depth left
P_CORRECTION = 21  # correction history of the static evaluation (correction.py)
P_QS_MATE1 = 22  # quiescence nodes below beta look for a mate in one before standing pat
P_NB = 24
# ctx.stats fields (written by the search)
S_NODES = 0
S_SELDEPTH = 1
S_ABORTED = 2
S_ROOT_DONE = 3  # root moves fully searched in the current iteration
S_FULL_PLY = 4  # deepest ply of a full-width node (seldepth counts quiescence too)
S_MID_ACTIVE = 5  # 1 while a node runs its shallow iterations: no nesting
S_MID_NODES = 6  # nodes that ran multi-iterative deepening
S_MID_ITERS = 7  # shallow iterations run by them
S_OSL_PLY = 8  # first ply of the running restricted scout (0: none)
S_OSL_SCOUTS = 9  # restricted scouts started
S_OSL_RESEARCHES = 10  # restricted scouts that failed high without proof: scouted again
S_OSL_RESTRICTED = 11  # nodes restricted to one move
S_OSL_UNPROVEN = 12  # results of restricted searches kept out of the TT
S_SHALLOW_NODES = 13  # nodes whose moves were ordered by a shallow search
# how well the moves are ordered: the beta cutoffs of full-width nodes below the root, those
# by the node's first move, and the sum of the cutting moves' numbers (1 for the first)
S_CUTOFFS = 14
S_FIRST_MOVE_CUTOFFS = 15
S_CUTOFF_MOVE_SUM = 16
S_NB = 17

SearchCtx = namedtuple(
    "SearchCtx",
    [
        "tt",  # uint64[N, 3], shared by all threads
        "butterfly",
        "continuation",
        "counter",
        "killers",
        "capture",
        "low_ply",  # this thread's history (history.py)
        "corr_kings",
        "corr_hands",
        "corr_cont",  # ... and correction history (correction.py)
        "moves",  # int32[STACK, MAX_MOVES]: move list per ply
        "scores",  # int64[STACK, MAX_MOVES]: ordering scores per ply
        "pv",  # int32[STACK, STACK]: triangular principal variation
        "pv_len",  # int64[STACK]
        "stack_eval",  # int64[STACK]: static eval per ply
        "stack_pt",  # int64[STACK]: continuation index of the move made at each ply (-1 none)
        "stack_count",  # int64[STACK]: the number of the move searched at each ply (1: the first)
        "quiets",  # int32[STACK, QUIETS_KEPT]: quiet moves tried per ply
        "captures",  # int32[STACK, CAPTURES_KEPT]: tactical moves tried per ply
        "picker",  # int64[STACK, PICK_NB]: move picker state per ply (movepick.py)
        "root_moves",  # int32[MAX_MOVES]
        "root_scores",  # int64[MAX_MOVES]
        "params",  # int64[P_NB]
        "stats",  # int64[S_NB]
        "mate_buf",  # int32[MATE_BUF_SIZE]: scratch for mate_in_1
        "path_dep",  # int8[STACK]: 1 when the score returned from that ply depends on the path
        # to it (perpetual check, superior/inferior hands): kept out of the TT
        "excluded",  # int32[STACK]: the move a singular-extension search leaves out (0: none)
        "see_buf",  # int64[SEE_BUF]: scratch for SEE
        "sp",  # int64[SP_NB]: the tunable constants (params.py), read at run time
        "reductions",  # int64[LMR_TABLE, LMR_TABLE]: LMR in plies by depth and move number (from sp)
        "stop",  # int32[1]: set by Python to stop the search
    ],
)


def new_context(tt, stop, sp=None) -> SearchCtx:
    """A search context for one thread; `sp` gives the tunable constants (params.defaults()
    when None), see set_search_params."""
    from .history import new_histories
    from .correction import new_corrections

    h = new_histories()
    ctx = SearchCtx(
        tt,
        h.butterfly,
        h.continuation,
        h.counter,
        h.killers,
        h.capture,
        h.low_ply,
        *new_corrections(),
        np.zeros((STACK, MAX_MOVES), np.int32),
        np.zeros((STACK, MAX_MOVES), np.int64),
        np.zeros((STACK, STACK), np.int32),
        np.zeros(STACK, np.int64),
        np.zeros(STACK, np.int64),
        np.full(STACK, -1, np.int64),
        np.zeros(STACK, np.int64),
        np.zeros((STACK, QUIETS_KEPT), np.int32),
        np.zeros((STACK, CAPTURES_KEPT), np.int32),
        np.zeros((STACK, PICK_NB), np.int64),
        np.zeros(MAX_MOVES, np.int32),
        np.zeros(MAX_MOVES, np.int64),
        np.zeros(P_NB, np.int64),
        np.zeros(S_NB, np.int64),
        np.zeros(MATE_BUF_SIZE, np.int32),
        np.zeros(STACK, np.int8),
        np.zeros(STACK, np.int32),
        np.zeros(SEE_BUF, np.int64),
        np.zeros(SP_NB, np.int64),
        np.zeros((LMR_TABLE, LMR_TABLE), np.int64),
        stop,
    )
    set_search_params(ctx, defaults() if sp is None else sp)
    return ctx


def set_search_params(ctx: SearchCtx, sp) -> None:
    """Load the tunable constants (SP_NB integers, in params.PARAMS order) into ctx.sp and
    rebuild the tables made from them."""
    values = np.asarray(sp, dtype=np.int64)
    if values.shape != (SP_NB,):
        raise ValueError(f"search params: expected {SP_NB} integers, got shape {values.shape}")
    ctx.sp[:] = values
    base = ctx.sp[SP_LMR_BASE] / 100
    div = ctx.sp[SP_LMR_DIV] / 100
    ctx.reductions.fill(0)
    for d in range(1, LMR_TABLE):
        for n in range(1, LMR_TABLE):
            ctx.reductions[d, n] = max(0, int(base + math.log(d) * math.log(n) / div))


CTX_T = numba.typeof(new_context(new_table(1), np.zeros(1, np.int32)))
# the context as the searches below the root take it (intrinsics.by_ref), beside the
# position's POS_REF (board.py)
CTX_REF = numba.types.CPointer(CTX_T)
