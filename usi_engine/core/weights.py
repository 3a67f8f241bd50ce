"""Every evaluation weight in one place (centipawn-like units; a pawn is about 90).

Piece values follow the usual shogi proportions; a piece in hand is worth more than the same
piece on the board because it can be dropped anywhere.
"""

import numpy as np

from .types import PIECE_NB, WHITE_BIT

#                 -   P    L    N    S    B    R    G    K       +P   +L   +N   +S   +B    +R
_BOARD_VALUE = [0, 90, 315, 405, 495, 855, 990, 540, 0, 540, 540, 540, 540, 945, 1395]
_HAND_VALUE = [0, 110, 350, 450, 550, 960, 1100, 600]

# Signed material of a coloured piece on the board: positive for black, negative for white.
PIECE_VALUE = np.zeros(PIECE_NB, dtype=np.int64)
for _t, _v in enumerate(_BOARD_VALUE):
    PIECE_VALUE[_t] = _v
    PIECE_VALUE[_t | WHITE_BIT] = -_v
# Unsigned value of one piece of a base type held in hand.
HAND_VALUE = np.array(_HAND_VALUE, dtype=np.int64)
# Unsigned board value by type, for capture ordering (MVV-LVA, SEE).
TYPE_VALUE = np.array(_BOARD_VALUE + [0], dtype=np.int64)
TYPE_VALUE[8] = 20000  # the king: never traded

# --- piece-square terms, by base type and relative rank (0 = the rank farthest from us) ---
#                      rank: 0    1    2    3    4    5    6    7    8
_RANK_BONUS = {
    1: [0, 30, 24, 18, 10, 4, 0, 0, 0],  # pawn: advanced pawns press
    2: [0, 10, 8, 5, 2, 0, 0, 0, 0],  # lance
    3: [0, 0, 12, 10, 6, 2, 0, -4, -8],  # knight: stranded knights are weak
    4: [10, 14, 14, 10, 6, 4, 2, 0, -4],  # silver
    7: [4, 6, 8, 6, 4, 4, 6, 8, 4],  # gold
    8: [-120, -110, -90, -70, -45, -25, -5, 10, 20],  # king: stay home until the ending
    9: [10, 14, 16, 12, 8, 6, 4, 2, 0],  # promoted pawn (tokin)
}
PIECE_SQUARE = np.zeros((PIECE_NB, 81), dtype=np.int64)
for _t in range(1, 15):
    _base = _t if _t <= 9 else (9 if _t <= 12 else 0)
    _row = _RANK_BONUS.get(_base, [0] * 9)
    for _sq in range(81):
        _r = _sq % 9
        PIECE_SQUARE[_t, _sq] = _row[_r]  # black: rank a is relative 0
        PIECE_SQUARE[_t | WHITE_BIT, _sq] = -_row[8 - _r]  # white, negated (black's view)

# --- king safety ---
# A friendly piece within two squares of its king defends it; an enemy piece within two
# squares attacks it.  Indexed by piece type (promoted types included).
#                         -  P   L   N   S   B   R   G   K  +P  +L  +N  +S  +B  +R
KING_DEFENDER = np.array([0, 4, 2, 6, 22, 6, 6, 26, 0, 18, 18, 18, 20, 30, 20], dtype=np.int64)
KING_ATTACKER = np.array([0, 20, 28, 44, 60, 48, 60, 68, 0, 64, 64, 64, 64, 96, 120], dtype=np.int64)
HAND_ATTACK = np.array([0, 4, 10, 14, 18, 20, 26, 20], dtype=np.int64)  # enemy hand vs our king zone
KING_OPEN_SQUARE = 8  # per empty square next to the king: room for the attacker's drops
TEMPO = 20  # the side to move's initiative
KING_WEAK_DEFENCE = 40  # below this much shelter, king danger counts double
