"""The classic techniques of the Japanese computer-shogi texts as switches: multi-iterative deepening, YSS's half-ply
extension (and its full variant), Tsuruoka's one-side-limited PVS and ordering by a shallow
search.  Each test checks what the technique does to the tree, and that with it on the
engine still plays legal moves and reports true mates.  One warmed Searcher is shared."""

import numpy as np
import pytest
import shogi

from usi_engine.server.options import Options
from usi_engine.position import Position, move_to_usi
from usi_engine.search.searcher import Searcher
from usi_engine.core import tt as ctt, search as cs, board as cb
from usi_engine.core.params import INDEX, defaults
from core_tree import search_node, tree

CLASSIC = (
    "MultiIterativeDeepening",
    "HalfPlyExtension",
    "HalfPlyExtensionFull",
    "OneSideLimitedPVS",
    "ShallowSearchOrdering",
)
# each technique on, with thresholds low enough that shallow searches use it
TECHNIQUES = {
    "mid": ({"MultiIterativeDeepening": 1}, {"MidDepth": 2}),
    "yss": ({"HalfPlyExtension": 1}, {}),
    "yss-full": ({"HalfPlyExtensionFull": 1}, {}),
    "osl": ({"OneSideLimitedPVS": 1}, {"OslDepth": 1, "OslSide": 0}),
    "osl-approx": ({"OneSideLimitedPVS": 1}, {"OslDepth": 1, "OslSide": 1}),
    "shallow": ({"ShallowSearchOrdering": 1}, {"ShallowOrderDepth": 2}),
}
MIDDLE_GAME = "ln4k1l/1r4g2/p3sgspn/2ppppp1p/1p7/2PPP1P2/PPSG1P1PP/2G2S1R1/LNK4NL b Bb 41"
INF = cs.VALUE_INF


@pytest.fixture(scope="module")
def searcher():
    s = Searcher()
    s.warmup()
    yield s
    s.configure(switches=dict(Searcher.SWITCHES), search_params=defaults())


def configure(searcher, switches=None, params=None):
    sp = defaults()
    for name, value in (params or {}).items():
        sp[INDEX[name]] = value
    searcher.configure(switches={**Searcher.SWITCHES, **(switches or {})}, search_params=sp)


def think(searcher, pos, depth):
    searcher.new_game()
    return searcher.think(
        pos, depth=depth, nodes=None, multipv=1, stop=np.zeros(1, np.int32), on_iteration=lambda info: None
    )


def with_sp(ctx, **params):
    sp = defaults()
    for name, value in params.items():
        sp[INDEX[name]] = value
    cs.set_search_params(ctx, sp)


# --- off by default ----------------------------------------------------------------------


def test_the_switches_are_declared_and_off_by_default(searcher):
    lines = Options.create(dict(Searcher.SWITCHES)).usi_lines()
    for name in CLASSIC:
        assert Searcher.SWITCHES[name] == 0
        assert f"option name {name} type check default false" in lines
    configure(searcher)
    think(searcher, Position(MIDDLE_GAME), 6)
    stats = searcher._contexts[0].stats
    for counter in ("S_MID_NODES", "S_OSL_SCOUTS", "S_OSL_RESTRICTED", "S_SHALLOW_NODES"):
        assert stats[getattr(cs, counter)] == 0, counter


# --- YSS: the TT line is searched twice as deep --------------------------------------------


def _tt_line_depth(searcher, pos, limit=40):
    """The deepest ply of the TT line from `pos` (its best moves, one after the other) whose
    entry was stored by a full-width search (depth >= one ply)."""
    p = pos.copy()
    deepest = 0
    for ply in range(limit):
        hit, m1, _m2, _v, _e, depth, _b, _pv = ctt.probe(searcher.tt, np.uint64(p.key()))
        if not hit or m1 == 0:
            break
        if depth >= cs.ONE_PLY:
            deepest = ply
        usi = move_to_usi(int(m1))
        if not p.is_legal(usi):
            break
        p.push(usi)
    return deepest


@pytest.mark.parametrize("switch", ["HalfPlyExtension", "HalfPlyExtensionFull"])
def test_half_ply_extension_searches_the_tt_line_beyond_the_nominal_depth(searcher, switch):
    n = 5
    pos = Position(MIDDLE_GAME)
    configure(searcher, {"CheckExtension": 0})
    think(searcher, pos, n)
    # without extensions a full-width node lies at most n - 1 plies from the root
    assert _tt_line_depth(searcher, pos) <= n - 1
    assert searcher._contexts[0].stats[cs.S_FULL_PLY] <= n - 1
    configure(searcher, {"CheckExtension": 0, switch: 1})
    r = think(searcher, pos, n)
    line = _tt_line_depth(searcher, pos)
    # half a ply a move along the TT line: up to 2n - 2 plies of full-width nodes
    assert n <= line <= 2 * n - 2
    assert searcher._contexts[0].stats[cs.S_FULL_PLY] >= line
    assert r.info.seldepth > n and r.best in {m.usi() for m in shogi.Board(MIDDLE_GAME).legal_moves}


# --- multi-iterative deepening: shallow iterations where the TT knows nothing --------------


def test_multi_iterative_deepening_runs_shallow_iterations_at_a_new_node():
    arrays, ctx = tree(MIDDLE_GAME, CHECK_EXT=0, MID=1)  # MidDepth 3, MidStart 1
    ctx.stack_pt[0] = 0  # as if a move led here
    search_node(arrays, ctx, -INF, INF, 3 * cs.ONE_PLY, 1, 0)
    # only this node has 3 plies left: it searched itself at 1 and 2 plies first
    assert ctx.stats[cs.S_MID_NODES] == 1 and ctx.stats[cs.S_MID_ITERS] == 2
    search_node(arrays, ctx, -INF, INF, 3 * cs.ONE_PLY, 1, 0)
    assert ctx.stats[cs.S_MID_NODES] == 1  # now in the TT: no iterations
    assert ctx.stats[cs.S_MID_ACTIVE] == 0


def test_multi_iterative_deepening_iterates_at_every_new_deep_node_without_nesting():
    arrays, ctx = tree(MIDDLE_GAME, CHECK_EXT=0, MID=1)
    ctx.stack_pt[0] = 0
    search_node(arrays, ctx, -INF, INF, 4 * cs.ONE_PLY, 1, 0)
    nodes, iters = int(ctx.stats[cs.S_MID_NODES]), int(ctx.stats[cs.S_MID_ITERS])
    # the top node: 1, 2, 3 plies; every later node with 3 plies left and no entry: 1, 2
    assert nodes >= 1 and iters == 3 + 2 * (nodes - 1)
    arrays, ctx = tree(MIDDLE_GAME, CHECK_EXT=0, MID=0)
    ctx.stack_pt[0] = 0
    search_node(arrays, ctx, -INF, INF, 4 * cs.ONE_PLY, 1, 0)
    assert ctx.stats[cs.S_MID_NODES] == 0 and ctx.stats[cs.S_MID_ITERS] == 0


# --- one-side-limited PVS: restricted searches store only what they prove ----------------


def _entry_fields(tt):
    """Each entry's generation, depth, bound and key check, decoded as tt.py lays an entry out."""
    w1 = tt[:, 1]
    w0 = tt[:, 0] ^ w1 ^ (w1 << ctt.KEY_SHIFT)
    return w0 & ctt.U8, (w0 >> np.uint64(8)) & ctt.U8, (w1 >> np.uint64(56)) & ctt.U2, w0 >> ctt.KEY_SHIFT


def _side_to_move_of_entries(checks, sfen):
    """The side to move (the key's bit 0) of each entry, given their key checks, that holds a
    position one or two plies below `sfen`, -1 for the others: an entry keeps only its key's
    upper half mixed with that bit, so the side is found by matching the entry against the keys
    of those positions."""
    buckets = len(checks) // ctt.BUCKET
    side_of = {}
    root = Position(sfen)
    for move in root.legal_moves():
        root.push(move)
        keys = [root.key()]
        for reply in root.legal_moves():
            root.push(reply)
            keys.append(root.key())
            root.pop()
        root.pop()
        for key in keys:
            side_of[(key >> 1) % buckets, (key >> 32) ^ (key & 1)] = key & 1
    return np.array([side_of.get((i // ctt.BUCKET, int(c)), -1) for i, c in enumerate(checks)])


@pytest.mark.parametrize("side", [0, 1])
def test_restricted_search_stores_only_proven_bounds(side):
    arrays, ctx = tree(MIDDLE_GAME, tt_entries=1 << 16)
    with_sp(ctx, OslSide=side)
    v = 0
    for d in range(1, 6):  # fill the TT as iterative deepening does
        v = int(cs.root_search(arrays, ctx, -INF, INF, d * cs.ONE_PLY))
    # restricted scouts of the other root moves, in a new generation
    ctx.params[cs.P_GENERATION] = 9
    child_side = 1 - (int(arrays.keys[arrays.st[cb.ST_PLY]]) & 1)
    for i in range(1, int(ctx.params[cs.P_ROOT_N])):
        ctx.stack_pt[0] = 0
        cb.do_move(arrays, ctx.root_moves[i])
        ctx.stats[cs.S_OSL_PLY] = 1
        search_node(arrays, ctx, -v - 1, -v, 5 * cs.ONE_PLY, 1, 1)
        cb.undo_move(arrays)
    assert ctx.stats[cs.S_OSL_RESTRICTED] > 0 and ctx.stats[cs.S_OSL_UNPROVEN] > 0
    # the limited side's nodes prove lower bounds only, the free side's upper bounds only
    generation, depth, bounds, checks = _entry_fields(ctx.tt)
    written = (ctx.tt[:, 1] != 0) & (generation == 9) & (depth >= cs.ONE_PLY)  # search, not qsearch
    to_move = _side_to_move_of_entries(checks, MIDDLE_GAME)  # -1 where not known
    limited_bit = child_side if side == 0 else 1 - child_side
    limited = written & (to_move == limited_bit)
    free = written & (to_move == 1 - limited_bit)
    assert limited.sum() > 0 and free.sum() > 0
    assert set(bounds[limited].tolist()) <= {ctt.BOUND_LOWER, ctt.BOUND_NONE}
    assert set(bounds[free].tolist()) <= {ctt.BOUND_UPPER, ctt.BOUND_NONE}


def test_restricted_node_searches_the_similar_positions_best_move():
    # no pruning before the move loop: the node must reach it
    arrays, ctx = tree(MIDDLE_GAME, tt_entries=1 << 16, NULL_MOVE=0, FUTILITY=0, RAZORING=0)
    pos = Position(MIDDLE_GAME)
    pos.push("1g1f")
    assert pos.is_legal("3a4b")
    # the sibling reached by a pass: White to move on Black's board before 1g1f
    passed = Position(MIDDLE_GAME.replace(" b ", " w "))
    assert (int(passed.key()) ^ 1) == int(Position(MIDDLE_GAME).key())
    ctt.store(ctx.tt, np.uint64(passed.key()), passed.parse_move("3a4b"), 0, 0, 8, ctt.BOUND_LOWER, 0, False)
    ctx.stack_pt[0] = 0
    cb.do_move(arrays, Position(MIDDLE_GAME).parse_move("1g1f"))
    ctx.stats[cs.S_OSL_PLY] = 1
    search_node(arrays, ctx, -1, 0, 2 * cs.ONE_PLY, 1, 1)
    assert ctx.stats[cs.S_OSL_RESTRICTED] == 1
    assert ctx.moves[1, 0] == pos.parse_move("3a4b")  # the one move searched there


# --- with each technique on: legal moves, true mates --------------------------------------


def _mate_problems(max_len):
    out = []
    from pathlib import Path

    for line in (Path(__file__).parent / "data" / "tsume.txt").read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        sfen, length, _source = (x.strip() for x in line.split(";", 2))
        if length != "nomate" and int(length) <= max_len:
            out.append((sfen, int(length)))
    return out


def _assert_mate_line(sfen, pv, plies):
    board = shogi.Board(sfen)
    assert len(pv) >= plies
    for m in pv[:plies]:
        assert shogi.Move.from_usi(m) in board.legal_moves, (sfen, pv)
        board.push_usi(m)
    assert board.is_checkmate(), (sfen, pv)


@pytest.mark.parametrize("name", list(TECHNIQUES))
def test_mates_stay_true_with_each_technique(searcher, name):
    configure(searcher, *TECHNIQUES[name])
    r = think(searcher, Position("4k4/9/4P4/9/9/9/9/9/9 b G 1"), 3)
    assert r.best == "G*5b" and r.info.score_mate == 1
    r = think(searcher, Position("8k/9/7PP/9/9/9/9/9/8K w G 1"), 4)
    assert r.info.score_mate is not None and r.info.score_mate < 0
    problems = _mate_problems(5)
    assert {length for _, length in problems} == {1, 3, 5}
    missed = []
    for sfen, length in problems:
        r = think(searcher, Position(sfen), length + 2)
        mate = r.info.score_mate
        if length <= 3:  # a mate in 1 is a check: no mate shorter than these
            assert mate == length, (name, sfen, r.info)
        if mate is None:
            missed.append(sfen)
        else:  # the tsume length counts checks only: a game mate may
            assert mate > 0  # differ, but its line must mate
            _assert_mate_line(sfen, r.info.pv, mate)
    # searched 2 plies deeper than its length, every problem is solved, by the default
    # search and with each technique (as measured): a technique that loses mates fails here
    assert missed == [], (name, f"{len(problems) - len(missed)} of {len(problems)} solved")


@pytest.mark.parametrize("name", list(TECHNIQUES))
def test_legal_moves_with_each_technique(searcher, name):
    from test_search import _random_positions

    configure(searcher, *TECHNIQUES[name])
    for sfen in _random_positions(8, seed=13) + [MIDDLE_GAME]:
        r = think(searcher, Position(sfen), 5)
        board = shogi.Board(sfen)
        assert r.best in {m.usi() for m in board.legal_moves}, (name, sfen)
        for m in r.info.pv:
            assert shogi.Move.from_usi(m) in board.legal_moves, (name, sfen, r.info.pv)
            board.push_usi(m)
