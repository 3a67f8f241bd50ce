"""Exact short mates for the main search, in numba: `mate_in_1`, which the search probes at
interior nodes (Mate1Ply) and quiescence nodes below beta (Mate1PlyQuiescence), and
`mate_in_3` (every reply met by a mate in one), checked by the tests.  Pawn-drop mate is
excluded by the move generator, so a mate that needs it is not found.  The solver behind
`go mate` is df-pn, in dfpn.py.

Scratch buffers: `mate_in_1(pos, buf)` and `mate_in_3(pos, buf)` need an int32 array of at
least MATE_BUF_SIZE (= 3 * MAX_MOVES + 8) entries.
"""

import numpy as np
from numba import int32

from .types import (
    jit,
    MAX_MOVES,
    NSQ,
    OCC_SPLIT,
    square_bits,
    GOLD,
    KING,
    PROMOTED,
    is_drop,
    move_to,
    move_from,
    moved_piece_after,
    color_of,
    make_piece,
    type_of,
)
from .attacks import (
    is_attacked,
    attacker_of,
    piece_attacks,
    attacks_along,
    RAY,
    RAY_LEN,
    LINE_DIR,
    LINE_DIST,
    REACH,
    ATTACKED_FROM,
    BETWEEN,
    reach_squares,
)
from .board import (
    POS_T,
    POS_REF,
    do_move,
    do_move_ref,
    undo_move,
    undo_move_ref,
    ST_SIDE,
    ST_KING,
    ST_OCCUPIED,
)
from .intrinsics import by_ref, deref, lowest_bit
from .movegen import (
    generate,
    generate_checks,
    generate_checks_ref,
    can_capture_or_block_ref,
    hand_mask,
    GEN_ALL,
    ALL_TYPES,
)


MATE1_BUF_SIZE = MAX_MOVES + 8  # scratch size for mate_in_1
MATE_BUF_SIZE = 2 * MAX_MOVES + MATE1_BUF_SIZE  # ... and for mate_in_3

# free[d] in mate_in_1, of the king's neighbour in direction d on the board before the
# check (the king lifted): one of these, or the square of a piece of ours that attacks it
ESCAPE_UNKNOWN = -2  # not looked at yet
ESCAPE_FREE = -1  # none of our pieces attacks it


def _build_coverable():
    """COVERABLE[us, ksq, mask]: the piece types (bit t for type t) of which one piece of
    colour `us` could stand on a square from which it checks a king on ksq and attack each
    of the king's neighbours in `mask` (bit d: the neighbour in direction d), standing on
    none of them.  Every line counts as open and the king as lifted: more than any board
    allows, so a type missing here cannot take all those squares away in one move."""
    table = np.zeros((2, NSQ, 256), dtype=np.int64)
    masks = np.arange(256)
    for us in range(2):
        reach = {}
        for t in range(1, 15):
            if t != KING:
                p = make_piece(t, us)
                reach.update({(p, sq): reach_squares(p, sq) for sq in range(NSQ)})
        for ksq in range(NSQ):
            near = [int(RAY[ksq, d, 0]) if RAY_LEN[ksq, d] else -1 for d in range(8)]
            placements = set()  # (type, neighbours attacked, neighbour stood on)
            for (p, sq), squares in reach.items():
                if ksq in squares:
                    covered = sum(1 << d for d in range(8) if near[d] in squares)
                    standing = sum(1 << d for d in range(8) if near[d] == sq)
                    placements.add((type_of(p), covered, standing))
            for t, covered, standing in placements:
                fits = ((covered & masks) == masks) & ((standing & masks) == 0)
                table[us, ksq] |= np.where(fits, 1 << t, 0)
    return table


COVERABLE = _build_coverable()


@jit(int32(POS_T, int32[::1]))
def mate_in_1(pos, buf):
    """A checking move after which the opponent has no legal move, or 0; the first such
    move in generate_checks' order.  The king's neighbours are looked at before any check
    is generated (_mating_types), and only the checks of the types it leaves are tried.
    `buf`: int32 scratch of at least MATE1_BUF_SIZE entries (MATE_BUF_SIZE is enough)."""
    return mate_in_1_ref(by_ref(pos), buf)


@jit(int32(POS_REF, int32[::1]))
def mate_in_1_ref(pos_ref, buf):
    """mate_in_1 of a position passed by reference (intrinsics.by_ref), as the search holds
    it; it hands the same address on to the look at the king's neighbours, to the checks'
    generator and to do_move, each of which took the position's arrays, about 140 words."""
    pos = deref(pos_ref)
    checks = buf[:MAX_MOVES]
    free = buf[MAX_MOVES : MAX_MOVES + 8]
    us = pos.st[ST_SIDE]
    eksq = pos.st[ST_KING + 1 - us]
    if eksq < 0:
        return 0
    for d in range(8):
        free[d] = ESCAPE_UNKNOWN
    types = _mating_types(pos_ref, eksq, us, free)
    if types == 0:
        return 0
    n = generate_checks_ref(pos_ref, checks, types)
    for i in range(n):
        m = checks[i]
        if (types >> type_of(moved_piece_after(m))) & 1 == 0:
            continue  # a check by a piece that cannot take every free square (or discovered)
        if _king_escapes(pos.board, m, eksq, us, free):
            continue
        do_move_ref(pos_ref, m)  # the king cannot step away: can another piece answer?
        mated = not can_capture_or_block_ref(pos_ref, 1 - us, eksq)
        undo_move_ref(pos_ref)
        if mated:
            return m
    return 0


@jit()
def _mating_types(pos_ref, eksq, us, free):
    """The piece types (bit t for type t, after the move) whose checks could mate: 0 when no
    move of ours can take away every square the king could step to (then there is no mate
    in one, and no check needs to be generated), ALL_TYPES when a discovered check or a line
    that a move opens could.  Fills `free` for every neighbour the king's own pieces leave
    open.  A neighbour none of our pieces attacks (the king lifted) can be taken away only
    by the moved piece, or by a line of ours that the move opens.  With no such line and no
    discovered check, the moved piece must check and reach all of them (COVERABLE, for the
    types we could move or drop), and it cannot stand on one: the king would take it; then
    a piece or drop of such a type must reach a square to do it from (_types_that_cover).
    On the positions of 1,253 self-play games this rules out 53% of the positions not in
    check (the types alone: 26%). The position by reference (intrinsics.by_ref)."""
    pos = deref(pos_ref)
    board = pos.board
    king = board[eksq]
    board[eksq] = 0
    open_mask, opening, on_board, discovers = _look_at_neighbours(pos_ref, eksq, us, free)
    if discovers or opening & open_mask != 0:
        types = ALL_TYPES
    else:
        types = COVERABLE[us, eksq, open_mask] & (on_board | hand_mask(pos.hands, us))
        if types != 0:
            types = _types_that_cover(pos_ref, eksq, us, open_mask, types)
    board[eksq] = king
    return types


@jit()
def _look_at_neighbours(pos_ref, eksq, us, free):
    """Fill free[d] for each neighbour of the king on eksq that none of the king's own pieces
    holds: a square of a piece of ours that attacks it, or ESCAPE_FREE. Return the mask of
    the free ones (bit d), the mask of those onto which a line of ours would open if a
    single piece of ours stepped out of it (a discovered attack), the piece types a move
    of one of our pieces can leave on a square (bit t), and whether a piece of ours stands
    alone between the king and a slider of ours (a discovered check). Each of our pieces is
    asked once which of the squares it reaches with every line open (REACH); what stands
    between (BETWEEN, the king lifted) says whether it attacks one now or one piece of ours
    is in its way. The first attacker in square order is kept. The position by reference."""
    pos = deref(pos_ref)
    board, st = pos.board, pos.st
    near0 = 0
    near1 = 0
    for d in range(8):
        if RAY_LEN[eksq, d] == 0:
            continue
        e = RAY[eksq, d, 0]
        q = board[e]
        if q != 0 and color_of(q) != us:
            continue  # one of the king's own pieces stands there
        free[d] = ESCAPE_FREE
        b0, b1 = square_bits(e)
        near0 |= b0
        near1 |= b1
    mine0 = st[ST_OCCUPIED + 2 * us]
    mine1 = st[ST_OCCUPIED + 2 * us + 1]
    king0, king1 = square_bits(eksq)
    occ0 = (st[ST_OCCUPIED] | st[ST_OCCUPIED + 2]) & ~king0  # every piece but the king
    occ1 = (st[ST_OCCUPIED + 1] | st[ST_OCCUPIED + 3]) & ~king1
    opening = 0
    on_board = 0
    discovers = False
    for half in range(2):
        own = mine0 if half == 0 else mine1
        while own != 0:
            frm = half * OCC_SPLIT + lowest_bit(own)
            own &= own - 1
            t = type_of(board[frm])
            on_board |= 1 << t
            if t < GOLD:
                on_board |= 1 << (t + PROMOTED)
            if (REACH[us, t, frm, 0] & king0 | REACH[us, t, frm, 1] & king1) != 0 and not discovers:
                discovers = _one_of_ours(
                    BETWEEN[frm, eksq, 0] & occ0, BETWEEN[frm, eksq, 1] & occ1, mine0, mine1
                )
            for word in range(2):
                hit = REACH[us, t, frm, word] & (near0 if word == 0 else near1)
                while hit != 0:
                    e = word * OCC_SPLIT + lowest_bit(hit)
                    hit &= hit - 1
                    d = LINE_DIR[eksq, e]
                    in_way0 = BETWEEN[frm, e, 0] & occ0
                    in_way1 = BETWEEN[frm, e, 1] & occ1
                    if in_way0 | in_way1 == 0:
                        if free[d] == ESCAPE_FREE:
                            free[d] = frm
                    elif _one_of_ours(in_way0, in_way1, mine0, mine1):
                        opening |= 1 << d
    open_mask = 0
    for d in range(8):
        if free[d] == ESCAPE_FREE:
            open_mask |= 1 << d
    return open_mask, opening, on_board, discovers


@jit(inline="always")
def _one_of_ours(bits0, bits1, mine0, mine1):
    """Is the bit set (bits0, bits1) a single square, holding a piece of ours?"""
    if bits0 != 0 and bits1 != 0:
        return False
    if bits0 != 0:
        return bits0 & (bits0 - 1) == 0 and bits0 & mine0 != 0
    return bits1 & (bits1 - 1) == 0 and bits1 & mine1 != 0


@jit()
def _types_that_cover(pos_ref, eksq, us, open_mask, types):
    """Those of `types` of which a drop or a move of ours can put a piece on a square from
    which it checks the king on eksq and attacks each of its neighbours in `open_mask`,
    standing on none of them (every line counted open, promotion zones ignored: more than
    the board allows).  Where no line of ours opens, only their checks can mate. The
    position by reference."""
    pos = deref(pos_ref)
    board, hands, st = pos.board, pos.hands, pos.st
    open0 = 0
    open1 = 0
    for d in range(8):
        if (open_mask >> d) & 1:
            b0, b1 = square_bits(RAY[eksq, d, 0])
            open0 |= b0
            open1 |= b1
    own0 = st[ST_OCCUPIED + 2 * us]
    own1 = st[ST_OCCUPIED + 2 * us + 1]
    covering = 0
    while types != 0:
        t = lowest_bit(types)
        types &= types - 1
        # the squares from which a piece of type t would check and cover every open square
        to0 = ATTACKED_FROM[us, t, eksq, 0] & ~own0 & ~open0
        to1 = ATTACKED_FROM[us, t, eksq, 1] & ~own1 & ~open1
        for d in range(8):
            if (open_mask >> d) & 1:
                e = RAY[eksq, d, 0]
                to0 &= ATTACKED_FROM[us, t, e, 0]
                to1 &= ATTACKED_FROM[us, t, e, 1]
        if to0 == 0 and to1 == 0:
            continue
        if t < KING and hands[us, t] > 0:
            empty0 = ~(st[ST_OCCUPIED] | st[ST_OCCUPIED + 2])
            empty1 = ~(st[ST_OCCUPIED + 1] | st[ST_OCCUPIED + 3])
            if (to0 & empty0) != 0 or (to1 & empty1) != 0:
                covering |= 1 << t
                continue
        for half in range(2):
            own = own0 if half == 0 else own1
            while own != 0:
                frm = half * OCC_SPLIT + lowest_bit(own)
                own &= own - 1
                t0 = type_of(board[frm])
                if t0 == t or (t0 < GOLD and t0 + PROMOTED == t):
                    if (REACH[us, t0, frm, 0] & to0) != 0 or (REACH[us, t0, frm, 1] & to1) != 0:
                        covering |= 1 << t
                        own = 0
                        break
            if (covering >> t) & 1:
                break
    return covering


@jit()
def _king_escapes(board, m, eksq, us, free):
    """After our check `m`, can the king step to a square that none of our pieces attacks?
    No mate then.  Asked of the board alone, with m made and the king lifted in place, so
    that most checks are answered without playing them (do_move updates keys, hands and the
    checkers).  `free` remembers which of the king's neighbours we attacked before any
    check: one mate_in_1 tries many checks against the same king.  m adds no piece but the
    moved one, and it can only block our other lines at `to`: so a square we did not attack
    before is attacked after m only by the moved piece or through the square it left, and
    one we did stays attacked by the same piece unless m moved it or stands in its way."""
    to = move_to(m)
    frm = move_from(m)
    drop = is_drop(m)
    after = moved_piece_after(m)
    moving = 0 if drop else board[frm]
    captured = board[to]
    king = board[eksq]
    board[eksq] = 0
    if not drop:
        board[frm] = 0
    board[to] = after
    escapes = False
    for d in range(8):
        if RAY_LEN[eksq, d] == 0:
            continue
        e = RAY[eksq, d, 0]
        q = board[e]
        if q != 0 and color_of(q) != us:
            continue  # one of the king's own pieces stands there
        # _mating_types filled free[] for the neighbours open before any check; one that
        # held a piece of theirs is open now only if m captured on it: ask the board before m
        if free[d] == ESCAPE_UNKNOWN:
            board[to] = captured
            if not drop:
                board[frm] = moving
            a = attacker_of(board, e, us)  # any attacker will do (see above)
            free[d] = a if a >= 0 else ESCAPE_FREE
            if not drop:
                board[frm] = 0
            board[to] = after
        a = free[d]
        if a == ESCAPE_FREE:
            covered = piece_attacks(board, to, after, e) or (not drop and _line_through(board, frm, e, us))
        elif a != frm and not _between(e, to, a):
            covered = True
        else:
            covered = is_attacked(board, e, us)
        if not covered:
            escapes = True
            break
    board[to] = captured
    if not drop:
        board[frm] = moving
    board[eksq] = king
    return escapes


@jit(inline="always")
def _line_through(board, frm, e, us):
    """Does a line of ours through the emptied square `frm` reach `e`?"""
    d = LINE_DIR[e, frm]
    return d >= 0 and attacks_along(board, e, d, us)


@jit(inline="always")
def _between(a, s, b):
    """Is square s strictly between a and b on one line?"""
    d = LINE_DIR[a, b]
    return d >= 0 and LINE_DIR[a, s] == d and LINE_DIST[a, s] < LINE_DIST[a, b]


@jit(int32(POS_T, int32[::1]))
def mate_in_3(pos, buf):
    """A check such that every reply is met by a mate in one (or that mates at once), or 0.
    `buf`: int32 scratch of at least MATE_BUF_SIZE (= 3 * MAX_MOVES + 8)."""
    checks = buf[:MAX_MOVES]
    evasions = buf[MAX_MOVES : 2 * MAX_MOVES]
    rest = buf[2 * MAX_MOVES :]
    n = generate_checks(pos, checks)
    # mates in one first
    for i in range(n):
        m = checks[i]
        do_move(pos, m)
        mated = generate(pos, evasions, GEN_ALL, False) == 0
        undo_move(pos)
        if mated:
            return m
    for i in range(n):
        m = checks[i]
        do_move(pos, m)
        ne = generate(pos, evasions, GEN_ALL, True)
        ok = True
        for j in range(ne):
            do_move(pos, evasions[j])
            r = mate_in_1(pos, rest)
            undo_move(pos)
            if r == 0:
                ok = False
                break
        undo_move(pos)
        if ok:
            return m
    return 0
