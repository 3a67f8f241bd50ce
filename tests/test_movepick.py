"""The staged move picker: every legal move exactly once, and one quiet/tactical split."""

import random

import cshogi
import numpy as np
import pytest

from usi_engine.position import move_to_usi
from usi_engine.core import search as cs, movepick as mp, board as cb
from usi_engine.core.movegen import generate, GEN_ALL, GEN_CAPTURES, GEN_QUIETS
from usi_engine.core.types import MAX_MOVES
from usi_engine.core.history import NO_CONTINUATION
from core_tree import picker_next, tree


def _positions(count, seed):
    """Random playouts.  With cshogi's move generator: the list is made when the module is
    collected, and python-shogi's took about 20 s of every run here, a single test's too."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        board = cshogi.Board()
        for _ in range(rng.randrange(10, 140)):
            moves = list(board.legal_moves)
            if not moves or board.is_game_over():
                break
            board.push(rng.choice(moves))
        if list(board.legal_moves) and not board.is_game_over():
            out.append(board.sfen())
    return out


SFENS = _positions(60, seed=11) + [
    # silvers, a knight, a lance, a bishop and a rook that can promote without capturing
    "4k4/9/9/1S1N1L3/7B1/R8/9/9/4K4 b - 1",
    "4k4/9/2P6/9/9/9/9/9/4K4 b - 1",
]


def _generated(arrays, mode):
    buf = np.zeros(MAX_MOVES, np.int32)
    n = generate(arrays, buf, mode, False)
    return [int(m) for m in buf[:n]]


def _pick_all(sfen, tt_moves, killers=(0, 0), counter=0):
    arrays, ctx = tree(sfen)
    legal = _generated(arrays, GEN_ALL)
    tt1, tt2 = tt_moves
    ctx.killers[3, 0], ctx.killers[3, 1] = killers
    in_check = arrays.checks[arrays.st[1]] != 0
    mp.picker_init(ctx, 3, tt1, tt2, in_check, counter)
    out = []
    while True:
        m = int(picker_next(arrays, ctx, 3, arrays.st[0], NO_CONTINUATION, False))
        if m == 0:
            return legal, out
        out.append(m)


@pytest.mark.parametrize("sfen", SFENS)
def test_picker_yields_every_legal_move_once(sfen):
    arrays, _ = tree(sfen)
    legal = _generated(arrays, GEN_ALL)
    rng = random.Random(sfen)
    picks = [0, 0] + rng.sample(legal, min(4, len(legal)))
    tt1, tt2, k1, k2 = (picks + [0, 0, 0, 0])[2:6]
    for tt_moves in ((0, 0), (tt1, 0), (tt1, tt2), (tt2, tt1)):
        for killers in ((0, 0), (k1, k2), (tt1, k1)):
            legal, got = _pick_all(sfen, tt_moves, killers, counter=k2)
            assert sorted(got) == sorted(legal), sfen
            assert len(got) == len(set(got))
            if tt_moves[0]:
                assert got[0] == tt_moves[0]
            if tt_moves[1] and tt_moves[1] != tt_moves[0] and not arrays.checks[arrays.st[1]]:
                assert got[1] == tt_moves[1]  # the TT second-best move comes second


@pytest.mark.parametrize("sfen", SFENS)
def test_tactical_means_the_capture_stage(sfen):
    """is_tactical (no LMR, no quiet history) is true exactly for GEN_CAPTURES' moves:
    a silver's quiet promotion is quiet, a pawn's is tactical."""
    arrays, _ = tree(sfen)
    captures = set(_generated(arrays, GEN_CAPTURES))
    quiets = set(_generated(arrays, GEN_QUIETS))
    assert captures.isdisjoint(quiets)
    for m in captures:
        assert mp.is_tactical(arrays.board, m), move_to_usi(m)
    for m in quiets:
        assert not mp.is_tactical(arrays.board, m), move_to_usi(m)


def test_quiet_promotions_of_other_pieces_are_quiet():
    arrays, _ = tree("4k4/9/9/1S1N1L3/7B1/R8/9/9/4K4 b - 1")
    quiet_promos = [move_to_usi(m) for m in _generated(arrays, GEN_QUIETS) if m & (1 << 14)]
    for usi in ("8d8c+", "6d5b+", "4d4c+", "2e4c+", "9f9c+"):
        assert usi in quiet_promos


def test_capture_history_moves_a_good_capture_by_its_weight():
    """capture_score adds capture history * CaptureHistory / 64 to a capture that keeps its
    material, and nothing while CaptureHistory is 0."""
    from usi_engine.core.history import capture_history, update_capture
    from usi_engine.core.params import SP_CAPTURE_HISTORY

    arrays, ctx = tree("4k4/9/9/9/4p4/4R4/9/9/4K4 b - 1")  # the rook takes an undefended pawn
    [m] = _generated(arrays, GEN_CAPTURES)
    base = mp.capture_score(ctx, arrays.board, m)
    assert base >= mp.SCORE_GOOD_CAPTURE
    update_capture(ctx, arrays.board, m, 2000)
    assert capture_history(ctx, arrays.board, m) == 2000
    assert mp.capture_score(ctx, arrays.board, m) == base
    ctx.sp[SP_CAPTURE_HISTORY] = 32
    assert mp.capture_score(ctx, arrays.board, m) == base + 1000


def test_a_cutoff_rewards_its_capture_and_penalises_the_captures_tried_before():
    from usi_engine.core.history import capture_history, history_bonus

    arrays, ctx = tree("4k4/9/9/9/4p4/4R4/9/9/4K4 b - 1")
    [take] = _generated(arrays, GEN_CAPTURES)
    quiet = next(m for m in _generated(arrays, GEN_QUIETS) if move_to_usi(m) == "5f5g")
    bonus = history_bonus(ctx.sp, 4)
    tried = np.array([take], np.int32)
    cs._capture_stats(ctx, arrays.board, quiet, False, 4, tried, 1)  # a quiet move cut off
    assert capture_history(ctx, arrays.board, take) == -bonus
    cs._capture_stats(ctx, arrays.board, take, True, 4, tried, 0)  # then the capture did
    assert capture_history(ctx, arrays.board, take) > -bonus + bonus // 2


@pytest.mark.parametrize("sfen", SFENS[:20])
def test_a_direct_check_is_told_from_the_board_before_the_move(sfen):
    """checks_directly (QuietCheckBonus's test) names only quiet moves that check, as cshogi
    finds them, and every drop that checks (a drop cannot check by discovery)."""
    arrays, _ = tree(sfen)
    them = 1 - arrays.st[0]
    eksq = arrays.st[cb.ST_KING + them]
    board = cshogi.Board(sfen)
    for m in _generated(arrays, GEN_QUIETS):
        usi = move_to_usi(m)
        board.push_usi(usi)
        checks = board.is_check()
        board.pop()
        direct = mp.checks_directly(arrays.board, m, eksq)
        assert checks or not direct, usi
        if "*" in usi:
            assert direct == checks, usi


def test_quiet_check_bonus_orders_direct_checks_first_and_keeps_their_history():
    """With QuietCheckBonus, the quiet moves that check come before the other quiet moves of
    the same (here empty) history, and the score the search reads for LMR and pruning is
    still the history alone; at 0, the order is history's."""
    from usi_engine.core.params import SP_QUIET_CHECK_BONUS

    sfen = "4k4/9/9/9/9/9/9/9/4K4 b GS 1"  # drops of a gold and a silver against the king
    board = cshogi.Board(sfen)
    arrays, ctx = tree(sfen)
    legal = _generated(arrays, GEN_ALL)
    checking = set()
    for m in legal:
        board.push_usi(move_to_usi(m))
        if board.is_check():
            checking.add(m)
        board.pop()
    assert 8 <= len(checking) < len(legal)
    ctx.sp[SP_QUIET_CHECK_BONUS] = 16384
    mp.picker_init(ctx, 3, 0, 0, False, 0)
    first, scores = [], []
    for _ in range(len(checking)):
        first.append(int(picker_next(arrays, ctx, 3, arrays.st[0], NO_CONTINUATION, False)))
        scores.append(int(ctx.picker[3, mp.PICK_SCORE]))
    assert set(first) == checking
    assert scores == [0] * len(checking)
    ctx.sp[SP_QUIET_CHECK_BONUS] = 0
    mp.picker_init(ctx, 3, 0, 0, False, 0)
    order = [int(picker_next(arrays, ctx, 3, arrays.st[0], NO_CONTINUATION, False)) for _ in checking]
    assert set(order) != checking


def test_quiet_check_see_keeps_the_bonus_for_checks_the_king_cannot_take():
    """With QuietCheckSee, only the checks that lose nothing come before the other quiet
    moves: here those the king cannot take, its only piece, because Black's silver on 4c
    guards the square; a check the king takes for free is ordered by its history alone.
    Without it, every direct check comes first."""
    from usi_engine.core.params import SP_QUIET_CHECK_BONUS, SP_QUIET_CHECK_SEE

    sfen = "4k4/9/5S3/9/9/9/9/9/4K4 b GS 1"
    board = cshogi.Board(sfen)
    arrays, ctx = tree(sfen)
    safe, free = set(), set()
    for m in _generated(arrays, GEN_QUIETS):
        board.push_usi(move_to_usi(m))
        if board.is_check():
            to = move_to_usi(m)[2:4]
            taken = any(cshogi.move_to_usi(r)[2:4] == to for r in board.legal_moves)
            (free if taken else safe).add(m)
        board.pop()
    assert {move_to_usi(m) for m in safe} == {"G*4b", "G*5b", "S*4b", "S*5b"}
    assert len(free) >= 4

    def first_picked(n):
        mp.picker_init(ctx, 3, 0, 0, False, 0)
        picked = []
        for _ in range(n):
            picked.append(int(picker_next(arrays, ctx, 3, arrays.st[0], NO_CONTINUATION, False)))
            assert ctx.picker[3, mp.PICK_SCORE] == 0  # the history, without the bonus
        return set(picked)

    ctx.sp[SP_QUIET_CHECK_BONUS] = 16384
    ctx.sp[SP_QUIET_CHECK_SEE] = 1
    assert first_picked(len(safe)) == safe
    ctx.sp[SP_QUIET_CHECK_SEE] = 0
    assert first_picked(len(safe) + len(free)) == safe | free


def test_low_ply_history_orders_near_the_root_and_is_not_read_as_history():
    """With LowPlyHistory, a quiet move with a good low-ply entry for the picker's ply comes
    first among the quiet moves, while the score the search reads for LMR and pruning stays
    the history alone; from ply LOW_PLY on, and at 0, the entry is not read."""
    from usi_engine.core.history import LOW_PLY
    from usi_engine.core.params import SP_LOW_PLY_HISTORY, SP_QUIET_CHECK_BONUS
    from usi_engine.core.types import move_from, move_to

    sfen = "4k4/9/9/9/9/9/9/9/4K4 b GS 1"
    arrays, ctx = tree(sfen)
    ctx.sp[SP_QUIET_CHECK_BONUS] = 0  # the history's order alone, checks or not
    quiets = _generated(arrays, GEN_QUIETS)
    late = quiets[-1]  # the move the plain order gives last
    ctx.sp[SP_LOW_PLY_HISTORY] = 8

    def first_at(ply):
        ctx.low_ply[:] = 0
        if ply < LOW_PLY:
            ctx.low_ply[ply, move_from(late), move_to(late)] = 500
        mp.picker_init(ctx, ply, 0, 0, False, 0)
        m = int(picker_next(arrays, ctx, ply, arrays.st[0], NO_CONTINUATION, False))
        return m, int(ctx.picker[ply, mp.PICK_SCORE])

    for ply in range(1, LOW_PLY):
        assert first_at(ply) == (late, 0)
    ctx.sp[SP_LOW_PLY_HISTORY] = 0
    assert first_at(1)[0] != late
    ctx.sp[SP_LOW_PLY_HISTORY] = 8
    assert first_at(LOW_PLY)[0] != late


def _capture_positions(count, seed):
    """_positions' playouts where the side to move, not in check, has at least four captures."""
    out = []
    for sfen in _positions(6 * count, seed):
        board = cshogi.Board(sfen)
        captures = [m for m in board.legal_moves if board.piece(cshogi.move_to(m)) != 0]
        if len(captures) >= 4 and not board.is_check():
            out.append(sfen)
    assert len(out) >= count
    return out[:count]


def test_capture_picking_asks_see_late_and_hands_out_the_same_order():
    # pick_capture over score_captures' scores (SEE asked of the move about to be handed
    # out) against pick_next over capture_score's (SEE asked of every capture at once): the
    # same moves in the same order, the same final scores, with and without TT moves
    rng = random.Random(5)
    compared = losing = 0
    for sfen in _capture_positions(80, seed=21):
        arrays, ctx = tree(sfen)
        captures = _generated(arrays, GEN_CAPTURES)
        n = len(captures)
        tt = [0, 0] if rng.random() < 0.5 else rng.sample(captures, 2)
        eager_moves = np.array(captures, np.int32)
        eager_scores = np.zeros(n, np.int64)
        for i, m in enumerate(captures):
            if m == tt[0]:
                eager_scores[i] = mp.SCORE_TT1
            elif m == tt[1]:
                eager_scores[i] = mp.SCORE_TT2
            else:
                eager_scores[i] = mp.capture_score(ctx, arrays.board, np.int32(m))
        lazy_moves = np.array(captures, np.int32)
        lazy_scores = np.zeros(n, np.int64)
        mp.score_captures(ctx, arrays.board, lazy_moves, lazy_scores, n, tt[0], tt[1])
        for i in range(n):
            eager = int(mp.pick_next(eager_moves, eager_scores, i, n))
            lazy = int(mp.pick_capture(ctx, arrays.board, lazy_moves, lazy_scores, i, n))
            assert lazy == eager and lazy_scores[i] == eager_scores[i], (sfen, i)
        assert list(lazy_moves) == list(eager_moves)
        compared += n
        losing += int((eager_scores < 0).sum())
    assert compared > 500 and losing > 50
