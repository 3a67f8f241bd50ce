"""The Python driver of the search (usi_engine/searcher.py): root restriction, reports of a
stopped iteration (ConsiderationMode), the Lazy SMP skip pattern."""

from __future__ import annotations

import numpy as np
import pytest

from usi_engine.position import Position
from usi_engine.searcher import SKIP_SIZE, Searcher, helper_skips

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
    extra = considered[len(plain):]
    assert [(i.depth, i.pv) for i in considered[:len(plain)]] == [(i.depth, i.pv) for i in plain]
    assert len(extra) == multipv
    assert [i.multipv for i in extra] == list(range(1, multipv + 1))
    assert extra[0].depth == plain[-1].depth + 1          # the unfinished iteration
    assert not any(i.last_line for i in extra)             # not a finished iteration
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
