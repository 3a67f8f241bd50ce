"""Proof of the move generator: perft against published and cshogi figures, random positions
against python-shogi and cshogi, is_legal / gives_check / staged generation against the full
generator, Zobrist consistency, and the rule corner cases one by one."""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

import cshogi
import shogi

from usi_engine.position import Position, move_to_usi
from usi_engine.core import board as cb
from usi_engine.core.perft import perft
from usi_engine.core.movegen import (
    generate,
    is_legal,
    gives_check,
    has_legal_move,
    GEN_ALL,
    GEN_CAPTURES,
    GEN_QUIETS,
)
from usi_engine.core.types import MAX_MOVES, DROP_BASE, KING, OCC_SPLIT, move_from, move_to, color_of, type_of
from usi_engine.core.attacks import piece_attacks, pinned_pieces, line_blockers, blocker_line, pin_direction

SUITE = os.path.join(os.path.dirname(__file__), "data", "perft_suite.txt")
SUITE_NODE_LIMIT = 5_000_000  # counts above this are left to scripts/perft.py --suite
N_RANDOM_POSITIONS = 2000


# --- helpers ------------------------------------------------------------------------------


def count(pos: Position, depth: int) -> int:
    return int(perft(pos.arrays, np.empty(MAX_MOVES * (depth + 1), np.int32), depth))


def gen(pos: Position, mode: int = GEN_ALL, all_promos: bool = True) -> list[int]:
    buf = np.empty(MAX_MOVES, np.int32)
    n = generate(pos.arrays, buf, mode, all_promos)
    return [int(m) for m in buf[:n]]


def usi_set(moves) -> set[str]:
    return {move_to_usi(m) for m in moves}


def legal(sfen: str) -> set[str]:
    return set(Position(sfen).legal_moves())


def python_shogi_moves(sfen: str) -> set[str]:
    return {m.usi() for m in shogi.Board(sfen).legal_moves}


def cshogi_moves(sfen: str) -> set[str]:
    return {cshogi.move_to_usi(m) for m in cshogi.Board(sfen).legal_moves}


def parse_suite(path: str):
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            fields = [x.strip() for x in line.split(";")]
            figures = [(int(x.split()[0][1:]), int(x.split()[1])) for x in fields[1:] if x]
            out.append((fields[0], figures))
    return out


def _play_random_games(seed: int, n_positions: int):
    """[(sfen, key reached by moves, check flag reached by moves)] from seeded random games
    that prefer captures (hands fill up); some games run several hundred plies."""
    rng = random.Random(seed)
    out = []
    buf = np.empty(MAX_MOVES, np.int32)
    game = 0
    while len(out) < n_positions:
        game += 1
        pos = Position()
        a = pos.arrays
        length = rng.choice((30, 80, 150, 250, 400))
        bias = rng.choice((0.5, 0.8, 0.95))
        for _ in range(length):
            out.append((pos.sfen(), pos.key(), pos.is_check()))
            n = generate(a, buf, GEN_ALL, True)
            if n == 0:
                break
            moves = [int(m) for m in buf[:n]]
            captures = [m for m in moves if (m >> 7) & 127 < DROP_BASE and a.board[m & 127] != 0]
            pool = captures if captures and rng.random() < bias else moves
            cb.do_move(a, np.int32(rng.choice(pool)))
    return out


@pytest.fixture(scope="module")
def random_positions():
    return _play_random_games(20240601, N_RANDOM_POSITIONS)


# --- perft --------------------------------------------------------------------------------


@pytest.mark.parametrize("depth,nodes", [(1, 30), (2, 900), (3, 25470), (4, 719731)])
def test_perft_start_position(depth, nodes):
    assert count(Position(), depth) == nodes


def _suite_cases():
    cases = []
    for sfen, figures in parse_suite(SUITE):
        for depth, nodes in figures:
            if nodes <= SUITE_NODE_LIMIT and not (sfen == "startpos" and depth <= 4):
                cases.append(pytest.param(sfen, depth, nodes, id=f"{sfen[:24]}-D{depth}"))
    return cases


@pytest.mark.parametrize("sfen,depth,nodes", _suite_cases())
def test_perft_suite(sfen, depth, nodes):
    pos = Position(None if sfen == "startpos" else sfen)
    before = (pos.sfen(), pos.key())
    assert count(pos, depth) == nodes
    assert (pos.sfen(), pos.key()) == before  # perft leaves the position as it was


def test_suite_has_published_and_random_positions():
    entries = parse_suite(SUITE)
    figures = {sfen: dict(f) for sfen, f in entries}
    assert figures["startpos"][6] == 547581517
    assert figures["l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w RGgsn5p 1"][4] == 516925165
    assert figures["R8/2K1S1SSk/4B4/9/9/9/9/9/1L1L1L3 b RBGSNLP3g3n17p 1"] == {1: 593, 2: 105677, 3: 53393368}
    assert any(f == {1: 0, 2: 0} for f in figures.values())
    assert len(entries) >= 25


# --- random positions against python-shogi and cshogi -----------------------------------


def test_random_positions_fill_hands(random_positions):
    in_hand = [sum(int(x) for x in Position(s).arrays.hands.ravel()) for s, _, _ in random_positions]
    assert len(random_positions) >= N_RANDOM_POSITIONS
    assert max(in_hand) >= 15
    assert sum(1 for n in in_hand if n >= 6) >= len(in_hand) // 4
    assert sum(1 for _, _, check in random_positions if check) >= 20


def test_random_legal_moves_match_python_shogi(random_positions):
    for sfen, _, _ in random_positions:
        ours, theirs = legal(sfen), python_shogi_moves(sfen)
        assert ours == theirs, (sfen, sorted(ours - theirs), sorted(theirs - ours))


def test_random_legal_moves_match_cshogi(random_positions):
    for sfen, _, _ in random_positions:
        ours, theirs = legal(sfen), cshogi_moves(sfen)
        assert ours == theirs, (sfen, sorted(ours - theirs), sorted(theirs - ours))


def test_random_no_duplicate_moves(random_positions):
    for sfen, _, _ in random_positions[::5]:
        moves = Position(sfen).legal_moves()
        assert len(moves) == len(set(moves)), sfen


def test_random_sfen_round_trip(random_positions):
    for sfen, _, _ in random_positions:
        assert Position(sfen).sfen() == sfen
        assert shogi.Board(sfen).sfen() == sfen
        ours_head = sfen.rsplit(" ", 1)[0]
        assert cshogi.Board(sfen).sfen().rsplit(" ", 1)[0] == ours_head


def test_random_check_status(random_positions):
    for sfen, _, check in random_positions:
        pos = Position(sfen)
        assert pos.is_check() == check == shogi.Board(sfen).is_check() == cshogi.Board(sfen).is_check(), sfen


def test_random_checkmate_status(random_positions):
    for sfen, _, _ in random_positions[::4]:
        assert Position(sfen).is_checkmate() == shogi.Board(sfen).is_checkmate(), sfen


def test_random_zobrist_transpositions(random_positions):
    """The key of a position reached by moves equals the key of the same position from SFEN."""
    for sfen, key, _ in random_positions:
        assert Position(sfen).key() == key, sfen


def test_random_zobrist_do_undo(random_positions):
    rng = random.Random(7)
    for sfen, _, _ in random_positions[::2]:
        pos = Position(sfen)
        a = pos.arrays
        before = (pos.key(), a.board.copy(), a.hands.copy(), a.st.copy())
        moves = gen(pos)
        for m in moves:
            cb.do_move(a, np.int32(m))
            cb.undo_move(a)
            assert pos.key() == before[0]
            assert (
                (a.board == before[1]).all() and (a.hands == before[2]).all() and (a.st == before[3]).all()
            ), (sfen, move_to_usi(m))
        # incremental key after a move == key computed from scratch from the SFEN
        for m in rng.sample(moves, min(3, len(moves))):
            usi = move_to_usi(m)
            pos.push(usi)
            fresh = Position(pos.sfen())
            assert pos.key() == fresh.key(), (sfen, usi)
            assert pos.is_check() == fresh.is_check(), (sfen, usi)
            assert int(a.st[cb.ST_MATERIAL]) == int(fresh.arrays.st[cb.ST_MATERIAL]), (sfen, usi)
            assert pos.pop() == usi
            assert pos.key() == before[0]


def _occupied_from_board(board: np.ndarray, color: int) -> list[int]:
    return [sq for sq in range(81) if board[sq] != 0 and color_of(int(board[sq])) == color]


def _occupied_from_bits(st: np.ndarray, color: int) -> list[int]:
    squares = []
    for half in range(2):
        bits = int(st[cb.ST_OCCUPIED + 2 * color + half])
        squares += [half * OCC_SPLIT + i for i in range(64) if bits >> i & 1]
    return squares


def test_occupied_bits_follow_the_board_through_random_games():
    """The per-colour bit sets that the generators walk stay equal to the board through
    every kind of move (drops, captures of promoted pieces, king moves), each undo and
    each position copied for another thread."""
    rng = random.Random(11)
    copy = cb.new_position()
    played = drops = captures = 0
    for _ in range(30):
        pos = Position()
        a = pos.arrays
        for _ in range(120):
            moves = gen(pos)
            if not moves:
                break
            m = rng.choice(moves)
            drops += move_from(m) >= DROP_BASE
            captures += move_from(m) < DROP_BASE and a.board[move_to(m)] != 0
            pos.push(move_to_usi(m))
            played += 1
            for color in range(2):
                assert _occupied_from_bits(a.st, color) == _occupied_from_board(a.board, color), pos.sfen()
            if rng.random() < 0.2:
                pos.pop()
                for color in range(2):
                    assert _occupied_from_bits(a.st, color) == _occupied_from_board(a.board, color)
        cb.copy_into(copy, a)
        fresh = Position(pos.sfen()).arrays
        for color in range(2):
            assert _occupied_from_bits(copy.st, color) == _occupied_from_board(a.board, color)
            assert _occupied_from_bits(fresh.st, color) == _occupied_from_board(a.board, color)
    assert played > 2000 and drops > 100 and captures > 200


def _random_encoded_move(rng: random.Random, a, us: int) -> int:
    kind = rng.random()
    promo = rng.randrange(2)
    if kind < 0.3:  # anything within the encoding ranges
        return rng.randrange(128) | rng.randrange(128) << 7 | promo << 14 | rng.randrange(32) << 15
    if kind < 0.7:  # a piece of ours going somewhere
        own = [sq for sq in range(81) if a.board[sq] and (a.board[sq] >> 4) == us]
        frm = rng.choice(own) if own else rng.randrange(81)
        p = int(a.board[frm]) if rng.random() < 0.9 else rng.randrange(32)
        return rng.randrange(81) | frm << 7 | promo << 14 | p << 15
    pt = rng.randrange(1, 9)  # a drop, sometimes a bad one
    p = pt | us << 4 if rng.random() < 0.9 else rng.randrange(32)
    return rng.randrange(81) | (DROP_BASE + pt) << 7 | (promo if rng.random() < 0.2 else 0) << 14 | p << 15


def test_random_is_legal_agrees_with_generation(random_positions):
    rng = random.Random(11)
    for sfen, _, _ in random_positions:
        pos = Position(sfen)
        a = pos.arrays
        us = pos.side_to_move()
        moves = set(gen(pos, GEN_ALL, True))
        for m in moves:
            assert is_legal(a, np.int32(m)), (sfen, move_to_usi(m))
        for _ in range(40):
            m = _random_encoded_move(rng, a, us)
            assert bool(is_legal(a, np.int32(m))) == (m in moves), (sfen, hex(m))
        assert Position(sfen).sfen() == pos.sfen()


def test_pinned_pieces_agree_with_pin_direction(random_positions):
    # generation finds the pins once along the king's lines; pin_direction asks per piece
    pins = 0
    for sfen, _, _ in random_positions:
        a = Position(sfen).arrays
        for us in (0, 1):
            ksq = int(a.st[cb.ST_KING + us])
            packed = pinned_pieces(a.board, ksq, us)
            for sq in range(81):
                p = int(a.board[sq])
                if p != 0 and color_of(p) == us and type_of(p) != KING:
                    want = pin_direction(a.board, ksq, sq, us)
                    assert blocker_line(packed, ksq, sq) == want, (sfen, us, sq)
                    pins += want >= 0
    assert pins > 20


def test_discoverers_agree_with_pin_direction(random_positions):
    # generate_checks' discovered-check candidates: our pieces alone between their king and
    # one of our sliders, which pin_direction finds with the colours turned round
    found = 0
    for sfen, _, _ in random_positions:
        a = Position(sfen).arrays
        for us in (0, 1):
            eksq = int(a.st[cb.ST_KING + 1 - us])
            packed = line_blockers(a.board, eksq, us, us)
            for sq in range(81):
                p = int(a.board[sq])
                if p != 0 and color_of(p) == us:
                    want = pin_direction(a.board, eksq, sq, 1 - us)
                    assert blocker_line(packed, eksq, sq) == want, (sfen, us, sq)
                    found += want >= 0
    assert found > 5


def test_random_gives_check_agrees_with_doing_the_move(random_positions):
    # gives_check and do_move's check flag look only at the moved piece and the line through
    # the square it left; in_check_now scans every attacker of the king on the board after it
    checks = discovered = 0
    for sfen, _, _ in random_positions[::2]:
        pos = Position(sfen)
        a = pos.arrays
        for m in gen(pos, GEN_ALL, True):
            predicted = bool(gives_check(a, np.int32(m)))
            cb.do_move(a, np.int32(m))
            flagged = pos.is_check()
            actual = bool(cb.in_check_now(a))
            to = move_to(m)
            direct = piece_attacks(a.board, to, a.board[to], a.st[cb.ST_KING + a.st[cb.ST_SIDE]])
            cb.undo_move(a)
            assert predicted == actual == flagged, (sfen, move_to_usi(m))
            checks += actual
            discovered += actual and not direct
    assert checks > 100 and discovered > 0


def test_has_legal_move_agrees_with_generation_after_every_check(random_positions):
    # has_legal_move looks for one evasion at a time; generate lists them all
    buf = np.zeros(MAX_MOVES, np.int32)
    mated = escaped = 0
    for sfen, _, _ in random_positions:
        pos = Position(sfen)
        a = pos.arrays
        for m in gen(pos, GEN_ALL, True):
            if not gives_check(a, np.int32(m)):
                continue
            cb.do_move(a, np.int32(m))
            expected = generate(a, buf, GEN_ALL, True) > 0
            assert bool(has_legal_move(a, buf)) == expected, (sfen, move_to_usi(m))
            cb.undo_move(a)
            mated += not expected
            escaped += expected
    assert mated > 10 and escaped > 1000


def test_random_staged_generation_partitions_all(random_positions):
    seen_quiet_drop = False
    for sfen, _, check in random_positions:
        if check:
            continue
        pos = Position(sfen)
        everything = gen(pos, GEN_ALL, False)
        caps = gen(pos, GEN_CAPTURES, False)
        quiets = gen(pos, GEN_QUIETS, False)
        assert len(set(caps) & set(quiets)) == 0, sfen
        assert sorted(caps + quiets) == sorted(everything), (
            sfen,
            sorted(usi_set(set(everything) - set(caps + quiets))),
            sorted(usi_set(set(caps + quiets) - set(everything))),
        )
        for m in caps:  # captures stage: captures and pawn promotions
            to = m & 127
            frm = (m >> 7) & 127
            assert frm < DROP_BASE
            assert pos.arrays.board[to] != 0 or ((m >> 14) & 1 and (pos.arrays.board[frm] & 15) == 1), (
                sfen,
                move_to_usi(m),
            )
        seen_quiet_drop |= any((m >> 7) & 127 >= DROP_BASE for m in quiets)
    assert seen_quiet_drop


def test_all_promos_false_drops_only_never_better_non_promotions(random_positions):
    for sfen, _, _ in random_positions[::4]:
        pos = Position(sfen)
        full, short = set(gen(pos, GEN_ALL, True)), set(gen(pos, GEN_ALL, False))
        assert short <= full
        for m in full - short:
            t = int(pos.arrays.board[(m >> 7) & 127]) & 15
            assert not (m >> 14) & 1 and t in (1, 5, 6), (sfen, move_to_usi(m))
            assert (m | 1 << 14) in short, (sfen, move_to_usi(m))


# --- rule corner cases ------------------------------------------------------------------------


def test_pawn_drop_mate_forbidden():
    sfen = "8k/6G2/9/7N1/9/9/9/9/K8 b P 1"  # P*1b would mate: the gold covers 2a/2b, the knight 1b
    moves = legal(sfen)
    assert "P*1b" not in moves
    assert {"P*1c", "P*1d", "P*5e"} <= moves
    assert moves == python_shogi_moves(sfen) == cshogi_moves(sfen)


def test_pawn_drop_check_that_is_not_mate_allowed():
    sfen = "8k/9/9/7N1/9/9/9/9/K8 b P 1"  # the king can run to 2a or 2b
    assert "P*1b" in legal(sfen)


def test_pawn_drop_mate_when_the_only_capturer_is_pinned():
    # P*1b: the gold on 2b could take it, but the bishop on 4d pins it to the king on 1a
    # (python-shogi lets the pinned gold take and so allows P*1b; cshogi agrees with us)
    pinned = "8k/6Gg1/9/5B1N1/9/9/9/9/K8 b P 1"
    moves = legal(pinned)
    assert "P*1b" not in moves and "P*1c" in moves
    assert moves == cshogi_moves(pinned)
    assert moves | {"P*1b"} == python_shogi_moves(pinned)
    free = "8k/6Gg1/9/7N1/9/9/9/9/K8 b P 1"  # no bishop: the gold takes the pawn
    assert "P*1b" in legal(free)
    assert legal(free) == python_shogi_moves(free) == cshogi_moves(free)


def test_pawn_drop_mate_rule_only_for_pawns():
    sfen = "8k/6G2/9/7N1/9/9/9/9/K8 b GP 1"  # G*1b mates and is fine
    moves = legal(sfen)
    assert "G*1b" in moves and "P*1b" not in moves


def test_pawn_push_mate_allowed():
    sfen = "8k/6G2/8P/7N1/9/9/9/9/K8 b - 1"
    pos = Position(sfen)
    assert {"1c1b", "1c1b+"} <= set(pos.legal_moves())
    pos.push("1c1b")
    assert pos.is_checkmate()


def test_nifu():
    sfen = "4k4/9/9/9/9/9/4P4/9/4K4 b P 1"
    moves = legal(sfen)
    assert not any(m.startswith("P*5") for m in moves)
    assert {f"P*{f}e" for f in (1, 2, 3, 4, 6, 7, 8, 9)} <= moves
    # a promoted pawn does not count
    moves = legal("4k4/9/9/9/4+P4/9/9/9/4K4 b P 1")
    assert "P*5g" in moves


def test_dead_piece_drops():
    moves = legal("4k4/9/9/9/9/9/9/9/4K4 b PLN 1")
    drops = {m for m in moves if "*" in m}
    assert not any(m[0] in "PL" and m[3] == "a" for m in drops)
    assert not any(m[0] == "N" and m[3] in "ab" for m in drops)
    assert {"P*1b", "L*1b", "N*1c"} <= drops
    moves = legal("4k4/9/9/9/9/9/9/9/4K4 w pln 1")
    drops = {m for m in moves if "*" in m}
    assert not any(m[0] in "PL" and m[3] == "i" for m in drops)
    assert not any(m[0] == "N" and m[3] in "hi" for m in drops)
    assert {"P*1h", "L*1h", "N*1g"} <= drops


def _from(moves: set[str], sq: str) -> set[str]:
    return {m for m in moves if m.startswith(sq) and "*" not in m}


def test_forced_promotions_black():
    moves = legal("k8/4P4/4L4/4N4/9/9/9/9/8K b - 1")
    assert _from(moves, "5b") == {"5b5a+"}  # pawn to the last rank
    assert _from(moves, "5c") == set()  # lance blocked by the pawn
    moves = legal("k8/9/4L4/4N4/9/9/9/9/8K b - 1")
    assert _from(moves, "5c") == {"5c5b", "5c5b+", "5c5a+"}
    assert _from(moves, "5d") == {"5d4b+", "5d6b+"}  # knight to the last two ranks
    moves = legal("k8/9/9/9/4N4/9/9/9/8K b - 1")
    assert _from(moves, "5e") == {"5e4c", "5e4c+", "5e6c", "5e6c+"}


def test_forced_promotions_white():
    moves = legal("k8/9/9/9/9/4n4/9/4p4/8K w - 1")
    assert _from(moves, "5h") == {"5h5i+"}
    assert _from(moves, "5f") == {"5f4h+", "5f6h+"}
    moves = legal("k8/9/9/9/9/9/4l4/9/8K w - 1")
    assert _from(moves, "5g") == {"5g5h", "5g5h+", "5g5i+"}


def test_optional_promotions():
    sfen = "9/k8/9/4S4/9/9/9/7B1/8K b - 1"
    moves = legal(sfen)
    assert {"5d5c", "5d5c+", "5d4c", "5d4c+", "5d6c", "5d6c+"} <= _from(moves, "5d")
    assert {"2h8b", "2h8b+", "2h9a", "2h9a+"} <= _from(moves, "2h")
    assert "2h3g" in moves and "2h3g+" not in moves  # no zone, no promotion
    # without all_promos the bishop's non-promotion into the zone is left out, the silver's kept
    short = usi_set(gen(Position(sfen), GEN_ALL, False))
    assert "2h8b+" in short and "2h8b" not in short
    assert {"5d5c", "5d5c+"} <= short
    # a piece leaving the zone may promote too
    assert {"5b5d", "5b5d+"} <= legal("k8/4R4/9/9/9/9/9/9/8K b - 1")


def test_in_check_only_evasions():
    sfen = "4r4/9/9/9/9/9/3S5/9/4K4 b G 1"  # rook checks down the 5th file
    moves = legal(sfen)
    line = {f"5{r}" for r in "bcdefgh"}
    for m in moves:
        if m.startswith("5i"):
            continue  # king move
        assert m[2:4] in line or m[2:4] == "5a", m
    assert {f"G*5{r}" for r in "bcdefgh"} <= moves
    assert {"6g5f", "6g5h"} <= moves and "6g6f" not in moves
    assert "5i5h" not in moves  # along the rook's line
    assert moves == python_shogi_moves(sfen) == cshogi_moves(sfen)


def test_contact_check_cannot_be_blocked():
    moves = legal("9/9/9/9/9/9/9/4g4/4K4 b G2R 1")
    assert not any("*" in m for m in moves)


def test_double_check_king_moves_only():
    sfen = "4r4/9/9/9/8b/9/2S6/9/4K4 b G 1"  # rook on the file, bishop on 1e-5i
    pos = Position(sfen)
    assert pos.is_check()
    moves = set(pos.legal_moves())
    assert moves and all(m.startswith("5i") for m in moves)
    assert moves == python_shogi_moves(sfen)


def test_pinned_rook_moves_along_the_pin_only():
    moves = legal("4r4/9/9/9/4R4/9/9/9/4K4 b - 1")
    rook = _from(moves, "5e")
    assert rook == {"5e5f", "5e5g", "5e5h", "5e5d", "5e5c", "5e5b", "5e5a", "5e5c+", "5e5b+", "5e5a+"}


def test_pinned_knight_never_moves():
    moves = legal("4l4/9/9/9/9/9/4N4/9/4K4 b - 1")
    assert _from(moves, "5g") == set()
    moves = legal("9/9/9/9/9/9/4N4/9/4K4 b - 1")
    assert _from(moves, "5g") == {"5g4e", "5g6e"}


def test_pinned_bishop_diagonal():
    moves = legal("9/9/b8/9/9/9/6B2/9/4K4 b - 1")  # 9c is not on the king's diagonal
    assert len(_from(moves, "3g")) > 3
    moves = legal("9/9/9/9/8b/9/6B2/9/4K4 b - 1")  # 1e-2f-3g-4h-5i: pinned
    assert _from(moves, "3g") == {"3g2f", "3g1e", "3g4h"}


def test_king_cannot_move_into_check():
    moves = legal("9/9/9/9/9/3r5/9/9/4K4 b - 1")  # rook on 6f covers file 6 and rank f
    king = _from(moves, "5i")
    assert king == {"5i5h", "5i4h", "5i4i"}
    moves = legal("9/9/9/9/9/9/9/4g4/4K4 b - 1")  # an unprotected checker may be taken
    assert _from(moves, "5i") == {"5i5h"}
    moves = legal("9/9/9/9/9/9/4p4/4g4/4K4 b - 1")  # a protected one may not
    assert _from(moves, "5i") == set()


def test_king_cannot_retreat_along_a_checking_slider():
    moves = legal("4r4/9/9/9/4K4/9/9/9/9 b - 1")
    assert "5e5f" not in moves and "5e5d" not in moves and "5e4e" in moves
    moves = legal("9/9/9/9/4K4/9/9/9/8b b - 1")  # bishop 1i checks up the diagonal
    assert "5e6d" not in moves and "5e4f" not in moves and "5e4d" in moves


def test_positions_without_a_king_are_valid():
    sfen = "4k4/9/4P4/9/9/9/9/9/9 b G2r2b3g4s4n4l17p 1"  # tsume: black has no king
    pos = Position(sfen)
    assert not pos.is_check()
    moves = set(pos.legal_moves())
    assert {"G*5b", "G*4b", "5c5b", "5c5b+"} <= moves
    assert count(pos, 1) == len(moves)
    pos.push("G*5b")
    assert pos.is_check()
    assert "5a5b" not in pos.legal_moves()  # the gold is protected by the pawn
    # white without a king
    pos = Position("4K4/9/9/9/9/9/9/9/9 w 2R2B4G4S4N4L18P 1")
    assert pos.legal_moves() == []


def test_no_king_perft_deeper():
    pos = Position("4k4/9/4P4/9/9/9/9/9/9 b G2r2b3g4s4n4l17p 1")
    n2 = count(pos, 2)
    total = 0
    for m in pos.legal_moves():
        pos.push(m)
        total += len(pos.legal_moves())
        pos.pop()
    assert n2 == total
