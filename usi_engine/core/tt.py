"""Transposition table: buckets of four entries, each keeping the best move of the latest
search and the previous best move (the second-best), as the kyokumen-hyou tutorial does.

An entry is three uint64 words: [key ^ d0 ^ d1, d0, d1] with
  d0 = move1 | move2 << 20 | depth << 40 | bound << 48 | generation << 50 | was_pv << 58
  d1 = (value + 2^15) | (eval + 2^15) << 16
was_pv marks a position searched as a PV node (or found by one in the table), Stockfish's
"ttPv": the search reduces its late moves less (TtPvReduce).
so a torn write from another search thread fails the key check instead of lying.
Depth is in half plies.  Mate scores are stored relative to the node (see value_to_tt).
"""

import numpy as np

from .types import jit
from .intrinsics import prefetch_row

BOUND_NONE = 0
BOUND_UPPER = 1
BOUND_LOWER = 2
BOUND_EXACT = 3
BUCKET = 4
ENTRY_BYTES = 24

EVAL_NONE = -32768  # the stored static eval when there is none (in check, mate found)
VALUE_MATE = 32000
VALUE_MATE_IN_MAX = VALUE_MATE - 256  # beyond this a score is a mate score

U20 = np.uint64(0xFFFFF)
U16 = np.uint64(0xFFFF)
U8 = np.uint64(0xFF)
U2 = np.uint64(3)
PV_BIT = np.uint64(1) << np.uint64(58)


def new_table(megabytes: int) -> np.ndarray:
    """A table of the largest power-of-two entry count that fits in `megabytes` (>= 1 bucket)."""
    entries = max(BUCKET, (megabytes * 1024 * 1024) // ENTRY_BYTES)
    entries = 1 << (entries.bit_length() - 1)
    return np.zeros((entries, 3), dtype=np.uint64)


def table_for_entries(entries: int) -> np.ndarray:
    return np.zeros((entries, 3), dtype=np.uint64)


@jit(inline="always")
def _bucket(tt, key):
    return np.int64((key >> np.uint64(1)) & np.uint64(tt.shape[0] // BUCKET - 1)) * BUCKET


@jit(inline="always")
def prefetch(tt, key):
    """Start loading `key`'s bucket (96 bytes: two cache lines) while other work goes on."""
    b = _bucket(tt, key)
    prefetch_row(tt, b)
    prefetch_row(tt, b + BUCKET - 1)


@jit()
def value_to_tt(v, ply):
    """Mate scores become distances from this node, so they fit any path to it."""
    if v >= VALUE_MATE_IN_MAX:
        return v + ply
    if v <= -VALUE_MATE_IN_MAX:
        return v - ply
    return v


@jit()
def value_from_tt(v, ply):
    if v >= VALUE_MATE_IN_MAX:
        return v - ply
    if v <= -VALUE_MATE_IN_MAX:
        return v + ply
    return v


@jit()
def probe(tt, key):
    """(hit, move1, move2, value, eval, depth, bound, was_pv) for `key`."""
    b = _bucket(tt, key)
    for i in range(b, b + BUCKET):
        d0 = tt[i, 1]
        d1 = tt[i, 2]
        if tt[i, 0] ^ d0 ^ d1 == key and d0 != 0:
            move1 = np.int32(d0 & U20)
            move2 = np.int32((d0 >> np.uint64(20)) & U20)
            depth = np.int64((d0 >> np.uint64(40)) & U8)
            bound = np.int64((d0 >> np.uint64(48)) & U2)
            value = np.int64(d1 & U16) - 32768
            ev = np.int64((d1 >> np.uint64(16)) & U16) - 32768
            was_pv = (d0 & PV_BIT) != 0
            return True, move1, move2, value, ev, depth, bound, was_pv
    return False, np.int32(0), np.int32(0), np.int64(0), np.int64(0), np.int64(0), np.int64(0), False


@jit()
def store(tt, key, move, value, ev, depth, bound, generation, was_pv):
    """Save a search result.  A new best move pushes the old one to the second slot; an
    entry of the same key keeps its moves when the search found no move.  `was_pv`: the
    node is or was on the PV (see the module's docstring)."""
    b = _bucket(tt, key)
    slot = -1
    worst = 1 << 30
    for i in range(b, b + BUCKET):
        d0 = tt[i, 1]
        if d0 == 0 or tt[i, 0] ^ d0 ^ tt[i, 2] == key:
            slot = i
            break
        age = (generation - np.int64((d0 >> np.uint64(50)) & U8)) & 255
        merit = np.int64((d0 >> np.uint64(40)) & U8) - 8 * age
        if merit < worst:
            worst = merit
            slot = i
    old0 = tt[slot, 1]
    move1 = np.uint64(0)
    move2 = np.uint64(0)
    same = old0 != 0 and tt[slot, 0] ^ old0 ^ tt[slot, 2] == key
    if same:
        move1 = old0 & U20
        move2 = (old0 >> np.uint64(20)) & U20
        old_depth = np.int64((old0 >> np.uint64(40)) & U8)
        old_gen = np.int64((old0 >> np.uint64(50)) & U8)
        if bound != BOUND_EXACT and depth < old_depth - 4 and old_gen == generation:
            # keep the deeper result; only remember a new move
            if move != 0 and np.uint64(move) != move1:
                move2 = move1
                move1 = np.uint64(move)
                d0 = move1 | (move2 << np.uint64(20)) | (old0 & ~np.uint64(0xFFFFFFFFFF))
                if was_pv:
                    d0 |= PV_BIT
                tt[slot, 1] = d0
                tt[slot, 0] = key ^ d0 ^ tt[slot, 2]
            return
    if move != 0 and np.uint64(move) != move1:
        move2 = move1
        move1 = np.uint64(move)
    if depth < 0:
        depth = 0
    d0 = (
        move1
        | (move2 << np.uint64(20))
        | (np.uint64(depth & 255) << np.uint64(40))
        | (np.uint64(bound) << np.uint64(48))
        | (np.uint64(generation & 255) << np.uint64(50))
    )
    if was_pv:
        d0 |= PV_BIT
    d1 = np.uint64((value + 32768) & 0xFFFF) | (np.uint64((ev + 32768) & 0xFFFF) << np.uint64(16))
    tt[slot, 1] = d0
    tt[slot, 2] = d1
    tt[slot, 0] = key ^ d0 ^ d1


@jit()
def hashfull(tt, generation):
    """Per mille of the first 1000 entries written in this generation."""
    n = min(1000, tt.shape[0])
    used = 0
    for i in range(n):
        d0 = tt[i, 1]
        if d0 != 0 and np.int64((d0 >> np.uint64(50)) & U8) == (generation & 255):
            used += 1
    return used * 1000 // n
