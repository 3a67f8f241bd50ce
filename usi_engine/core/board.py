"""Position state on plain numpy arrays, do/undo with incremental Zobrist keys, and the
key history that the search scans for sennichite.

A position is a `PosArrays` namedtuple (numba compiles namedtuples of arrays and caches
them; jitclass would defeat the on-disk cache).  Plies index the history: the root SFEN is
ply 0, every do_move adds one, game moves and search moves alike.
"""

from collections import namedtuple

import numba
import numpy as np

from .types import (
    jit,
    NSQ,
    BLACK,
    WHITE,
    KING,
    HAND_NB,
    PIECE_NB,
    MAX_HISTORY,
    DROP_BASE,
    base_type,
    move_to,
    move_from,
    moved_piece,
    moved_piece_after,
    color_of,
    type_of,
    square_bits,
)
from .attacks import is_attacked, checks_after
from .intrinsics import by_ref, deref
from .weights import PIECE_VALUE, HAND_VALUE, PIECE_SQUARE
from .network import NetArrays, no_network, accumulator_stack, scratch, king_cache

# st[] fields
ST_SIDE = 0  # side to move
ST_PLY = 1  # current ply (index into the histories)
ST_KING = 2  # st[ST_KING + color]: king square, -1 if that side has no king
ST_MATERIAL = 4  # board + hand material, black's point of view
ST_MOVENUM = 5  # SFEN move number of ply 0
ST_PSQ = 6  # sum of piece-square terms, black's point of view
# st[ST_OCCUPIED + 2*color + word]: that colour's occupied squares as bits (types.OCC_SPLIT);
# the move generators walk a side's pieces and the empty squares in square order through
# them instead of reading all 81 squares
ST_OCCUPIED = 8
ST_NB = 12

PosArrays = namedtuple(
    "PosArrays",
    [
        "board",  # int8[81]: coloured piece per square
        "hands",  # int8[2, 8]: pieces in hand per colour and base type
        "st",  # int64[ST_NB]: scalar state, see ST_*
        "keys",  # uint64[MAX_HISTORY]: full key (board + hands + side) per ply
        "board_keys",  # uint64[MAX_HISTORY]: key of board + side only (for superior/inferior hands)
        "hand_packs",  # int64[MAX_HISTORY, 2]: hands packed per colour (see pack_hand)
        "checks",  # int8[MAX_HISTORY]: 1 if the side to move at that ply is in check
        "moves",  # int32[MAX_HISTORY]: the move played from each ply
        "captures",  # int8[MAX_HISTORY]: the piece captured by that move
        "evals",  # int64[MAX_HISTORY]: static eval cache per ply (search use)
        "net",  # NetArrays: the network evaluate() uses (network.py), shared by threads
        "acc",  # int16[MAX_HISTORY, 2, H]: NNUE accumulator per ply and perspective
        "acc_ok",  # int8[MAX_HISTORY, 2]: 1 where acc holds that ply's position (core/nnue.py)
        "nn_buf",  # uint8[...]: scratch of the network's forward pass
        "king_cache",  # int16[2, 81, H + KC_EXTRA]: HalfKP refreshes by king square (core/nnue.py)
    ],
)

_rng = np.random.default_rng(20261122)
ZOBRIST_PIECE = _rng.integers(1, 2**63, size=(PIECE_NB, NSQ), dtype=np.uint64) << np.uint64(1)
ZOBRIST_HAND = _rng.integers(1, 2**63, size=(2, HAND_NB, 20), dtype=np.uint64) << np.uint64(1)
ZOBRIST_SIDE = np.uint64(1)  # low bit is the side to move: keys of the two sides never meet
HAND_SHIFT = np.array([0, 0, 5, 8, 11, 14, 16, 18], dtype=np.int64)  # bit offsets in a packed hand


def new_position(net: NetArrays | None = None) -> PosArrays:
    """Empty arrays for one position (one per search thread), evaluated by `net`
    (core/network.py; None: the hand-made evaluation)."""
    if net is None:
        net = no_network()
    return PosArrays(
        np.zeros(NSQ, np.int8),
        np.zeros((2, HAND_NB), np.int8),
        np.zeros(ST_NB, np.int64),
        np.zeros(MAX_HISTORY, np.uint64),
        np.zeros(MAX_HISTORY, np.uint64),
        np.zeros((MAX_HISTORY, 2), np.int64),
        np.zeros(MAX_HISTORY, np.int8),
        np.zeros(MAX_HISTORY, np.int32),
        np.zeros(MAX_HISTORY, np.int8),
        np.zeros(MAX_HISTORY, np.int64),
        net,
        accumulator_stack(net),
        np.zeros((MAX_HISTORY, 2), np.int8),
        scratch(net),
        king_cache(net),
    )


# the position's numba type, as the declared signatures name it, and the reference to one
# that the search and the mate probe hand on (intrinsics.by_ref)
POS_T = numba.typeof(new_position())
POS_REF = numba.types.CPointer(POS_T)


@jit()
def pack_hand(hands, color):
    """All of one side's hand in one integer; each count in its own bit field."""
    v = 0
    for pt in range(1, 8):
        v |= np.int64(hands[color, pt]) << HAND_SHIFT[pt]
    return v


@jit(inline="always")
def hand_count(pack, pt):
    """How many pieces of base type `pt` a packed hand holds."""
    width = 5 if pt == 1 else (2 if pt >= 5 and pt <= 6 else 3)
    return (pack >> HAND_SHIFT[pt]) & ((1 << width) - 1)


@jit()
def hand_covers(a, b):
    """True if packed hand `a` holds at least as many of every piece as packed hand `b`."""
    for pt in range(1, 8):
        width = 5 if pt == 1 else (2 if pt >= 5 and pt <= 6 else 3)
        mask = (1 << width) - 1
        if ((a >> HAND_SHIFT[pt]) & mask) < ((b >> HAND_SHIFT[pt]) & mask):
            return False
    return True


@jit()
def flip_occupied(st, color, sq):
    """Put a piece of `color` on square `sq` of the bit sets, or take it off."""
    b0, b1 = square_bits(sq)
    st[ST_OCCUPIED + 2 * color] ^= b0
    st[ST_OCCUPIED + 2 * color + 1] ^= b1


@jit()
def refresh(pos):
    """Recompute everything derived (kings, keys, material, check) after the board, hands,
    side and move number were written directly.  Resets the history to ply 0."""
    board, hands, st = pos.board, pos.hands, pos.st
    st[ST_PLY] = 0
    st[ST_KING] = -1
    st[ST_KING + 1] = -1
    for i in range(4):
        st[ST_OCCUPIED + i] = 0
    bkey = np.uint64(0)
    material = 0
    psq = 0
    for sq in range(NSQ):
        p = board[sq]
        if p != 0:
            flip_occupied(st, color_of(p), sq)
            bkey ^= ZOBRIST_PIECE[p, sq]
            material += PIECE_VALUE[p]
            psq += PIECE_SQUARE[p, sq]
            if type_of(p) == KING:
                st[ST_KING + color_of(p)] = sq
    key = np.uint64(0)
    for c in range(2):
        for pt in range(1, 8):
            for n in range(1, hands[c, pt] + 1):
                key ^= ZOBRIST_HAND[c, pt, n]
            material += (HAND_VALUE[pt] if c == BLACK else -HAND_VALUE[pt]) * hands[c, pt]
    if st[ST_SIDE] == WHITE:
        bkey ^= ZOBRIST_SIDE
    st[ST_MATERIAL] = material
    st[ST_PSQ] = psq
    pos.board_keys[0] = bkey
    pos.keys[0] = bkey ^ key
    pos.hand_packs[0, 0] = pack_hand(hands, 0)
    pos.hand_packs[0, 1] = pack_hand(hands, 1)
    pos.checks[0] = in_check_now(pos)
    pos.acc_ok[0, 0] = 0
    pos.acc_ok[0, 1] = 0


@jit()
def in_check_now(pos):
    """1 if the side to move is in check (computed from the board)."""
    us = pos.st[ST_SIDE]
    ksq = pos.st[ST_KING + us]
    if ksq >= 0 and is_attacked(pos.board, ksq, 1 - us):
        return 1
    return 0


@jit()
def do_move(pos, m):
    """Play move `m` (legal) and push the new ply on the histories."""
    do_move_ref(by_ref(pos), m)


@jit()
def do_move_ref(pos_ref, m):
    """do_move of a position passed by reference, as the search holds it (intrinsics.by_ref):
    the call hands on one address instead of the position's arrays, about 140 words. The
    one compiled body of both forms."""
    pos = deref(pos_ref)
    board, hands, st = pos.board, pos.hands, pos.st
    us = st[ST_SIDE]
    ply = st[ST_PLY]
    bkey = pos.board_keys[ply]
    hkey = pos.keys[ply] ^ bkey
    to = move_to(m)
    frm = move_from(m)
    piece = moved_piece(m)
    captured = 0
    if frm >= DROP_BASE:
        pt = frm - DROP_BASE
        hkey ^= ZOBRIST_HAND[us, pt, hands[us, pt]]
        hands[us, pt] -= 1
        board[to] = piece
        flip_occupied(st, us, to)
        bkey ^= ZOBRIST_PIECE[piece, to]
        st[ST_MATERIAL] += PIECE_VALUE[piece] - (HAND_VALUE[pt] if us == BLACK else -HAND_VALUE[pt])
        st[ST_PSQ] += PIECE_SQUARE[piece, to]
    else:
        captured = board[to]
        if captured != 0:
            bt = base_type(type_of(captured))
            hands[us, bt] += 1
            flip_occupied(st, 1 - us, to)
            hkey ^= ZOBRIST_HAND[us, bt, hands[us, bt]]
            bkey ^= ZOBRIST_PIECE[captured, to]
            st[ST_MATERIAL] += -PIECE_VALUE[captured] + (HAND_VALUE[bt] if us == BLACK else -HAND_VALUE[bt])
            st[ST_PSQ] -= PIECE_SQUARE[captured, to]
        after = moved_piece_after(m)
        board[frm] = 0
        board[to] = after
        flip_occupied(st, us, frm)
        flip_occupied(st, us, to)
        bkey ^= ZOBRIST_PIECE[piece, frm] ^ ZOBRIST_PIECE[after, to]
        st[ST_MATERIAL] += PIECE_VALUE[after] - PIECE_VALUE[piece]
        st[ST_PSQ] += PIECE_SQUARE[after, to] - PIECE_SQUARE[piece, frm]
        if type_of(piece) == KING:
            st[ST_KING + us] = to
    pos.moves[ply] = m
    pos.captures[ply] = captured
    bkey ^= ZOBRIST_SIDE
    ply += 1
    st[ST_PLY] = ply
    st[ST_SIDE] = 1 - us
    pos.board_keys[ply] = bkey
    pos.keys[ply] = bkey ^ hkey
    pos.hand_packs[ply, 0] = pack_hand(hands, 0)
    pos.hand_packs[ply, 1] = pack_hand(hands, 1)
    pos.checks[ply] = 1 if checks_after(board, frm, to, st[ST_KING + 1 - us], us) else 0
    pos.acc_ok[ply, 0] = 0  # the accumulators follow lazily (core/nnue.py)
    pos.acc_ok[ply, 1] = 0


@jit()
def undo_move(pos):
    """Take back the last move."""
    undo_move_ref(by_ref(pos))


@jit()
def undo_move_ref(pos_ref):
    """undo_move of a position passed by reference, as do_move_ref: one address instead of
    the position's arrays. The one compiled body of both forms."""
    pos = deref(pos_ref)
    board, hands, st = pos.board, pos.hands, pos.st
    ply = st[ST_PLY] - 1
    us = 1 - st[ST_SIDE]
    m = pos.moves[ply]
    to = move_to(m)
    frm = move_from(m)
    piece = moved_piece(m)
    if frm >= DROP_BASE:
        pt = frm - DROP_BASE
        hands[us, pt] += 1
        board[to] = 0
        flip_occupied(st, us, to)
        st[ST_MATERIAL] -= PIECE_VALUE[piece] - (HAND_VALUE[pt] if us == BLACK else -HAND_VALUE[pt])
        st[ST_PSQ] -= PIECE_SQUARE[piece, to]
    else:
        after = board[to]
        captured = pos.captures[ply]
        board[frm] = piece
        board[to] = captured
        flip_occupied(st, us, frm)
        flip_occupied(st, us, to)
        st[ST_MATERIAL] -= PIECE_VALUE[after] - PIECE_VALUE[piece]
        st[ST_PSQ] -= PIECE_SQUARE[after, to] - PIECE_SQUARE[piece, frm]
        if captured != 0:
            bt = base_type(type_of(captured))
            hands[us, bt] -= 1
            flip_occupied(st, 1 - us, to)
            st[ST_MATERIAL] -= -PIECE_VALUE[captured] + (HAND_VALUE[bt] if us == BLACK else -HAND_VALUE[bt])
            st[ST_PSQ] += PIECE_SQUARE[captured, to]
        if type_of(piece) == KING:
            st[ST_KING + us] = frm
    st[ST_PLY] = ply
    st[ST_SIDE] = us


@jit()
def do_null_move(pos):
    """Pass: only the side to move changes (never when in check)."""
    st = pos.st
    ply = st[ST_PLY]
    pos.moves[ply] = (1 << 7) | 1
    pos.captures[ply] = 0
    st[ST_PLY] = ply + 1
    st[ST_SIDE] = 1 - st[ST_SIDE]
    pos.board_keys[ply + 1] = pos.board_keys[ply] ^ ZOBRIST_SIDE
    pos.keys[ply + 1] = pos.keys[ply] ^ ZOBRIST_SIDE
    pos.hand_packs[ply + 1, 0] = pos.hand_packs[ply, 0]
    pos.hand_packs[ply + 1, 1] = pos.hand_packs[ply, 1]
    pos.checks[ply + 1] = 0
    pos.acc_ok[ply + 1, 0] = 0
    pos.acc_ok[ply + 1, 1] = 0


@jit()
def undo_null_move(pos):
    st = pos.st
    st[ST_PLY] -= 1
    st[ST_SIDE] = 1 - st[ST_SIDE]


@jit()
def copy_into(dst, src):
    """Copy a whole position (board, hands, state, histories up to the current ply).
    Element loops, not slice assignments: those need numba's runtime and compile an error
    path (shape mismatch messages) that cost seconds at the first start."""
    for sq in range(NSQ):
        dst.board[sq] = src.board[sq]
    for c in range(2):
        for pt in range(HAND_NB):
            dst.hands[c, pt] = src.hands[c, pt]
    for i in range(ST_NB):
        dst.st[i] = src.st[i]
    for i in range(src.st[ST_PLY] + 1):
        dst.keys[i] = src.keys[i]
        dst.board_keys[i] = src.board_keys[i]
        dst.hand_packs[i, 0] = src.hand_packs[i, 0]
        dst.hand_packs[i, 1] = src.hand_packs[i, 1]
        dst.checks[i] = src.checks[i]
        dst.moves[i] = src.moves[i]
        dst.captures[i] = src.captures[i]
        dst.acc_ok[i, 0] = 0  # dst's accumulators belong to whatever it held before
        dst.acc_ok[i, 1] = 0


# Repetition outcomes, from the side to move's point of view
REP_NONE = 0
REP_DRAW = 1  # sennichite
REP_WIN = 2  # the opponent checked on every move of the cycle: they lose
REP_LOSE = 3  # we checked on every move of the cycle: we lose
REP_SUPERIOR = 4  # same board, and we hold at least as much in hand (more of something)
REP_INFERIOR = 5  # same board, and we hold less


@jit()
def _all_checks(checks, first, last):
    for j in range(first, last + 1, 2):
        if checks[j] == 0:
            return False
    return True


@jit()
def repetition_state(pos, max_back, occurrences):
    """Classify the current position against the earlier plies (same side to move).

    `occurrences` earlier sightings of the same key make a repetition: 3 for the game rule
    (the fourth occurrence), 1 inside the search tree.  Perpetual check is judged over the
    cycle from the earliest sighting counted.  With occurrences == 1, a same-board position
    with different hands is reported as superior or inferior.
    """
    st = pos.st
    ply = st[ST_PLY]
    key = pos.keys[ply]
    stop = ply - max_back
    if stop < 0:
        stop = 0
    found = 0
    first = -1
    i = ply - 4
    while i >= stop:
        if pos.keys[i] == key:
            found += 1
            first = i
            if found >= occurrences:
                break
        i -= 2
    if found >= occurrences:
        if _all_checks(pos.checks, first + 2, ply):
            return REP_WIN
        if _all_checks(pos.checks, first + 1, ply - 1):
            return REP_LOSE
        return REP_DRAW
    if occurrences == 1:
        us = st[ST_SIDE]
        bkey = pos.board_keys[ply]
        mine = pos.hand_packs[ply, us]
        i = ply - 4
        while i >= stop:
            if pos.board_keys[i] == bkey:
                then = pos.hand_packs[i, us]
                if hand_covers(mine, then):
                    return REP_SUPERIOR
                if hand_covers(then, mine):
                    return REP_INFERIOR
            i -= 2
    return REP_NONE
