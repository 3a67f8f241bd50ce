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
TYPE_VALUE[8] = 20000            # the king: never traded
