"""Squares, pieces, hands and the move encoding: the one source of truth for constants.

Squares: ``sq = file_index * 9 + rank_index`` where file_index 0..8 is USI file 1..9 and
rank_index 0..8 is USI rank a..i.  Black (sente) moves towards rank a (rank_index 0).

Pieces: a piece type 1..14 (promoted = base + PROMOTED); a coloured piece adds WHITE_BIT
for white (gote).  0 is an empty square.

Moves are int32: ``to | from << 7 | promote << 14 | piece << 15``.  ``from`` is a square
0..80, or ``DROP_BASE + piece_type`` for a drop (82..88).  ``piece`` is the coloured piece
that moves, before promotion, so history tables index a move without looking at the board.
"""

import numpy as np

from .jit import jit  # the hot code's decorator (core/jit.py), imported from here by every module


NSQ = 81
# Sets of squares as bits, in two int64 words: squares 0..44 (files 1-5) in the first and
# 45..80 (files 6-9), less 45, in the second, both clear of the sign bit. The position keeps
# each colour's occupied squares so (board.py); attacks.REACH is written so.
OCC_SPLIT = 45
OCC_MASK = np.array([(1 << OCC_SPLIT) - 1, (1 << (NSQ - OCC_SPLIT)) - 1], np.int64)  # per word
BLACK = 0
WHITE = 1

# piece types
NO_PIECE = 0
PAWN, LANCE, KNIGHT, SILVER, BISHOP, ROOK, GOLD, KING = 1, 2, 3, 4, 5, 6, 7, 8
PRO_PAWN, PRO_LANCE, PRO_KNIGHT, PRO_SILVER, HORSE, DRAGON = 9, 10, 11, 12, 13, 14
PROMOTED = 8  # added to a base type to promote it
WHITE_BIT = 16  # added to a type for a white piece
PIECE_NB = 32  # size of tables indexed by coloured piece
HAND_NB = 8  # hands[color, PAWN..GOLD]; index 0 unused

# move encoding
MOVE_NONE = 0
MOVE_NULL = (1 << 7) | 1  # from == to: never a real move
DROP_BASE = 81  # from = DROP_BASE + piece type for a drop
FROM_NB = DROP_BASE + HAND_NB  # size of the from-or-drop axis of butterfly tables
PROMOTE_FLAG = 1 << 14

# limits
MAX_MOVES = 600  # the most legal moves known in shogi is 593
MAX_PLY = 128  # search depth limit (plies from the root)
MAX_HISTORY = 4096  # game plies + search plies kept in the key history

# usi letters
PIECE_LETTERS = "?PLNSBRGK"  # index by base type 1..8
HAND_ORDER = (ROOK, BISHOP, GOLD, SILVER, KNIGHT, LANCE, PAWN)  # SFEN hand order
MAX_IN_HAND = np.array([0, 18, 4, 4, 4, 2, 2, 4, 0], dtype=np.int8)


@jit(inline="always")
def square_bits(sq):
    """The bit set (word 0, word 1) that holds square sq alone (OCC_SPLIT)."""
    if sq < OCC_SPLIT:
        return 1 << sq, 0
    return 0, 1 << (sq - OCC_SPLIT)


@jit(inline="always")
def make_move(frm, to, piece, promote):
    return to | (frm << 7) | (promote << 14) | (piece << 15)


@jit(inline="always")
def make_drop(pt, to, color):
    return to | ((DROP_BASE + pt) << 7) | ((pt | (color << 4)) << 15)


@jit(inline="always")
def move_to(m):
    return m & 127


@jit(inline="always")
def move_from(m):
    """A square 0..80, or DROP_BASE + piece type for a drop."""
    return (m >> 7) & 127


@jit(inline="always")
def is_drop(m):
    return ((m >> 7) & 127) >= DROP_BASE


@jit(inline="always")
def is_promotion(m):
    return (m >> 14) & 1


@jit(inline="always")
def moved_piece(m):
    """The coloured piece that moves (before promotion); for a drop, the dropped piece."""
    return (m >> 15) & 31


@jit(inline="always")
def moved_piece_after(m):
    return ((m >> 15) & 31) | (((m >> 14) & 1) << 3)


@jit(inline="always")
def make_piece(t, color):
    """The coloured piece of type `t` (1..14) for `color`."""
    return t | (color << 4)


@jit(inline="always")
def color_of(p):
    return p >> 4


@jit(inline="always")
def type_of(p):
    return p & 15


@jit(inline="always")
def base_type(t):
    """Unpromoted type of a piece type (GOLD and KING stay)."""
    return t - PROMOTED if t > KING else t


@jit(inline="always")
def file_of(sq):
    return sq // 9


@jit(inline="always")
def rank_of(sq):
    return sq % 9


@jit(inline="always")
def relative_rank(color, sq):
    """0 is the farthest rank from `color`'s side (rank a for black)."""
    r = sq % 9
    return r if color == BLACK else 8 - r


def square_name(sq: int) -> str:
    return f"{sq // 9 + 1}{'abcdefghi'[sq % 9]}"


def parse_square(text: str) -> int:
    """'7g' -> square index; ValueError on anything else."""
    if len(text) != 2 or text[0] not in "123456789" or text[1] not in "abcdefghi":
        raise ValueError(f"bad square {text!r}")
    return (int(text[0]) - 1) * 9 + "abcdefghi".index(text[1])
