"""SFEN text as a book key: hand normalisation, the ply split off, and the 180-degree flip.

Pure text work (no Position, no numba): a book of a million positions is read without
building a board for each.  YaneuraOu writes hands in the order R B G S N L P, black's
pieces first; other tools may not, so every SFEN is rewritten in that order before it is
used as a key, and a lookup with a position from any GUI finds the same key.

>>> book_key("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b pP2Pr 7")
('lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b 3Prp', 7)
>>> flip_move("7g7f"), flip_move("P*5e"), flip_move("8h2b+")
('3c3d', 'P*5e', '2b8h+')
"""

from __future__ import annotations

import re

HAND_ORDER = "RBGSNLP"  # YaneuraOu's (and the USI proposal's) order of the hand
_PIECES = set("PLNSGBRK")
_PROMOTABLE = set("PLNSBR")
_HAND_TOKEN = re.compile(r"(\d*)([A-Za-z])")
_MOVE_RE = re.compile(r"^(?:[1-9][a-i][1-9][a-i]\+?|[PLNSGBR]\*[1-9][a-i])$")


def is_usi_move(text: str) -> bool:
    """USI move syntax: 7g7f, 8h2b+, P*5e (legality needs a position)."""
    return bool(_MOVE_RE.match(text))


def _rank_cells(rank: str) -> list[str]:
    """One rank of an SFEN board as tokens: pieces ('P', '+b') and empty runs ('3')."""
    cells: list[str] = []
    squares = 0
    i = 0
    while i < len(rank):
        ch = rank[i]
        if ch.isdigit():
            cells.append(ch)
            squares += int(ch)
            i += 1
            continue
        promoted = ch == "+"
        if promoted:
            i += 1
            if i >= len(rank):
                raise ValueError(f"rank {rank!r} ends with '+'")
            ch = rank[i]
        if ch.upper() not in _PIECES:
            raise ValueError(f"unknown piece letter {ch!r} in rank {rank!r}")
        if promoted and ch.upper() not in _PROMOTABLE:
            raise ValueError(f"piece {ch!r} cannot be promoted")
        cells.append(("+" if promoted else "") + ch)
        squares += 1
        i += 1
    if squares != 9:
        raise ValueError(f"rank {rank!r} has {squares} squares, not 9")
    return cells


def _board_ranks(board: str) -> list[list[str]]:
    ranks = board.split("/")
    if len(ranks) != 9:
        raise ValueError(f"board needs 9 ranks separated by '/', got {len(ranks)}")
    return [_rank_cells(r) for r in ranks]


def _hand_counts(hand: str) -> dict[str, int]:
    """'2Pr' -> {'P': 2, 'r': 1}; '-' -> {}."""
    if hand == "-":
        return {}
    counts: dict[str, int] = {}
    pos = 0
    for m in _HAND_TOKEN.finditer(hand):
        if m.start() != pos:
            break
        letter = m.group(2)
        if letter.upper() not in HAND_ORDER:
            raise ValueError(f"bad piece {letter!r} in the hand {hand!r}")
        n = int(m.group(1)) if m.group(1) else 1
        if n < 1:
            raise ValueError(f"bad count in the hand {hand!r}")
        counts[letter] = counts.get(letter, 0) + n
        pos = m.end()
    if pos != len(hand):
        raise ValueError(f"unreadable hand {hand!r}")
    return counts


def _hand_text(counts: dict[str, int]) -> str:
    out = []
    for letter in HAND_ORDER + HAND_ORDER.lower():
        n = counts.get(letter, 0)
        if n:
            out.append((str(n) if n > 1 else "") + letter)
    return "".join(out) or "-"


def normalize_hand(hand: str) -> str:
    """The hand in YaneuraOu's order: black's R B G S N L P, then white's."""
    return _hand_text(_hand_counts(hand))


def book_key(sfen: str) -> tuple[str, int | None]:
    """(board side hand, ply) of an SFEN, the hand normalised; ply None when absent.
    ValueError says what is wrong."""
    fields = sfen.split()
    if fields[:1] == ["sfen"]:
        fields = fields[1:]
    if len(fields) not in (3, 4):
        raise ValueError(f"SFEN needs board, side, hand and ply; got {len(fields)} fields")
    board, side, hand = fields[:3]
    _board_ranks(board)
    if side not in ("b", "w"):
        raise ValueError(f"side to move must be 'b' or 'w', got {side!r}")
    ply = None
    if len(fields) == 4:
        if not fields[3].isdigit() or int(fields[3]) < 1:
            raise ValueError(f"ply must be a positive integer, got {fields[3]!r}")
        ply = int(fields[3])
    return f"{board} {side} {normalize_hand(hand)}", ply


def flip_key(key: str) -> str:
    """The position turned 180 degrees with the colours swapped (a book key, no ply)."""
    board, side, hand = key.split(" ")
    ranks = []
    for cells in reversed(_board_ranks(board)):
        ranks.append("".join(c.swapcase() for c in reversed(cells)))
    counts = {letter.swapcase(): n for letter, n in _hand_counts(hand).items()}
    return f"{'/'.join(ranks)} {'w' if side == 'b' else 'b'} {_hand_text(counts)}"


def _flip_square(sq: str) -> str:
    return f"{10 - int(sq[0])}{chr(ord('a') + ord('i') - ord(sq[1]))}"


def flip_move(move: str) -> str:
    """A move of the flipped position as a move of the original one (and back)."""
    if move[1] == "*":
        return move[:2] + _flip_square(move[2:4])
    return _flip_square(move[:2]) + _flip_square(move[2:4]) + move[4:]
