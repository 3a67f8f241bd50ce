"""Quiescence search: exchanges with the captured piece going to the hand."""

import pytest

from usi_engine.core import search as cs
from core_tree import qsearch, qsearch_node

INF = cs.VALUE_INF

# (sfen, expected sign of the quiescence value for the side to move, why)
EXCHANGES = [
    # Bx4d Gx4d is an even trade that leaves Black a gold down: Black stands pat
    ("4k4/9/6g2/5b3/9/9/9/1B7/4K4 b - 1", -1, "even trade, Black already a gold down"),
    # the same trade with the gold on Black's side: White's bishop hangs
    ("4k4/9/9/5b3/9/9/9/1B7/4K4 b G 1", 1, "free bishop"),
    # pawn takes a rook defended by a gold: rook (board + hand) for a pawn
    ("4k4/9/4g4/4r4/4P4/9/9/9/4K4 b - 1", 1, "pawn takes a defended rook"),
    # rook takes a pawn defended by a gold (White has a rook in hand): Black stands pat
    ("4k4/4g4/4p4/9/9/9/9/4R4/4K4 b r 1", -1, "a defended pawn is no gift"),
    # silver takes a silver, the gold retakes, the rook retakes: Black ends a gold up
    ("4k4/9/4g4/4s4/4S4/9/9/4R4/4K4 b - 1", 1, "winning sequence of recaptures"),
]


@pytest.mark.parametrize("sfen,sign,why", EXCHANGES)
def test_exchange_signs(sfen, sign, why):
    v = qsearch(sfen, -INF, INF)
    assert v * sign > 0, (why, v)


@pytest.mark.parametrize("sfen,sign,why", EXCHANGES)
def test_narrow_windows_agree_with_the_wide_one(sfen, sign, why):
    """A null window on either side of the true value fails to the same side; before delta
    pruning counted the hand value, Bx4d in the first position looked a bishop up behind
    window (-50, 50) (+1243 against -524 with a wide window)."""
    v = qsearch(sfen, -INF, INF)
    for a in (v - 300, v - 60, v + 60, v + 300, -50):
        got = qsearch(sfen, a, a + 1)
        if v <= a:
            assert got <= a, (why, v, a, got)
        else:
            assert got > a, (why, v, a, got)
    narrow = qsearch(sfen, -50, 50)
    assert (narrow <= -50) == (v <= -50) and (narrow >= 50) == (v >= 50), (why, v, narrow)


# Black to move, not in check, with G*5b mating at once: no capture is on the board, so
# standing pat is all a quiescence search without the probe can do
MATE_BY_DROP = "4k4/9/4P4/9/9/9/9/9/4K4 b GN 1"


def test_mate_in_one_probe_finds_the_drop_standing_pat_misses():
    from usi_engine.core import tt as ctt, board as cb
    from usi_engine.position import move_to_usi
    from core_tree import tree

    off_arrays, off_ctx = tree(MATE_BY_DROP)
    stand_pat = int(qsearch_node(off_arrays, off_ctx, -INF, INF, 0, 0))
    assert stand_pat < cs.VALUE_MATE_IN_MAX
    arrays, ctx = tree(MATE_BY_DROP, QS_MATE1=1)
    assert qsearch_node(arrays, ctx, -INF, INF, 0, 0) == ctt.VALUE_MATE - 1  # mate in 1
    assert move_to_usi(int(ctx.pv[0, 0])) == "G*5b"
    hit, m1, _m2, _v, _ev, _d, bound, _pv = ctt.probe(ctx.tt, arrays.keys[arrays.st[cb.ST_PLY]])
    assert hit and bound == ctt.BOUND_EXACT and move_to_usi(int(m1)) == "G*5b"
    # at or above beta the stand-pat cutoff comes first: no probe, no mate score
    arrays, ctx = tree(MATE_BY_DROP, QS_MATE1=1)
    assert qsearch_node(arrays, ctx, stand_pat - 11, stand_pat - 10, 0, 0) == stand_pat


# Black to move and a rook down; Rx9e wins White's rook back, but White then mates by
# G*1h (the silver on 2g guards it; the gold covers 2h and 2i): no capture answers the drop
MATE_AFTER_CAPTURE = "4k4/9/9/9/r8/9/7s1/9/R7K b g 1"


@pytest.mark.parametrize("first_ply_only", [0, 1])
def test_mate_in_one_probe_below_the_first_ply_unless_qs_mate1_first_ply(first_ply_only):
    """The probe sees White's mate one ply below the quiescence search's first, where Rx9e
    would otherwise look like a rook won: Black stands pat.  With QsMate1FirstPly the probe
    runs at the first ply only, and the capture counts as a gain; at the first ply itself
    the probe runs either way."""
    from usi_engine.core import tt as ctt
    from usi_engine.core.params import defaults, INDEX
    from usi_engine.position import move_to_usi
    from core_tree import tree

    sp = defaults()
    sp[INDEX["QsMate1FirstPly"]] = first_ply_only
    arrays, ctx = tree(MATE_AFTER_CAPTURE, QS_MATE1=1)
    cs.set_search_params(ctx, sp)
    v = int(qsearch_node(arrays, ctx, -INF, INF, 0, 1))
    best = move_to_usi(int(ctx.pv[0, 0])) if ctx.pv_len[0] > 0 else None
    arrays, ctx = tree(MATE_AFTER_CAPTURE, QS_MATE1=0)
    blind = int(qsearch_node(arrays, ctx, -INF, INF, 0, 1))
    assert blind > 0  # without any probe the rook is won
    if first_ply_only:
        assert v == blind and best == "9i9e"
    else:
        assert v < 0, v  # a rook down, standing pat
    # White to move at the first ply finds its mate at once, whatever the setting
    white = MATE_AFTER_CAPTURE.replace(" b g ", " w g ")
    arrays, ctx = tree(white, QS_MATE1=1)
    cs.set_search_params(ctx, sp)
    assert int(qsearch_node(arrays, ctx, -INF, INF, 0, 1)) == ctt.VALUE_MATE - 1


# Black to move, not in check, no capture on the board: N*4c checks the king on 5a and
# forks the rook on 3a, and no White piece reaches 4c, so SEE loses nothing
FORK_BY_DROP = "4k1r2/9/9/9/9/9/9/9/4K4 b N 1"


def test_quiet_checks_at_the_first_ply_find_the_fork_standing_pat_misses():
    """QsChecks: at the quiescence search's first ply a safe checking drop is searched, its
    evasions in full, and the rook it forks is taken one ply further down; below the first
    ply, or with the setting at 0 (the default), Black can only stand pat."""
    from usi_engine.core.params import defaults, INDEX
    from usi_engine.position import move_to_usi
    from core_tree import tree

    arrays, ctx = tree(FORK_BY_DROP)
    stand_pat = int(qsearch_node(arrays, ctx, -INF, INF, 0, 1))  # QsChecks is 0
    sp = defaults()
    sp[INDEX["QsChecks"]] = 4
    arrays, ctx = tree(FORK_BY_DROP)
    cs.set_search_params(ctx, sp)
    assert int(qsearch_node(arrays, ctx, -INF, INF, 0, 0)) == stand_pat  # not the first ply
    arrays, ctx = tree(FORK_BY_DROP)
    cs.set_search_params(ctx, sp)
    forked = int(qsearch_node(arrays, ctx, -INF, INF, 0, 1))
    assert forked > stand_pat + 500, (stand_pat, forked)
    assert move_to_usi(int(ctx.pv[0, 0])) == "N*4c"


def test_quiet_checks_leave_out_the_needless_non_promotions():
    """generate_checks lists a rook's non-promotion beside its promotion (7h7a checks the king
    on 5a along rank a either way); the quiescence search takes the promotion alone, and
    keeps the checks that have no promotion (7h5h)."""
    import numpy as np
    from usi_engine.core.movegen import generate_checks
    from usi_engine.core.types import MAX_MOVES
    from usi_engine.position import move_to_usi
    from core_tree import tree

    arrays, _ctx = tree("4k4/9/9/9/9/9/9/2R6/4K4 b - 1")
    moves = np.zeros(MAX_MOVES, np.int32)
    n = generate_checks(arrays, moves)
    names = [move_to_usi(int(moves[i])) for i in range(n)]
    kept = [names[i] for i in range(n) if not cs._needless_non_promotion(moves[i], moves[i - 1] if i else 0)]
    assert {"7h7a+", "7h7a", "7h5h"} <= set(names), names
    assert "7h7a+" in kept and "7h5h" in kept and "7h7a" not in kept, kept
