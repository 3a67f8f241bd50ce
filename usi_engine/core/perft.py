"""Perft: count the leaves of the legal move tree, the standard proof of a move generator.

The last ply is counted without being played (bulk counting), as cshogi and most engines
count; every non-promotion that is legal counts, as in the published figures.
"""

import numba
from numba import int64, int32

from .types import jit, MAX_MOVES
from .board import new_position, do_move, undo_move
from .movegen import generate, GEN_ALL

POS_TYPE = numba.typeof(new_position())


@jit(int64(POS_TYPE, int32[::1], int64))
def perft(pos, buf, depth):
    """Leaf count at `depth`; `buf` holds MAX_MOVES moves per remaining ply."""
    moves = buf[:MAX_MOVES]
    n = generate(pos, moves, GEN_ALL, True)
    if depth <= 1:
        return n if depth == 1 else 1
    rest = buf[MAX_MOVES:]
    total = 0
    for i in range(n):
        do_move(pos, moves[i])
        total += perft(pos, rest, depth - 1)
        undo_move(pos)
    return total
