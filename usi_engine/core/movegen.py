"""Legal move generation: captures (with pawn promotions), quiet moves, evasions, checks,
plus `is_legal` for a move taken from the transposition table and `gives_check`.

Moves are made legal at generation: a king never steps into an attack, a pinned piece
stays on its pin line, and in check every move must capture the checker or block it.
Drops obey nifu, dead-piece and pawn-drop-mate rules.
"""

import numpy as np

from .types import (
    jit,
    NSQ,
    OCC_SPLIT,
    OCC_MASK,
    BLACK,
    WHITE,
    PAWN,
    LANCE,
    KNIGHT,
    BISHOP,
    ROOK,
    GOLD,
    PROMOTED,
    KING,
    DROP_BASE,
    make_move,
    make_drop,
    relative_rank,
    file_of,
    rank_of,
    move_to,
    move_from,
    moved_piece,
    moved_piece_after,
    is_promotion,
    make_piece,
    color_of,
    type_of,
)
from .attacks import (
    RAY,
    RAY_LEN,
    PIECE_RAYS,
    PIECE_RAY_COUNT,
    KNIGHT_TO,
    SLIDE_MASK,
    LINE_DIR,
    LINE_DIST,
    OPPOSITE,
    NEAR_MASK,
    is_attacked,
    count_checkers,
    piece_attacks,
    pin_direction,
    pinned_pieces,
    line_blockers,
    blocker_line,
    checks_after,
    REACH,
)
from .board import ST_SIDE, ST_PLY, ST_KING, ST_OCCUPIED
from .intrinsics import by_ref, deref, lowest_bit

GEN_ALL = 0  # every legal move
GEN_CAPTURES = 1  # captures and pawn promotions (the quiescence search's moves)
GEN_QUIETS = 2  # everything GEN_CAPTURES leaves out, drops included
GEN_CHECKS = 3  # GEN_ALL's board moves less those that surely give no check (see
# generate_checks, which keeps only the checking ones of the rest)
ALL_TYPES = (1 << 16) - 1  # generate_checks_ref's filter that keeps every check


@jit(inline="always")
def _in_zone(color, sq):
    return relative_rank(color, sq) <= 2


@jit(inline="always")
def _is_dead_square(pt, color, sq):
    """A pawn or lance on the last rank, or a knight on the last two, could never move."""
    r = relative_rank(color, sq)
    if pt == PAWN or pt == LANCE:
        return r == 0
    if pt == KNIGHT:
        return r <= 1
    return False


@jit()
def _king_safe_after(board, ksq, to, them):
    """True if our king moving from ksq to `to` is not attacked there."""
    k = board[ksq]
    board[ksq] = 0
    safe = not is_attacked(board, to, them)
    board[ksq] = k
    return safe


@jit()
def king_can_step(board, ksq, attacker):
    """True if the king on ksq can step to a square that `attacker` does not attack (an
    empty one, or one holding an attacker's piece, which it takes)."""
    for d in range(8):
        if RAY_LEN[ksq, d] == 0:
            continue
        to = RAY[ksq, d, 0]
        q = board[to]
        if (q == 0 or color_of(q) == attacker) and _king_safe_after(board, ksq, to, attacker):
            return True
    return False


@jit()
def _evasion_target(ksq, checker, to):
    """True if a non-king move to `to` answers a single check: capture or interpose."""
    if to == checker:
        return True
    d = LINE_DIR[ksq, checker]
    return d >= 0 and LINE_DIR[ksq, to] == d and LINE_DIST[ksq, to] < LINE_DIST[ksq, checker]


@jit()
def is_pawn_drop_mate(board, us, to, eksq):
    """Would a pawn of `us` dropped on `to` (checking the king on eksq) be checkmate?  The
    king was not in check before, so the pawn is the only checker: the king steps away or
    takes it, or another piece takes it without leaving its pin line."""
    board[to] = make_piece(PAWN, us)
    mate = not king_can_step(board, eksq, us) and not _piece_can_go(board, to, 1 - us, eksq)
    board[to] = 0
    return mate


@jit(inline="always")
def _pawn_on_file(board, f, pawn):
    """Nifu: is `pawn` already on file `f`?"""
    for r in range(9):
        if board[f * 9 + r] == pawn:
            return True
    return False


@jit(inline="always")
def _drop_mates(board, us, to, eksq):
    """Would a pawn of `us` dropped on `to` be an illegal pawn-drop mate?  Only a pawn that
    lands right in front of the king checks it, so the rest are answered at once."""
    forward = -1 if us == BLACK else 1
    return (
        eksq >= 0
        and to + forward == eksq
        and (to % 9) + forward == eksq % 9
        and is_pawn_drop_mate(board, us, to, eksq)
    )


@jit(specialise=("mode",))  # see generate
def _add_with_promotions(out, n, frm, to, p, us, capture, mode, all_promos):
    """Append the move frm->to of piece p, promoted and/or not as the rules and mode allow."""
    t = type_of(p)
    promotable = t <= ROOK
    can = promotable and (_in_zone(us, frm) or _in_zone(us, to))
    must = _is_dead_square(t, us, to)
    # pawn promotions belong to the capture stage, a pawn's other non-captures to quiets
    if mode == GEN_CAPTURES and not capture:
        if t == PAWN and can:
            out[n] = make_move(frm, to, p, 1)
            n += 1
        return n
    if mode == GEN_QUIETS and not capture and t == PAWN and can:
        if all_promos and not must:
            out[n] = make_move(frm, to, p, 0)
            n += 1
        return n
    if can:
        out[n] = make_move(frm, to, p, 1)
        n += 1
        if not must and (all_promos or not (t == PAWN or t == BISHOP or t == ROOK)):
            out[n] = make_move(frm, to, p, 0)
            n += 1
    else:
        out[n] = make_move(frm, to, p, 0)
        n += 1
    return n


@jit(specialise=("mode",))  # see generate
def _wanted(mode, capture, p, us, frm, to):
    """Does (frm->to, capture?) belong to this generation stage at all?"""
    if mode == GEN_ALL or mode == GEN_CHECKS or capture:
        return mode != GEN_QUIETS
    # a non-capture: only pawn promotions go with the captures
    pawn_promo = type_of(p) == PAWN and _in_zone(us, to)
    return pawn_promo or mode == GEN_QUIETS


@jit(specialise=("mode",), inline="always")  # see generate
def _piece_moves(
    board, out, n, frm, p, us, ksq, pinned, n_checkers, checker, mode, all_promos, eksq, discovers
):
    """Append the legal moves of `mode` of our piece `p` on `frm`; return the new count.
    `pinned`: pinned_pieces(board, ksq, us).  With two checkers only the king may move (the
    caller skips the other pieces).
    GEN_CHECKS only: `eksq`, the opponent's king, and `discovers`, whether the piece stands
    between it and one of our sliders (else -1 and False)."""
    them = 1 - us
    t = type_of(p)
    is_king = t == KING
    pin = -1 if is_king else blocker_line(pinned, ksq, frm)
    for i in range(PIECE_RAY_COUNT[p, frm]):
        d = PIECE_RAYS[p, frm, i] >> 4
        for k in range(PIECE_RAYS[p, frm, i] & 15):
            to = RAY[frm, d, k]
            q = board[to]
            if q != 0 and color_of(q) == us:
                break
            capture = q != 0
            if _wanted(mode, capture, p, us, frm, to) and (
                mode != GEN_CHECKS or discovers or LINE_DIR[eksq, to] >= 0
            ):
                ok = True
                if is_king:
                    ok = _king_safe_after(board, ksq, to, them)
                else:
                    if pin >= 0 and LINE_DIR[ksq, to] != pin:
                        ok = False
                    if ok and n_checkers == 1 and not _evasion_target(ksq, checker, to):
                        ok = False
                if ok:
                    n = _add_with_promotions(out, n, frm, to, p, us, capture, mode, all_promos)
            if capture:
                break
    if t == KNIGHT and pin < 0:
        for i in range(2):
            to = KNIGHT_TO[us, frm, i]
            if to < 0:
                continue
            q = board[to]
            if q != 0 and color_of(q) == us:
                continue
            capture = q != 0
            if not _wanted(mode, capture, p, us, frm, to):
                continue
            if n_checkers == 1 and not _evasion_target(ksq, checker, to):
                continue
            n = _add_with_promotions(out, n, frm, to, p, us, capture, mode, all_promos)
    return n


@jit(inline="always")
def _nothing_to_take(us, frm, t, theirs0, theirs1):
    """The piece of type t on frm has no move of the captures stage: it attacks none of
    their pieces even with every line open, and it is no pawn stepping into or within the
    promotion zone. Most pieces of a quiescence node's side are so; they cost two table
    reads instead of a walk of their lines."""
    if (REACH[us, t, frm, 0] & theirs0) != 0 or (REACH[us, t, frm, 1] & theirs1) != 0:
        return False
    return not (t == PAWN and _in_zone(us, frm - 1 if us == BLACK else frm + 1))


# One compilation per constant mode (GEN_CAPTURES and GEN_QUIETS from the move picker, GEN_ALL)
# and one for a mode known only at run time: numba then prunes the other modes' branches,
# here and in the two helpers, worth about 1.5% of the search's node rate.
@jit(specialise=("mode",))
def generate(pos, out, mode, all_promos):
    """Write the legal moves of `mode` into `out`; return how many.

    In check, every mode yields evasions (the captures stage the capturing ones).
    `all_promos` adds the never-better non-promotions of pawn, bishop and rook (perft, GUI).
    """
    return generate_ref(by_ref(pos), out, mode, all_promos)


@jit(specialise=("mode",))
def generate_ref(pos_ref, out, mode, all_promos):
    """generate of a position passed by reference (intrinsics.by_ref), as the search and
    perft hold it: one address instead of the position's arrays, about 140 words a call.
    The one compiled body of both forms; the mode stays a constant through the wrapper."""
    pos = deref(pos_ref)
    board = pos.board
    us = pos.st[ST_SIDE]
    them = 1 - us
    ksq = pos.st[ST_KING + us]
    n = 0
    n_checkers = 0
    checker = -1
    if ksq >= 0 and pos.checks[pos.st[ST_PLY]]:
        n_checkers, checker = count_checkers(board, ksq, them)
    pinned = pinned_pieces(board, ksq, us)
    theirs0 = pos.st[ST_OCCUPIED + 2 * them]
    theirs1 = pos.st[ST_OCCUPIED + 2 * them + 1]
    for half in range(2):
        own = pos.st[ST_OCCUPIED + 2 * us + half]
        while own != 0:
            frm = half * OCC_SPLIT + lowest_bit(own)
            own &= own - 1
            p = board[frm]
            if n_checkers >= 2 and type_of(p) != KING:
                continue
            if mode == GEN_CAPTURES and _nothing_to_take(us, frm, type_of(p), theirs0, theirs1):
                continue
            n = _piece_moves(
                board, out, n, frm, p, us, ksq, pinned, n_checkers, checker, mode, all_promos, -1, False
            )
    if mode != GEN_CAPTURES and n_checkers < 2:
        n = _generate_drops(pos_ref, out, n, us, ksq, n_checkers, checker)
    return n


@jit()
def hand_mask(hands, us):
    """Bit pt set for every piece type that `us` holds in hand."""
    have = 0
    for pt in range(PAWN, KING):
        if hands[us, pt] > 0:
            have |= 1 << pt
    return have


@jit()
def _generate_drops(pos_ref, out, n, us, ksq, n_checkers, checker):
    pos = deref(pos_ref)
    board = pos.board
    hands = pos.hands
    have = hand_mask(hands, us)
    if have == 0:
        return n
    if n_checkers == 1 and LINE_DIST[ksq, checker] <= 1:
        return n  # a contact check cannot be blocked
    pawn_files = 0
    if (have >> PAWN) & 1:
        own_pawn = make_piece(PAWN, us)
        for half in range(2):
            own = pos.st[ST_OCCUPIED + 2 * us + half]
            while own != 0:
                sq = half * OCC_SPLIT + lowest_bit(own)
                own &= own - 1
                if board[sq] == own_pawn:
                    pawn_files |= 1 << (sq // 9)
    eksq = pos.st[ST_KING + 1 - us]
    for half in range(2):
        empty = ~(pos.st[ST_OCCUPIED + half] | pos.st[ST_OCCUPIED + 2 + half]) & OCC_MASK[half]
        while empty != 0:
            to = half * OCC_SPLIT + lowest_bit(empty)
            empty &= empty - 1
            if n_checkers == 1 and not _evasion_target(ksq, checker, to):
                continue
            for pt in range(PAWN, KING):
                if not (have >> pt) & 1 or _is_dead_square(pt, us, to):
                    continue
                if pt == PAWN:
                    if (pawn_files >> (to // 9)) & 1:
                        continue  # nifu
                    if _drop_mates(board, us, to, eksq):
                        continue
                out[n] = make_drop(pt, to, us)
                n += 1
    return n


@jit()
def has_legal_move(pos, buf):
    """True if the side to move has any legal move.  In check, the evasions are looked for
    one at a time (the mate probe asks this after most checks it cannot refute at once);
    otherwise the list is generated into `buf`."""
    us = pos.st[ST_SIDE]
    ksq = pos.st[ST_KING + us]
    if ksq >= 0 and pos.checks[pos.st[ST_PLY]]:
        return has_evasion(pos, us, ksq)
    return generate(pos, buf, GEN_ALL, False) > 0


@jit()
def has_evasion(pos, us, ksq):
    """Has `us`, in check on ksq, a legal move?  The king steps away or takes the checker;
    or, against a single checker, another piece takes it or, against a slider, moves or
    is dropped between: the moves generate() would list, but stopping at the first."""
    return king_can_step(pos.board, ksq, 1 - us) or can_capture_or_block_ref(by_ref(pos), us, ksq)


@jit()
def can_capture_or_block_ref(pos_ref, us, ksq):
    """Can `us`, in check on ksq, answer it with a piece other than the king: take a single
    checker, or move or drop a piece between it and the king?  The position by reference
    (intrinsics.by_ref): the mate probe asks this after each check it tries."""
    pos = deref(pos_ref)
    board = pos.board
    them = 1 - us
    n_checkers, checker = count_checkers(board, ksq, them)
    if n_checkers >= 2:
        return False
    if _piece_can_go(board, checker, us, ksq):
        return True
    d = LINE_DIR[ksq, checker]
    if d < 0 or LINE_DIST[ksq, checker] <= 1:
        return False  # a knight or a contact check: no interposing
    have = hand_mask(pos.hands, us)
    eksq = pos.st[ST_KING + them]
    for k in range(LINE_DIST[ksq, checker] - 1):
        to = RAY[ksq, d, k]
        if _piece_can_go(board, to, us, ksq) or (have != 0 and _can_drop(board, eksq, to, us, have)):
            return True
    return False


@jit()
def _piece_can_go(board, to, us, ksq):
    """Can a piece of `us` other than the king move to `to` (empty or the opponent's) and
    keep its king on ksq covered?  In shogi a piece moves where it attacks, so the pieces
    are found by looking out from `to`; a pinned piece may move only along its pin line."""
    for d in range(8):
        bit = 1 << OPPOSITE[d]
        for k in range(RAY_LEN[to, d]):
            s = RAY[to, d, k]
            p = board[s]
            if p != 0:
                if (
                    color_of(p) == us
                    and type_of(p) != KING
                    and ((NEAR_MASK[p] if k == 0 else SLIDE_MASK[p]) & bit)
                ):
                    pin = pin_direction(board, ksq, s, us)
                    if pin < 0 or LINE_DIR[ksq, to] == pin:
                        return True
                break
    knight = make_piece(KNIGHT, us)
    for i in range(2):
        s = KNIGHT_TO[1 - us, to, i]
        if s >= 0 and board[s] == knight and pin_direction(board, ksq, s, us) < 0:
            return True
    return False


@jit()
def _can_drop(board, eksq, to, us, have):
    """Can `us` drop one of the hand pieces in `have` on the empty square `to`?  (eksq:
    the opponent's king, which a pawn drop must not mate.)"""
    for pt in range(PAWN, KING):
        if not (have >> pt) & 1 or _is_dead_square(pt, us, to):
            continue
        if pt == PAWN and (
            _pawn_on_file(board, to // 9, make_piece(PAWN, us)) or _drop_mates(board, us, to, eksq)
        ):
            continue
        return True
    return False


@jit()
def gives_check(pos, m):
    """True if legal move `m` checks the opponent's king."""
    board = pos.board
    us = pos.st[ST_SIDE]
    eksq = pos.st[ST_KING + 1 - us]
    if eksq < 0:
        return False
    to = move_to(m)
    frm = move_from(m)
    after = moved_piece_after(m)
    if frm >= DROP_BASE:
        return piece_attacks(board, to, after, eksq)
    moving = board[frm]
    captured = board[to]
    board[frm] = 0
    board[to] = after
    check = checks_after(board, frm, to, eksq, us)
    board[to] = captured
    board[frm] = moving
    return check


@jit()
def is_legal(pos, m):
    """Full validation of an arbitrary move (e.g. from the TT) in this position."""
    return is_legal_ref(by_ref(pos), m)


@jit()
def is_legal_ref(pos_ref, m):
    """is_legal of a position passed by reference (intrinsics.by_ref), as the search asks it
    of the TT moves, the killers and the counter move at most nodes. The one compiled body
    of both forms."""
    pos = deref(pos_ref)
    board = pos.board
    us = pos.st[ST_SIDE]
    them = 1 - us
    ksq = pos.st[ST_KING + us]
    to = move_to(m)
    frm = move_from(m)
    p = moved_piece(m)
    promo = is_promotion(m)
    if to >= NSQ or color_of(p) != us or m >> 20 != 0:
        return False
    t = type_of(p)
    n_checkers = 0
    checker = -1
    if ksq >= 0 and pos.checks[pos.st[ST_PLY]]:
        n_checkers, checker = count_checkers(board, ksq, them)
    if frm >= DROP_BASE:
        pt = frm - DROP_BASE
        if pt < PAWN or pt > GOLD or t != pt or promo or pos.hands[us, pt] == 0 or board[to] != 0:
            return False
        if _is_dead_square(pt, us, to):
            return False
        if n_checkers >= 2 or (n_checkers == 1 and not _evasion_target(ksq, checker, to)):
            return False
        if pt == PAWN and (
            _pawn_on_file(board, to // 9, make_piece(PAWN, us))
            or _drop_mates(board, us, to, pos.st[ST_KING + them])
        ):
            return False
        return True
    if frm >= NSQ or board[frm] != p:
        return False
    q = board[to]
    if q != 0 and color_of(q) == us:
        return False
    if not piece_attacks(board, frm, p, to):
        return False
    if promo:
        if t > ROOK or not (_in_zone(us, frm) or _in_zone(us, to)):
            return False
    elif _is_dead_square(t, us, to):
        return False
    if t == KING:
        return _king_safe_after(board, ksq, to, them)
    if n_checkers >= 2 or (n_checkers == 1 and not _evasion_target(ksq, checker, to)):
        return False
    pin = pin_direction(board, ksq, frm, us)
    return pin < 0 or LINE_DIR[ksq, to] == pin


# --- checks (the mate solver's attacker moves) -----------------------------------------


def _build_check_squares():
    """CHECK_SQUARES[ksq]: in increasing order, -1 after the last, every square from which a
    dropped piece could check a king on ksq: its eight lines and the knight squares of both
    colours (a knight square is never on a line)."""
    table = np.full((NSQ, 40), -1, dtype=np.int64)
    for ksq in range(NSQ):
        squares = {s for s in range(NSQ) if LINE_DIR[ksq, s] >= 0}
        squares |= {s for c in (BLACK, WHITE) for s in KNIGHT_TO[c, ksq] if s >= 0}
        table[ksq, : len(squares)] = sorted(squares)
    return table


CHECK_SQUARES = _build_check_squares()


@jit()
def _open_lengths(board, ksq):
    """How many empty squares each of the king's eight lines has before its first piece, four
    bits a direction (a line holds at most 8 squares)."""
    packed = 0
    for d in range(8):
        k = 0
        while k < RAY_LEN[ksq, d] and board[RAY[ksq, d, k]] == 0:
            k += 1
        packed |= k << (4 * d)
    return packed


@jit()
def _drop_checks(pos_ref, out, n, us, eksq, types):
    """Append the legal checking drops of `types` (a bit set) in square order (not in check:
    every drop is legal but for the rules on nifu, dead squares and pawn-drop mate).  Only
    the king's open lines and knight squares are looked at, not the whole board: the mate
    probe asks this at most quiescence nodes. The position by reference (intrinsics.by_ref)."""
    pos = deref(pos_ref)
    board = pos.board
    have = hand_mask(pos.hands, us) & types
    if have == 0:
        return n
    open_len = _open_lengths(board, eksq)
    for i in range(CHECK_SQUARES.shape[1]):
        to = CHECK_SQUARES[eksq, i]
        if to < 0:
            break
        if board[to] != 0:
            continue
        d = LINE_DIR[eksq, to]
        dist = LINE_DIST[eksq, to]
        if d >= 0:
            if dist > (open_len >> (4 * d)) & 15:
                continue  # a piece stands between it and the king
            toward_king = 1 << OPPOSITE[d]
        elif KNIGHT_TO[1 - us, eksq, 0] != to and KNIGHT_TO[1 - us, eksq, 1] != to:
            continue  # the other colour's knight square
        for pt in range(PAWN, KING):
            if not (have >> pt) & 1 or _is_dead_square(pt, us, to):
                continue
            piece = make_piece(pt, us)
            if d >= 0:
                mask = NEAR_MASK[piece] if dist == 1 else SLIDE_MASK[piece]
                if not mask & toward_king:
                    continue
            elif pt != KNIGHT:
                continue
            if pt == PAWN:
                if _pawn_on_file(board, to // 9, piece):
                    continue  # nifu
                if _drop_mates(board, us, to, eksq):
                    continue
            out[n] = make_drop(pt, to, us)
            n += 1
    return n


@jit()
def _keep_checks(pos, out, n):
    """Compact out[:n] to the moves that give check; return how many remain."""
    kept = 0
    for i in range(n):
        m = out[i]
        if gives_check(pos, m):
            out[kept] = m
            kept += 1
    return kept


@jit()
def generate_checks(pos, out):
    """Write every legal move that gives check into `out` (MAX_MOVES entries); return the
    count.  Non-promotions of pawn, bishop and rook are included (tsume needs them)."""
    return generate_checks_ref(by_ref(pos), out, ALL_TYPES)


@jit()
def generate_checks_ref(pos_ref, out, types):
    """generate_checks of a position passed by reference (intrinsics.by_ref), as the mate
    probe holds it. The one compiled body of both forms.  Not in check, only the checks
    whose piece after the move is of one of `types` (bit t for type t; ALL_TYPES: every
    check) and every discovered check: the mate probe knows which types could mate."""
    pos = deref(pos_ref)
    us = pos.st[ST_SIDE]
    eksq = pos.st[ST_KING + 1 - us]
    if eksq < 0:
        return 0
    ply = pos.st[ST_PLY]
    if pos.checks[ply]:
        # in check ourselves: filter all legal evasions
        n_all = generate_ref(pos_ref, out, GEN_ALL, True)
        return _keep_checks(pos, out, n_all)
    # the board moves of the pieces that can check at all, less those that surely do not
    # (GEN_CHECKS), filtered; then the drops
    board = pos.board
    ksq = pos.st[ST_KING + us]
    pinned = pinned_pieces(board, ksq, us)
    # our pieces between their king and one of our sliders: a move off the line uncovers a check
    discoverers = line_blockers(board, eksq, us, us)
    n = 0
    for half in range(2):
        own = pos.st[ST_OCCUPIED + 2 * us + half]
        while own != 0:
            frm = half * OCC_SPLIT + lowest_bit(own)
            own &= own - 1
            p = board[frm]
            line = blocker_line(discoverers, eksq, frm)
            if line >= 0 or (_may_become(p, types) and _may_check(frm, p, eksq)):
                n0 = n
                n = _piece_moves(
                    board, out, n, frm, p, us, ksq, pinned, 0, -1, GEN_CHECKS, True, eksq, line >= 0
                )
                n = _keep_piece_checks(board, out, n0, n, frm, eksq, line)
    return _drop_checks(pos_ref, out, n, us, eksq, types)


@jit(inline="always")
def _may_become(p, types):
    """Can piece p be of one of `types` (a bit set) after a move: its type, or promoted?"""
    t = type_of(p)
    if (types >> t) & 1:
        return True
    return t < GOLD and (types >> (t + PROMOTED)) & 1 == 1


@jit()
def _keep_piece_checks(board, out, n0, n, frm, eksq, line):
    """Compact out[n0:n], moves of the piece on `frm`, to those that check the king on
    eksq: gives_check for one piece at a time.  The piece leaves `frm` empty, whatever its
    move; `line` is the direction from the king of the slider it uncovers (-1 if none).  A
    move off that line checks; otherwise the piece must attack the king from its new square."""
    p = board[frm]
    board[frm] = 0
    kept = n0
    for i in range(n0, n):
        m = out[i]
        to = move_to(m)
        if (line >= 0 and LINE_DIR[eksq, to] != line) or piece_attacks(board, to, moved_piece_after(m), eksq):
            out[kept] = m
            kept += 1
    board[frm] = p
    return kept


@jit()
def _may_check(frm, p, eksq):
    """False only for a piece none of whose own moves checks the king on `eksq` (discovered
    checks aside): a stepping piece too far from it to land next to it, or a knight's jump
    from it."""
    if SLIDE_MASK[p] != 0:
        return True
    t = type_of(p)
    if t == KING:
        return False
    df = abs(file_of(frm) - file_of(eksq))
    dr = abs(rank_of(frm) - rank_of(eksq))
    if t == KNIGHT:  # jumps two ranks, then checks from a jump (or, promoted, a step)
        return dr <= 4 and df <= 2
    return dr <= 2 and df <= 2  # one step, then a step onto the king
