"""The Python Position: SFEN in and out, validation of bad input (ValueError saying what is
wrong, the position untouched), USI moves, sennichite and entering-king declaration."""

from __future__ import annotations

import pytest
import shogi

from usi_engine.position import Position, START_SFEN

START_BOARD = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL"


@pytest.fixture
def played():
    """A position with some history, to check that failed calls leave it alone."""
    pos = Position()
    for m in ("7g7f", "3c3d", "8h2b+", "3a2b", "B*4e"):
        pos.push(m)
    return pos


def snapshot(pos: Position):
    return (
        pos.sfen(),
        pos.key(),
        pos.ply(),
        pos.move_stack(),
        pos.is_check(),
        pos.arrays.board.copy().tolist(),
        pos.arrays.hands.copy().tolist(),
    )


# --- SFEN -----------------------------------------------------------------------------------


def test_start_position():
    pos = Position()
    assert pos.sfen() == START_SFEN == shogi.Board().sfen()
    assert Position("startpos").sfen() == START_SFEN
    assert len(pos.legal_moves()) == 30
    assert not pos.is_check()


def test_sfen_after_moves_and_move_number():
    pos = Position()
    pos.push("7g7f")
    assert pos.sfen() == f"{START_BOARD.replace('9/PPPPPPPPP', '2P6/PP1PPPPPP')} w - 2"
    assert Position(START_BOARD + " b -").sfen() == START_SFEN  # move number optional
    assert Position(START_BOARD + " b - 37").sfen().endswith(" 37")


def test_sfen_hand_order_and_counts_round_trip():
    sfen = "4k4/9/9/9/9/9/9/9/4K4 b RB2G3SN2L10Prb2gsn2l8p 1"
    pos = Position(sfen)
    assert pos.sfen() == sfen == shogi.Board(sfen).sfen()
    # a hand written in another order comes back in the standard order
    assert (
        Position("4k4/9/9/9/9/9/9/9/4K4 b 10PN2L3S2GBRrb2g 1").sfen()
        == "4k4/9/9/9/9/9/9/9/4K4 b RB2G3SN2L10Prb2g 1"
    )


def test_promoted_pieces_round_trip():
    sfen = "4k4/+P+L+N+S+B+R3/9/9/9/9/9/9/K2+p+l+n+s+b+r w - 5"
    assert Position(sfen).sfen() == sfen == shogi.Board(sfen).sfen()


# --- bad SFEN -------------------------------------------------------------------------------

BAD_SFENS = [
    ("wrong field count (too few)", f"{START_BOARD} b", "SFEN needs board, side, hands"),
    ("wrong field count (too many)", f"{START_BOARD} b - 1 x", "SFEN needs board, side, hands"),
    ("eight ranks", START_BOARD.rsplit("/", 1)[0] + " b - 1", "needs 9 ranks"),
    ("short rank", START_BOARD.replace("LNSGKGSNL", "LNSGKGSN") + " b - 1", "has 8 squares, not 9"),
    (
        "long rank (digits)",
        START_BOARD.replace("lnsgkgsnl", "lnsgkgsnl1", 1) + " b - 1",
        "has 10 squares, not 9",
    ),
    (
        "long rank (pieces)",
        START_BOARD.replace("lnsgkgsnl", "lnsgkgsnll", 1) + " b - 1",
        "more than 9 squares",
    ),
    (
        "unknown letter",
        START_BOARD.replace("lnsgkgsnl", "lnsgkgsnX", 1) + " b - 1",
        "unknown piece letter 'X'",
    ),
    ("promoted king", START_BOARD.replace("lnsgkgsnl", "lnsg+kgsnl", 1) + " b - 1", "cannot be promoted"),
    ("bad side", f"{START_BOARD} x - 1", "side to move must be 'b' or 'w'"),
    ("bad hand letter", f"{START_BOARD} b Q 1", "bad piece 'Q' in the SFEN hand"),
    ("hand ends with a number", f"{START_BOARD} b 2 1", "hand ends with a number"),
    ("zero count in hand", f"{START_BOARD} b 0P 1", "bad count '0'"),
    ("bad move number", f"{START_BOARD} b - 0", "move number must be a positive integer"),
    ("two black kings", START_BOARD.replace("LNSGKGSNL", "LNSGKGSKL") + " b - 1", "black has 2 kings"),
    ("two white kings", START_BOARD.replace("lnsgkgsnl", "lnsgkgskl", 1) + " b - 1", "white has 2 kings"),
    ("more pawns than the set", f"{START_BOARD} b P 1", "19 pieces of type P, the set has 18"),
    ("more rooks than the set", "4k4/9/9/9/9/9/9/9/4K4 b 2Rr 1", "3 pieces of type R, the set has 2"),
    ("pawn on the last rank", "P3k4/9/9/9/9/9/9/9/4K4 b - 1", "P on 9a could never move"),
    ("lance on the last rank", "4k4/9/9/9/9/9/9/9/4K3l b - 1", "L on 1i could never move"),
    ("knight on the last two ranks", "4k4/N8/9/9/9/9/9/9/4K4 b - 1", "N on 9b could never move"),
    ("nifu on the board", "4k4/9/9/9/4P4/9/4P4/9/4K4 b - 1", "nifu"),
    ("side not to move in check", "4k4/4R4/9/9/9/9/9/9/4K4 b - 1", "side not to move is in check"),
]


@pytest.mark.parametrize("what,sfen,message", BAD_SFENS, ids=[b[0] for b in BAD_SFENS])
def test_bad_sfen_raises_and_says_why(what, sfen, message, played):
    with pytest.raises(ValueError, match=None) as err:
        Position(sfen)
    assert message in str(err.value), (what, str(err.value))
    before = snapshot(played)
    with pytest.raises(ValueError):
        played._set_sfen(sfen)  # a failed set leaves the position alone
    assert snapshot(played) == before
    with pytest.raises(ValueError) as err:
        Position.from_usi(f"sfen {sfen} moves 7g7f")
    assert message in str(err.value)


GOOD_SFENS = [
    ("tokin and pawn on a file", "4k4/9/9/9/4+P4/9/4P4/9/4K4 b - 1"),  # no nifu
    ("pawns of both sides on a file", "4k4/9/9/9/4P4/9/4p4/9/4K4 b - 1"),
    ("every piece, no black king", "4k4/9/9/9/9/9/9/9/9 b 2R2B4G4S4N4L18P 1"),
    ("side to move in check", "4k4/4R4/9/9/9/9/9/9/4K4 w - 1"),
]


@pytest.mark.parametrize("what,sfen", GOOD_SFENS, ids=[g[0] for g in GOOD_SFENS])
def test_good_sfen_variants_accepted(what, sfen):
    """Legal SFENs at the edge of a rule are read as written: the SFEN comes back the
    same, and the check and the legal moves agree with python-shogi's."""
    pos = Position(sfen)
    board = shogi.Board(sfen)
    assert pos.sfen() == sfen == board.sfen()
    assert pos.is_check() == board.is_check() == (what == "side to move in check")
    assert sorted(m.usi() for m in pos.legal_moves()) == sorted(m.usi() for m in board.legal_moves)


# --- bad moves ------------------------------------------------------------------------------

BAD_MOVES = [
    ("", "unparseable move"),
    ("7g7f7", "unparseable move '7g7f7'"),
    ("7g", "unparseable move"),
    ("7j7f", "bad square '7j'"),
    ("0g7f", "bad square '0g'"),
    ("P*0e", "bad square '0e'"),
    ("5e5d", "no piece of the side to move on 5e"),
    ("3a3b", "no piece of the side to move on 3a"),  # white's silver, black to move
    ("7f7d", "illegal move '7f7d'"),  # pawn two squares
    ("1g1f+", "illegal move '1g1f+'"),  # promotion outside the zone
    ("p*5e", "bad drop piece"),
    ("K*5e", "bad drop piece"),
    ("P*5e", "illegal move 'P*5e'"),  # nifu (pawn on 5g)
    ("P*5a", "illegal move 'P*5a'"),  # dead pawn and occupied
    ("R*5e", "illegal move 'R*5e'"),  # no rook in hand
    ("B*3c", "illegal move 'B*3c'"),  # occupied square
    ("4e4d", "illegal move '4e4d'"),  # a bishop does not step straight
    ("2h2c", "illegal move '2h2c'"),  # the rook is blocked by a pawn
]


@pytest.mark.parametrize("move,message", BAD_MOVES, ids=[m or "empty" for m, _ in BAD_MOVES])
def test_bad_move_raises_and_leaves_position(move, message, played):
    pos = played
    pos.push("4a3b")  # white answers: black to move
    before = snapshot(pos)
    with pytest.raises(ValueError) as err:
        pos.push(move)
    assert message in str(err.value), str(err.value)
    assert snapshot(pos) == before
    with pytest.raises(ValueError):
        pos.parse_move(move)
    assert snapshot(pos) == before


def test_pop_without_moves():
    pos = Position()
    with pytest.raises(ValueError, match="no move to take back"):
        pos.pop()


def test_push_pop_round_trip(played):
    before = snapshot(played)
    for m in played.legal_moves():
        played.push(m)
        assert played.pop() == m
        assert snapshot(played) == before


def test_from_usi():
    pos = Position.from_usi("startpos moves 7g7f 3c3d 8h2b+")
    assert pos.move_stack() == ["7g7f", "3c3d", "8h2b+"]
    board = shogi.Board()
    for m in ("7g7f", "3c3d", "8h2b+"):
        board.push_usi(m)
    assert pos.sfen() == board.sfen()
    sfen = "4k4/9/9/9/9/9/9/9/4K4 b G 1"
    pos = Position.from_usi(f"sfen {sfen} moves G*5b")
    assert pos.is_check() and pos.move_stack() == ["G*5b"]
    assert Position.from_usi("startpos").sfen() == START_SFEN


@pytest.mark.parametrize(
    "text,message",
    [
        ("startpos moves 7g7f 3c3d 7f7e zz 2g2f", "move 4 ('zz'): unparseable move 'zz'"),
        ("startpos moves 7g7f 7g7f", "move 2 ('7g7f'): no piece of the side to move on 7g"),
        ("startpos moves 7g7f 3c3d 2g2e", "move 3 ('2g2e'): illegal move '2g2e'"),
        ("", "position needs 'startpos' or 'sfen ...'"),
        ("fen lnsgkgsnl", "position needs 'startpos' or 'sfen ...'"),
        ("sfen foo", "SFEN needs board, side, hands"),
    ],
)
def test_from_usi_errors_name_the_problem(text, message):
    with pytest.raises(ValueError) as err:
        Position.from_usi(text)
    assert message in str(err.value)


# --- sennichite -----------------------------------------------------------------------------


def test_fourfold_repetition_is_a_draw():
    pos = Position()
    cycle = ["3i4h", "7a6b", "4h3i", "6b7a"]  # silvers out and back
    for k in range(3):
        for i, m in enumerate(cycle):
            assert pos.repetition() == "none", (k, i)
            pos.push(m)
    assert pos.ply() == 12 and pos.sfen().split()[:3] == START_SFEN.split()[:3]
    assert pos.repetition() == "draw"
    pos.pop()
    assert pos.repetition() == "none"


def test_king_and_gold_shuffle_repetition_is_a_draw():
    pos = Position("4k4/9/9/9/9/9/9/9/4K1G2 b 2r2b3g4s4n4l18p 1")
    cycle = ["3i3h", "5a4b", "3h3i", "4b5a"]
    for _ in range(3):
        for m in cycle:
            pos.push(m)
    assert pos.repetition() == "draw"


def test_perpetual_check_the_checked_side_wins():
    # white to move, in check by the rook; black checks on every move of the cycle
    pos = Position("8k/9/9/9/9/9/9/9/K7R w - 1")
    assert pos.is_check()
    for _ in range(3):
        for m in ("1a2a", "1i2i", "2a1a", "2i1i"):
            pos.push(m)
    assert pos.ply() == 12 and pos.side_to_move() == 1
    assert pos.repetition() == "win"


def test_perpetual_check_the_checking_side_loses():
    pos = Position("7k1/9/9/9/9/9/9/9/K7R b - 1")
    assert not pos.is_check()
    for _ in range(3):
        for m in ("1i2i", "2a1a", "2i1i", "1a2a"):
            pos.push(m)
    assert pos.ply() == 12 and pos.side_to_move() == 0
    assert pos.repetition() == "lose"


def test_repetition_with_checks_on_only_some_moves_is_a_draw():
    # black checks with the rook, then steps out of line: not every move is a check
    pos = Position("8k/9/9/9/9/9/9/9/K5R2 b - 1")
    for _ in range(3):
        for m in ("3i1i", "1a2b", "1i3i", "2b1a"):
            pos.push(m)
    assert pos.ply() == 12
    assert pos.repetition() == "draw"


# --- entering-king declaration --------------------------------------------------------------

DECLARE_TRUE = "RRBBGGGGS/4K3S/9/9/9/9/9/9/4k4 b 2P2s4n4l16p 1"  # 10 pieces, 26 + 2 points


def test_declaration_valid():
    pos = Position(DECLARE_TRUE)
    assert pos.declaration_points() == (28, 10, True)
    assert pos.can_declare("CSA27")
    assert not pos.can_declare("CSA24")  # needs 31
    assert not pos.can_declare("none")


def test_declaration_white_needs_27():
    pos = Position("4K4/9/9/9/9/9/9/4k3s/rrbbggggs w 2S4N4L17Pp 1")
    assert pos.declaration_points() == (27, 10, True)
    assert pos.can_declare("CSA27")


@pytest.mark.parametrize(
    "what,sfen",
    [
        ("nine pieces in the camp", "RRBBGGGGS/4K4/9/8S/9/9/9/9/4k4 b 3P2s4n4l15p 1"),
        ("27 points for black", "RRBBGGGGS/4K3S/9/9/9/9/9/9/4k4 b P2s4n4l17p 1"),
        ("in check", "RRBBGGGGS/4K3S/5s3/9/9/9/9/9/4k4 b 2Ps4n4l16p 1"),
        ("king outside the camp", "RRBBGGGG1/7SS/9/4K4/9/9/9/9/4k4 b 2P2s4n4l16p 1"),
    ],
)
def test_declaration_near_misses(what, sfen):
    assert not Position(sfen).can_declare("CSA27"), what


def test_declaration_unknown_rule():
    with pytest.raises(ValueError, match="unknown entering-king rule"):
        Position(DECLARE_TRUE).can_declare("CSA99")


# --- the python-chess-like API: Move, Piece, piece_at, push/pop, records ------------------


def test_moves_are_move_values():
    from usi_engine.move import Move

    pos = Position()
    moves = pos.legal_moves()
    assert all(isinstance(m, Move) for m in moves) and "7g7f" in moves
    pos.push(Move("7g7f"))
    assert pos.peek() == "7g7f" and isinstance(pos.peek(), Move)
    assert pos.move_stack() == [Move("7g7f")] and pos.is_legal("3c3d") and not pos.is_legal("7f7e")
    assert repr(pos.pop()) == "Move('7g7f')" and pos.peek() is None
    with pytest.raises(TypeError, match="USI text or a Move"):
        pos.push(7)


def test_piece_at_and_hand(played):
    from usi_engine.piece import Piece

    assert played.piece_at("4e") == Piece.from_symbol("B")  # the dropped bishop
    assert played.piece_at(10) == Piece(4, 1)  # 2b: the white silver that took
    assert played.piece_at("2b").symbol() == "s" and played.piece_at("5e") is None
    assert Piece.from_symbol("+r").japanese() == "龍" and Piece.from_symbol("+P").promoted
    assert played.hand(0) == {} and played.hand(1) == {"B": 1}
    for bad, why in ((81, "out of range"), ("0a", "bad square")):
        with pytest.raises(ValueError, match=why):
            played.piece_at(bad)
    with pytest.raises(ValueError, match="cannot be promoted"):
        Piece.from_symbol("+G")


def test_checkmate_sennichite_and_game_over():
    mated = Position("4k4/4G4/4P4/9/9/9/9/9/4K4 w - 1")
    assert mated.is_checkmate() and mated.is_game_over() and not mated.is_sennichite()
    pos = Position()
    for m in ["5i5h", "5a5b", "5h5i", "5b5a"] * 3:
        assert not pos.is_sennichite()
        pos.push(m)
    assert pos.is_sennichite() and pos.is_game_over() and pos.repetition() == "draw"


def test_kif_and_csa_round_trip(played):
    import cshogi
    import cshogi.KIF
    import shogi.CSA
    import shogi.KIF

    kif, csa = played.kif(), played.csa()
    usi = played.move_stack()
    assert shogi.KIF.Parser.parse_str(kif)[0]["moves"] == usi
    assert [cshogi.move_to_usi(m) for m in cshogi.KIF.Parser.parse_str(kif).moves] == usi
    assert shogi.CSA.Parser.parse_str(csa)[0]["moves"] == usi
    for back in (Position.from_kif(kif), Position.from_csa(csa), Position.from_record(kif)):
        assert back.sfen() == played.sfen() and back.move_stack() == usi
    # from a set-up position the KIF carries a board diagram and the CSA its P lines
    sfen = "4k4/9/4P4/9/9/9/9/9/4K4 b G 1"
    pos = Position(sfen)
    pos.push("G*5b")
    for text in (pos.kif(), pos.csa()):
        back = Position.from_record(text)
        assert back.sfen() == pos.sfen() and back.is_checkmate()


def test_kif_names_promoted_lance_knight_and_silver_as_kakinoki_does():
    """A move of a promoted lance, knight or silver is written 成香, 成桂, 成銀 (cshogi's
    one-character names 杏, 圭, 全 are those of a board diagram), and reads back."""
    import shogi.KIF

    sfen = "4k4/9/9/9/9/9/9/1+S1+N1+L3/4K4 b - 1"
    pos = Position(sfen)
    for m in ("8h8g", "5a5b", "6h6g", "5b5a", "4h4g"):
        pos.push(m)
    kif = pos.kif()
    moves = [line.split()[1] for line in kif.splitlines() if line.startswith("   ")]
    assert moves[::2] == ["８七成銀(88)", "６七成桂(68)", "４七成香(48)"]  # the diagram has 全 圭 杏
    assert shogi.KIF.Parser.parse_str(kif)[0]["moves"] == pos.move_stack()
    assert Position.from_kif(kif).sfen() == pos.sfen()


def test_from_record_names_the_bad_line(tmp_path):
    kif = Position.from_usi("startpos moves 7g7f 3c3d 2g2f").kif().replace("２六歩(27)", "２五歩(27)")
    with pytest.raises(ValueError, match=r"line 5: illegal move 2g2e at move 3"):
        Position.from_kif(kif)
    path = tmp_path / "game.kif"
    path.write_bytes(kif.replace("２五歩", "２六歩").encode("cp932"))  # Shift-JIS, as GUIs write
    assert Position.from_record(path).move_stack() == ["7g7f", "3c3d", "2g2f"]
    assert Position.from_record(str(path)).move_stack() == ["7g7f", "3c3d", "2g2f"]
