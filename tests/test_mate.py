"""The mate solver: shipped tsume problems (answers replayed with python-shogi), no-mate and
pawn-drop-mate positions, repetition, the API's limits, and mate_in_1 / mate_in_3 / the
check generator against cshogi on positions from random play."""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path

import numpy as np
import pytest

cshogi = pytest.importorskip("cshogi")
shogi = pytest.importorskip("shogi")

from usi_engine.core import board as cb  # noqa: E402
from usi_engine.core import short_mate as cm  # noqa: E402
from usi_engine.core.intrinsics import by_ref  # noqa: E402
from usi_engine.core.jit import jit  # noqa: E402
from usi_engine.search.tsume import MateSolver, solve  # noqa: E402
from usi_engine.position import Position, move_to_usi  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
from usi_engine.commands import mate as bench  # noqa: E402

PROBLEMS = bench.load_problems(str(ROOT / "tests" / "data" / "tsume.txt"))
MATES = [p for p in PROBLEMS if p[1] != "nomate"]
NOMATES = [p for p in PROBLEMS if p[1] == "nomate"]


# The mate probe's first look takes the position by reference (usi_engine/core/intrinsics.py);
# the tests call it through these.


@jit()
def mating_types(arrays, eksq, us, free):
    return cm._mating_types(by_ref(arrays), eksq, us, free)


@jit()
def look_at_neighbours(arrays, eksq, us, free):
    return cm._look_at_neighbours(by_ref(arrays), eksq, us, free)


@pytest.fixture(scope="module")
def solver():
    return MateSolver(32)


def replay_forced_mate(sfen: str, moves: list[str]) -> None:
    """Every move legal, every attacker move a check, the end checkmate (python-shogi)."""
    board = shogi.Board(sfen)
    for i, mv in enumerate(moves):
        move = shogi.Move.from_usi(mv)
        assert move in board.legal_moves, f"ply {i + 1}: {mv} is illegal in {board.sfen()}"
        board.push(move)
        if i % 2 == 0:
            assert board.is_check(), f"ply {i + 1}: attacker move {mv} does not check"
    assert len(moves) % 2 == 1
    assert board.is_checkmate(), f"line {' '.join(moves)} does not end in checkmate"


def test_problem_file_is_varied():
    lengths = {int(p[1]) for p in MATES}
    for n in (1, 3, 5, 7, 9, 11):
        assert n in lengths, f"no mate-in-{n} problem shipped"
    assert max(lengths) >= 13
    assert len(NOMATES) >= 3
    assert any("pawn-drop" in p[2] for p in NOMATES)


@pytest.mark.parametrize("sfen,length,source", MATES, ids=[f"{p[1]}-{i}" for i, p in enumerate(MATES)])
def test_mate_problem(solver, sfen, length, source):
    status, moves = solver.solve(Position(sfen), time_limit_ms=30000)
    assert status == "mate", f"{source}: {status}"
    replay_forced_mate(sfen, moves)
    assert len(moves) == int(length), f"{source}: {' '.join(moves)}"


@pytest.mark.parametrize("sfen,length,source", [p for p in MATES if int(p[1]) <= 5])
def test_short_lines_are_minimax(sfen, length, source):
    """At every defender node of the returned line no other reply lasts longer, and at
    every attacker node no other check mates sooner (brute force with cshogi)."""
    status, moves = solve(Position(sfen), time_limit_ms=30000)
    assert status == "mate"
    board = cshogi.Board(sfen)
    for i, mv in enumerate(moves):
        left = len(moves) - i  # plies to mate from here on the line
        if i % 2 == 1:
            for alt in board.legal_moves:
                board.push(alt)
                v = bench.oracle_length(board.sfen(), left - 1)
                board.pop()
                assert v is not None and v <= left - 1, f"reply {cshogi.move_to_usi(alt)} lasts longer"
        else:
            assert bench.oracle_length(board.sfen(), left) == left
        board.push_usi(mv)


@pytest.mark.parametrize("sfen,length,source", NOMATES, ids=[f"nomate-{i}" for i in range(len(NOMATES))])
def test_no_mate(solver, sfen, length, source):
    assert solver.solve(Position(sfen), time_limit_ms=30000) == ("nomate", [])


def test_pawn_drop_mate_is_not_a_solution(solver):
    # king 1a; gold 2c guards 1b/2b, knight 3c guards 2a: P*1b would mate, so it is illegal
    sfen = "8k/9/6NG1/9/9/9/9/9/9 b P2r2b3g4s3n4l17p 1"
    assert "P*1b" not in Position(sfen).legal_moves()
    after = shogi.Board("8k/8P/6NG1/9/9/9/9/9/9 w 2r2b3g4s3n4l17p 2")
    assert after.is_checkmate()  # it would be mate, were it legal
    assert solver.solve(Position(sfen)) == ("nomate", [])
    # the same with a pawn on the board: now the drop is not needed and G*... mates? no:
    # with a gold in hand instead, G*1b is an ordinary mate in one
    assert solver.solve(Position("8k/9/6NG1/9/9/9/9/9/9 b G2r2b2g4s3n4l18p 1")) == ("mate", ["G*1b"])


def test_repetition_is_not_a_mate(solver):
    """A lone rook can check forever; the solver must see the cycles and answer nomate."""
    sfen = "9/9/9/9/4k4/9/9/9/R8 b 2b4g4s4n4l18pr 1"
    t0 = time.perf_counter()
    assert solver.solve(Position(sfen), time_limit_ms=30000) == ("nomate", [])
    assert time.perf_counter() - t0 < 20


def test_repetition_with_game_history(solver):
    """A root reached through a cycle of game moves: still nomate, the caller's position is
    left as it was; a mate problem reached after game moves is still solved."""
    pos = Position.from_usi(
        "sfen 9/9/9/9/4k4/9/9/9/R8 b 2b4g4s4n4l18pr 1 moves 9i8i 5e5d 8i9i 5d5e 9i8i 5e5d 8i9i 5d5e"
    )
    before = (pos.sfen(), pos.ply())
    assert solver.solve(pos, time_limit_ms=30000) == ("nomate", [])
    assert (pos.sfen(), pos.ply()) == before
    sfen, length, _ = next(p for p in MATES if int(p[1]) == 3)
    status, moves = solver.solve(Position.from_usi(f"sfen {sfen}"))
    assert (status, len(moves)) == ("mate", 3)


def test_limits_and_info(solver):
    sfen, length, _ = max(MATES, key=lambda p: int(p[1]))
    infos = []
    status, moves = solver.solve(Position(sfen), nodes=50, on_info=lambda *a: infos.append(a))
    assert status == "timeout" and moves == [] and 50 <= solver.nodes < 1000
    assert infos and all(len(i) == 3 for i in infos)
    stop = np.zeros(1, np.int32)
    stop[0] = 1
    assert solver.solve(Position(sfen), stop=stop) == ("timeout", [])
    # forced timeouts: a mate in 25 whose proof takes millions of nodes (1.7 million did
    # not finish it), stopped from another thread after 0.3 s, then by a 200 ms limit.
    # The node cap lies below what the proof needs, so the answer is a timeout either
    # way; stopping before the cap is what shows the stop and the time limit worked.
    long_mate = "9/9/9/9/4k4/9/9/9/9 b R2G2S 1"
    cap = 1_500_000
    stop[0] = 0
    t0 = time.perf_counter()
    threading.Timer(0.3, lambda: stop.__setitem__(0, 1)).start()
    assert solver.solve(Position(long_mate), stop=stop, nodes=cap) == ("timeout", [])
    assert time.perf_counter() - t0 >= 0.3 and 0 < solver.nodes < cap
    t0 = time.perf_counter()
    assert solver.solve(Position(long_mate), time_limit_ms=200, nodes=cap) == ("timeout", [])
    assert time.perf_counter() - t0 >= 0.2 and 0 < solver.nodes < cap
    solver.clear()
    assert solver.solve(Position(MATES[0][0]))[0] == "mate"


def test_node_limit_bounds_the_shortest_line_too(solver):
    """Once the mate is proven, the shortest line is searched and then read out in one
    numba call; that call's allowance comes from the limits left, so a node limit holds
    for the whole solve (it once ran 50 million nodes past it) and the answer is still a
    forced mate, or a timeout."""
    sfen = "9/3k5/9/+R1S6/9/9/9/9/9 b G2Sr2b3gs4n4l18p 1"  # mate in 9, ~220,000 nodes
    solver.clear()
    assert solver.solve(Position(sfen))[0] == "mate"
    unbounded = solver.nodes
    for cap in (unbounded // 2, unbounded // 4):
        solver.clear()
        status, moves = solver.solve(Position(sfen), nodes=cap)
        assert solver.nodes <= cap + 2048, f"{solver.nodes} nodes at a limit of {cap}"
        assert status in ("mate", "timeout")
        if status == "mate":
            replay_forced_mate(sfen, moves)


# --- mate_in_1 / mate_in_3 / generate_checks on random middle-game positions -------------


def random_positions(count: int, seed: int, capture_bias: float = 0.0):
    """Positions from random play; with `capture_bias`, play takes a capture that often when
    it can, and the pieces in hand make mates in one some 5% of the positions, where plain
    random play has few."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        board = cshogi.Board()
        for _ in range(rng.randint(20, 120)):
            moves = list(board.legal_moves)
            if not moves:
                break
            captures = [m for m in moves if cshogi.move_cap(m)] if capture_bias else []
            board.push(
                rng.choice(captures) if captures and rng.random() < capture_bias else rng.choice(moves)
            )
            if board.is_game_over():
                board.pop()
                break
            if rng.random() < 0.15:
                out.append(board.sfen())
    return out[:count]


def brute_mate_in_1(board) -> list[str]:
    found = []
    for m in list(board.legal_moves):
        board.push(m)
        if board.is_check() and not any(True for _ in board.legal_moves):
            found.append(cshogi.move_to_usi(m))
        board.pop()
    return found


# discovered checks by pieces far from the king (the generator skips far stepping pieces
# unless they stand between the king and one of our sliders): silver, knight and our own
# king in front of a rook, a gold in front of a bishop, a lance behind a pawn; and a gold
# in front of a rook, which checks by itself from 5b while it stays on the rook's line
DISCOVERED = [
    "4k4/9/9/9/9/9/4S4/9/4R4 b - 1",
    "4k4/9/9/9/9/4N4/9/9/4R4 b - 1",
    "4k4/9/9/9/9/9/9/4K4/4R4 b - 1",
    "8k/9/9/9/9/3G5/9/9/B8 b - 1",
    "4k4/9/9/9/9/9/4P4/9/4L3K b - 1",
    "4k4/9/4G4/9/9/9/9/9/4R3K b - 1",
]


def test_generate_checks_matches_cshogi():
    buf = np.zeros(600, np.int32)
    for sfen in random_positions(300, 11) + [p[0] for p in PROBLEMS] + DISCOVERED:
        pos = Position(sfen)
        before = pos.arrays.board.copy()
        n = cm.generate_checks(pos.arrays, buf)
        assert (pos.arrays.board == before).all(), sfen  # pieces lifted are put back
        mine = sorted(move_to_usi(int(m)) for m in buf[:n])
        board = cshogi.Board(sfen)
        ref = []
        for m in list(board.legal_moves):
            board.push(m)
            if board.is_check():
                ref.append(cshogi.move_to_usi(m))
            board.pop()
        assert mine == sorted(ref), sfen


def test_king_escapes_with_its_memory_agrees_with_playing_the_check():
    """mate_in_1's first look at a check (the king's neighbours remembered from the board
    before it, shared by every check of the position) against king_can_step after do_move."""
    from usi_engine.core.movegen import king_can_step

    buf = np.zeros(600, np.int32)
    tried = escapes = 0
    # N3e4c checks and opens the bishop's line to 6b, the king's one free square
    opened = "3gkg3/4ss3/9/9/6N2/9/8B/9/4K4 b - 1"
    for sfen in random_positions(300, 23) + [p[0] for p in MATES] + DISCOVERED + [opened]:
        pos = Position(sfen)
        a = pos.arrays
        us = int(a.st[cb.ST_SIDE])
        eksq = int(a.st[cb.ST_KING + 1 - us])
        free = np.full(8, cm.ESCAPE_UNKNOWN, np.int32)
        before = a.board.copy()
        for m in buf[: cm.generate_checks(a, buf)].copy():
            mine = cm._king_escapes(a.board, int(m), eksq, us, free)
            assert (a.board == before).all(), sfen
            cb.do_move(a, int(m))
            assert mine == king_can_step(a.board, eksq, us), (sfen, move_to_usi(int(m)))
            cb.undo_move(a)
            tried += 1
            escapes += mine
    assert tried > 500 and 0 < escapes < tried


# mates in one where the moved piece alone could not take away every square the king could
# step to: a line of ours that the move opens covers one of them or gives the check (the
# first three from random play)
OPENED_LINE_MATES = [
    "1k7/2ns2+L2/LPn3G2/4S4/ppP5g/2pGP4/s2P2+r1N/4K3L/r1b5L w B2Pgsn9p 154",
    "1ns4BR/l1bgk4/2pp2G2/p8/2GSpspg1/9/PP1S1P1p1/4K2+l1/1N1LP4 b RL4P2n4p 99",
    "9/1k1G2p2/5p3/B7b/6S2/1s3S3/4l1K2/R1P2N3/+n7S b RGN3L10P2gn5p 197",
    # the dragon steps off the bishop's line and mates without checking itself
    "5k3/3+B5/3+R5/9/9/B8/9/9/6K2 b SG 1",
]


def _first_look(sfen):
    """mate_in_1's look before it generates any check: (no mate possible?, the types of
    piece that could take the king's free squares, the types we could move or drop)."""
    a = Position(sfen).arrays
    us = int(a.st[cb.ST_SIDE])
    eksq = int(a.st[cb.ST_KING + 1 - us])
    before = a.board.copy()
    free = np.full(8, cm.ESCAPE_UNKNOWN, np.int32)
    hopeless = mating_types(a, eksq, us, free) == 0
    assert (a.board == before).all(), sfen  # the king is put back
    open_mask = sum(1 << d for d in range(8) if free[d] == cm.ESCAPE_FREE)
    king = a.board[eksq]
    a.board[eksq] = 0
    _, _, on_board, _ = look_at_neighbours(a, eksq, us, np.full(8, cm.ESCAPE_UNKNOWN, np.int32))
    a.board[eksq] = king
    return hopeless, cm.COVERABLE[us, eksq, open_mask], on_board | cm.hand_mask(a.hands, us)


def test_the_neighbours_look_agrees_with_asking_each_square():
    # _look_at_neighbours (each of our pieces asked once, by bit sets) against attacker_of
    # asked of each neighbour, the king lifted: the same free squares, and where one is not
    # free, a square of ours whose piece attacks it
    from usi_engine.core.attacks import attacker_of, line_blockers, piece_attacks

    # the rook's line to 5a opens if the gold steps off it: through the king's square
    through_king = "9/4k4/9/9/4G4/9/9/4R4/K8 b - 1"
    looked = free_squares = openings = discovered = 0
    for sfen in (
        random_positions(300, 41) + [p[0] for p in MATES] + DISCOVERED + OPENED_LINE_MATES + [through_king]
    ):
        a = Position(sfen).arrays
        us = int(a.st[cb.ST_SIDE])
        eksq = int(a.st[cb.ST_KING + 1 - us])
        free = np.full(8, cm.ESCAPE_UNKNOWN, np.int32)
        king = a.board[eksq]
        a.board[eksq] = 0
        mask, opening, _, discovers = look_at_neighbours(a, eksq, us, free)
        assert discovers == (line_blockers(a.board, eksq, us, us) != 0), sfen
        discovered += discovers
        for d in range(8):
            if cm.RAY_LEN[eksq, d] == 0:
                continue
            e = int(cm.RAY[eksq, d, 0])
            q = int(a.board[e])
            if q != 0 and (q >> 4) != us:
                assert free[d] == cm.ESCAPE_UNKNOWN and not (mask >> d) & 1, sfen
                continue
            looked += 1
            if attacker_of(a.board, e, us) < 0:
                free_squares += 1
                assert free[d] == cm.ESCAPE_FREE and (mask >> d) & 1, (sfen, d)
                opens = _line_opens_onto(a.board, e, us)
                assert bool((opening >> d) & 1) == opens, (sfen, d)
                openings += opens
            else:
                f = int(free[d])
                assert f >= 0 and not (mask >> d) & 1, (sfen, d)
                assert (a.board[f] >> 4) == us and piece_attacks(a.board, f, a.board[f], e), (sfen, d)
        a.board[eksq] = king
    assert looked > 1000 and 0 < free_squares < looked and openings > 0 and discovered > 0


def _line_opens_onto(board, e, us):
    """Does a line of ours reach square e once a single piece of ours steps out of it: along
    some line from e, the first piece is ours and the second is a slider of ours that
    slides toward e?"""
    from usi_engine.core.attacks import OPPOSITE, SLIDE_MASK

    for d in range(8):
        pieces = [int(board[s]) for s in cm.RAY[e, d, : cm.RAY_LEN[e, d]] if board[s] != 0][:2]
        if len(pieces) == 2 and all(p >> 4 == us for p in pieces):
            if (SLIDE_MASK[pieces[1]] >> OPPOSITE[d]) & 1:
                return True
    return False


def test_no_mate_in_1_where_the_first_look_says_so():
    # every position it rules out has no mating move (cshogi, move by move); it rules out a
    # good share, a fifth of them where a piece type we could move or drop might take every
    # free square but no piece or drop of that type reaches a square to do it from; the
    # opened-line mates are kept although no piece type could do it alone
    ruled_out = by_square = 0
    positions = random_positions(400, 31)
    for sfen in positions:
        hopeless, types, at_hand = _first_look(sfen)
        if hopeless:
            ruled_out += 1
            by_square += types & at_hand != 0
            assert not brute_mate_in_1(cshogi.Board(sfen)), sfen
    assert ruled_out > len(positions) // 10 and by_square > ruled_out // 5
    buf = np.zeros(cm.MATE_BUF_SIZE, np.int32)
    for sfen in OPENED_LINE_MATES:
        hopeless, types, at_hand = _first_look(sfen)
        assert types & at_hand == 0 and not hopeless, sfen
        assert move_to_usi(int(cm.mate_in_1(Position(sfen).arrays, buf))) in brute_mate_in_1(
            cshogi.Board(sfen)
        )


def test_every_mate_in_1_is_of_a_type_the_first_look_keeps():
    # the first look's types are all the probe tries: every mating move of a position (cshogi,
    # move by move) moves or drops a piece of one of them; in a good share of the positions
    # that need checks at all, they leave some check out
    from usi_engine.core.movegen import ALL_TYPES, generate_checks_ref
    from usi_engine.core.types import moved_piece_after, type_of

    @jit()
    def checks_of(arrays, out, types):
        return generate_checks_ref(by_ref(arrays), out, types)

    buf = np.zeros(cm.MATE_BUF_SIZE, np.int32)
    mates = narrowed = needs_checks = 0
    attacking = [p for p in random_positions(15000, 3, capture_bias=0.6) if not cshogi.Board(p).is_check()]
    positions = attacking + [p[0] for p in MATES if p[1] == "1"] + OPENED_LINE_MATES
    for sfen in positions:
        pos = Position(sfen)
        a = pos.arrays
        us = int(a.st[cb.ST_SIDE])
        eksq = int(a.st[cb.ST_KING + 1 - us])
        types = mating_types(a, eksq, us, np.full(8, cm.ESCAPE_UNKNOWN, np.int32))
        if types != 0:
            needs_checks += 1
            every = set(buf[: checks_of(a, buf, ALL_TYPES)].tolist())
            kept = set(buf[: checks_of(a, buf, types)].tolist())
            assert kept <= every, sfen
            narrowed += kept != every
        board = cshogi.Board(sfen)
        if board.mate_move_in_1ply() == 0:
            continue
        mates += 1
        for usi in brute_mate_in_1(board):
            after = type_of(moved_piece_after(pos.parse_move(usi)))
            assert (types >> after) & 1, (sfen, usi)
        assert move_to_usi(int(cm.mate_in_1(a, buf))) in brute_mate_in_1(board), sfen
    assert mates >= 100 and narrowed > needs_checks // 10


def test_mate_in_1_and_3_on_random_positions(solver):
    buf = np.zeros(cm.MATE_BUF_SIZE, np.int32)
    ones = threes = 0
    positions = random_positions(400, 5) + [p[0] for p in MATES if int(p[1]) <= 3]
    for sfen in positions:
        pos = Position(sfen)
        board = cshogi.Board(sfen)
        key = pos.key()
        m1 = int(cm.mate_in_1(pos.arrays, buf))
        assert pos.key() == key
        brute = brute_mate_in_1(board)
        if m1:
            ones += 1
            assert move_to_usi(m1) in brute, sfen
        else:
            assert not brute, sfen
            assert board.mate_move_in_1ply() == 0, sfen
        m3 = int(cm.mate_in_3(pos.arrays, buf))
        assert pos.key() == key
        if m3:
            threes += 1
            board.push_usi(move_to_usi(m3))
            assert board.is_check()
            for reply in list(board.legal_moves):
                board.push(reply)
                assert brute_mate_in_1(board), f"{sfen}: {move_to_usi(m3)} {cshogi.move_to_usi(reply)}"
                board.pop()
            board.pop()
        else:
            assert bench.oracle_length(sfen, 3, 200_000) is None, sfen
        # the solver agrees about mate in one
        if m1:
            status, moves = solver.solve(Position(sfen), time_limit_ms=20000)
            assert status == "mate" and len(moves) == 1
    assert ones >= 3 and threes >= ones
