"""Static exchange evaluation on hand-computed positions: captured pieces go to the hand
(capture value = board value + hand value), promotions on the way, drops, x-rays."""

import numpy as np
import pytest

from usi_engine.position import Position
from usi_engine.core.see import see, see_ge, surely_keeps, capture_value, SEE_BUF
from usi_engine.core.weights import TYPE_VALUE, HAND_VALUE
from usi_engine.core.types import PAWN, SILVER, ROOK, GOLD, KING, DRAGON, PROMOTED, type_of, moved_piece

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


def _reference_see(board, m):
    """The exchange played out on a copy of the board, every attacker found afresh by
    piece_attacks (x-rays appear as pieces leave): the cheapest goes first, among equals the
    one on the first line in direction order from the square, then a knight."""
    from usi_engine.core.attacks import piece_attacks, LINE_DIR
    from usi_engine.core.see import capture_value, _in_zone
    from usi_engine.core.types import color_of, type_of, move_to, move_from, moved_piece
    from usi_engine.core.types import is_promotion

    b = board.copy()
    to, frm, piece = int(move_to(m)), int(move_from(m)), int(moved_piece(m))
    t = type_of(piece)
    gains = [capture_value(type_of(int(b[to]))) if b[to] else 0]
    if is_promotion(m):
        gains[0] += TYPE_VALUE[t + PROMOTED] - TYPE_VALUE[t]
        t += PROMOTED
    if frm < 81:
        b[frm] = 0
    on_to, side = capture_value(t), 1 - color_of(piece)
    while True:
        attackers = [
            (TYPE_VALUE[type_of(int(b[s]))], LINE_DIR[to, s] if LINE_DIR[to, s] >= 0 else 8, s)
            for s in range(81)
            if s != to and b[s] and color_of(int(b[s])) == side and piece_attacks(b, s, int(b[s]), to)
        ]
        if not attackers:
            break
        _, _, s = min(attackers)
        a = type_of(int(b[s]))
        gain = on_to
        if a < GOLD and (_in_zone(side, to) or _in_zone(side, s)):
            gain += TYPE_VALUE[a + PROMOTED] - TYPE_VALUE[a]
            a += PROMOTED
        gains.append(gain - gains[-1])
        b[s] = 0
        on_to, side = capture_value(a), 1 - side
        if max(-gains[-2], gains[-1]) < 0:
            break
    for d in range(len(gains) - 1, 0, -1):
        gains[d - 1] = -max(-gains[d - 1], gains[d])
    return gains[0]


def _random_positions(games, seed):
    """Positions of random games from cshogi's move generator, 30 to 140 plies deep."""
    cshogi = pytest.importorskip("cshogi")
    rng = np.random.default_rng(seed)
    for _ in range(games):
        board = cshogi.Board()
        for _ in range(int(rng.integers(30, 140))):
            moves = list(board.legal_moves)
            if not moves or board.is_game_over():
                break
            board.push(moves[int(rng.integers(len(moves)))])
        yield Position(board.sfen())


def test_see_agrees_with_a_plain_exchange_on_random_positions():
    # every legal move of positions from random games, against the exchange played out on
    # a copy of the board; the board itself is left as it was
    buf = np.zeros(SEE_BUF, np.int64)
    exchanges = 0
    for pos in _random_positions(40, seed=5):
        b = pos.arrays.board
        before = b.copy()
        for move in pos.legal_moves():
            m = pos.parse_move(str(move))
            value = see(b, m, buf)
            assert value == _reference_see(b, m), (pos.sfen(), str(move))
            exchanges += value != 0
        assert (b == before).all()
    assert exchanges > 300


def test_see_ge_answers_as_the_whole_exchange_would():
    # see_ge decides most moves from their first two captures; wherever it does, its answer
    # must be the one the exchange played out gives, at thresholds on both sides of it
    buf = np.zeros(SEE_BUF, np.int64)
    settled = {"captures": 0, "king moves": 0}
    for pos in _random_positions(40, seed=6):
        b = pos.arrays.board
        for move in pos.legal_moves():
            m = pos.parse_move(str(move))
            value = see(b, m, buf)
            for threshold in (value - 451, value - 1, value, value + 1, -600, -60, 0, 200):
                assert see_ge(b, m, threshold, buf) == (value >= threshold), (pos.sfen(), str(move))
                if surely_keeps(b, m, threshold):
                    assert value >= threshold, (pos.sfen(), str(move), threshold)
            if surely_keeps(b, m, 0):
                settled["king moves" if type_of(int(moved_piece(m))) == KING else "captures"] += 1
    assert settled["captures"] > 20 and settled["king moves"] > 100, settled
