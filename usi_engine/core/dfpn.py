"""The tsume solver behind `go mate`, in numba: df-pn (depth-first proof-number search) and,
inside the region it proved, an exact pass for the shortest mate against the longest
resistance.  search/tsume.py drives it from Python.  The short mates the main search probes
(mate in 1 and 3) are in short_mate.py.

Conventions
-----------
* The attacker is the side to move at the root; it plays only checks (OR nodes), the
  defender plays every legal evasion (AND nodes).  Depth 0 is the root; even depths are OR.
* Proof / disproof numbers live in a table (`MateTable`) keyed by the *board key* (board and
  side, `pos.board_keys`) plus the attacker's packed hand.  Within one search the pieces on
  the board and in both hands always add up to the same set, so on one board "the attacker
  holds more" means "the defender holds less": a proof stored with hand h also proves any
  hand that covers h, a disproof stored with hand h disproves any hand that h covers
  (`hand_covers`).  Entries carry a generation; each solve starts a new one, so nothing is
  carried between different problems (their piece totals may differ).
* Repetition: a position that already occurred on the current path (same full key, same
  side to move) is *not* a mate for the attacker (the defender escapes by repetition, or
  the attacker loses by perpetual check).  Such a disproof depends on the path, so it is
  kept only in the parent's local child array, and every disproof that rests on one is
  marked and never written to the table as a general result.  The depth cap is treated the
  same way.  Proofs never depend on the path (every leaf is a real checkmate).
* Pawn-drop mate is excluded by the move generator, so a mate that needs it is not found.
* No clocks here: the caller sets `params[P_LIMIT]` (a node budget) and may set
  `stop[0] = 1` from another thread; the search polls both and unwinds, leaving the table
  consistent, so Python can call again to continue (that is how time slicing works).
"""

from collections import namedtuple

import numba
import numpy as np
from numba import int32, int64, types

from .types import (
    jit,
    MAX_MOVES,
    DROP_BASE,
    base_type,
    move_to,
    move_from,
    moved_piece,
    moved_piece_after,
    type_of,
)
from .board import (
    POS_T,
    do_move,
    undo_move,
    hand_covers,
    ST_SIDE,
    ST_PLY,
    ZOBRIST_PIECE,
    ZOBRIST_SIDE,
    HAND_SHIFT,
)
from .movegen import generate, generate_checks, GEN_ALL


INF = np.int64(1) << 40  # an infinite proof or disproof number
MAX_DEPTH = 240  # plies the df-pn may go below the root

# params[] fields of a MateTable
P_GEN = 0  # current generation (entries of another generation are empty)
P_MASK = 1  # entries - 1 (entries is a power of two)
P_NODES = 2  # nodes searched in this solve
P_LIMIT = 3  # stop when P_NODES reaches this
P_ROOTPLY = 4  # ply of the root (repetitions are looked for back to here)
P_MAXDEPTH = 5  # depth cap below the root
P_ABORT = 6  # set when the search unwinds on the limit or the stop flag
P_XMASK = 7  # exact table entries - 1
P_NB = 8

MateTable = namedtuple(
    "MateTable",
    [
        "keys",  # uint64[N] board key (board + side to move)
        "hands",  # int64[N]  attacker's packed hand
        "pn",  # int64[N]
        "dn",  # int64[N]
        "length",  # int64[N]  plies to mate of the proof found (proven entries only)
        "gen",  # int64[N]  generation of the entry
        "work",  # int64[N]  nodes spent below the entry (replacement priority)
        "xkeys",  # uint64[X] exact-length table: board key
        "xhands",  # int64[X]  attacker's hand
        "xlb",  # int64[X]  no mate within this many plies
        "xub",  # int64[X]  a mate within this many plies (INF: none known)
        "xgen",  # int64[X]
        "params",  # int64[P_NB]
    ],
)

Work = namedtuple(
    "Work",
    [
        "moves",  # int32[MAX_DEPTH + 2, MAX_MOVES] children per depth
        "cpn",  # int64[..., MAX_MOVES] last known child pn
        "cdn",  # int64[..., MAX_MOVES]
        "clen",  # int64[..., MAX_MOVES]
        "ckey",  # uint64[..., MAX_MOVES] child board key
        "chand",  # int64[..., MAX_MOVES] child attacker hand
        "cflag",  # int64[..., MAX_MOVES] 1: disproven through the path (never ask the table)
        "scratch",  # int32[MAX_MOVES]: the evasions of a leaf
        "stop",  # int32[1] set to 1 from outside to stop
    ],
)

ENTRY_BYTES = 7 * 8


def new_table(table_mb: int) -> MateTable:
    """Allocate a table of about `table_mb` MiB (power-of-two entry count, at least 2^12)."""
    n = 1 << 12
    while n * 2 * ENTRY_BYTES <= table_mb * (1 << 20):
        n *= 2
    x = max(1 << 12, n // 8)
    params = np.zeros(P_NB, np.int64)
    params[P_MASK] = n - 1
    params[P_XMASK] = x - 1
    params[P_MAXDEPTH] = MAX_DEPTH
    return MateTable(
        np.zeros(n, np.uint64),
        np.zeros(n, np.int64),
        np.zeros(n, np.int64),
        np.zeros(n, np.int64),
        np.zeros(n, np.int64),
        np.full(n, -1, np.int64),
        np.zeros(n, np.int64),
        np.zeros(x, np.uint64),
        np.zeros(x, np.int64),
        np.zeros(x, np.int64),
        np.zeros(x, np.int64),
        np.full(x, -1, np.int64),
        params,
    )


def new_work(stop: np.ndarray | None = None) -> Work:
    d = MAX_DEPTH + 2
    if stop is None:
        stop = np.zeros(1, np.int32)
    return Work(
        np.zeros((d, MAX_MOVES), np.int32),
        np.zeros((d, MAX_MOVES), np.int64),
        np.zeros((d, MAX_MOVES), np.int64),
        np.zeros((d, MAX_MOVES), np.int64),
        np.zeros((d, MAX_MOVES), np.uint64),
        np.zeros((d, MAX_MOVES), np.int64),
        np.zeros((d, MAX_MOVES), np.int64),
        np.zeros(MAX_MOVES, np.int32),
        stop,
    )


TABLE_TYPE = numba.typeof(new_table(1))
WORK_TYPE = numba.typeof(new_work())


# ---------------------------------------------------------------------------------------------
# table
# ---------------------------------------------------------------------------------------------


@jit()
def _after_key(pos, m, attacker):
    """Board key and attacker hand of the position after move m (without playing it)."""
    ply = pos.st[ST_PLY]
    us = pos.st[ST_SIDE]
    board = pos.board
    bkey = pos.board_keys[ply] ^ ZOBRIST_SIDE
    hand = pos.hand_packs[ply, attacker]
    to = move_to(m)
    frm = move_from(m)
    piece = moved_piece(m)
    if frm >= DROP_BASE:
        pt = frm - DROP_BASE
        bkey ^= ZOBRIST_PIECE[piece, to]
        if us == attacker:
            hand -= np.int64(1) << HAND_SHIFT[pt]
    else:
        cap = board[to]
        if cap != 0:
            bkey ^= ZOBRIST_PIECE[cap, to]
            if us == attacker:
                hand += np.int64(1) << HAND_SHIFT[base_type(type_of(cap))]
        after = moved_piece_after(m)
        bkey ^= ZOBRIST_PIECE[piece, frm] ^ ZOBRIST_PIECE[after, to]
    return bkey, hand


@jit(inline="always")
def _bucket(bkey, mask):
    return np.int64((bkey >> np.uint64(1)) & np.uint64(mask)) & ~np.int64(3)


@jit()
def tt_probe(tt, bkey, hand):
    """(pn, dn, length, found): found 2 for a proof/disproof that covers this hand, 1 for
    an entry of exactly this hand, 0 for nothing (pn = dn = 1 then)."""
    gen = tt.params[P_GEN]
    base = _bucket(bkey, tt.params[P_MASK])
    rpn = np.int64(1)
    rdn = np.int64(1)
    found = 0
    for i in range(base, base + 4):
        if tt.gen[i] != gen or tt.keys[i] != bkey:
            continue
        h = tt.hands[i]
        if tt.pn[i] == 0:
            if hand_covers(hand, h):
                return np.int64(0), INF, tt.length[i], 2
        elif tt.dn[i] == 0:
            if hand_covers(h, hand):
                return INF, np.int64(0), np.int64(0), 2
        elif h == hand:
            rpn = tt.pn[i]
            rdn = tt.dn[i]
            found = 1
    return rpn, rdn, np.int64(0), found


@jit()
def tt_store(tt, bkey, hand, pn, dn, length, work):
    gen = tt.params[P_GEN]
    base = _bucket(bkey, tt.params[P_MASK])
    victim = base
    vscore = np.int64(1) << 62
    for i in range(base, base + 4):
        if tt.gen[i] == gen and tt.keys[i] == bkey and tt.hands[i] == hand:
            victim = i
            break
        if tt.gen[i] != gen:
            score = np.int64(-1)
        else:
            score = tt.work[i]
            if tt.pn[i] == 0 or tt.dn[i] == 0:
                score += 1 << 20  # keep proofs and disproofs longer
        if score < vscore:
            vscore = score
            victim = i
    tt.keys[victim] = bkey
    tt.hands[victim] = hand
    tt.pn[victim] = pn
    tt.dn[victim] = dn
    tt.length[victim] = length
    tt.gen[victim] = gen
    tt.work[victim] = work


# ---------------------------------------------------------------------------------------------
# df-pn
# ---------------------------------------------------------------------------------------------


@jit(inline="always")
def _sat_add(a, b):
    s = a + b
    return INF if s > INF else s


@jit()
def _in_path(pos, root):
    ply = pos.st[ST_PLY]
    key = pos.keys[ply]
    i = ply - 4
    while i >= root:
        if pos.keys[i] == key:
            return True
        i -= 2
    return False


MID_SIG = types.UniTuple(int64, 4)(POS_T, TABLE_TYPE, WORK_TYPE, int64, int64, int64)


@jit(MID_SIG, nogil=True)
def _mid(pos, tt, wk, depth, thpn, thdn):
    """Expand the node until its pn >= thpn or dn >= thdn or it is solved.
    Returns (pn, dn, path_dependent, mate_length)."""
    params = tt.params
    params[P_NODES] += 1
    if (params[P_NODES] & 1023) == 0 and wk.stop[0] != 0:
        params[P_ABORT] = 1
    start_nodes = params[P_NODES]
    if _in_path(pos, params[P_ROOTPLY]) or depth >= params[P_MAXDEPTH]:
        return INF, np.int64(0), np.int64(1), np.int64(0)
    ply = pos.st[ST_PLY]
    us = pos.st[ST_SIDE]
    or_node = (depth & 1) == 0
    attacker = us if or_node else 1 - us
    bkey = pos.board_keys[ply]
    hand = pos.hand_packs[ply, attacker]
    moves = wk.moves[depth]
    if or_node:
        n = generate_checks(pos, moves)
    else:
        n = generate(pos, moves, GEN_ALL, True)
    if n == 0:
        if or_node:
            tt_store(tt, bkey, hand, INF, np.int64(0), np.int64(0), np.int64(1))
            return INF, np.int64(0), np.int64(0), np.int64(0)
        tt_store(tt, bkey, hand, np.int64(0), INF, np.int64(0), np.int64(1))
        return np.int64(0), INF, np.int64(0), np.int64(0)
    cpn = wk.cpn[depth]
    cdn = wk.cdn[depth]
    clen = wk.clen[depth]
    ckey = wk.ckey[depth]
    chand = wk.chand[depth]
    cflag = wk.cflag[depth]
    scratch = wk.scratch
    for i in range(n):
        k, h = _after_key(pos, moves[i], attacker)
        ckey[i] = k
        chand[i] = h
        cflag[i] = 0
        cpn[i] = 1
        cdn[i] = 1
        clen[i] = 0
        if or_node:
            p, d, ln, f = tt_probe(tt, k, h)
            if f == 0:
                # one-ply look-ahead: a mate in one, else pn = number of evasions
                params[P_NODES] += 1
                do_move(pos, moves[i])
                ne = generate(pos, scratch, GEN_ALL, False)
                undo_move(pos)
                if ne == 0:
                    tt_store(tt, k, h, np.int64(0), INF, np.int64(0), np.int64(1))
                    tt_store(tt, bkey, hand, np.int64(0), INF, np.int64(1), np.int64(1))
                    return np.int64(0), INF, np.int64(0), np.int64(1)
                cpn[i] = ne
                tt_store(tt, k, h, np.int64(ne), np.int64(1), np.int64(0), np.int64(0))
    pn = np.int64(0)
    dn = np.int64(0)
    best = 0
    while True:
        if or_node:
            pn = INF
            dn = np.int64(0)
        else:
            pn = np.int64(0)
            dn = INF
        best = 0
        second = INF
        for i in range(n):
            if cflag[i] == 1:
                p = INF
                d = np.int64(0)
            else:
                p, d, ln, f = tt_probe(tt, ckey[i], chand[i])
                if f == 0:
                    p = cpn[i]
                    d = cdn[i]
                else:
                    cpn[i] = p
                    cdn[i] = d
                    clen[i] = ln
            if or_node:
                if p < pn:
                    second = pn
                    pn = p
                    best = i
                elif p < second:
                    second = p
                dn = _sat_add(dn, d)
            else:
                if d < dn:
                    second = dn
                    dn = d
                    best = i
                elif d < second:
                    second = d
                pn = _sat_add(pn, p)
        if pn == 0 or dn == 0 or pn >= thpn or dn >= thdn or params[P_ABORT] != 0:
            break
        if or_node:
            cthpn = min(thpn, second + 1 + (second >> 2))  # the 1 + epsilon trick
            cthdn = thdn - dn + cdn[best]
        else:
            cthdn = min(thdn, second + 1 + (second >> 2))
            cthpn = thpn - pn + cpn[best]
        do_move(pos, moves[best])
        rp, rd, rr, rl = _mid(pos, tt, wk, depth + 1, cthpn, cthdn)
        undo_move(pos)
        if rd == 0 and rr != 0:
            cflag[best] = 1
        cpn[best] = rp
        cdn[best] = rd
        clen[best] = rl
        if params[P_NODES] >= params[P_LIMIT]:
            params[P_ABORT] = 1
    rep = np.int64(0)
    length = np.int64(0)
    if pn == 0:
        if or_node:
            length = INF
            for i in range(n):
                if cpn[i] == 0 and clen[i] < length:
                    length = clen[i]
            length += 1
        else:
            for i in range(n):
                if clen[i] > length:
                    length = clen[i]
            length += 1
    elif dn == 0:
        if or_node:
            for i in range(n):
                if cflag[i] == 1:
                    rep = np.int64(1)
        else:
            rep = np.int64(1)
            for i in range(n):
                if cdn[i] == 0 and cflag[i] != 1:
                    rep = np.int64(0)
    if rep == 0:
        tt_store(tt, bkey, hand, pn, dn, length, params[P_NODES] - start_nodes + 1)
    return pn, dn, rep, length


@jit(types.UniTuple(int64, 2)(POS_T, TABLE_TYPE, WORK_TYPE, int64), nogil=True)
def dfpn_run(pos, tt, wk, root_depth):
    """Search the current position (an OR node if root_depth is even, else an AND node)
    until it is solved or params[P_LIMIT] / the stop flag ends it.  Returns (pn, dn)."""
    tt.params[P_ABORT] = 0
    while True:
        pn, dn, rep, ln = _mid(pos, tt, wk, root_depth, INF - 1, INF - 1)
        if pn == 0 or dn == 0 or tt.params[P_ABORT] != 0:
            return pn, dn
        if tt.params[P_NODES] >= tt.params[P_LIMIT]:
            return pn, dn


@jit()
def probe_after(pos, tt, m, attacker):
    """Table (pn, dn, length, found) of the position after move m."""
    k, h = _after_key(pos, m, attacker)
    return tt_probe(tt, k, h)


# ---------------------------------------------------------------------------------------------
# exact shortest mate (longest resistance) inside the proven region
# ---------------------------------------------------------------------------------------------


@jit()
def _x_probe(tt, bkey, hand):
    """(lb, ub): no mate within lb plies, a mate within ub plies, from entries whose hands
    bound this one."""
    gen = tt.params[P_GEN]
    base = _bucket(bkey, tt.params[P_XMASK])
    lb = np.int64(-1)
    ub = INF
    for i in range(base, base + 4):
        if tt.xgen[i] != gen or tt.xkeys[i] != bkey:
            continue
        h = tt.xhands[i]
        if tt.xlb[i] > lb and hand_covers(h, hand):
            lb = tt.xlb[i]
        if tt.xub[i] < ub and hand_covers(hand, h):
            ub = tt.xub[i]
    return lb, ub


@jit()
def _x_store(tt, bkey, hand, lb, ub):
    gen = tt.params[P_GEN]
    base = _bucket(bkey, tt.params[P_XMASK])
    victim = -1
    for i in range(base, base + 4):
        if tt.xgen[i] == gen and tt.xkeys[i] == bkey and tt.xhands[i] == hand:
            victim = i
            break
    if victim < 0:
        best = np.int64(1) << 62
        for i in range(base, base + 4):
            s = np.int64(-1) if tt.xgen[i] != gen else tt.xlb[i] + 1
            if s < best:
                best = s
                victim = i
        tt.xlb[victim] = -1
        tt.xub[victim] = INF
    tt.xkeys[victim] = bkey
    tt.xhands[victim] = hand
    tt.xgen[victim] = gen
    if lb > tt.xlb[victim]:
        tt.xlb[victim] = lb
    if ub < tt.xub[victim]:
        tt.xub[victim] = ub


@jit()
def _pick_lowest(moves, order, i, n):
    """Swap the move of lowest `order` in [i, n) to i and return it (selection sort step)."""
    j = i
    for k in range(i + 1, n):
        if order[k] < order[j]:
            j = k
    mv = moves[j]
    moves[j] = moves[i]
    moves[i] = mv
    o = order[j]
    order[j] = order[i]
    order[i] = o
    return mv


EXACT_SIG = types.UniTuple(int64, 2)(POS_T, TABLE_TYPE, WORK_TYPE, int64, int64)


@jit(EXACT_SIG, nogil=True)
def _exact(pos, tt, wk, depth, budget):
    """Minimax mate length (attacker shortest, defender longest) if it is <= budget, else
    INF.  Returns (value, path_dependent).  Children the df-pn disproved are skipped."""
    params = tt.params
    params[P_NODES] += 1
    if (params[P_NODES] & 1023) == 0 and wk.stop[0] != 0:
        params[P_ABORT] = 1
    if params[P_NODES] >= params[P_LIMIT]:
        params[P_ABORT] = 1
    if params[P_ABORT] != 0:
        return INF, np.int64(1)
    if _in_path(pos, params[P_ROOTPLY]) or depth >= params[P_MAXDEPTH]:
        return INF, np.int64(1)
    ply = pos.st[ST_PLY]
    us = pos.st[ST_SIDE]
    or_node = (depth & 1) == 0
    attacker = us if or_node else 1 - us
    bkey = pos.board_keys[ply]
    hand = pos.hand_packs[ply, attacker]
    lb, ub = _x_probe(tt, bkey, hand)
    if ub <= lb + 2:
        return (ub if ub <= budget else INF), np.int64(0)
    if lb >= budget:
        return INF, np.int64(0)
    moves = wk.moves[depth]
    order = wk.cpn[depth]
    if or_node:
        if budget < 1:
            return INF, np.int64(0)
        n = generate_checks(pos, moves)
        if budget < 3:
            # leaf: a mate in one or nothing (no table traffic for the replies)
            scratch = wk.scratch
            params[P_NODES] += n
            for i in range(n):
                do_move(pos, moves[i])
                ne = generate(pos, scratch, GEN_ALL, False)
                undo_move(pos)
                if ne == 0:
                    _x_store(tt, bkey, hand, np.int64(-1), np.int64(1))
                    return np.int64(1), np.int64(0)
            _x_store(tt, bkey, hand, np.int64(1), INF)
            return INF, np.int64(0)
        # order: df-pn-proven children by proof length, then the rest; skip disproven ones
        m = 0
        for i in range(n):
            p, d, ln, f = probe_after(pos, tt, moves[i], attacker)
            if d == 0:
                continue
            moves[m] = moves[i]
            order[m] = ln if p == 0 else 1000 + p
            m += 1
        n = m
    else:
        n = generate(pos, moves, GEN_ALL, True)
        if n == 0:
            _x_store(tt, bkey, hand, np.int64(-1), np.int64(0))
            return np.int64(0), np.int64(0)
        if budget < 2:
            _x_store(tt, bkey, hand, budget, INF)
            return INF, np.int64(0)
        for i in range(n):
            p, d, ln, f = probe_after(pos, tt, moves[i], attacker)
            if d == 0:
                _x_store(tt, bkey, hand, INF, INF)  # a disproven reply: no mate at all
                return INF, np.int64(0)
            order[i] = -(ln if p == 0 else 1000 + p)
    # selection sort as we go (children are few)
    rep = np.int64(0)
    if or_node:
        best = INF
        b = budget
        for i in range(n):
            mv = _pick_lowest(moves, order, i, n)
            if b < 1:
                break
            do_move(pos, mv)
            v, r = _exact(pos, tt, wk, depth + 1, b - 1)
            undo_move(pos)
            rep |= r
            if v < INF:
                best = v + 1
                b = best - 2
        if params[P_ABORT] != 0:
            return INF, np.int64(1)
        if best < INF:
            _x_store(tt, bkey, hand, best - 2 if rep == 0 else np.int64(-1), best)
            return best, rep
        if rep == 0:
            _x_store(tt, bkey, hand, budget, INF)
        return INF, rep
    worst = np.int64(0)
    for i in range(n):
        mv = _pick_lowest(moves, order, i, n)
        do_move(pos, mv)
        v, r = _exact(pos, tt, wk, depth + 1, budget - 1)
        undo_move(pos)
        rep |= r
        if v >= INF:
            if params[P_ABORT] != 0:
                return INF, np.int64(1)
            if rep == 0:
                _x_store(tt, bkey, hand, budget, INF)
            return INF, rep
        if v + 1 > worst:
            worst = v + 1
    if params[P_ABORT] != 0:
        return INF, np.int64(1)
    _x_store(tt, bkey, hand, worst - 2 if rep == 0 else np.int64(-1), worst)
    return worst, rep


@jit(types.UniTuple(int64, 2)(POS_T, TABLE_TYPE, WORK_TYPE, int64), nogil=True)
def exact_run(pos, tt, wk, budget):
    """Exact mate length of the root (an OR node) if <= budget, else INF; (value, aborted)."""
    tt.params[P_ABORT] = 0
    v, r = _exact(pos, tt, wk, np.int64(0), budget)
    return v, tt.params[P_ABORT]


@jit(int64(POS_T, TABLE_TYPE, WORK_TYPE, int64, int32[::1]), nogil=True)
def exact_pv(pos, tt, wk, value, out):
    """Write the principal line of a root whose exact value is `value` into out; return its
    length (0 if the line could not be followed, e.g. on abort).  The position is restored."""
    n_played = 0
    v = value
    ok = True
    while v > 0:
        depth = n_played
        or_node = (depth & 1) == 0
        moves = wk.moves[MAX_DEPTH + 1]
        if or_node:
            n = generate_checks(pos, moves)
        else:
            n = generate(pos, moves, GEN_ALL, True)
        chosen = -1
        best = INF if or_node else np.int64(-1)
        for i in range(n):
            mv = moves[i]
            do_move(pos, mv)
            tt.params[P_ABORT] = 0
            r, rr = _exact(pos, tt, wk, np.int64(depth + 1), v - 1)
            undo_move(pos)
            if tt.params[P_ABORT] != 0:
                ok = False
                break
            if or_node:
                if r < best:
                    best = r
                    chosen = mv
            else:
                if r >= INF:
                    ok = False
                    break
                if r > best:
                    best = r
                    chosen = mv
        if not ok or chosen == -1 or best >= INF or best != v - 1:
            ok = False
            break
        out[n_played] = chosen
        do_move(pos, chosen)
        n_played += 1
        v -= 1
    # a mate must end with the defender having no move
    if ok:
        scratch = wk.scratch
        if generate(pos, scratch, GEN_ALL, True) != 0 or pos.checks[pos.st[ST_PLY]] == 0:
            ok = False
    for i in range(n_played):
        undo_move(pos)
    return n_played if ok else 0
