"""Static exchange evaluation that knows shogi: every captured piece goes to the capturer's
hand, so winning a piece gains its board value *and* its value in hand, and a capture that
can promote (the moving piece, or any recapturer whose path touches the promotion zone) does.

The exchange on the destination square is played out with the least valuable attacker each
time; sliders behind a piece that captured join in (x-rays).  Pins and drops are ignored: a
drop cannot capture.  The eight lines through the square are walked once, to the first piece
on each; when that piece takes part, only its line is walked on, to the piece behind it.
Among equally valuable attackers the first line in direction order goes first, then the
knights.  The board is only read.

The pruning and the picker mostly ask a threshold question ("does the exchange keep at
least t?"): `see_ge` answers it, and `surely_keeps` settles it without the exchange where
the first capture and the recapture decide it.
"""

from .types import (
    jit,
    PAWN,
    ROOK,
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
)
from .attacks import RAY, RAY_LEN, OPPOSITE, NEAR_MASK, SLIDE_MASK, KNIGHT_TO
from .weights import TYPE_VALUE, HAND_VALUE

SEE_BUF = 128  # scratch: the swap list's gains in [0, _MAX_SWAPS), the lines in [_LINES, +8)
_MAX_SWAPS = 60
_LINES = 64  # buf[_LINES + d]: index k of the next piece on the line from `to` in direction d, -1 if none
_NO_ATTACKER = -1
_KNIGHT_SLOT = 8  # _cheapest_attacker's answer for the knight on KNIGHT_TO[1 - side, to, i]: 8 + i
# The most a recapture's promotion can add to what it takes (a pawn that becomes a tokin)
_MAX_PROMOTION_GAIN = max(TYPE_VALUE[t + PROMOTED] - TYPE_VALUE[t] for t in range(PAWN, ROOK + 1))


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


@jit(inline="always")
def _next_piece(board, to, d, k, frm):
    """Index of the first piece from the k-th square on the line from `to` in direction d,
    or -1; the square `frm`, which the capturing piece left, counts as empty."""
    n = RAY_LEN[to, d]
    while k < n:
        s = RAY[to, d, k]
        if board[s] != 0 and s != frm:
            return k
        k += 1
    return -1


@jit(inline="always")
def _cheapest_attacker(board, to, side, buf, knights_gone):
    """Of side's pieces that attack `to` now: the line (0-7) of the cheapest, or
    _KNIGHT_SLOT + i for its knight on KNIGHT_TO[1 - side, to, i], or _NO_ATTACKER.
    Only the first piece on each line (buf[_LINES + d]) can attack; bit 2 * side + i of
    `knights_gone` marks a knight that has taken part."""
    best = _NO_ATTACKER
    best_v = 1 << 30
    for d in range(8):
        k = buf[_LINES + d]
        if k < 0:
            continue
        p = board[RAY[to, d, k]]
        if color_of(p) == side and ((NEAR_MASK[p] if k == 0 else SLIDE_MASK[p]) >> OPPOSITE[d]) & 1:
            v = TYPE_VALUE[type_of(p)]
            if v < best_v:
                best_v = v
                best = d
    if TYPE_VALUE[KNIGHT] < best_v:
        knight = make_piece(KNIGHT, side)
        for i in range(2):
            s = KNIGHT_TO[1 - side, to, i]
            if s >= 0 and board[s] == knight and not (knights_gone >> (2 * side + i)) & 1:
                return _KNIGHT_SLOT + i
    return best


@jit(inline="always")
def _first_capture(board, m):
    """What move m gains at once (the piece it takes, into our hand, and its promotion),
    and what the opponent gains by taking the piece on its destination."""
    to = move_to(m)
    t = type_of(moved_piece(m))
    victim = type_of(board[to])
    gain = capture_value(victim) if victim != 0 else 0
    if is_promotion(m):
        gain += TYPE_VALUE[t + PROMOTED] - TYPE_VALUE[t]
        t += PROMOTED
    return gain, capture_value(t)


@jit(inline="always")
def _kept_after_recapture(gain, lost, m, threshold):
    """Whether move m, which takes `gain` at once and leaves a piece worth `lost` to take
    back, keeps at least `threshold` whatever follows: the side making m can stop after the
    opponent's recapture, which promotes at most one piece.  A legal king move stands on a
    square no piece of theirs attacks, so nothing recaptures."""
    if type_of(moved_piece(m)) == KING:
        return gain >= threshold
    return gain - lost - _MAX_PROMOTION_GAIN >= threshold


@jit(inline="always")
def surely_keeps(board, m, threshold):
    """True where the first two captures alone show see(board, m, buf) >= threshold for the
    legal move m (the picker asks this before the exact SEE of a capture)."""
    gain, lost = _first_capture(board, m)
    return _kept_after_recapture(gain, lost, m, threshold)


@jit(inline="always")
def see_ge(board, m, threshold, buf):
    """see(board, m, buf) >= threshold for the legal move m, with the exchange played out only
    where its first captures leave the answer open: it never ends above what m takes at once."""
    gain, lost = _first_capture(board, m)
    if gain < threshold:
        return False
    if _kept_after_recapture(gain, lost, m, threshold):
        return True
    return see(board, m, buf) >= threshold


@jit()
def see(board, m, buf):
    """Material balance of move m for the side making it after the exchange on its
    destination (board + hand values), both sides stopping whenever that pays.  buf is
    int64[SEE_BUF] scratch."""
    to = move_to(m)
    frm = move_from(m)
    us = color_of(moved_piece(m))
    gain0, on_to = _first_capture(board, m)
    buf[0] = gain0
    for d in range(8):
        buf[_LINES + d] = _next_piece(board, to, d, 0, frm)
    knights_gone = 0
    for i in range(2):  # our knight that made the move is gone already
        if KNIGHT_TO[1 - us, to, i] == frm:
            knights_gone |= 1 << (2 * us + i)
    side = 1 - us
    n = 0
    while n < _MAX_SWAPS:
        slot = _cheapest_attacker(board, to, side, buf, knights_gone)
        if slot == _NO_ATTACKER:
            break
        if slot >= _KNIGHT_SLOT:
            s = KNIGHT_TO[1 - side, to, slot - _KNIGHT_SLOT]
            knights_gone |= 1 << (2 * side + slot - _KNIGHT_SLOT)
        else:
            k = buf[_LINES + slot]
            s = RAY[to, slot, k]
            buf[_LINES + slot] = _next_piece(board, to, slot, k + 1, frm)  # what stood behind it
        n += 1
        a = type_of(board[s])
        gain = on_to
        if a < GOLD and (_in_zone(side, to) or _in_zone(side, s)):  # recapture and promote
            gain += TYPE_VALUE[a + PROMOTED] - TYPE_VALUE[a]
            a += PROMOTED
        buf[n] = gain - buf[n - 1]
        on_to = capture_value(a)
        side = 1 - side
        if max(-buf[n - 1], buf[n]) < 0:
            break
    while n > 0:
        buf[n - 1] = -max(-buf[n - 1], buf[n])
        n -= 1
    return buf[0]
