"""The Python driver of the search (usi_engine/search/searcher.py): root restriction, reports of a
stopped iteration (ConsiderationMode), the Lazy SMP skip pattern."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from usi_engine.core import board as cb
from usi_engine.core.tt import BOUND_EXACT, store
from usi_engine.commands import data_file
from usi_engine.commands.bench import load_positions
from usi_engine.position import Position
from search_settings import search_constants
from usi_engine.search.searcher import SKIP_SIZE, CutoffCounts, IterationInfo, Searcher, helper_skips

MIDGAME = "ln1g1g1nl/1ks2r3/1pppp1bpp/p3spp2/9/P1P1P1PP1/1PSPSP2P/1BK2G1R1/LN1G3NL b - 35"


@pytest.fixture(scope="module")
def searcher():
    s = Searcher()
    s.warmup()
    return s


def think(searcher, pos, **kw):
    infos = []
    searcher.new_game()
    result = searcher.think(pos, stop=np.zeros(1, np.int32), on_iteration=infos.append, **kw)
    return result, infos


def test_searchmoves_restrict_the_root(searcher):
    pos = Position()
    result, infos = think(searcher, pos, depth=5, nodes=None, multipv=1, searchmoves=["1g1f", "9g9f"])
    assert result.best in ("1g1f", "9g9f")
    assert {info.pv[0] for info in infos} <= {"1g1f", "9g9f"}
    # not a root move at all: the restriction is dropped
    result, _ = think(searcher, pos, depth=3, nodes=None, multipv=1, searchmoves=["5e5d"])
    assert result.best in pos.legal_moves()


@pytest.mark.parametrize("multipv", [1, 2])
def test_consideration_mode_reports_the_stopped_iteration(searcher, multipv):
    """A node limit stops the search inside an iteration (one thread: deterministic). With
    ConsiderationMode the lines of that iteration come out as they stood; without it the
    last report is the last finished iteration. Everything before is the same."""
    pos = Position(MIDGAME)
    # stop late in iteration 8 (after its first root moves are done, before its end)
    _, full = think(searcher, pos, depth=8, nodes=None, multipv=multipv)
    done7 = max(i.nodes for i in full if i.depth == 7)
    done8 = max(i.nodes for i in full if i.depth == 8)
    kw = dict(depth=None, nodes=done7 + (done8 - done7) * 9 // 10, multipv=multipv)
    _, plain = think(searcher, pos, **kw)
    _, considered = think(searcher, pos, **kw)
    assert [(i.depth, i.multipv, i.pv) for i in considered] == [(i.depth, i.multipv, i.pv) for i in plain]
    _, considered = think(searcher, pos, consideration=True, **kw)
    extra = considered[len(plain) :]
    assert [(i.depth, i.pv) for i in considered[: len(plain)]] == [(i.depth, i.pv) for i in plain]
    assert len(extra) == multipv
    assert [i.multipv for i in extra] == list(range(1, multipv + 1))
    assert extra[0].depth == plain[-1].depth + 1  # the unfinished iteration
    assert not any(i.last_line for i in extra)  # not a finished iteration
    assert all(i.bound is None and i.pv for i in extra)


def test_helper_skip_pattern_spreads_the_helpers():
    # two threads: the helper takes every other depth
    assert [helper_skips(1, d, 0) for d in range(1, 7)] == [True, False, True, False, True, False]
    # helpers of the first sizes never all skip the same depths: every depth is searched by one
    for ply in (0, 1):
        for d in range(1, 30):
            assert not all(helper_skips(i, d, ply) for i in range(1, 7))
    # helper i and helper i + 20 share a pattern entry
    assert all(helper_skips(3, d, 5) == helper_skips(3 + len(SKIP_SIZE), d, 5) for d in range(1, 20))


def test_multipv_lines_are_sorted_best_first_with_their_root_moves():
    """Line k is searched among the moves the earlier lines left, in its own window, so it
    can end above an earlier line; the lines, their PVs and the root moves are then put
    best first together, and the next iteration starts from the best move."""
    moves = np.array([11, 22, 33, 44, 55], np.int32)  # the two last are not lines
    root_scores = np.array([10, 40, 25, -5, -9], np.int64)
    ctx = SimpleNamespace(root_moves=moves, root_scores=root_scores)
    scores = [10, 40, 25]
    pvs = [["a"], ["b", "b2"], ["c"]]
    lines = [
        IterationInfo(
            depth=6,
            seldepth=8,
            multipv=k + 1,
            score_cp=s,
            score_mate=None,
            bound=None,
            nodes=1,
            time_ms=0,
            nps=0,
            hashfull=0,
            pv=pv,
        )
        for k, (s, pv) in enumerate(zip(scores, pvs))
    ]
    Searcher._sort_lines(ctx, lines, scores, pvs)
    assert scores == [40, 25, 10]
    assert pvs == [["b", "b2"], ["c"], ["a"]]
    assert [(line.multipv, line.score_cp, line.pv) for line in lines] == [
        (1, 40, ["b", "b2"]),
        (2, 25, ["c"]),
        (3, 10, ["a"]),
    ]
    assert moves.tolist() == [22, 33, 11, 44, 55] and root_scores.tolist() == [40, 25, 10, -5, -9]


def test_multipv_sort_keeps_equal_scores_in_their_order():
    moves = np.array([1, 2, 3], np.int32)
    ctx = SimpleNamespace(root_moves=moves, root_scores=np.array([7, 7, 7], np.int64))
    scores, pvs, lines = [7, 7, 7], [["x"], ["y"], ["z"]], [None, None, None]
    Searcher._sort_lines(ctx, lines, scores, pvs)
    assert moves.tolist() == [1, 2, 3] and pvs == [["x"], ["y"], ["z"]]


def test_multipv_iterations_come_out_best_first(searcher):
    _, infos = think(searcher, Position(MIDGAME), depth=6, nodes=None, multipv=4)
    for d in range(1, 7):
        lines = [i for i in infos if i.depth == d and i.bound is None]
        assert [i.multipv for i in lines] == [1, 2, 3, 4]
        assert [i.score_cp for i in lines] == sorted((i.score_cp for i in lines), reverse=True)
        assert lines[-1].last_line and not any(i.last_line for i in lines[:-1])


def _root_fail_high(searcher):
    """(sfen, nodes of a window that failed high with a new root move, that move, the best
    move of the iteration before) from the first bench position that has one by depth 8."""
    for sfen, _ in load_positions(data_file("bench_positions.txt")):
        _, infos = think(searcher, Position(sfen), depth=8, nodes=None, multipv=1)
        finished = {i.depth: i.pv[0] for i in infos if i.bound is None}
        for i in infos:
            before = finished.get(i.depth - 1)
            if i.bound == "lowerbound" and before is not None and i.pv[0] != before:
                return sfen, i.nodes, i.pv[0], before
    raise AssertionError("no bench position fails high at the root with a new move by depth 8")


def test_a_search_stopped_after_a_fail_high_plays_that_move_with_root_fail_high_move(searcher):
    """Stopped a few nodes after a window failed high with a new root move (its search in
    the wider window not finished): with RootFailHighMove 0 the last finished iteration's
    best move is played; with 1 the move that failed high, reported as a lower bound."""
    sfen, failed_at, new_move, old_move = _root_fail_high(searcher)
    kw = dict(depth=None, nodes=failed_at + 50, multipv=1)
    played = {}
    for setting in (0, 1):
        with search_constants(searcher, RootFailHighMove=setting):
            played[setting] = think(searcher, Position(sfen), **kw)
    result, _ = played[0]
    assert result.best == old_move and result.info.bound is None
    result, infos = played[1]
    assert result.best == new_move and result.info.bound == "lowerbound"
    assert result.info.pv[0] == new_move and result.info.depth == infos[-1].depth
    # the fail high's PV held one move: the move to ponder on is the table's reply
    assert infos[-1].pv == [new_move]
    child = Position(sfen)
    child.push(new_move)
    assert result.ponder is not None and child.is_legal(result.ponder)
    assert result.info.pv == [new_move, result.ponder]


def test_the_ponder_move_of_a_one_move_pv_is_the_tables_reply(searcher):
    """_ponder_from_tt reads the stored best reply after the best move; with nothing
    stored, or a stored move that is not legal there, it gives none."""
    pos = Position(MIDGAME)
    best = int(pos.parse_move("2f2e"))
    child = Position(MIDGAME)
    child.push("2f2e")
    searcher.new_game()
    assert searcher._ponder_from_tt(pos, best) == []
    # a search of the position after the move leaves its best reply in the table
    reply = searcher.think(
        child, depth=4, nodes=None, multipv=1, stop=np.zeros(1, np.int32), on_iteration=lambda info: None
    )
    assert searcher._ponder_from_tt(pos, best) == [reply.best]
    # a move of the side that just moved is never legal for the side to move
    key = child.arrays.keys[child.arrays.st[cb.ST_PLY]]
    store(searcher.tt, key, best, 0, 0, 60, BOUND_EXACT, searcher.generation, False)
    assert searcher._ponder_from_tt(pos, best) == []


def _window_depths(searcher, monkeypatch, sfen: str, reduction: int) -> list[tuple[int, int, str]]:
    """(iteration, depth searched in plies, how the window ended) for every root search
    of a depth-8 search of `sfen` with AspirationFailHighReduction `reduction`."""
    from usi_engine.core import search as cs

    calls = []
    real = cs.root_search

    def recording(arrays, ctx, alpha, beta, depth):
        score = real(arrays, ctx, alpha, beta, depth)
        end = "high" if score >= beta else "low" if score <= alpha else "exact"
        calls.append((depth // cs.ONE_PLY, end))
        return score

    monkeypatch.setattr(cs, "root_search", recording)
    try:
        with search_constants(searcher, AspirationFailHighReduction=reduction):
            think(searcher, Position(sfen), depth=8, nodes=None, multipv=1)
    finally:
        monkeypatch.undo()
    iterations, d, previous = [], 0, "exact"
    for depth, end in calls:
        d = d + 1 if previous == "exact" else d  # a window that ended inside starts the next iteration
        iterations.append((d, depth, end))
        previous = end
    return iterations


def test_aspiration_fail_high_reduction_searches_a_failed_high_window_again_shallower(searcher, monkeypatch):
    """With AspirationFailHighReduction 1 each fail high takes a ply off the next window of
    the same iteration, and a fail low puts the full depth back; with 0 every window
    searches the iteration's depth."""
    sfen = _root_fail_high(searcher)[0]
    plain = _window_depths(searcher, monkeypatch, sfen, 0)
    assert all(depth == d for d, depth, _ in plain)
    reduced = _window_depths(searcher, monkeypatch, sfen, 1)
    assert any(end == "high" for _, _, end in reduced)
    highs = 0
    for i, (d, depth, end) in enumerate(reduced):
        if i and reduced[i - 1][0] != d:
            highs = 0  # a new iteration
        assert depth == max(1, d - highs)
        highs = highs + 1 if end == "high" else 0 if end == "low" else highs


def test_cutoff_counts_describe_the_last_search(searcher):
    """cutoff_counts: the beta cutoffs below the root of the last search, how many the first
    move made, and the cutting moves' numbers summed (each later move counts 2 or more);
    the same search again counts the same, and a deeper one counts more."""
    think(searcher, Position(MIDGAME), depth=6, nodes=None, multipv=1)
    counts = searcher.cutoff_counts()
    assert 0 < counts.first_move < counts.cutoffs
    assert counts.move_sum >= counts.first_move + 2 * (counts.cutoffs - counts.first_move)
    think(searcher, Position(MIDGAME), depth=6, nodes=None, multipv=1)
    assert searcher.cutoff_counts() == counts
    think(searcher, Position(MIDGAME), depth=8, nodes=None, multipv=1)
    assert searcher.cutoff_counts().cutoffs > counts.cutoffs
    text = str(counts)
    assert text.startswith(f"{counts.cutoffs} cutoffs, ") and "% by the first move" in text
    assert str(CutoffCounts()) == "no cutoff"
    total = CutoffCounts()
    total += counts
    total += counts
    assert total == CutoffCounts(2 * counts.cutoffs, 2 * counts.first_move, 2 * counts.move_sum)
