"""Perft: count the leaves of the legal move tree, the standard proof of a move generator.

The last ply is counted without being played (bulk counting), as cshogi and most engines
count; every non-promotion that is legal counts, as in the published figures.
"""

from numba import int64, int32

from .types import jit, MAX_MOVES
from .board import POS_T, POS_REF, do_move_ref, undo_move_ref
from .intrinsics import by_ref
from .movegen import generate_ref, GEN_ALL


@jit(int64(POS_T, int32[::1], int64))
def perft(pos, buf, depth):
    """Leaf count at `depth`; `buf` holds MAX_MOVES moves per remaining ply."""
    return perft_ref(by_ref(pos), buf, depth)


@jit(int64(POS_REF, int32[::1], int64))
def perft_ref(pos_ref, buf, depth):
    """perft of a position passed by reference (intrinsics.by_ref), as the search holds it:
    each recursive call hands on one address instead of the position's arrays."""
    moves = buf[:MAX_MOVES]
    n = generate_ref(pos_ref, moves, GEN_ALL, True)
    if depth <= 1:
        return n if depth == 1 else 1
    rest = buf[MAX_MOVES:]
    total = 0
    for i in range(n):
        do_move_ref(pos_ref, moves[i])
        total += perft_ref(pos_ref, rest, depth - 1)
        undo_move_ref(pos_ref)
    return total
