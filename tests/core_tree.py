"""Helpers for tests that drive the numba search directly (one context, no Searcher)."""

import numpy as np

from usi_engine.position import Position
from usi_engine.core import board as cb
from usi_engine.core import search as cs
from usi_engine.core.tt import table_for_entries
from usi_engine.core import movepick as mp
from usi_engine.core.intrinsics import by_ref
from usi_engine.core.jit import jit
from usi_engine.core.context import CTX_T, POS_T
from numba import int64

SWITCHES = (cs.P_NULL_MOVE, cs.P_LMR, cs.P_FUTILITY, cs.P_RAZORING, cs.P_CHECK_EXT, cs.P_IIR)


def tree(pos_or_sfen, tt_entries=1 << 14, **params):
    """(arrays, ctx) ready for root_search/search/qsearch on a position: a fresh TT and
    histories, every pruning switch on (Mate1Ply off) unless `params` says otherwise
    (keys are P_* names without the prefix, e.g. CHECK_EXT=0)."""
    pos = Position(pos_or_sfen) if isinstance(pos_or_sfen, str) else pos_or_sfen
    ctx = cs.new_context(table_for_entries(tt_entries), np.zeros(1, np.int32))
    arrays = cb.new_position()
    cb.copy_into(arrays, pos.arrays)
    for p in SWITCHES:
        ctx.params[p] = 1
    ctx.params[cs.P_ROOT_SIDE] = pos.side_to_move()
    for name, value in params.items():
        ctx.params[getattr(cs, "P_" + name)] = value
    cs.init_root(arrays, ctx)
    return arrays, ctx


# The search's own functions below the root take the position and the context by reference
# (usi_engine/core/intrinsics.py); the tests call them through these. `search` and `qsearch`
# are compiled apart (core/jit.py): their callers declare their signatures and name them.


@jit(int64(POS_T, CTX_T, int64, int64, int64, int64, int64), after=(cs.qsearch, cs.search))
def search_node(arrays, ctx, alpha, beta, depth, ply, cut_node):
    """`search` at a node below the root."""
    return cs.search(by_ref(arrays), by_ref(ctx), alpha, beta, depth, ply, cut_node)


@jit(int64(POS_T, CTX_T, int64, int64, int64, int64), after=(cs.qsearch,))
def qsearch_node(arrays, ctx, alpha, beta, ply, first):
    """`qsearch` at a node."""
    return cs.qsearch(by_ref(arrays), by_ref(ctx), alpha, beta, ply, first)


@jit()
def picker_next(arrays, ctx, ply, us, conts, skip_quiets):
    """The move picker's next move."""
    return mp.picker_next(by_ref(arrays), by_ref(ctx), ply, us, conts, skip_quiets)


@jit()
def reward_tt_cutoff(arrays, ctx, ply, m, d_plies):
    """TtCutoffHistory's reward of a TT move that ended a node."""
    cs._reward_tt_cutoff(by_ref(arrays), by_ref(ctx), ply, m, d_plies)


def qsearch(sfen, alpha, beta):
    arrays, ctx = tree(sfen)
    return int(qsearch_node(arrays, ctx, alpha, beta, 0, 0))
