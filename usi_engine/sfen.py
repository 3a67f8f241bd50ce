"""SFEN text and the arrays of a position (``board[81]``, ``hands[2, 8]``, as ``core/board.py``
keeps them): reading with checks that say what is wrong, writing, and the pieces on a square
and in a hand.  ``Position`` builds on these; ``Diagram`` is a position read from an SFEN
without the rules of moves, all that a drawing (``usi_engine.svg``) needs.

>>> d = Diagram("lnsgkg1nl/1r5s1/pppppp1pp/6p2/9/2P6/PP1PPPPPP/7R1/LNSGKGSNL w bB")
>>> d.piece_at("5i"), d.hand(0), d.hand(1), d.turn
(Piece(piece_type=8, color=0), {'B': 1}, {'B': 1}, 1)
>>> d.sfen()
'lnsgkg1nl/1r5s1/pppppp1pp/6p2/9/2P6/PP1PPPPPP/7R1/LNSGKGSNL w Bb 1'
"""

from __future__ import annotations

import numpy as np

from .core.types import (
    BLACK,
    WHITE,
    PAWN,
    LANCE,
    KNIGHT,
    BISHOP,
    ROOK,
    GOLD,
    KING,
    PIECE_LETTERS,
    HAND_ORDER,
    PROMOTED,
    WHITE_BIT,
    base_type,
    square_name,
    parse_square,
    color_of,
    type_of,
)
from .piece import Piece

START_SFEN = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1"
_FULL_SET = {PAWN: 18, LANCE: 4, KNIGHT: 4, 4: 4, BISHOP: 2, ROOK: 2, GOLD: 4}
_PROMOTABLE = "PLNSBR"
# the piece accessors of core/types.py as plain Python (see position.py)
_color_of, _type_of, _base_type = color_of.py_func, type_of.py_func, base_type.py_func


def _parse_board(text: str) -> np.ndarray:
    rows = text.split("/")
    if len(rows) != 9:
        raise ValueError(f"SFEN board needs 9 ranks separated by '/', got {len(rows)}")
    board = np.zeros(81, np.int8)
    for r, row in enumerate(rows):
        f = 8  # SFEN lists each rank from file 9 down to file 1
        promoted = False
        for ch in row:
            if ch.isdigit():
                if promoted:
                    raise ValueError(f"'+' before a digit in rank {r + 1} of the SFEN board")
                f -= int(ch)
                continue
            if ch == "+":
                promoted = True
                continue
            letter = ch.upper()
            if letter not in PIECE_LETTERS[1:]:
                raise ValueError(f"unknown piece letter {ch!r} in the SFEN board")
            if promoted and letter not in _PROMOTABLE:
                raise ValueError(f"piece {ch!r} cannot be promoted")
            if f < 0:
                raise ValueError(f"rank {r + 1} of the SFEN board has more than 9 squares")
            t = PIECE_LETTERS.index(letter) + (PROMOTED if promoted else 0)
            board[f * 9 + r] = t | (WHITE_BIT if ch.islower() else 0)
            promoted = False
            f -= 1
        if f != -1:
            raise ValueError(f"rank {r + 1} of the SFEN board has {8 - f} squares, not 9")
    return board


def _parse_hands(text: str) -> np.ndarray:
    hands = np.zeros((2, 8), np.int8)
    if text == "-":
        return hands
    count = ""
    for ch in text:
        if ch.isdigit():
            count += ch
            continue
        letter = ch.upper()
        if letter not in "PLNSBRG":
            raise ValueError(f"bad piece {ch!r} in the SFEN hand")
        n = int(count) if count else 1
        if n < 1 or n > 18:
            raise ValueError(f"bad count {count!r} in the SFEN hand")
        hands[WHITE if ch.islower() else BLACK, PIECE_LETTERS.index(letter)] += n
        count = ""
    if count:
        raise ValueError("SFEN hand ends with a number")
    return hands


def _validate(board: np.ndarray, hands: np.ndarray) -> None:
    totals = {t: 0 for t in _FULL_SET}
    kings = [0, 0]
    pawn_files: set[tuple[int, int]] = set()
    for sq in range(81):
        p = int(board[sq])
        if not p:
            continue
        color, t = _color_of(p), _type_of(p)
        if t == KING:
            kings[color] += 1
            continue
        totals[_base_type(t)] += 1
        rel = sq % 9 if color == BLACK else 8 - sq % 9
        if (t in (PAWN, LANCE) and rel == 0) or (t == KNIGHT and rel <= 1):
            raise ValueError(f"{PIECE_LETTERS[t]} on {square_name(sq)} could never move")
        if t == PAWN:
            if (color, sq // 9) in pawn_files:
                raise ValueError(f"two unpromoted pawns of one side on file {sq // 9 + 1} (nifu)")
            pawn_files.add((color, sq // 9))
    for color in (BLACK, WHITE):
        if kings[color] > 1:
            raise ValueError(f"{'black' if color == BLACK else 'white'} has {kings[color]} kings")
        for t in totals:
            totals[t] += int(hands[color, t])
    for t, n in totals.items():
        if n > _FULL_SET[t]:
            raise ValueError(f"{n} pieces of type {PIECE_LETTERS[t]}, the set has {_FULL_SET[t]}")


def parse_sfen(sfen: str) -> tuple[np.ndarray, np.ndarray, int, int]:
    """(board, hands, side to move, move number) of an SFEN; ValueError saying what is wrong.
    Checked: the syntax, the piece counts, pieces that could never move, two pawns on a file.
    Not checked here (``Position`` does it): whether the side not to move is in check."""
    fields = sfen.split()
    if len(fields) not in (3, 4):
        raise ValueError(f"SFEN needs board, side, hands and an optional move number; got {sfen!r}")
    board = _parse_board(fields[0])
    if fields[1] not in ("b", "w"):
        raise ValueError(f"SFEN side to move must be 'b' or 'w', got {fields[1]!r}")
    hands = _parse_hands(fields[2])
    movenum = 1
    if len(fields) == 4:
        if not fields[3].isdigit() or int(fields[3]) < 1:
            raise ValueError(f"SFEN move number must be a positive integer, got {fields[3]!r}")
        movenum = int(fields[3])
    _validate(board, hands)
    return board, hands, BLACK if fields[1] == "b" else WHITE, movenum


def sfen_text(board: np.ndarray, hands: np.ndarray, side: int, movenum: int) -> str:
    """The SFEN of a board, hands, side to move and move number."""
    rows = []
    for r in range(9):
        row, empty = "", 0
        for f in range(8, -1, -1):
            p = int(board[f * 9 + r])
            if not p:
                empty += 1
                continue
            if empty:
                row, empty = row + str(empty), 0
            t = _type_of(p)
            letter = ("+" if t > KING else "") + PIECE_LETTERS[_base_type(t)]
            row += letter.lower() if p & WHITE_BIT else letter
        rows.append(row + (str(empty) if empty else ""))
    hand = ""
    for color in (BLACK, WHITE):
        for t in HAND_ORDER:
            n = int(hands[color, t])
            if n:
                letter = PIECE_LETTERS[t] if color == BLACK else PIECE_LETTERS[t].lower()
                hand += (str(n) if n > 1 else "") + letter
    return f"{'/'.join(rows)} {'b' if side == BLACK else 'w'} {hand or '-'} {movenum}"


def piece_on(board: np.ndarray, square: int | str) -> Piece | None:
    """The piece on a square (index ``(file-1)*9 + rank-1`` or a name such as '7g')."""
    sq = parse_square(square) if isinstance(square, str) else int(square)
    if not 0 <= sq < 81:
        raise ValueError(f"square index {square} out of range 0..80")
    p = int(board[sq])
    return Piece(_type_of(p), _color_of(p)) if p else None


def hand_of(hands: np.ndarray, color: int) -> dict[str, int]:
    """Pieces in hand of a side (0 black, 1 white) by letter, e.g. {'P': 2, 'B': 1}."""
    if color not in (BLACK, WHITE):
        raise ValueError(f"bad color {color} (0 black, 1 white)")
    return {PIECE_LETTERS[t]: int(hands[color, t]) for t in HAND_ORDER if hands[color, t]}


class Diagram:
    """A position read from an SFEN (the start position by default), read-only and without
    the rules of moves: the pieces, the hands, the side to move.  ValueError on a bad SFEN
    (``parse_sfen``)."""

    __slots__ = ("board", "hands", "turn", "movenum")

    def __init__(self, sfen: str | None = None) -> None:
        text = START_SFEN if sfen is None or sfen == "startpos" else sfen
        self.board, self.hands, self.turn, self.movenum = parse_sfen(text)

    def sfen(self) -> str:
        return sfen_text(self.board, self.hands, self.turn, self.movenum)

    def piece_at(self, square: int | str) -> Piece | None:
        return piece_on(self.board, square)

    def hand(self, color: int) -> dict[str, int]:
        return hand_of(self.hands, color)

    def __repr__(self) -> str:
        return f"Diagram({self.sfen()!r})"
