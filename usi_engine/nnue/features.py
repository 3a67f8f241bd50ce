"""BonaPiece numbering and the NNUE input features, exactly as YaneuraOu defines them, on
this project's square and piece codes.  Pure numpy: the trainer imports it without numba.

Squares: YaneuraOu numbers a square ``(file - 1) * 9 + (rank - 1)``, which is this project's
numbering too (core/types.py), so no conversion is needed; white's perspective turns the
board around (``80 - sq``) and swaps the colours.

BonaPiece (Bonanza's numbering, 'f' = the perspective's own piece, 'e' = the enemy's):
pieces in hand come first, one index per piece held (``f_hand_pawn + k`` for the (k+1)-th
pawn, so holding 3 pawns activates 3 indices), then each piece kind on each of the 81 squares
(promoted pawn, lance, knight and silver count as gold), ``fe_end = 1548``; the kings follow
(``f_king = 1548``, ``e_king = 1629``), used only by K+P.

Features of one perspective:
- ``HalfKP(Friend)``: ``own_king_square * fe_end + bonapiece`` for every piece except the
  kings, the king square seen from that perspective; 125,388 features.
- ``K+P``: the bonapiece of every piece, kings included (YaneuraOu's FeatureSet<K, P> puts P
  first, K after it at offset fe_end); 1,710 features.
"""

from __future__ import annotations

import numpy as np

# This project's piece codes (core/types.py is the source of truth; repeated here so that
# this module needs no numba; tests/test_nnue.py checks that they agree).
PAWN, LANCE, KNIGHT, SILVER, BISHOP, ROOK, GOLD, KING = 1, 2, 3, 4, 5, 6, 7, 8
PRO_PAWN, PRO_LANCE, PRO_KNIGHT, PRO_SILVER, HORSE, DRAGON = 9, 10, 11, 12, 13, 14
WHITE_BIT = 16
PIECE_NB = 32
NSQ = 81
BLACK, WHITE = 0, 1

# --- BonaPiece ------------------------------------------------------------------------
# first index of each side's hand pieces, and how many slots it has (the most one can hold + 1)
F_HAND_PAWN, E_HAND_PAWN = 1, 20
F_HAND_LANCE, E_HAND_LANCE = 39, 44
F_HAND_KNIGHT, E_HAND_KNIGHT = 49, 54
F_HAND_SILVER, E_HAND_SILVER = 59, 64
F_HAND_GOLD, E_HAND_GOLD = 69, 74
F_HAND_BISHOP, E_HAND_BISHOP = 79, 82
F_HAND_ROOK, E_HAND_ROOK = 85, 88
FE_HAND_END = 90
# board pieces: f_X = FE_HAND_END + 162 * kind, e_X = f_X + 81, kinds in Bonanza's order
BOARD_KINDS = ("pawn", "lance", "knight", "silver", "gold", "bishop", "horse", "rook", "dragon")
F_PAWN = FE_HAND_END
FE_END = FE_HAND_END + 2 * NSQ * len(BOARD_KINDS)  # 1548
F_KING = FE_END
E_KING = F_KING + NSQ
FE_END2 = E_KING + NSQ  # 1710

HALFKP_DIMENSIONS = NSQ * FE_END  # 125388
KP_DIMENSIONS = FE_END2  # 1710
FEATURE_SETS = {"HalfKP(Friend)": HALFKP_DIMENSIONS, "K+P": KP_DIMENSIONS}

_HAND_BASE = {
    PAWN: (F_HAND_PAWN, E_HAND_PAWN),
    LANCE: (F_HAND_LANCE, E_HAND_LANCE),
    KNIGHT: (F_HAND_KNIGHT, E_HAND_KNIGHT),
    SILVER: (F_HAND_SILVER, E_HAND_SILVER),
    GOLD: (F_HAND_GOLD, E_HAND_GOLD),
    BISHOP: (F_HAND_BISHOP, E_HAND_BISHOP),
    ROOK: (F_HAND_ROOK, E_HAND_ROOK),
}
_KIND_OF_TYPE = {
    PAWN: 0,
    LANCE: 1,
    KNIGHT: 2,
    SILVER: 3,
    GOLD: 4,
    PRO_PAWN: 4,
    PRO_LANCE: 4,
    PRO_KNIGHT: 4,
    PRO_SILVER: 4,
    BISHOP: 5,
    HORSE: 6,
    ROOK: 7,
    DRAGON: 8,
}


def _board_table() -> np.ndarray:
    table = np.full((2, PIECE_NB, NSQ), -1, np.int32)
    for persp in (BLACK, WHITE):
        for t in range(1, 15):
            for color in (BLACK, WHITE):
                p = t | (WHITE_BIT if color == WHITE else 0)
                own = color == persp
                for sq in range(NSQ):
                    rel = sq if persp == BLACK else NSQ - 1 - sq
                    if t == KING:
                        table[persp, p, sq] = (F_KING if own else E_KING) + rel
                    else:
                        f = F_PAWN + 2 * NSQ * _KIND_OF_TYPE[t]
                        table[persp, p, sq] = (f if own else f + NSQ) + rel
    return table


def _hand_table() -> np.ndarray:
    table = np.full((2, 2, 8), -1, np.int32)
    for persp in (BLACK, WHITE):
        for color in (BLACK, WHITE):
            for pt, (f, e) in _HAND_BASE.items():
                table[persp, color, pt] = f if color == persp else e
    return table


# BOARD_BONA[perspective, coloured piece, square]: bonapiece of that piece on that square
# (-1 for codes that are no piece).  Kings map to f_king / e_king + square.
BOARD_BONA = _board_table()
# HAND_BONA[perspective, colour of the holder, base type]: bonapiece of the first piece of
# that kind in that hand; the (k+1)-th is HAND_BONA + k.
HAND_BONA = _hand_table()


def king_square(board: np.ndarray, color: int) -> int:
    """Square of `color`'s king, -1 if it has none."""
    hits = np.flatnonzero(np.asarray(board) == (KING | (WHITE_BIT if color == WHITE else 0)))
    return int(hits[0]) if len(hits) else -1


def bonapieces(board: np.ndarray, hands: np.ndarray, perspective: int, kings: bool = False) -> list[int]:
    """The BonaPieces of a position from one perspective: every piece on the board (kings only
    with `kings=True`), then every piece in hand.  `board`: int8[81] of our coloured piece
    codes; `hands`: int8[2, 8] counts by colour and base type."""
    out = []
    for sq in range(NSQ):
        p = int(board[sq])
        if p == 0 or ((p & ~WHITE_BIT) == KING and not kings):  # a king of either colour
            continue
        out.append(int(BOARD_BONA[perspective, p, sq]))
    for color in (BLACK, WHITE):
        for pt in _HAND_BASE:
            base = int(HAND_BONA[perspective, color, pt])
            out.extend(base + k for k in range(int(hands[color, pt])))
    return out


def active_features(feature_set: str, board: np.ndarray, hands: np.ndarray, perspective: int) -> list[int]:
    """Sorted indices of the active features of `perspective` (BLACK or WHITE).

    `feature_set` is "HalfKP(Friend)" or "K+P" (see FEATURE_SETS).  HalfKP needs the
    perspective's king on the board (ValueError otherwise)."""
    if feature_set == "K+P":
        return sorted(bonapieces(board, hands, perspective, kings=True))
    if feature_set != "HalfKP(Friend)":
        raise ValueError(f"unknown feature set {feature_set!r}; known: {', '.join(FEATURE_SETS)}")
    ksq = king_square(board, perspective)
    if ksq < 0:
        raise ValueError(f"HalfKP needs the {'black' if perspective == BLACK else 'white'} king on the board")
    rel = ksq if perspective == BLACK else NSQ - 1 - ksq
    return sorted(rel * FE_END + bp for bp in bonapieces(board, hands, perspective))
