"""The search: mates, tactics, legality, sennichite and perpetual check, history and TT
mechanics, determinism, limits.  One warmed Searcher is shared by the module."""

import random
import threading
import time

import numpy as np
import pytest
import shogi

from usi_engine.position import Position, move_to_usi
from usi_engine.search.searcher import Searcher
from usi_engine.core import tt as ctt, search as cs, board as cb
from usi_engine.core.evaluate import evaluate
from usi_engine.core.types import MAX_PLY, KING, WHITE_BIT, make_move, parse_square
from usi_engine.core.params import PARAMS, INDEX, SP_NB, defaults
from core_tree import qsearch_node, reward_tt_cutoff, search_node, tree
from search_settings import search_constants
from usi_engine.core.history import (
    BUTTERFLY_D,
    CONTINUATION_D,
    NO_CONTINUATION,
    bounded_update,
    history_bonus,
    piece_to,
    quiet_score,
    update_quiet,
)


@pytest.fixture(scope="module")
def searcher():
    s = Searcher()
    s.warmup()
    return s


def think(searcher, pos, depth=None, nodes=None, multipv=1, stop=None, infos=None):
    searcher.new_game()
    stop = np.zeros(1, np.int32) if stop is None else stop
    sink = infos.append if infos is not None else (lambda info: None)
    return searcher.think(pos, depth=depth, nodes=nodes, multipv=multipv, stop=stop, on_iteration=sink)


def from_history(sfen, moves):
    pos = Position(sfen)
    for m in moves:
        pos.push(m)
    return pos


# --- mates and tactics ---------------------------------------------------------------------


def test_mate_in_1(searcher):
    r = think(searcher, Position("4k4/9/4P4/9/9/9/9/9/9 b G 1"), depth=3)
    assert r.best == "G*5b"
    assert r.info.score_mate == 1


def test_mate_in_3(searcher):
    sfen = "7kl/9/6P1p/9/9/9/9/9/9 b GS 1"  # no mate in 1; cshogi: mate in 3
    r = think(searcher, Position(sfen), depth=5)
    assert r.info.score_mate == 3
    board = shogi.Board(sfen)
    for m in r.info.pv[:3]:
        assert shogi.Move.from_usi(m) in board.legal_moves
        board.push_usi(m)
    assert board.is_checkmate()


def test_mated_side_reports_negative_mate(searcher):
    # white to move: its only move, 1a2a, walks into G*2b mate
    r = think(searcher, Position("8k/9/7PP/9/9/9/9/9/8K w G 1"), depth=4)
    assert r.info.score_mate is not None and r.info.score_mate < 0


def test_takes_a_hanging_rook(searcher):
    r = think(searcher, Position("4k4/9/9/9/9/5r3/9/9/4K3B b - 1"), depth=4)
    assert r.best == "1i4f"
    assert r.info.score_cp > 500


def test_no_legal_move_gives_no_bestmove(searcher):
    r = think(searcher, Position("8k/7G1/7P1/9/9/9/9/9/K8 w - 1"), depth=3)
    assert r.best is None


def _random_positions(count, seed):
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        board = shogi.Board()
        for _ in range(rng.randrange(10, 120)):
            moves = list(board.legal_moves)
            if not moves or board.is_game_over():
                break
            captures = [m for m in moves if board.piece_at(m.to_square) is not None]
            board.push(rng.choice(captures) if captures and rng.random() < 0.7 else rng.choice(moves))
        if list(board.legal_moves) and not board.is_game_over():
            out.append(board.sfen())
    return out


def test_never_returns_an_illegal_move(searcher):
    for sfen in _random_positions(40, seed=7):
        r = think(searcher, Position(sfen), depth=3)
        board = shogi.Board(sfen)
        legal = {m.usi() for m in board.legal_moves}
        assert r.best in legal, sfen
        for m in r.info.pv:  # the whole PV is playable
            assert shogi.Move.from_usi(m) in board.legal_moves, (sfen, r.info.pv)
            board.push_usi(m)


# --- sennichite and perpetual check ------------------------------------------------------

LOST = "3gk4/1b5r1/9/9/9/9/P8/9/K8 b - 1"  # black has a king and a pawn
SHUFFLE = ["9i9h", "5a4a", "9h9i", "4a5a"]


def test_repeats_to_escape_a_lost_position(searcher):
    pos = from_history(LOST, SHUFFLE)  # the start position, a second time
    r = think(searcher, pos, depth=5)
    assert r.best == "9i9h"  # the only move back into the cycle
    assert r.info.score_cp == 0 and r.info.score_mate is None


def test_draw_value_moves_the_repetition_score(searcher):
    pos = from_history(LOST, SHUFFLE)
    searcher.configure(draw_value=-50)
    try:
        r = think(searcher, pos, depth=5)
    finally:
        searcher.configure(draw_value=0)
    assert r.best == "9i9h" and r.info.score_cp == -50


CHECKER = "8k/R8/7pp/9/9/9/9/9/4KG3 b - 1"  # black rook checks along ranks a and b
CHECK_CYCLE = ["9b9a", "1a1b", "9a9b", "1b1a"]


# the same cycle with a dragon: a rook's move into the promotion zone is generated only
# promoted (its non-promotion is never better), so the rook's own 9b9a is no root move
DRAGON_CHECKER = CHECKER.replace("R8", "+R8")


def test_checker_avoids_completing_perpetual_check(searcher):
    pos = from_history(DRAGON_CHECKER, CHECK_CYCLE)
    r = think(searcher, pos, depth=5, multipv=2)
    assert r.best != "9b9a"
    assert r.info.score_mate is None or r.info.score_mate > 0
    # searched on its own, the move that completes the perpetual is a loss for the checker,
    # decided by the repetition (in cp, the mirror of the defender's win below), not a draw
    searcher.new_game()
    alone = searcher.think(
        pos,
        depth=5,
        nodes=None,
        multipv=1,
        stop=np.zeros(1, np.int32),
        on_iteration=lambda info: None,
        searchmoves=["9b9a"],
    )
    assert alone.best == "9b9a" and alone.info.score_mate is None
    assert alone.info.score_cp <= -(cs.VALUE_PERPETUAL - MAX_PLY)


def test_defender_uses_perpetual_check_to_win(searcher):
    pos = from_history(CHECKER, CHECK_CYCLE + ["9b9a"])  # white to move, in check again
    r = think(searcher, pos, depth=5)
    assert r.best == "1a1b"
    # a win, but one this path decides, not a mate the tree proved: reported in cp
    assert r.info.score_mate is None and r.info.score_cp >= cs.VALUE_PERPETUAL - MAX_PLY
    # and the root's TT entry keeps its best move but no value
    hit, m1, _m2, _v, _e, _d, bound, _pv = ctt.probe(searcher.tt, np.uint64(pos.key()))
    assert hit and bound == ctt.BOUND_NONE and move_to_usi(int(m1)) == "1a1b"


# --- a tree that tells the truth -----------------------------------------------------------


def test_root_fail_low_is_stored_as_an_upper_bound():
    sfen = "ln1g3nl/1r2gk3/p1sppsbpp/2p3p2/1p5P1/2P3P2/PPSPPPS1P/1B2G2R1/LN2KG1NL b - 1"
    arrays, ctx = tree(sfen)
    v = cs.root_search(arrays, ctx, 5000, 5001, 4 * cs.ONE_PLY)
    assert v <= 5000
    hit, _m1, _m2, _v, ev, _d, bound, _pv = ctt.probe(ctx.tt, arrays.keys[arrays.st[cb.ST_PLY]])
    assert hit and bound == ctt.BOUND_UPPER
    assert ev == evaluate(arrays) != 0  # the root's real static eval, not 0


def test_mate_in_1_store_keeps_no_fake_eval():
    arrays, ctx = tree("4k4/9/4P4/9/9/9/9/9/4K4 b GN 1", MATE1=1)
    ctx.stack_pt[0] = 0  # as if a real move led here
    v = search_node(arrays, ctx, -cs.VALUE_INF, cs.VALUE_INF, 8 * cs.ONE_PLY, 1, 0)
    assert v == ctt.VALUE_MATE - 2  # mate in 1 from ply 1
    hit, m1, _m2, _v, ev, _d, bound, _pv = ctt.probe(ctx.tt, arrays.keys[arrays.st[cb.ST_PLY]])
    assert hit and bound == ctt.BOUND_EXACT and move_to_usi(int(m1)) == "G*5b"
    assert evaluate(arrays) != 0 and ev in (ctt.EVAL_NONE, evaluate(arrays))
    # the quiescence search of the same position stands pat on its real eval
    assert qsearch_node(arrays, ctx, -cs.VALUE_INF, cs.VALUE_INF, 1, 0) >= evaluate(arrays)


def _walk(arrays, ctx, usi_moves):
    """Play king moves ('null': a pass) from the root, as the tree does."""
    for ply, usi in enumerate(usi_moves):
        if usi == "null":
            ctx.stack_pt[ply] = -1
            cb.do_null_move(arrays)
            continue
        side = arrays.st[cb.ST_SIDE]
        king = KING | (WHITE_BIT if side else 0)
        ctx.stack_pt[ply] = 0
        cb.do_move(arrays, np.int32(make_move(parse_square(usi[:2]), parse_square(usi[2:]), king, 0)))


KINGS = "8k/9/9/9/9/9/9/9/K8 b - 1"


def test_repetition_across_a_null_move_is_not_a_draw():
    draw = 777  # an unmistakable draw value
    arrays, ctx = tree(KINGS, DRAW_VALUE=draw)
    cycle = ["9i9h", "1a1b", "9h9i", "1b1a"]  # a real repetition: a draw
    _walk(arrays, ctx, cycle)
    assert search_node(arrays, ctx, -cs.VALUE_INF, cs.VALUE_INF, 2 * cs.ONE_PLY, 4, 0) == draw
    arrays, ctx = tree(KINGS, DRAW_VALUE=draw)
    # the black king's triangle with a white pass among the moves: the board repeats, but
    # only because of the pass
    _walk(arrays, ctx, ["9i9h", "1a1b", "9h8i", "null", "8i9i", "1b1a"])
    assert arrays.keys[6] == arrays.keys[0]
    assert search_node(arrays, ctx, -cs.VALUE_INF, cs.VALUE_INF, 2 * cs.ONE_PLY, 6, 0) != draw


def test_single_reply_extension_obeys_the_check_extension_switch():
    sfen = "4k4/9/9/9/9/9/9/7+r1/8K b - 1"  # in check, 1i2h is the only move
    after = Position(sfen)
    after.push("1i2h")

    def nodes(check_ext):
        arrays, ctx = tree(sfen, CHECK_EXT=check_ext)
        assert ctx.params[cs.P_ROOT_N] == 1
        cs.root_search(arrays, ctx, -cs.VALUE_INF, cs.VALUE_INF, cs.ONE_PLY)
        return int(ctx.stats[cs.S_NODES])

    child_arrays, child_ctx = tree(after)
    qsearch_node(child_arrays, child_ctx, -cs.VALUE_INF, cs.VALUE_INF, 1, 0)
    assert nodes(0) == child_ctx.stats[cs.S_NODES]  # no extension: the reply gets qsearch
    assert nodes(1) > nodes(0)  # extended: a full ply more


# --- history tables ------------------------------------------------------------------------


def test_bounded_rule_on_hand_computed_examples():
    assert bounded_update(1000, 500, BUTTERFLY_D) == 1000 + 500 - (1000 * 500) // BUTTERFLY_D == 1431
    assert bounded_update(-2000, -300, BUTTERFLY_D) == -2216
    assert bounded_update(0, 700, CONTINUATION_D) == 700


@pytest.mark.parametrize("d", [BUTTERFLY_D, CONTINUATION_D])
def test_bounded_rule_stays_within_d(d):
    rng = np.random.default_rng(3)
    for _ in range(200):
        entry = 0
        for bonus in rng.integers(-d, d + 1, size=500):
            entry = bounded_update(entry, int(bonus), d)
            assert -d <= entry <= d
        # saturation: pushing one way forever converges to the bound, never past it
        for _ in range(2000):
            entry = bounded_update(entry, d, d)
        assert entry == d


def test_each_history_table_holds_its_bound():
    # the bounded rule keeps an entry within +-D, so a table's type need hold D and no more:
    # the continuation table is int16 to halve its size, which a larger D would overflow
    _, ctx = tree(OPENING)
    for table, d in ((ctx.butterfly, BUTTERFLY_D), (ctx.continuation, CONTINUATION_D)):
        assert np.iinfo(table.dtype).min <= -d and d <= np.iinfo(table.dtype).max
    assert ctx.continuation.dtype == np.int16
    m = make_move(parse_square("7g"), parse_square("7f"), 1, 0)
    largest = history_bonus(np.array([p.hi for p in PARAMS], np.int64), 200)  # a tuner's most
    for _ in range(500):  # saturated by it, the entry is stored exactly
        update_quiet(ctx, 0, m, (11, -1, -1, -1), largest)
    assert ctx.continuation[11, piece_to(m)] == CONTINUATION_D


def test_history_bonus_never_exceeds_the_smallest_bound():
    sp = np.array(defaults(), np.int64)
    assert all(0 < history_bonus(sp, d) <= BUTTERFLY_D for d in range(0, 200))
    hi = np.array([p.hi for p in PARAMS], np.int64)  # anywhere a tuner may go
    assert all(0 < history_bonus(hi, d) <= min(BUTTERFLY_D, CONTINUATION_D) for d in range(0, 200))


def test_continuation_keys_reach_four_and_six_plies_up_only_with_continuation_far():
    _, ctx = tree(OPENING)
    ctx.stack_pt[:8] = [100, 101, 102, 103, 104, 105, 106, 107]  # the moves at plies 0..7
    for far, expected in [(0, (106, 105, -1, -1)), (1, (106, 105, 103, -1)), (2, (106, 105, 103, 101))]:
        ctx.sp[INDEX["ContinuationFar"]] = far
        assert cs._continuation_keys(ctx, 7) == expected
    assert cs._continuation_keys(ctx, 3) == (102, 101, -1, -1)  # nothing above the root
    assert cs._continuation_keys(ctx, 0) == (-1, -1, -1, -1)


def test_a_quiet_move_is_scored_and_rewarded_under_each_continuation_key():
    _, ctx = tree(OPENING)
    m = make_move(parse_square("7g"), parse_square("7f"), 1, 0)  # the black pawn's push
    pt = piece_to(m)
    update_quiet(ctx, 0, m, (11, 12, -1, 14), 400)
    assert [ctx.continuation[k, pt] for k in (11, 12, 13, 14)] == [400, 400, 0, 400]
    assert ctx.butterfly[0, parse_square("7g"), parse_square("7f")] == 400
    ctx.continuation[13, pt] = 50
    assert quiet_score(ctx, 0, m, (11, 12, 13, 14)) == 400 * 4 + 50
    assert quiet_score(ctx, 0, m, NO_CONTINUATION) == 400  # the butterfly entry alone


def test_a_quiet_tt_move_that_ends_a_node_is_rewarded_as_a_cutoff():
    """TtCutoffHistory: the TT move of a cutoff the table answers gets the history bonus and
    becomes the killer; a capture, or a move that is not legal here (the entry of another
    position), teaches nothing."""
    arrays, ctx = tree(WITH_HANDS)
    pos = Position(WITH_HANDS)
    quiet, capture = pos.parse_move("1f1e"), pos.parse_move("2b2a+")  # 2b2a+ takes a knight
    bonus = history_bonus(ctx.sp, 5)
    reward_tt_cutoff(arrays, ctx, 0, capture, 5)
    assert not ctx.butterfly.any() and ctx.killers[0, 0] == 0
    reward_tt_cutoff(arrays, ctx, 0, quiet, 5)
    assert ctx.butterfly[0, parse_square("1f"), parse_square("1e")] == bonus
    assert ctx.killers[0, 0] == quiet
    cb.do_move(arrays, np.int32(quiet))
    ctx.stack_pt[0] = piece_to(quiet)
    before = ctx.butterfly.copy()
    reward_tt_cutoff(arrays, ctx, 1, quiet, 5)  # Black's move again: not White's to play
    assert (ctx.butterfly == before).all() and ctx.killers[1, 0] == 0


def test_the_move_that_made_every_reply_fail_low_is_rewarded():
    """FailLowPriorBonus: at a node where every move failed low, the opponent's quiet move
    that led there is rewarded in the opponent's butterfly and continuation tables; not a
    capture, and nothing at the root."""
    arrays, ctx = tree(WITH_HANDS)
    pos = Position(WITH_HANDS)
    bonus = history_bonus(ctx.sp, 4)
    cs._reward_prior_move(arrays, ctx, 0, 4)  # the root: no move of the search before it
    assert not ctx.butterfly.any()
    quiet = pos.parse_move("1f1e")
    cb.do_move(arrays, np.int32(quiet))
    ctx.stack_pt[0] = piece_to(quiet)
    cs._reward_prior_move(arrays, ctx, 1, 4)
    assert ctx.butterfly[0, parse_square("1f"), parse_square("1e")] == bonus  # Black's table
    assert not ctx.butterfly[1].any() and not ctx.continuation.any()  # no move above the root's
    arrays, ctx = tree(WITH_HANDS)
    capture = pos.parse_move("2b2a+")
    cb.do_move(arrays, np.int32(capture))
    ctx.stack_pt[0] = piece_to(capture)
    cs._reward_prior_move(arrays, ctx, 1, 4)
    assert not ctx.butterfly.any()


def test_a_node_reached_by_a_late_move_reduces_its_late_moves_less():
    """LmrParentLate: from the opponent's move LmrParentLateMoves + 1 on (the root's move
    number at ply 1), the node's late moves are reduced that many plies less; never at the
    root, never after an early move, and not with the setting at 0."""
    _, ctx = tree(OPENING)
    sp = defaults()
    sp[INDEX["LmrParentLate"]] = 2
    cs.set_search_params(ctx, sp)
    late = sp[INDEX["LmrParentLateMoves"]] + 1
    ctx.stack_count[0] = late
    assert cs._parent_late_relief(ctx, 1) == 2 * cs.ONE_PLY
    assert cs._parent_late_relief(ctx, 0) == 0
    ctx.stack_count[0] = late - 1
    assert cs._parent_late_relief(ctx, 1) == 0
    ctx.stack_count[0] = late
    cs.set_search_params(ctx, defaults())
    assert cs._parent_late_relief(ctx, 1) == 0


def test_the_replies_to_a_root_move_are_reduced_less():
    """LmrRootReplies: the late moves of a node one ply below the root are reduced that many
    plies less; no other ply's, and none with the setting at 0 (the default)."""
    _, ctx = tree(OPENING)
    assert cs._root_replies_relief(ctx, 1) == 0
    sp = defaults()
    sp[INDEX["LmrRootReplies"]] = 2
    cs.set_search_params(ctx, sp)
    assert cs._root_replies_relief(ctx, 1) == 2 * cs.ONE_PLY
    assert cs._root_replies_relief(ctx, 0) == 0
    assert cs._root_replies_relief(ctx, 2) == 0


# White to move holds a rook and a pawn: most of its 78 moves are drops
ROOK_IN_HAND = "l2gk3l/3s1bgs1/n1ppppn1p/p8/7p1/PPP6/3PPPPRP/1SGBGS3/LN2K2NL w 2Prp 42"


def test_pv_prune_prunes_the_late_quiet_moves_of_a_pv_node_too():
    """PvPrune: a PV node of one ply prunes its late quiet moves (most of them rook drops) by
    their number, futility and SEE, as a zero-window node does; by default it searches every
    move. Away from the PV the setting changes nothing."""

    def node(pv_prune, alpha, beta):
        arrays, ctx = tree(ROOK_IN_HAND)
        sp = defaults()
        sp[INDEX["PvPrune"]] = pv_prune
        cs.set_search_params(ctx, sp)
        ctx.stack_pt[0] = 0  # as if a move led here
        v = search_node(arrays, ctx, alpha, beta, cs.ONE_PLY, 1, 0)
        return int(ctx.stats[cs.S_NODES]), int(v)

    legal = len(list(shogi.Board(ROOK_IN_HAND).legal_moves))
    full, value = node(0, -cs.VALUE_INF, cs.VALUE_INF)
    pruned, _ = node(1, -cs.VALUE_INF, cs.VALUE_INF)
    assert legal > 70 and full > legal  # each move its quiescence node at least
    assert pruned < full // 3
    assert node(0, value - 1, value) == node(1, value - 1, value)


def test_a_mate_threat_found_by_the_null_move_extends_the_node():
    """MateThreatExtension: where the null move's search found a mate against the side that
    passed, the node is searched that many half plies deeper; not for a merely bad null-move
    score, not beyond twice the root depth, and never with the setting at 0 (the default)."""
    _, ctx = tree(OPENING)
    ctx.params[cs.P_ROOT_DEPTH] = 10
    mated = -(cs.VALUE_MATE - 7)
    assert cs._mate_threat_extension(ctx, mated, 3) == 0
    sp = defaults()
    sp[INDEX["MateThreatExtension"]] = 2
    cs.set_search_params(ctx, sp)
    assert cs._mate_threat_extension(ctx, mated, 3) == 2
    assert cs._mate_threat_extension(ctx, -3000, 3) == 0
    assert cs._mate_threat_extension(ctx, mated, 20) == 0


def test_a_late_drop_beside_the_enemy_king_is_reduced_less():
    """LmrDropNearKing: a drop within LmrDropNearKingDistance (2) files and ranks of the king
    of the side it is played against is reduced that many plies less; a drop further away, a
    board move and the setting at 0 are not."""
    pos = Position(WITH_HANDS)  # Black drops against White's king on 6b
    arrays, ctx = tree(pos)
    sp = defaults()
    sp[INDEX["LmrDropNearKing"]] = 2
    cs.set_search_params(ctx, sp)

    def relief(usi):
        m = np.int32(pos.parse_move(usi))
        cb.do_move(arrays, m)
        try:
            return cs._drop_near_king_relief(ctx, arrays, m)
        finally:
            cb.undo_move(arrays)

    assert relief("S*6d") == 2 * cs.ONE_PLY
    assert relief("L*4c") == 2 * cs.ONE_PLY  # two files, one rank
    assert relief("S*1e") == 0  # five files away
    assert relief("S*6e") == 0  # three ranks away
    sp[INDEX["LmrDropNearKingDistance"]] = 3
    cs.set_search_params(ctx, sp)
    assert relief("S*6e") == 2 * cs.ONE_PLY
    assert relief("S*1e") == 0
    assert relief("2b2a+") == 0  # a board move
    cs.set_search_params(ctx, defaults())
    assert relief("S*6d") == 0


def test_search_params_travel_in_the_context():
    ctx = cs.new_context(ctt.table_for_entries(1024), np.zeros(1, np.int32))
    assert list(ctx.sp) == defaults() and len(PARAMS) == SP_NB
    sp = defaults()
    sp[INDEX["LmrDiv"]] = 300  # a gentler reduction table
    gentle = cs.new_context(ctt.table_for_entries(1024), np.zeros(1, np.int32), sp=sp)
    assert (gentle.reductions <= ctx.reductions).all() and (gentle.reductions < ctx.reductions).any()
    assert ctx.reductions[1, 1] == 0 and ctx.reductions[20, 20] > 0
    with pytest.raises(ValueError, match="expected"):
        cs.set_search_params(ctx, [1, 2, 3])


def test_search_params_change_the_tree():
    sfen = "ln1g3nl/1r2gk3/p1sppsbpp/2p3p2/1p5P1/2P3P2/PPSPPPS1P/1B2G2R1/LN2KG1NL b - 1"
    arrays, ctx = tree(sfen)
    cs.root_search(arrays, ctx, -cs.VALUE_INF, cs.VALUE_INF, 6 * cs.ONE_PLY)
    sp = defaults()
    sp[INDEX["LmpDepth"]] = 2  # far less move-count pruning
    arrays2, ctx2 = tree(sfen)
    cs.set_search_params(ctx2, sp)
    cs.root_search(arrays2, ctx2, -cs.VALUE_INF, cs.VALUE_INF, 6 * cs.ONE_PLY)
    assert ctx2.stats[cs.S_NODES] != ctx.stats[cs.S_NODES]


def test_null_move_reduction_grows_with_the_margin_over_beta():
    sp = np.array(defaults(), np.int64)
    base = sp[INDEX["NullMoveBase"]] + 8 // sp[INDEX["NullMoveDiv"]]
    div, most = int(sp[INDEX["NullMoveEvalDiv"]]), int(sp[INDEX["NullMoveEvalMax"]])
    assert most == 3
    got = [cs.null_move_reduction(sp, 8, 100 + m, 100) for m in (0, div - 1, div, 2 * div, 10 * div)]
    assert got == [base, base, base + 1, base + 2, base + most]
    sp[INDEX["NullMoveEvalMax"]] = 0  # the search before it
    assert [cs.null_move_reduction(sp, 8, 100 + m, 100) for m in (0, 500, 5000)] == [base] * 3


def test_late_move_reduction_by_node_kind_improving_tt_capture_and_pv_flag():
    _, ctx = tree("ln1g3nl/1r2gk3/p1sppsbpp/2p3p2/1p5P1/2P3P2/PPSPPPS1P/1B2G2R1/LN2KG1NL b - 1")
    sp = defaults()
    good, bad = sp[INDEX["LmrHistoryGood"]] + 1, -sp[INDEX["LmrHistoryBad"]] - 1

    def lmr(history=0, pv=False, cut=0, improving=True, tt_capture=False, tt_pv=False):
        return cs.late_move_reduction(ctx, 10, 20, history, pv, cut, improving, tt_capture, False, tt_pv)

    ply = cs.ONE_PLY  # the reduction is in half plies
    base = lmr()
    assert base == ctx.reductions[10, 20] * ply > ply
    assert (lmr(pv=True), lmr(cut=1), lmr(good), lmr(bad)) == (base - ply, base + ply, base - ply, base + ply)
    assert lmr(improving=False) == lmr(tt_capture=True) == lmr(tt_pv=True) == base  # off by default
    sp[INDEX["LmrNotImproving"]] = 1  # the settings under test
    sp[INDEX["LmrTtCapture"]] = 1
    sp[INDEX["TtPvReduce"]] = 1
    cs.set_search_params(ctx, sp)
    assert (lmr(improving=False), lmr(improving=True)) == (base + ply, base)
    assert lmr(tt_capture=True) == lmr(improving=False, tt_capture=True) - ply == base + ply
    # a ply less at a zero-window node once on the PV; a PV node keeps its own ply less only
    assert (lmr(tt_pv=True), lmr(pv=True, tt_pv=True)) == (base - ply, base - ply)
    assert cs.late_move_reduction(ctx, 3, 2, good, True, 0, True, False, False, True) == 0  # never below zero
    sp[INDEX["LmrPvNode"]] = 3  # a PV node's ply less, by the table
    cs.set_search_params(ctx, sp)
    assert (lmr(pv=True), lmr()) == (base - 3 * ply, base)


def test_a_reduction_leaves_at_least_one_ply():
    """A late move is never reduced into the quiescence search: the reduction is cut back to
    leave one ply, in whole plies, and one that leaves more stays as it is."""
    ply = cs.ONE_PLY
    assert cs._at_least_one_ply(6 * ply, 2 * ply) == 2 * ply
    assert cs._at_least_one_ply(6 * ply, 9 * ply) == 5 * ply
    assert cs._at_least_one_ply(3 * ply + 1, 5 * ply) == 2 * ply  # a check's half ply is kept
    assert cs._at_least_one_ply(ply, 3 * ply) == 0
    assert cs._at_least_one_ply(0, ply) == 0


def test_fail_high_damping_and_the_null_moves_margin():
    """FailHighDamp pulls a fail-high towards beta, the more the shallower the node, and
    leaves mate scores alone; NullMoveMargin asks the static evaluation to stand above beta
    by the margin less NullMoveMarginDepth a ply. Both do nothing at their defaults."""
    sp = np.array(defaults(), np.int64)
    assert cs._damped_fail_high(sp, 500, 90, 100, 4) == 500  # off by default
    assert cs._null_move_hopeful(sp, 100, 100, 1)
    sp[INDEX["FailHighDamp"]] = 1
    assert cs._damped_fail_high(sp, 500, 90, 100, 4) == (500 * 4 + 100) // 5 == 420
    assert cs._damped_fail_high(sp, 500, 90, 100, 1) == 300
    mate = cs.VALUE_MATE_IN_MAX + 5
    assert cs._damped_fail_high(sp, mate, 90, 100, 4) == mate
    assert cs._damped_fail_high(sp, 500, 90, mate, 4) == 500
    sp[INDEX["NullMoveMargin"]] = 400
    step = sp[INDEX["NullMoveMarginDepth"]]
    assert not cs._null_move_hopeful(sp, 100 + 399 - 2 * step, 100, 2)
    assert cs._null_move_hopeful(sp, 100 + 400 - 2 * step, 100, 2)


def test_quiescence_fail_high_damping():
    """QsFailHighDamp pulls a stand-pat cutoff halfway to beta and a move's fail-high a
    quarter of the way; mate scores, and everything with the setting off, stay as they are."""
    sp = np.array(defaults(), np.int64)
    assert cs._qs_damped(sp, 500, 100, 1, 2) == 500  # off by default
    sp[INDEX["QsFailHighDamp"]] = 1
    assert cs._qs_damped(sp, 500, 100, 1, 2) == 300
    assert cs._qs_damped(sp, 500, 100, 3, 4) == 400
    assert cs._qs_damped(sp, -99, -100, 1, 2) == -100  # floor division: never below beta
    mate = cs.VALUE_MATE_IN_MAX + 5
    assert cs._qs_damped(sp, mate, 100, 3, 4) == mate


def test_late_quiet_moves_are_pruned_by_the_depth_lmr_would_leave_them():
    """PruneLmrDepth (on by default): futility and SEE pruning judge the n-th move of a node
    of depth d by d - 1 - the reduction table's entry, never below 0; off, by d itself."""
    _, ctx = tree("ln1g3nl/1r2gk3/p1sppsbpp/2p3p2/1p5P1/2P3P2/PPSPPPS1P/1B2G2R1/LN2KG1NL b - 1")
    sp = defaults()
    assert sp[INDEX["PruneLmrDepth"]] == 1
    assert cs._pruning_depth(ctx, 10, 20) == 10 - 1 - ctx.reductions[10, 20] < 10 - 1
    assert cs._pruning_depth(ctx, 3, 1) == 2  # the first move is not reduced
    assert cs._pruning_depth(ctx, 2, 60) == max(2 - 1 - ctx.reductions[2, 60], 0) >= 0
    assert cs._pruning_depth(ctx, 200, 200) == 200 - 1 - ctx.reductions[63, 63]  # the table's edge
    sp[INDEX["PruneLmrDepth"]] = 0
    cs.set_search_params(ctx, sp)
    assert [cs._pruning_depth(ctx, d, 30) for d in (1, 5, 12)] == [1, 5, 12]


def test_late_move_reduction_by_history_in_half_plies():
    """LmrHistoryDiv: the history moves the reduction in proportion, in half plies, from one
    ply less for the best histories (killers included) to two more for the worst."""
    _, ctx = tree("ln1g3nl/1r2gk3/p1sppsbpp/2p3p2/1p5P1/2P3P2/PPSPPPS1P/1B2G2R1/LN2KG1NL b - 1")
    sp = defaults()
    div = 6000
    sp[INDEX["LmrHistoryDiv"]] = div
    cs.set_search_params(ctx, sp)

    def lmr(history):
        return cs.late_move_reduction(ctx, 10, 20, history, False, 0, True, False, False, False)

    base = lmr(0)
    assert base == ctx.reductions[10, 20] * cs.ONE_PLY
    assert [lmr(h) for h in (div // 2 - 1, div // 2, div, 50 * div)] == [base, base - 1, base - 2, base - 2]
    assert [lmr(-h) for h in (div // 2 - 1, div // 2, div, 2 * div, 50 * div)] == [
        base,
        base + 1,
        base + 2,
        base + 4,
        base + 4,
    ]


def test_a_search_without_its_only_legal_move_returns_alpha_and_stores_nothing():
    """The singular-extension search of a node leaves its TT move out. Where that is the only
    legal move, nothing else can answer it: the node returns alpha (the move is singular),
    not a mate, and neither that search nor anything else goes in the TT."""
    sfen = "l7k/9/9/9/9/9/9/8r/K8 b - 1"  # in check: 9i8i is the only move
    arrays, ctx = tree(sfen)
    ctx.stack_pt[0] = 0  # as if a move led here
    key = arrays.keys[arrays.st[cb.ST_PLY]]
    ctx.excluded[1] = Position(sfen).parse_move("9i8i")
    assert search_node(arrays, ctx, -50, -49, 4 * cs.ONE_PLY, 1, 0) == -50
    assert not ctt.probe(ctx.tt, key)[0]
    ctx.excluded[1] = 0
    search_node(arrays, ctx, -50, -49, 4 * cs.ONE_PLY, 1, 0)
    assert ctt.probe(ctx.tt, key)[0]


def test_probcut_cuts_off_on_a_capture_that_wins_far_above_beta():
    """A node whose capture wins a rook: with ProbCut on, the shallower search of that capture
    beats beta + ProbCutMargin and ends the node, whose TT entry is then a lower bound from
    ProbCut's depth, with the capture as its move; with it off the node is searched to its
    full depth (less the ply of internal iterative reduction, since it has no TT move)."""
    sfen = "4k4/9/9/9/4r4/9/9/4R4/4K4 b - 1"  # 5h5e takes an unguarded rook
    capture = Position(sfen).parse_move("5h5e")
    depth = 6 * cs.ONE_PLY
    found = {}
    for probcut in (0, 5):
        arrays, ctx = tree(sfen)
        sp = defaults()
        sp[INDEX["ProbCutDepth"]] = probcut
        cs.set_search_params(ctx, sp)
        ctx.stack_pt[0] = 0  # as if a move led here
        key = arrays.keys[arrays.st[cb.ST_PLY]]
        v = search_node(arrays, ctx, -1, 0, depth, 1, 1)
        hit, move, _m2, _v, _e, tt_depth, bound, _pv = ctt.probe(ctx.tt, key)
        assert hit and move == capture and bound == ctt.BOUND_LOWER and v >= 0
        found[probcut] = (v, tt_depth)
    v, tt_depth = found[5]
    assert tt_depth == depth - (cs.PROBCUT_SHALLOWER - 1) * cs.ONE_PLY
    assert found[0][1] >= depth - cs.ONE_PLY  # (internal iterative reduction)
    assert v >= defaults()[INDEX["ProbCutMargin"]]


OPENING = "ln1g3nl/1r2gk3/p1sppsbpp/2p3p2/1p5P1/2P3P2/PPSPPPS1P/1B2G2R1/LN2KG1NL b - 1"
# pieces in both hands: checks at the horizon, and interpositions to answer them
WITH_HANDS = "1n3r1nl/2skg2P1/1p1pb1g2/2p1pp1pp/L8/2P1PPp1P/1PNPS1N2/1SKGG4/3R4L b SLPb2p 61"
# a bishop in each hand and open files at both kings: its tree holds evasions that hang a piece
ATTACKED = "l4kg2/3r3sl/p1n1pgnpp/2ppspp2/Pp5PP/2PPSPP2/1P2P1N1L/2GSG2R1/LN1K5 b Bb 51"
# Black a rook and a bishop ahead, but White threatens G*5h, mate (the pawn on 5g guards it):
# passing loses, which MateThreatExtension looks for
MATE_THREAT = "4k4/9/9/9/9/9/4p4/9/4K4 b RBg 1"


def test_root_reduction_takes_late_quiet_moves_only():
    """LmrRoot: from the third root move on, a quiet move that does not check is reduced as
    at a PV node (never below one ply); the first two moves, captures, checks, a root in
    check and LmrRoot 0 keep the full depth."""
    arrays, ctx = tree(WITH_HANDS)
    pos = Position(WITH_HANDS)
    quiet, capture = pos.parse_move("1f1e"), pos.parse_move("2b2a+")  # 2b2a+ takes a knight
    depth = 10 * cs.ONE_PLY
    new_depth = depth - cs.ONE_PLY
    no, yes = False, True

    def r(m, count, in_check=no, checks=no, new=new_depth):
        return cs._root_reduction(arrays, ctx, m, count, depth, new, in_check, checks)

    sp = defaults()
    sp[INDEX["LmrRoot"]] = 0
    cs.set_search_params(ctx, sp)
    assert r(quiet, 20) == 0
    sp[INDEX["LmrRoot"]] = 1
    cs.set_search_params(ctx, sp)
    expected = cs.late_move_reduction(ctx, 10, 20, 0, True, 0, True, False, False, True)
    assert r(quiet, 20) == expected == (ctx.reductions[10, 20] - 1) * cs.ONE_PLY > 0
    assert r(quiet, 1) == r(quiet, 2) == 0
    assert r(quiet, 20, in_check=yes) == r(quiet, 20, checks=yes) == r(capture, 20) == 0
    assert r(quiet, 60, new=2 * cs.ONE_PLY) == cs.ONE_PLY  # one ply left at least


@pytest.mark.parametrize(
    "name, value, sfen",
    [
        (name, value, OPENING)
        for name, value in [
            ("NullMoveEvalMax", 0),
            ("LmrNotImproving", 1),
            ("LmrBadCaptures", 1),
            ("SingularDepth", 0),
            ("CaptureHistory", 32),
            ("ProbCutDepth", 0),
            ("SingularNegative", 0),
            ("LmrTtCapture", 1),
            ("NullMoveCutOnly", 1),
            ("LmrCutNode", 2),
            ("LmrChecks", 1),
            ("TtValueEval", 0),
            ("TtPvReduce", 1),
            ("LmrRoot", 0),
            ("LmrPvNode", 2),
            ("SingularExtra", 2),
            ("FutilityTtGuard", 1),
            ("FailHighDamp", 1),
            ("QsFailHighDamp", 1),
            ("QsStandPatStore", 1),
            ("NullMoveMargin", 400),
            ("ContinuationFar", 2),
        ]
    ]
    + [
        (name, value, WITH_HANDS)
        for name, value in [
            ("QsMoveCount", 0),
            ("CheckExtensionDepth", 10),
            ("CheckExtensionSee", 1),
            ("AlphaRaiseReduce", 1),
            ("LmrResearchAdjust", 1),
            ("SeeQuietCheck", 1),
            ("LmrEvasions", 1),
            ("TtCutoffHistory", 1),
            ("FailLowPriorBonus", 1),
            ("LmrParentLate", 1),
            ("LmrDropNearKing", 1),
            ("QuietCheckBonus", 0),
            ("QuietCheckSee", 1),
            ("LowPlyHistory", 8),
            ("LmrRootReplies", 1),
            ("QsChecks", 8),
            ("QsMate1FirstPly", 1),
            ("QsQuietEvasions", 0),
            ("LmpChecks", 1),
            ("PvPrune", 1),
        ]
    ]
    # QsEvasionSee: with QsQuietEvasions on, most quiet evasions are left out before their SEE
    + [(name, value, ATTACKED) for name, value in [("SeeEvasions", 1), ("QsEvasionSee", 0)]]
    + [(name, value, MATE_THREAT) for name, value in [("MateThreatExtension", 2)]],
)
def test_a_setting_under_test_changes_the_tree(searcher, name, value, sfen):
    """The tunables that stand off by default until their SPRT decides (and NullMoveEvalMax,
    SingularDepth, QsMoveCount, QsEvasionSee, TtValueEval, QuietCheckBonus, ProbCutDepth,
    SingularNegative, LmrRoot and QsQuietEvasions set back to the search before their SPRTs)
    do reach the search, and the defaults give the default tree again."""
    default = think(searcher, Position(sfen), depth=10).info.nodes
    with search_constants(searcher, **{name: value}):
        result = think(searcher, Position(sfen), depth=10)
    changed = result.info.nodes
    assert changed != default
    pos = Position(sfen)  # and the line it finds is legal
    for move in result.info.pv:
        pos.push(move)
    assert think(searcher, Position(sfen), depth=10).info.nodes == default


def test_capture_history_learns_only_when_it_orders(searcher):
    """With CaptureHistory 0 the capture table stays empty (the default tree pays nothing for
    it); with it on, the captures that cut off are rewarded."""
    sfen = "ln1g3nl/1r2gk3/p1sppsbpp/2p3p2/1p5P1/2P3P2/PPSPPPS1P/1B2G2R1/LN2KG1NL b - 1"
    think(searcher, Position(sfen), depth=8)
    table = searcher._contexts[0].capture
    assert not table.any()
    with search_constants(searcher, CaptureHistory=32):
        think(searcher, Position(sfen), depth=8)
        assert (searcher._contexts[0].capture > 0).any()


# --- transposition table -------------------------------------------------------------------


def test_tt_store_probe_round_trip():
    table = ctt.table_for_entries(1024)
    key = np.uint64(0x1234_5678_9ABC_DEF0)
    ctt.store(table, key, 0x12345, -321, 45, 14, ctt.BOUND_EXACT, 3, False)
    entry = ctt.probe(table, key)
    assert entry == (True, 0x12345, 0, -321, 45, 14, ctt.BOUND_EXACT, False)
    assert not ctt.probe(table, np.uint64(0x1234_5678_9ABC_DEF2))[0]


def test_tt_pv_flag_is_kept_apart_from_the_generation():
    """The PV flag (TtPvReduce) comes back as stored, beside generation 255, and a
    shallower result that leaves a deeper entry in place still marks it as on the PV."""
    table = ctt.table_for_entries(1024)
    key = np.uint64(0x0FED_CBA9_8765_4320)
    ctt.store(table, key, 777, 12, 0, 20, ctt.BOUND_LOWER, 255, True)
    hit, m1, _m2, value, _ev, depth, bound, was_pv = ctt.probe(table, key)
    assert (hit, m1, value, depth, bound, was_pv) == (True, 777, 12, 20, ctt.BOUND_LOWER, True)
    assert ctt.hashfull(table, 255) == 1  # the flag is not read as part of the generation
    other = np.uint64(0x0FED_CBA9_8765_4340)
    ctt.store(table, other, 555, 3, 0, 20, ctt.BOUND_LOWER, 7, False)
    ctt.store(table, other, 556, 4, 0, 6, ctt.BOUND_LOWER, 7, True)  # kept: the deeper one
    hit, m1, m2, value, _ev, depth, _b, was_pv = ctt.probe(table, other)
    assert (hit, m1, m2, value, depth, was_pv) == (True, 556, 555, 3, 20, True)


def test_tt_keeps_best_and_second_best():
    table = ctt.table_for_entries(1024)
    key = np.uint64(0xABCDEF0123456780)
    ctt.store(table, key, 111, 10, 0, 4, ctt.BOUND_LOWER, 1, False)
    ctt.store(table, key, 222, 20, 0, 6, ctt.BOUND_LOWER, 1, False)
    assert ctt.probe(table, key)[1:3] == (222, 111)  # new best, previous best second
    ctt.store(table, key, 222, 25, 0, 7, ctt.BOUND_EXACT, 1, False)
    assert ctt.probe(table, key)[1:3] == (222, 111)  # same best: no rotation
    ctt.store(table, key, 0, -5, 0, 8, ctt.BOUND_UPPER, 1, False)
    assert ctt.probe(table, key)[1:3] == (222, 111)  # a fail-low keeps both moves
    ctt.store(table, key, 111, 30, 0, 9, ctt.BOUND_EXACT, 1, False)
    assert ctt.probe(table, key)[1:3] == (111, 222)


def test_tt_mate_scores_are_adjusted_by_ply():
    mate_in_5_from_root = ctt.VALUE_MATE - 5
    stored = ctt.value_to_tt(mate_in_5_from_root, 3)  # found 3 plies below the root
    assert stored == ctt.VALUE_MATE - 2  # mate in 2 from that node
    assert ctt.value_from_tt(stored, 7) == ctt.VALUE_MATE - 9
    assert ctt.value_from_tt(ctt.value_to_tt(-ctt.VALUE_MATE + 6, 4), 4) == -ctt.VALUE_MATE + 6
    assert ctt.value_to_tt(250, 9) == 250


def test_tt_replacement_prefers_deep_and_recent():
    """A full bucket gives up its entry of least merit: its depth less 8 half plies per
    search (generation) since it was written.  In one search the shallowest entry goes,
    wherever it sits; an old deep entry goes before shallower ones of this search, also
    across the wrap of the 8-bit generation."""

    def bucket(depths, generations, new_generation):
        """Which of the four stored keys are still there after a fifth is stored."""
        table = ctt.table_for_entries(ctt.BUCKET)  # a single bucket of four
        keys = [np.uint64((i + 1) << 40) for i in range(5)]  # one bucket, five entries
        for i, (depth, generation) in enumerate(zip(depths, generations)):
            ctt.store(table, keys[i], i + 1, 0, 0, depth, ctt.BOUND_EXACT, generation, False)
        assert all(ctt.probe(table, k)[0] for k in keys[:4])
        ctt.store(table, keys[4], 99, 0, 0, 1, ctt.BOUND_EXACT, new_generation, False)
        assert ctt.probe(table, keys[4])[0]
        return [bool(ctt.probe(table, k)[0]) for k in keys[:4]]

    # one search: the shallowest (depth 10, second slot) goes, not the first or the last
    assert bucket([12, 10, 13, 11], [1, 1, 1, 1], 1) == [True, False, True, True]
    # depth 20 from two searches ago (merit 20 - 16) goes before depth 8 of this one
    assert bucket([8, 20, 9, 10], [3, 1, 3, 3], 3) == [True, False, True, True]
    # the same, the old entry written at generation 255 and the table now at 1
    assert bucket([8, 20, 9, 10], [1, 255, 1, 1], 1) == [True, False, True, True]
    # an old entry deep enough still stays: depth 30 two searches ago (merit 14) beats 9
    assert bucket([30, 9, 12, 11], [1, 3, 3, 3], 3) == [True, False, True, True]


def test_tt_entry_is_its_key_and_side_and_a_bucket_is_one_cache_line():
    """Sixteen bytes an entry, four to a bucket, the table starting on a cache line, so a
    probe reads one line.  An entry keeps 32 bits of its key and the side to move: a
    position and the same position with the other side to move (a null move) share a bucket
    but never an entry, and a word of another write (a torn write of another thread) makes
    the entry miss instead of answering for the wrong position."""
    for entries in (ctt.BUCKET, 1024, 1 << 16):
        table = ctt.table_for_entries(entries)
        assert table.shape == (entries, 2) and table.nbytes == entries * ctt.ENTRY_BYTES
        assert table.ctypes.data % 64 == 0 and ctt.BUCKET * ctt.ENTRY_BYTES == 64
    assert ctt.new_table(24).shape[0] == 1 << 20  # the default USI_Hash: 2^20 entries, 16 MB
    table = ctt.table_for_entries(1024)
    black = np.uint64(0x9E3779B97F4A7C14)  # the side to move is the key's bit 0
    white = black ^ np.uint64(1)
    ctt.store(table, black, 1234, 57, 40, 12, ctt.BOUND_LOWER, 5, True)
    assert ctt.probe(table, black) == (True, 1234, 0, 57, 40, 12, ctt.BOUND_LOWER, True)
    assert not ctt.probe(table, white)[0]
    ctt.store(table, white, 4321, -8, -30, 6, ctt.BOUND_UPPER, 5, False)
    assert ctt.probe(table, black)[:4] == (True, 1234, 0, 57)  # both kept, side by side
    assert ctt.probe(table, white)[:4] == (True, 4321, 0, -8)
    slots = [i for i in range(1024) if table[i, 1] != 0]
    assert len(slots) == 2 and slots[0] // ctt.BUCKET == slots[1] // ctt.BUCKET
    table[slots[0], 1] ^= np.uint64(1 << 45)  # another write's value under this key
    table[slots[1], 1] ^= np.uint64(1 << 3)  # another write's move under this key
    assert not ctt.probe(table, black)[0] and not ctt.probe(table, white)[0]


def test_hashfull_counts_this_generation(searcher):
    """hashfull: per mille of the first 1000 entries written by this search (generation);
    entries of earlier searches still in the table are not counted."""
    table = ctt.table_for_entries(4096)

    def fill(first_bucket, n_buckets, generation):
        for b in range(first_bucket, first_bucket + n_buckets):
            for j in range(ctt.BUCKET):  # four keys of bucket b
                key = np.uint64((b << 1) | ((j + 1) << 40))
                ctt.store(table, key, 1, 0, 0, 4, ctt.BOUND_EXACT, generation, False)

    fill(0, 100, 1)  # 400 of the first 1000 entries, generation 1
    fill(300, 100, 1)  # entries 1200-1599: beyond the sample
    assert (ctt.hashfull(table, 1), ctt.hashfull(table, 2)) == (400, 0)
    fill(100, 50, 2)  # 200 more in the sample, generation 2
    assert (ctt.hashfull(table, 1), ctt.hashfull(table, 2)) == (400, 200)
    # the search's report: a second search on the same table counts only its own entries
    infos = []
    think(searcher, Position(), depth=9, infos=infos)
    first = infos[-1].hashfull
    assert 0 < first <= 1000
    again = []
    searcher.think(
        Position(KINGS), depth=1, nodes=None, multipv=1, stop=np.zeros(1, np.int32), on_iteration=again.append
    )  # no new_game: the table is kept
    assert np.count_nonzero(searcher.tt[:1000, 1]) >= first  # the first search's entries stay
    assert again[-1].hashfull < first // 2


# --- determinism, limits, threads ----------------------------------------------------------


def test_fixed_depth_search_is_deterministic(searcher):
    sfen = "ln1g3nl/1r2gk3/p1sppsbpp/2p3p2/1p5P1/2P3P2/PPSPPPS1P/1B2G2R1/LN2KG1NL b - 1"
    a = think(searcher, Position(sfen), depth=6)
    b = think(searcher, Position(sfen), depth=6)
    assert (a.best, a.info.nodes, a.info.pv) == (b.best, b.info.nodes, b.info.pv)


def test_iterations_report_every_field(searcher):
    infos = []
    r = think(searcher, Position(), depth=5, infos=infos)
    assert [i.depth for i in infos if i.bound is None] == [1, 2, 3, 4, 5]
    last = infos[-1]
    assert last.seldepth >= last.depth and last.nodes > 0 and last.time_ms >= 0 and last.pv
    assert r.best == last.pv[0]


def test_stop_flag_ends_the_search_quickly(searcher):
    stop = np.zeros(1, np.int32)
    timer = threading.Timer(0.3, lambda: stop.__setitem__(0, 1))
    start = time.monotonic()
    timer.start()
    r = think(searcher, Position(), depth=None, stop=stop)
    assert time.monotonic() - start < 0.8
    assert r.best in Position().legal_moves()


def test_node_limit(searcher):
    r = think(searcher, Position(), nodes=20000)
    assert 20000 <= r.info.nodes < 30000
    assert r.best in Position().legal_moves()


def test_multipv_lines_are_distinct_and_ordered(searcher):
    infos = []
    think(searcher, Position(), depth=4, multipv=3, infos=infos)
    last = [i for i in infos if i.depth == 4 and i.bound is None]
    assert [i.multipv for i in last] == [1, 2, 3]
    assert len({i.pv[0] for i in last}) == 3
    assert last[0].score_cp >= last[1].score_cp >= last[2].score_cp


def test_two_threads_search_and_agree_on_legality(searcher):
    searcher.configure(threads=2)
    try:
        r = think(searcher, Position(), depth=6)
        helper = searcher._contexts[1]
        main_nodes, helper_nodes = int(searcher._contexts[0].stats[cs.S_NODES]), int(helper.stats[cs.S_NODES])
        helper_best = move_to_usi(int(helper.root_moves[0]))
    finally:
        searcher.configure(threads=1)
    assert r.best in Position().legal_moves()
    # the second thread searched on its own (its nodes count in the report) and its root
    # move is legal too
    assert helper_nodes > 0 and r.info.nodes == main_nodes + helper_nodes
    assert helper_best in Position().legal_moves()


def test_switches_turn_pruning_off(searcher):
    on = think(searcher, Position(), depth=6).info.nodes
    searcher.configure(switches={"NullMove": 0, "LMR": 0, "Futility": 0, "Razoring": 0})
    try:
        off = think(searcher, Position(), depth=6).info.nodes
    finally:
        searcher.configure(switches=dict(Searcher.SWITCHES))
    assert off > on


# --- the numba cache: a cold start, then a warm one --------------------------------------
# numba issue #6061 (a cached function calling a recursive one crashed when loaded from the
# cache) is guarded by tests/test_startup.py: two engine processes on one fresh cache, each
# searching; one cold compile is enough for the suite.


# --- MaxMovesToDraw inside the tree -------------------------------------------------------

# Black is a rook up; 90 moves were played before this position (SFEN move number 91)
AHEAD = "4k4/9/9/9/9/9/9/9/4K3R b - 91"


def test_max_game_ply_makes_deep_nodes_draws():
    free, ctx = tree(AHEAD)
    v_free = cs.root_search(free, ctx, -cs.VALUE_INF, cs.VALUE_INF, 3 * cs.ONE_PLY)
    assert v_free > 500  # a rook up, no limit
    # the game ends in a draw after ply 92: every line of 2 plies or more is a draw
    arrays, ctx = tree(AHEAD, MAX_GAME_PLY=92, DRAW_VALUE=0)
    assert cs.root_search(arrays, ctx, -cs.VALUE_INF, cs.VALUE_INF, 3 * cs.ONE_PLY) == 0
    arrays, ctx = tree(AHEAD, MAX_GAME_PLY=92, DRAW_VALUE=-30)
    assert cs.root_search(arrays, ctx, -cs.VALUE_INF, cs.VALUE_INF, 3 * cs.ONE_PLY) == -30
    # a far limit changes nothing
    arrays, ctx = tree(AHEAD, MAX_GAME_PLY=400)
    assert cs.root_search(arrays, ctx, -cs.VALUE_INF, cs.VALUE_INF, 3 * cs.ONE_PLY) == v_free


def test_a_mate_on_the_last_move_still_counts():
    # G*5b mates on game ply 91, the last one before the limit of 91
    sfen = "4k4/9/4P4/9/9/9/9/9/4K4 b G 91"
    arrays, ctx = tree(sfen, MAX_GAME_PLY=91)
    v = cs.root_search(arrays, ctx, -cs.VALUE_INF, cs.VALUE_INF, 3 * cs.ONE_PLY)
    assert v == ctt.VALUE_MATE - 1 and move_to_usi(int(ctx.root_moves[0])) == "G*5b"


def test_search_writes_the_history_tables():
    """A search from a middle game rewards cutoffs in the butterfly, continuation and
    counter-move tables, and leaves killers behind."""
    sfen = "ln4k1l/1r4g2/p3sgspn/2ppppp1p/1p7/2PPP1P2/PPSG1P1PP/2G2S1R1/LNK4NL b Bb 41"
    arrays, ctx = tree(sfen, tt_entries=1 << 16)
    for depth in range(1, 8):
        cs.root_search(arrays, ctx, -cs.VALUE_INF, cs.VALUE_INF, depth * cs.ONE_PLY)
    for name in ("butterfly", "continuation", "counter", "killers"):
        table = getattr(ctx, name)
        assert np.count_nonzero(table) > 0, name
    assert (ctx.butterfly > 0).any() and (ctx.butterfly < 0).any()  # rewards and penalties


# --- what the Searcher is told by the front end ------------------------------------------


def test_searcher_passes_max_moves_to_draw_into_the_tree(searcher):
    """Black is a rook up; with MaxMovesToDraw one ply away every line is a draw."""
    sfen = "4k4/9/9/9/9/9/9/9/R3K4 b - 99"  # game ply 98
    free = think(searcher, Position(sfen), depth=4)
    assert free.info.score_cp is not None and free.info.score_cp > 500
    try:
        searcher.configure(max_game_ply=99)
        capped = think(searcher, Position(sfen), depth=4)
        assert capped.info.score_cp == searcher.draw_value
    finally:
        searcher.configure(max_game_ply=0)


def test_searcher_search_params_change_the_tree(searcher):
    """A tuner's values reach every context: other constants, another tree."""
    pos = Position("ln1g1g1nl/1ks2r3/1pppp1bpp/p3spp2/9/P1P1SP1P1/1PSPP1P1P/1BK1GR3/LN1G3NL b - 1")
    base = think(searcher, pos, depth=7).info.nodes
    futility = PARAMS[INDEX["FutilityMargin"]].lo
    lmp = PARAMS[INDEX["LmpBase"]].hi
    with search_constants(searcher, FutilityMargin=futility, LmpBase=lmp) as tuned:
        assert all(list(ctx.sp) == tuned for ctx in searcher._contexts)
        assert think(searcher, pos, depth=7).info.nodes != base
    assert think(searcher, pos, depth=7).info.nodes == base


def test_low_ply_history_learns_near_the_root_and_only_in_this_search(searcher):
    """With LowPlyHistory 0 the low-ply table stays empty (the default tree pays nothing for
    it); with it on, a search fills it for the plies below the root, and the next search
    starts it again from nothing, since its root is another position."""
    sfen = "ln1g3nl/1r2gk3/p1sppsbpp/2p3p2/1p5P1/2P3P2/PPSPPPS1P/1B2G2R1/LN2KG1NL b - 1"
    think(searcher, Position(sfen), depth=8)
    table = searcher._contexts[0].low_ply
    assert not table.any()
    with search_constants(searcher, LowPlyHistory=8):
        think(searcher, Position(sfen), depth=8)
        filled = [int(np.count_nonzero(table[ply])) for ply in range(table.shape[0])]
        assert all(count > 0 for count in filled[1:]), filled
        think(searcher, Position(sfen), depth=1)  # a one-ply search has no node below the root
        assert not table[1:].any()
