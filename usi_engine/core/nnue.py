"""NNUE inference in numba: accumulators kept lazily per ply, and the integer forward pass.

do_move only marks the new ply's accumulators stale (PosArrays.acc_ok).  When evaluate()
needs ply p, each perspective walks back to the nearest ply whose accumulator is valid and
replays the moves from there (a move changes at most two features: the moved piece, and the
captured piece going to the hand; a drop takes the last piece of its kind out of the hand).
The moves and the hands before each move are already in the position's histories (moves[],
captures[], hand_packs[]), so nothing else is recorded.  A HalfKP perspective whose own king
moved is refreshed (every feature index contains that king's square), from the king cache:
the last accumulator made with the king on that square, corrected for what changed since.

Arithmetic is YaneuraOu's: int16 accumulators (wrapping), ClippedReLU to 0..127 (uint8),
int32 dot products, ``>> 6`` between layers.  The dot products of the usual widths (inputs
a multiple of 32) are YaneuraOu's uint8 x int8 vector sequence, written as LLVM intrinsics
(core/intrinsics.py); other widths take plain loops.
"""

import numpy as np

from .types import (
    jit,
    NSQ,
    OCC_SPLIT,
    KING,
    HAND_NB,
    MOVE_NULL,
    DROP_BASE,
    base_type,
    moved_piece,
    moved_piece_after,
    move_from,
    move_to,
    make_piece,
    color_of,
    type_of,
)
from .board import ST_SIDE, ST_PLY, ST_KING, hand_count
from .network import (
    INFO_MODE,
    INFO_FV_SCALE,
    INFO_HALF,
    INFO_L1,
    INFO_L2,
    MODE_HALFKP,
    INFO_SUMS,
    KC_BOARD,
    KC_HANDS,
    KC_VALID,
)
from ..nnue.features import BOARD_BONA, HAND_BONA, FE_END, F_KING
from .intrinsics import dot4_u8_i8, dot_u8_i8, lowest_bit

MAX_REPLAY = 12  # plies replayed before a full refresh is cheaper
EVAL_LIMIT = 30000  # |evaluation| stays clear of the search's mate scores
WEIGHT_SCALE_BITS = 6


@jit()
def feature_offset(pos, persp):
    """HalfKP: own king square (seen from `persp`) * fe_end; K+P: 0."""
    if pos.net.info[INFO_MODE] != MODE_HALFKP:
        return 0
    ksq = pos.st[ST_KING + persp]
    return (BOARD_BONA[persp, make_piece(KING, persp), ksq] - F_KING) * FE_END


@jit()
def refresh_accumulator(pos, ply, persp):
    """acc[ply, persp] from the board and hands alone: under HalfKP from the king cache."""
    if pos.net.info[INFO_MODE] == MODE_HALFKP and pos.st[ST_KING + persp] >= 0:
        _refresh_from_king_cache(pos, ply, persp)
    else:
        refresh_in_full(pos, pos.acc[ply, persp], persp)
    pos.acc_ok[ply, persp] = 1


@jit()
def _refresh_from_king_cache(pos, ply, persp):
    """A HalfKP refresh (the king moved, or replay is too long) as Stockfish's "Finny
    tables" do it: the cache keeps, for each king square, the last accumulator made there
    with the board and hands it was made from; only the squares and hand counts that differ
    since are added and taken away (a few rows of the feature table, not all 38)."""
    w = pos.net.ft
    h = w.shape[1]
    entry = pos.king_cache[persp, pos.st[ST_KING + persp]]
    acc = entry[:h]
    if entry[h + KC_VALID] == 0:  # first use: the biases, an empty board and hands
        for j in range(h):
            acc[j] = w[w.shape[0] - 1, j]
        entry[h + KC_VALID] = 1
    offset = feature_offset(pos, persp)
    board = pos.board
    cached = entry[h + KC_BOARD : h + KC_BOARD + NSQ]
    for half in range(2):
        bits = _changed_bits(board, cached, half)
        while bits != 0:
            sq = half * OCC_SPLIT + lowest_bit(bits)
            bits &= bits - 1
            new = board[sq]
            old = cached[sq]
            if old != 0 and type_of(old) != KING:
                _sub_row(acc, w, offset + BOARD_BONA[persp, old, sq])
            if new != 0 and type_of(new) != KING:
                _add_row(acc, w, offset + BOARD_BONA[persp, new, sq])
            cached[sq] = new
    for c in range(2):
        for pt in range(1, 8):
            at = h + KC_HANDS + c * HAND_NB + pt
            new = pos.hands[c, pt]
            old = entry[at]
            base = offset + HAND_BONA[persp, c, pt]
            for k in range(new, old):
                _sub_row(acc, w, base + k)
            for k in range(old, new):
                _add_row(acc, w, base + k)
            entry[at] = new
    dst = pos.acc[ply, persp]
    for j in range(h):
        dst[j] = acc[j]


@jit(inline="always")
def _changed_bits(board, cached, half):
    """The bit set of the squares in one half of the board (OCC_SPLIT) whose piece differs
    from `cached`.  The compare runs over the whole half without a branch, which LLVM turns
    into vector code; the caller walks the few set bits."""
    lo = half * OCC_SPLIT
    bits = np.int64(0)
    for sq in range(lo, min(lo + OCC_SPLIT, NSQ)):
        bits |= np.int64(board[sq] != cached[sq]) << (sq - lo)
    return bits


@jit(inline="always")
def _add_row(acc, w, f):
    for j in range(acc.shape[0]):
        acc[j] += w[f, j]


@jit(inline="always")
def _sub_row(acc, w, f):
    for j in range(acc.shape[0]):
        acc[j] -= w[f, j]


@jit()
def refresh_in_full(pos, acc, persp):
    """`acc` from the biases and every feature of the board and hands."""
    net = pos.net
    w = net.ft
    h = acc.shape[0]
    bias = w.shape[0] - 1  # the last row holds the biases
    for j in range(h):
        acc[j] = w[bias, j]
    halfkp = net.info[INFO_MODE] == MODE_HALFKP
    offset = feature_offset(pos, persp)
    board = pos.board
    for sq in range(NSQ):
        p = board[sq]
        if p == 0 or (halfkp and type_of(p) == KING):
            continue
        f = offset + BOARD_BONA[persp, p, sq]
        for j in range(h):
            acc[j] += w[f, j]
    for c in range(2):
        for pt in range(1, 8):
            base = offset + HAND_BONA[persp, c, pt]
            for k in range(pos.hands[c, pt]):
                for j in range(h):
                    acc[j] += w[base + k, j]


@jit(inline="always")
def _replay(pos, s, persp, offset, halfkp):
    """acc[s + 1, persp] from acc[s, persp] and the move played at ply s.  Only the other
    side's king moves here under HalfKP (kings are no HalfKP features, but what they capture
    is)."""
    src = pos.acc[s, persp]
    dst = pos.acc[s + 1, persp]
    w = pos.net.ft
    h = src.shape[0]
    m = pos.moves[s]
    if m == MOVE_NULL:
        for j in range(h):
            dst[j] = src[j]
        return
    piece = moved_piece(m)
    us = color_of(piece)
    to = move_to(m)
    frm = move_from(m)
    rem0 = -1  # the moved piece leaves its square or the hand ...
    add0 = -1  # ... and arrives on `to`
    if not (halfkp and type_of(piece) == KING):
        add0 = offset + BOARD_BONA[persp, moved_piece_after(m), to]
        if frm >= DROP_BASE:
            pt = frm - DROP_BASE
            rem0 = offset + HAND_BONA[persp, us, pt] + hand_count(pos.hand_packs[s, us], pt) - 1
        else:
            rem0 = offset + BOARD_BONA[persp, piece, frm]
    captured = pos.captures[s]
    if captured == 0:
        if rem0 < 0:
            for j in range(h):
                dst[j] = src[j]
        else:
            for j in range(h):
                dst[j] = src[j] - w[rem0, j] + w[add0, j]
        return
    bt = base_type(type_of(captured))
    rem1 = offset + BOARD_BONA[persp, captured, to]  # the captured piece goes
    add1 = offset + HAND_BONA[persp, us, bt] + hand_count(pos.hand_packs[s, us], bt)  # to the hand
    if rem0 < 0:
        for j in range(h):
            dst[j] = src[j] - w[rem1, j] + w[add1, j]
    else:
        for j in range(h):
            dst[j] = src[j] - w[rem0, j] + w[add0, j] - w[rem1, j] + w[add1, j]


@jit(inline="always")
def update_accumulator(pos, persp):
    """Make acc[current ply, persp] valid: replay from the nearest valid ply, or refresh."""
    ply = pos.st[ST_PLY]
    if pos.acc_ok[ply, persp]:
        return
    halfkp = pos.net.info[INFO_MODE] == MODE_HALFKP
    s = ply
    while s > 0 and pos.acc_ok[s, persp] == 0 and ply - s < MAX_REPLAY:
        piece = moved_piece(pos.moves[s - 1])
        if halfkp and piece == make_piece(KING, persp) and pos.moves[s - 1] != MOVE_NULL:
            break
        s -= 1
    if pos.acc_ok[s, persp] == 0:
        refresh_accumulator(pos, ply, persp)
        return
    offset = feature_offset(pos, persp)
    while s < ply:
        _replay(pos, s, persp, offset, halfkp)
        s += 1
        pos.acc_ok[s, persp] = 1


@jit(specialise=("n_in",))
def _affine_relu_simd(w, w_off, b, b_off, n_out, n_in, x, x_off, y, y_off, sums):
    """y[y_off + i] = clamp((b[b_off + i] + w_i . x[x_off:x_off + n_in]) >> 6, 0, 127) with
    w_i the i-th row of the n_out x n_in matrix at w[w_off]; x and y uint8.  Four rows at a
    time by the vector intrinsics (core/intrinsics.py) into the int32 scratch `sums`.
    `n_in` is a constant multiple of 32 (one compilation each); n_out is a multiple of 4
    (network_arrays checks it)."""
    for i in range(0, n_out, 4):
        dot4_u8_i8(x, x_off, w, w_off + i * n_in, n_in, sums, i)
    # views indexed from 0 (see _affine_relu): with `b[b_off + i]` and `y[y_off + i]` this
    # loop compiled to gathers and byte-by-byte stores, a quarter of the forward pass
    bias = b[b_off : b_off + n_out]
    out = y[y_off : y_off + n_out]
    for i in range(n_out):
        # int32 wraps as YaneuraOu's sums do
        out[i] = _clipped(np.int32(bias[i] + sums[i]) >> WEIGHT_SCALE_BITS)


@jit()
def _affine_relu(w, w_off, b, b_off, n_out, n_in, x, x_off, y, y_off):
    """The same layer for any width, in plain loops (widths the vector code does not take).
    The loops index views: with indices it cannot prove non-negative LLVM does not
    vectorise."""
    xs = x[x_off : x_off + n_in]
    bias = b[b_off : b_off + n_out]
    out = y[y_off : y_off + n_out]
    for i in range(n_out):
        row = w[w_off + i * n_in : w_off + (i + 1) * n_in]
        s = 0
        for j in range(n_in):
            s += np.int32(row[j]) * np.int32(xs[j])
        out[i] = _clipped(np.int32(bias[i] + s) >> WEIGHT_SCALE_BITS)


@jit(inline="always")
def _clipped(v):
    return min(max(v, 0), 127)


# inlined: a call that passes a whole position costs ~150 ns here, a third of the forward pass
@jit(inline="always")
def raw_output(pos):
    """The network's int32 output for the current position, side to move's view."""
    ply = pos.st[ST_PLY]
    if pos.acc_ok[ply, 0] == 0:
        update_accumulator(pos, 0)
    if pos.acc_ok[ply, 1] == 0:
        update_accumulator(pos, 1)
    net = pos.net
    h = net.info[INFO_HALF]
    l1 = net.info[INFO_L1]
    l2 = net.info[INFO_L2]
    us = pos.st[ST_SIDE]
    buf = pos.nn_buf
    for p in range(2):  # ClippedReLU of the transformed features, side to move first
        src = pos.acc[ply, us if p == 0 else 1 - us]
        dst = buf[p * h : (p + 1) * h]
        for j in range(h):
            dst[j] = _clipped(src[j])
    sums = buf[net.info[INFO_SUMS] :].view(np.int32)
    w2 = l1 * 2 * h  # offsets of the 2nd and 3rd layers in net.dense
    w3 = w2 + l2 * l1
    out1 = 2 * h  # and of each layer's outputs in buf
    out2 = out1 + l1
    # the common widths as constants: each compiles its own unrolled vector code
    if h == 64:
        _affine_relu_simd(net.dense, 0, net.bias, 0, l1, 128, buf, 0, buf, out1, sums)
    elif h == 256:
        _affine_relu_simd(net.dense, 0, net.bias, 0, l1, 512, buf, 0, buf, out1, sums)
    else:
        _affine_relu(net.dense, 0, net.bias, 0, l1, 2 * h, buf, 0, buf, out1)
    if l1 == 32:
        _affine_relu_simd(net.dense, w2, net.bias, l1, l2, 32, buf, out1, buf, out2, sums)
    else:
        _affine_relu(net.dense, w2, net.bias, l1, l2, l1, buf, out1, buf, out2)
    if l2 == 32:
        s = dot_u8_i8(buf, out2, net.dense, w3, 32)
    else:
        row = net.dense[w3 : w3 + l2]
        xs = buf[out2 : out2 + l2]
        s = 0
        for j in range(l2):
            s += np.int32(row[j]) * np.int32(xs[j])
    return np.int32(net.bias[l1 + l2] + s)


@jit(inline="always")
def nnue_evaluate(pos):
    """raw_output / FV_SCALE rounded toward zero (YaneuraOu's value), within EVAL_LIMIT."""
    raw = np.int64(raw_output(pos))
    fv = pos.net.info[INFO_FV_SCALE]
    v = raw // fv if raw >= 0 else -((-raw) // fv)
    return max(-EVAL_LIMIT, min(EVAL_LIMIT, v))


@jit()
def accumulators_equal_refresh(pos, scratch_pos):
    """Test helper: 1 if both current accumulators equal a refresh in full (made in
    scratch_pos, a copy of pos with the same network)."""
    ply = pos.st[ST_PLY]
    for persp in range(2):
        update_accumulator(pos, persp)
        refresh_in_full(scratch_pos, scratch_pos.acc[ply, persp], persp)
        for j in range(pos.acc.shape[2]):
            if pos.acc[ply, persp, j] != scratch_pos.acc[ply, persp, j]:
                return 0
    return 1
