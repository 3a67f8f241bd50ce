"""Static exchange evaluation on hand-computed positions: captured pieces go to the hand
(capture value = board value + hand value), promotions on the way, drops, x-rays."""

import numpy as np
import pytest

from usi_engine.position import Position
from usi_engine.core.see import see, capture_value, SEE_BUF
from usi_engine.core.weights import TYPE_VALUE, HAND_VALUE
from usi_engine.core.types import PAWN, SILVER, ROOK, GOLD, DRAGON, PROMOTED

P, S, R, G = (capture_value(t) for t in (PAWN, SILVER, ROOK, GOLD))
ROOK_PROMO = TYPE_VALUE[DRAGON] - TYPE_VALUE[ROOK]
LANCE_PROMO = TYPE_VALUE[2 + PROMOTED] - TYPE_VALUE[2]

CASES = [
    # (sfen, move, expected, why)
    ("4k4/9/9/9/4g4/9/9/4R4/4K4 b - 1", "5h5e", G, "a free gold: board and hand value"),
    ("4k4/4g4/4p4/9/9/9/9/4R4/4K4 b - 1", "5h5c", P - R, "rook for a pawn"),
    ("4k4/9/4p4/9/9/9/9/4R4/8K b - 1", "5h5c+", P + ROOK_PROMO, "a free pawn and a promotion"),
    ("4k4/9/9/4p4/9/9/9/9/4K4 b S 1", "S*5e", -S, "a silver dropped where a pawn takes it"),
    ("4k4/9/9/4p4/9/4G4/9/9/4K4 b S 1", "S*5e", P - S, "the drop defended: silver for a pawn"),
    ("8k/9/9/9/9/9/9/4R4/4K4 b - 1", "5h5e", 0, "a quiet move to a safe square"),
    # x-ray: the lance behind the rook retakes on 5c and promotes doing so
    ("4k4/4g4/4p4/9/9/9/9/4R4/4L1K2 b - 1", "5h5c", P - R + G + LANCE_PROMO, "rook, then lance"),
]


@pytest.mark.parametrize("sfen,move,expected,why", CASES)
def test_see_values(sfen, move, expected, why):
    pos = Position(sfen)
    before = pos.arrays.board.copy()
    m = pos.parse_move(move)
    buf = np.zeros(SEE_BUF, np.int64)
    assert see(pos.arrays.board, m, buf) == expected, why
    assert (pos.arrays.board == before).all()  # the board is restored


def test_capture_values_count_the_hand():
    for t in range(1, 8):
        assert capture_value(t) == TYPE_VALUE[t] + HAND_VALUE[t]
    assert capture_value(PAWN + PROMOTED) == TYPE_VALUE[PAWN + PROMOTED] + HAND_VALUE[PAWN]


def test_white_recaptures_promote_in_whites_zone():
    # Black's pawn takes on 5g; White's silver on 4f takes back and promotes (rank g is in
    # White's zone) and nothing retakes: a pawn each, and White's promotion gain
    pos = Position("4k4/9/9/9/9/5s3/4p4/4P4/8K b - 1")
    m = pos.parse_move("5h5g")
    promo = TYPE_VALUE[SILVER + PROMOTED] - TYPE_VALUE[SILVER]
    assert see(pos.arrays.board, m, np.zeros(SEE_BUF, np.int64)) == P - (P + promo)


def test_least_valuable_attacker_on_random_positions():
    # against every attacker found by piece_attacks: the same cheapest value (the pawn is
    # looked for first, on the one square it can attack from)
    from usi_engine.core.see import _least_valuable_attacker
    from usi_engine.core.attacks import piece_attacks
    from usi_engine.core.types import color_of, type_of

    cshogi = pytest.importorskip("cshogi")
    rng = np.random.default_rng(5)
    pawns = 0
    for game in range(12):
        board = cshogi.Board()
        for _ in range(int(rng.integers(30, 110))):
            moves = list(board.legal_moves)
            if not moves or board.is_game_over():
                break
            board.push(moves[int(rng.integers(len(moves)))])
        b = Position(board.sfen()).arrays.board
        for to in range(81):
            for side in (0, 1):
                values = [
                    TYPE_VALUE[type_of(int(b[s]))]
                    for s in range(81)
                    if b[s] != 0 and color_of(int(b[s])) == side and piece_attacks(b, s, int(b[s]), to)
                ]
                sq, p = _least_valuable_attacker(b, to, side)
                if not values:
                    assert sq == -1, (board.sfen(), to, side)
                    continue
                assert piece_attacks(b, sq, int(p), to) and b[sq] == p
                assert TYPE_VALUE[type_of(int(p))] == min(values), (board.sfen(), to, side)
                pawns += type_of(int(p)) == PAWN
    assert pawns > 50
