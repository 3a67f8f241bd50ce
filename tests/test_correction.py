"""Correction history (core/correction.py): what the search learns, what it adds to the static
evaluation, and that the transposition table keeps the raw evaluation."""

import numpy as np

from usi_engine.position import Position
from usi_engine.search.searcher import Searcher
from usi_engine.core import search as cs, tt as ctt
from usi_engine.core.correction import correction, CORR_D, CORR_GRAIN, _kings_index, _hands_index
from usi_engine.core.evaluate import evaluate
from usi_engine.core.params import SP_CORRECTION_DIV
from core_tree import tree

MIDDLE_GAME = "ln4k1l/1r4g2/p3sgspn/2ppppp1p/1p7/2PPP1P2/PPSG1P1PP/2G2S1R1/LNK4NL b Bb 41"
TABLES = ("corr_kings", "corr_hands", "corr_cont")


def searched(switch):
    arrays, ctx = tree(MIDDLE_GAME, tt_entries=1 << 16, CORRECTION=switch)
    for depth in range(1, 8):
        cs.root_search(arrays, ctx, -cs.VALUE_INF, cs.VALUE_INF, depth * cs.ONE_PLY)
    return arrays, ctx


def test_search_learns_corrections_only_when_switched_on():
    _, ctx = searched(1)
    for name in TABLES:
        table = getattr(ctx, name)
        assert np.count_nonzero(table) > 0, name
        assert np.abs(table).max() <= CORR_D, name  # the bounded rule holds
    assert (ctx.corr_hands > 0).any() and (ctx.corr_hands < 0).any()  # both directions
    _, off = searched(0)
    assert all(np.count_nonzero(getattr(off, name)) == 0 for name in TABLES)


def test_correction_is_the_sum_of_the_entries_scaled_toward_zero():
    arrays, ctx = tree(MIDDLE_GAME, CORRECTION=1)
    us = 0
    div = CORR_GRAIN * int(ctx.sp[SP_CORRECTION_DIV])
    k, h = _kings_index(arrays, us), _hands_index(arrays, us)
    assert k >= 0 and 0 <= h < ctx.corr_hands.shape[1]
    pt = 5 * 81 + 40  # a previous move: some piece to the centre
    ctx.corr_kings[us, k] = 300
    ctx.corr_hands[us, h] = -100
    ctx.corr_cont[pt] = 7
    assert correction(arrays, ctx, pt) == (300 - 100 + 7) // div
    assert correction(arrays, ctx, -1) == (300 - 100) // div  # no previous move
    ctx.corr_kings[us, k] = -300
    assert correction(arrays, ctx, -1) == -(400 // div)  # rounded toward zero
    # without a king on the board (a tsume problem) only the kings' table is left out
    tsume, tctx = tree("4k4/9/4P4/9/9/9/9/9/9 b G2r2b3g4s4n4l17p 1", CORRECTION=1)
    assert _kings_index(tsume, 0) == -1
    tctx.corr_hands[0, _hands_index(tsume, 0)] = 8 * div
    assert correction(tsume, tctx, -1) == 8


def test_the_tt_keeps_the_raw_evaluation():
    arrays, ctx = searched(1)
    pos = Position(MIDDLE_GAME)
    checked = 0
    for m in pos.legal_moves():
        child = Position(MIDDLE_GAME)
        child.push(m)
        key = np.uint64(child.key())
        hit, _, _, _, ev, _, _, _ = ctt.probe(ctx.tt, key)
        if hit and ev != ctt.EVAL_NONE:
            assert ev == evaluate(child.arrays), m
            checked += 1
    assert checked > 10


def test_new_game_forgets_the_corrections():
    searcher = Searcher()  # CorrectionHistory is on by default
    searcher.think(
        Position(MIDDLE_GAME),
        depth=7,
        nodes=None,
        multipv=1,
        stop=np.zeros(1, np.int32),
        on_iteration=lambda info: None,
    )
    ctx = searcher._contexts[0]
    assert any(np.count_nonzero(getattr(ctx, name)) for name in TABLES)
    searcher.new_game()
    assert not any(np.count_nonzero(getattr(ctx, name)) for name in TABLES)
