"""Transposition table: buckets of four entries, each keeping the best move of the latest
search and the previous best move (the second-best), as the kyokumen-hyou tutorial does.

An entry is two uint64 words, [w0 ^ _spread(w1), w1], with
  w1 = move1 | move2 << 20 | (value + 2^15) << 40 | bound << 56 | was_pv << 58
  w0 = generation | depth << 8 | (eval + 2^15) << 16 | _key_check(key) << 32
so that a bucket is 64 bytes, one cache line (the table starts on a line's boundary).
The bucket comes from the key's low bits and the entry is recognised by its upper 32 and
its side to move (see _key_check); a written entry never has w1 == 0 (a value of 0 is
stored as 2^15), which marks an empty one.
Storing w0 mixed with every bit of w1 means a torn write from another search thread fails
the key check instead of lying. was_pv marks a position searched as a PV node (or found by one in the
table), Stockfish's "ttPv": the search reduces its late moves less (TtPvReduce).
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
ENTRY_WORDS = 2
ENTRY_BYTES = 8 * ENTRY_WORDS
CACHE_LINE = 64

EVAL_NONE = -32768  # the stored static eval when there is none (in check, mate found)
VALUE_MATE = 32000
VALUE_MATE_IN_MAX = VALUE_MATE - 256  # beyond this a score is a mate score

U20 = np.uint64(0xFFFFF)
U16 = np.uint64(0xFFFF)
U8 = np.uint64(0xFF)
U2 = np.uint64(3)
PV_BIT = np.uint64(1) << np.uint64(58)
KEY_SHIFT = np.uint64(32)


def table_for_entries(entries: int) -> np.ndarray:
    """An empty table of `entries` entries (a multiple of BUCKET) whose first bucket starts
    on a cache line, so that no bucket straddles two."""
    words = entries * ENTRY_WORDS
    spare = CACHE_LINE // 8
    raw = np.zeros(words + spare, dtype=np.uint64)
    skip = (-raw.ctypes.data % CACHE_LINE) // 8
    return raw[skip : skip + words].reshape(entries, ENTRY_WORDS)


def new_table(megabytes: int) -> np.ndarray:
    """A table of the largest power-of-two entry count that fits in `megabytes` (>= 1 bucket)."""
    entries = max(BUCKET, (megabytes * 1024 * 1024) // ENTRY_BYTES)
    return table_for_entries(1 << (entries.bit_length() - 1))


@jit(inline="always")
def _bucket(tt, key):
    return np.int64((key >> np.uint64(1)) & np.uint64(tt.shape[0] // BUCKET - 1)) * BUCKET


@jit(inline="always")
def _key_check(key):
    """What an entry keeps of its key: the upper 32 bits, the lowest flipped by the key's
    bit 0, the side to move (board.ZOBRIST_SIDE), which the bucket's index leaves out so
    that a position and its null move share a bucket but never an entry."""
    return (key >> KEY_SHIFT) ^ (key & np.uint64(1))


@jit(inline="always")
def _spread(w1):
    """w1 with its low half also folded into its high half, where w0 keeps the key check:
    a w1 that differs anywhere changes the check."""
    return w1 ^ (w1 << KEY_SHIFT)


@jit(inline="always")
def prefetch(tt, key):
    """Start loading `key`'s bucket (one cache line) while other work goes on."""
    prefetch_row(tt, _bucket(tt, key))


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
    check = _key_check(key)
    for i in range(b, b + BUCKET):
        w1 = tt[i, 1]
        w0 = tt[i, 0] ^ _spread(w1)
        if w0 >> KEY_SHIFT == check and w1 != 0:
            move1 = np.int32(w1 & U20)
            move2 = np.int32((w1 >> np.uint64(20)) & U20)
            value = np.int64((w1 >> np.uint64(40)) & U16) - 32768
            bound = np.int64((w1 >> np.uint64(56)) & U2)
            was_pv = (w1 & PV_BIT) != 0
            depth = np.int64((w0 >> np.uint64(8)) & U8)
            ev = np.int64((w0 >> np.uint64(16)) & U16) - 32768
            return True, move1, move2, value, ev, depth, bound, was_pv
    return False, np.int32(0), np.int32(0), np.int64(0), np.int64(0), np.int64(0), np.int64(0), False


@jit()
def store(tt, key, move, value, ev, depth, bound, generation, was_pv):
    """Save a search result.  A new best move pushes the old one to the second slot; an
    entry of the same key keeps its moves when the search found no move.  `was_pv`: the
    node is or was on the PV (see the module's docstring).  The slot: the key's own entry,
    else an empty one, else the one of least depth less 8 plies of age per generation."""
    b = _bucket(tt, key)
    check = _key_check(key)
    slot = -1
    worst = 1 << 30
    same = False
    for i in range(b, b + BUCKET):
        w1 = tt[i, 1]
        if w1 == 0:
            slot = i
            break
        w0 = tt[i, 0] ^ _spread(w1)
        if w0 >> KEY_SHIFT == check:
            slot = i
            same = True
            break
        age = (generation - np.int64(w0 & U8)) & 255
        merit = np.int64((w0 >> np.uint64(8)) & U8) - 8 * age
        if merit < worst:
            worst = merit
            slot = i
    move1 = np.uint64(0)
    move2 = np.uint64(0)
    if same:
        old1 = tt[slot, 1]
        old0 = tt[slot, 0] ^ _spread(old1)
        move1 = old1 & U20
        move2 = (old1 >> np.uint64(20)) & U20
        old_depth = np.int64((old0 >> np.uint64(8)) & U8)
        old_gen = np.int64(old0 & U8)
        if bound != BOUND_EXACT and depth < old_depth - 4 and old_gen == generation:
            # keep the deeper result; only remember a new move
            if move != 0 and np.uint64(move) != move1:
                move2 = move1
                move1 = np.uint64(move)
                w1 = move1 | (move2 << np.uint64(20)) | (old1 & ~np.uint64(0xFFFFFFFFFF))
                if was_pv:
                    w1 |= PV_BIT
                tt[slot, 1] = w1
                tt[slot, 0] = old0 ^ _spread(w1)
            return
    if move != 0 and np.uint64(move) != move1:
        move2 = move1
        move1 = np.uint64(move)
    if depth < 0:
        depth = 0
    w1 = (
        move1
        | (move2 << np.uint64(20))
        | (np.uint64((value + 32768) & 0xFFFF) << np.uint64(40))
        | (np.uint64(bound) << np.uint64(56))
    )
    if was_pv:
        w1 |= PV_BIT
    w0 = (
        np.uint64(generation & 255)
        | (np.uint64(depth & 255) << np.uint64(8))
        | (np.uint64((ev + 32768) & 0xFFFF) << np.uint64(16))
        | (check << KEY_SHIFT)
    )
    tt[slot, 1] = w1
    tt[slot, 0] = w0 ^ _spread(w1)


@jit()
def hashfull(tt, generation):
    """Per mille of the first 1000 entries written in this generation."""
    n = min(1000, tt.shape[0])
    used = 0
    for i in range(n):
        w1 = tt[i, 1]
        if w1 != 0 and np.int64((tt[i, 0] ^ _spread(w1)) & U8) == (generation & 255):
            used += 1
    return used * 1000 // n
