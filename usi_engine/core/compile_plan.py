"""What a second process compiles while the first `isready` compiles the search.

numba compiles in one thread, depth first. The first start's `isready` types `root_search`,
which types `search`, which types `qsearch` and its callees (the network, the move
generator, the mate probe) before the rest of `search`'s own callees (the picker, the
classic techniques, the history updates). Each function is compiled, optimised and written
to the on-disk cache on its own. So another process that compiles some of them into the
same cache saves the engine that work: when numba comes to a function that the cache
already holds, it loads it, and still inlines it (the cache keeps its bitcode beside the
machine code).

`late_callees` calls the functions that the engine's own compile reaches last. Compiling
it compiles them, each for the argument types the search passes: one signature per
function, the one the search asks for (jit.py's `_one_call_shape` widens the integers, so
only arrays, booleans and the unsigned key must match). The first three are the quiescence
search's (the mate probe and the game's length), which the engine reaches a third of the way
in; the rest are the move loop's. It is compiled, never run.
`usi_engine/precompile.py` is the process that compiles it.
"""

import numpy as np

from .types import jit
from .board import ST_PLY, ST_SIDE
from .movegen import is_legal_ref
from .movepick import picker_next
from .history import NO_CONTINUATION
from .short_mate import mate_in_1_ref
from .intrinsics import by_ref
from .classic import osl_begin, osl_restrict, osl_unproven, shallow_order_begin, usual_score
from .search import (
    _capture_stats,
    _game_ply_limit,
    _learn_correction,
    _mate_in_1_found,
    _repetition_score,
    _reward_cutoff,
    late_move_reduction,
)

# the search's late callees, as `late_callees` calls them (tests/test_startup.py checks that
# the engine's own compile asks for no other signature of them)
LATE_CALLEES = (
    mate_in_1_ref,
    _mate_in_1_found,
    _game_ply_limit,
    picker_next,
    shallow_order_begin,
    osl_restrict,
    is_legal_ref,
    _repetition_score,
    usual_score,
    late_move_reduction,
    osl_begin,
    _reward_cutoff,
    _capture_stats,
    osl_unproven,
    _learn_correction,
)


@jit(cache=False)  # nothing to keep: what counts is its callees, each cached on its own
def late_callees(pos, ctx):
    """Call each of LATE_CALLEES the way the search does. Never run: compiled only."""
    ply = np.int64(1)
    us = pos.st[ST_SIDE]
    key = pos.keys[pos.st[ST_PLY]]  # unsigned, as the search's TT key
    m = mate_in_1_ref(by_ref(pos), ctx.mate_buf)
    v = _mate_in_1_found(ctx, key, m, ply, np.int64(0), np.int64(0), m > 0)
    v += _game_ply_limit(pos, ctx, ply)
    m = picker_next(by_ref(pos), by_ref(ctx), ply, us, NO_CONTINUATION, v > 0)
    shallow_order_begin(pos, ctx, ply, us, v, v + 1, m, m, m, NO_CONTINUATION)
    osl = osl_restrict(pos, ctx, ply, m, v > 1)
    legal = is_legal_ref(by_ref(pos), m)
    v += _repetition_score(pos, ctx, ply)
    v += usual_score(pos, ctx, ply, us, m, m, ply, m, NO_CONTINUATION)
    v += late_move_reduction(ctx, ply, ply, v, legal, ply, v > 2, v > 3, v > 4, v > 5)
    osl_begin(ctx, legal, ply, ply)
    _reward_cutoff(ctx, us, m, ply, NO_CONTINUATION, ply, ctx.quiets[ply], ply)
    _capture_stats(ctx, pos.board, m, legal, ply, ctx.captures[ply], ply)
    osl_unproven(ctx, osl, ply)
    _learn_correction(pos, ctx, ply, v, v, m, ply, ply)
