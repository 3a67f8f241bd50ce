"""The mate guard (search/mate_guard.py): a best move that df-pn proves walks into a mate by
checks leaves the root, and nothing else changes. The positions come from games the engine
lost to GPS Shogi at 1 s byoyomi, where GPS announced a mate right after our move."""

from __future__ import annotations

import numpy as np
import pytest

from usi_engine.position import Position
from usi_engine.search import mate_guard
from usi_engine.search.mate_guard import MateGuard
from usi_engine.search.searcher import Searcher
from usi_engine.search.tsume import MateSolver

# white to move; at depth 6 the hand-made evaluation's search plays 9c9d (+1819), after
# which black mates in 11 (G*9e ...): df-pn proves it in about 1,300 nodes
WALKS_INTO_MATE = "lG1+R2l2/kg3s3/ppp+Bpg3/9/1n+b3n2/P5SPP/1+r1+p1lP2/6S1K/+p4PGNL w 3Psn4p 158"
# white to move; at depth 6 the search plays 8d8c, which df-pn cannot judge in 20,000 nodes
UNPROVEN = "7p1/4k1g2/p1S2gn2/1rp1pppN1/8+R/1PP1PPP1p/2+l+p1GN2/5G2P/1+p4K1L w BSLPb2snl2p 122"
BUDGET = 20_000


@pytest.fixture(scope="module")
def searcher():
    s = Searcher()
    s.warmup()
    return s


@pytest.fixture(scope="module")
def solver():
    return MateSolver(16)


def think(searcher, pos, depth, guard=None, searchmoves=None):
    searcher.new_game()
    return searcher.think(
        pos,
        depth=depth,
        nodes=None,
        multipv=1,
        stop=np.zeros(1, np.int32),
        on_iteration=lambda info: None,
        searchmoves=searchmoves,
        mate_guard=guard,
    )


def guard_for(solver):
    solver.clear()
    return MateGuard(solver, BUDGET, np.zeros(1, np.int32))


def test_a_move_proven_to_walk_into_a_mate_leaves_the_root(searcher, solver):
    pos = Position(WALKS_INTO_MATE)
    plain = think(searcher, pos, 6)
    assert plain.best == "9c9d"
    after = pos.copy()
    after.push("9c9d")
    solver.clear()
    assert solver.prove(after, nodes=BUDGET) == "mate"

    guard = guard_for(solver)
    guarded = think(searcher, pos, 6, guard)
    assert guard.refuted == ["9c9d"]
    assert guarded.best != "9c9d" and guarded.best in pos.legal_moves()
    assert guarded.info.pv[0] == guarded.best and guarded.info.depth == 6
    after = pos.copy()
    after.push(guarded.best)
    solver.clear()
    assert solver.prove(after, nodes=BUDGET) != "mate"


def test_a_move_df_pn_cannot_judge_stays_and_the_search_is_the_same(searcher, solver):
    pos = Position(UNPROVEN)
    plain = think(searcher, pos, 6)
    guard = guard_for(solver)
    guarded = think(searcher, pos, 6, guard)
    assert guard.judged == {plain.best} and guard.refuted == []
    assert (guarded.best, guarded.info.score_cp, guarded.info.pv) == (
        plain.best,
        plain.info.score_cp,
        plain.info.pv,
    )


def test_the_last_root_move_is_never_taken_out(searcher, solver):
    pos = Position(WALKS_INTO_MATE)
    guard = guard_for(solver)
    result = think(searcher, pos, 6, guard, searchmoves=["9c9d"])
    assert result.best == "9c9d"
    assert guard.judged == set()


def test_no_probe_before_the_guard_s_depth_nor_twice_for_one_move(searcher, solver):
    pos = Position(WALKS_INTO_MATE)
    guard = guard_for(solver)
    think(searcher, pos, mate_guard.MIN_DEPTH - 1, guard)
    assert guard.judged == set()
    assert not guard.may_probe(mate_guard.MIN_DEPTH - 1, "9c9d")
    guard.judged.add("9c9d")
    assert not guard.may_probe(mate_guard.MIN_DEPTH, "9c9d")
    assert guard.may_probe(mate_guard.MIN_DEPTH, "P*1g")


def test_unproven_probes_are_limited_and_refutations_are_not_counted_among_them():
    guard = MateGuard(None, BUDGET, np.zeros(1, np.int32))
    guard.judged = {f"m{i}" for i in range(mate_guard.MAX_UNPROVEN)}
    assert not guard.may_probe(mate_guard.MIN_DEPTH, "x")
    guard.refuted = ["m0"]
    assert guard.may_probe(mate_guard.MIN_DEPTH, "x")
    guard.judged = {f"m{i}" for i in range(mate_guard.MAX_REFUTED)}
    guard.refuted = sorted(guard.judged)
    assert not guard.may_probe(mate_guard.MIN_DEPTH, "x")


def test_the_budget_follows_the_thinking_time():
    assert mate_guard.nodes_for(1000) == 1000 * mate_guard.NODES_PER_MS
    assert mate_guard.nodes_for(0) == mate_guard.MIN_NODES
