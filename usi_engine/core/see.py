"""Static exchange evaluation that knows shogi: every captured piece goes to the capturer's
hand, so winning a piece gains its board value *and* its value in hand, and a capture that
can promote (the moving piece, or any recapturer whose path touches the promotion zone) does.

The exchange on the destination square is played out with the least valuable attacker each
time; sliders behind a piece that captured join in (x-rays).  Pins and drops are ignored: a
drop cannot capture.  Squares of pieces that already took part are marked on the board with
SEE_GONE for the duration of the call and restored before it returns.
"""

from .types import (
    jit,
    BLACK,
    PAWN,
    KING,
    GOLD,
    PROMOTED,
    KNIGHT,
    base_type,
    move_to,
    move_from,
    moved_piece,
    is_promotion,
    make_piece,
    color_of,
    type_of,
    file_of,
)
from .attacks import RAY, RAY_LEN, OPPOSITE, NEAR_MASK, SLIDE_MASK, KNIGHT_TO
from .weights import TYPE_VALUE, HAND_VALUE

SEE_GONE = 64  # flag on a board square: its piece already went to the exchange
SEE_BUF = 128  # scratch: gains in [0, 64), marked squares in [64, 128)
_MAX_SWAPS = 60


@jit(inline="always")
def capture_value(t):
    """What taking a piece of type t is worth: off their board and into our hand."""
    if t == KING:
        return TYPE_VALUE[KING]
    return TYPE_VALUE[t] + HAND_VALUE[base_type(t)]


@jit(inline="always")
def _in_zone(color, sq):
    r = sq % 9
    return r <= 2 if color == 0 else r >= 6


@jit()
def _least_valuable_attacker(board, to, side):
    """(square, piece) of side's cheapest piece attacking `to`, (-1, 0) if none.  Squares
    marked SEE_GONE count as empty."""
    # a pawn, the cheapest piece there is, can attack from one square only: look there first
    behind = to + (1 if side == BLACK else -1)  # one rank nearer `side`
    pawn = make_piece(PAWN, side)
    if file_of(behind) == file_of(to) and board[behind] == pawn:  # not marked SEE_GONE
        return behind, pawn
    best_sq = -1
    best_p = 0
    best_v = 1 << 30
    for d in range(8):
        bit = 1 << OPPOSITE[d]
        for k in range(RAY_LEN[to, d]):
            s = RAY[to, d, k]
            p = board[s]
            if p == 0 or p & SEE_GONE:
                continue
            if color_of(p) == side and ((NEAR_MASK[p] if k == 0 else SLIDE_MASK[p]) & bit):
                v = TYPE_VALUE[type_of(p)]
                if v < best_v:
                    best_v = v
                    best_sq = s
                    best_p = p
            break
    knight = make_piece(KNIGHT, side)
    if TYPE_VALUE[KNIGHT] < best_v:
        for i in range(2):
            s = KNIGHT_TO[1 - side, to, i]
            if s >= 0 and board[s] == knight:
                return s, knight
    return best_sq, best_p


@jit()
def see(board, m, buf):
    """Material balance of move m for the side making it after the exchange on its
    destination (board + hand values), both sides stopping whenever that pays.  The
    board is restored before returning; buf is int64[SEE_BUF] scratch."""
    to = move_to(m)
    frm = move_from(m)
    piece = moved_piece(m)
    us = color_of(piece)
    t = type_of(piece)
    victim = type_of(board[to])
    gain0 = capture_value(victim) if victim != 0 else 0
    if is_promotion(m):
        gain0 += TYPE_VALUE[t + PROMOTED] - TYPE_VALUE[t]
        t += PROMOTED
    buf[0] = gain0
    on_to = capture_value(t)
    marked = 0
    if frm < 81:
        board[frm] |= SEE_GONE
        buf[64] = frm
        marked = 1
    side = 1 - us
    d = 0
    while d < _MAX_SWAPS:
        s, p = _least_valuable_attacker(board, to, side)
        if s < 0:
            break
        d += 1
        a = type_of(p)
        gain = on_to
        if a < GOLD and (_in_zone(side, to) or _in_zone(side, s)):  # recapture and promote
            gain += TYPE_VALUE[a + PROMOTED] - TYPE_VALUE[a]
            a += PROMOTED
        buf[d] = gain - buf[d - 1]
        board[s] |= SEE_GONE
        buf[64 + marked] = s
        marked += 1
        on_to = capture_value(a)
        side = 1 - side
        if max(-buf[d - 1], buf[d]) < 0:
            break
    while d > 0:
        buf[d - 1] = -max(-buf[d - 1], buf[d])
        d -= 1
    for i in range(marked):
        board[buf[64 + i]] &= ~SEE_GONE
    return buf[0]
