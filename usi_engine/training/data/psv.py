"""YaneuraOu's PackedSfenValue training records, read and written with cshogi.

A record is 40 bytes: the 32-byte packed SFEN (Huffman-coded board and hands, side to
move), the search score from the side to move's view (int16), the best move as a 16-bit
move (``to | from << 7 | promote << 14``, a drop has ``from = 80 + piece type``), the game
ply (YaneuraOu's: the SFEN move number, 1 at the start position), the game result from the
side to move's view (1 win, 0 draw, -1 loss) and a padding byte.  cshogi does the bit
packing (`Board.to_psfen` / `set_psfen`) and owns the numpy dtype, so files written here are
the ones YaneuraOu's `learn` and the shogi forks of nnue-pytorch read.

>>> rec = make_record("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1",
...                   35, "7g7f", 1, WIN)
>>> record_sfen(rec), int(rec["score"]), record_move(rec)
('lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1', 35, '7g7f')
"""

from __future__ import annotations

import os

import cshogi
import numpy as np

PSV_DTYPE = np.dtype(cshogi.PackedSfenValue)
RECORD_BYTES = 40
assert PSV_DTYPE.itemsize == RECORD_BYTES, PSV_DTYPE

WIN, DRAW, LOSS = 1, 0, -1
SCORE_LIMIT = 32000  # int16 range, kept clear of YaneuraOu's mate values


# --- checking a packed SFEN before cshogi decodes it ----------------------------------------
# cshogi's decoder trusts its input: a king square past 81 or too many pieces of a type
# crash the process (a segmentation fault, not an exception).  A file brought from elsewhere
# is therefore read here first, with the format's own Huffman codes (bits in LSB-first order):
# side to move (1 bit), the two kings' squares (7 bits each), then each other square: empty
# 0, pawn 01, lance 0011, knight 1011, silver 0111, gold 01111, bishop 011111, rook 111111
# (the bits as read, first bit first), followed by a promotion bit (not for gold) and a colour
# bit; then pieces in hand, the same code without its first bit, until bit 256.  A piece
# that is neither on the board nor in a hand (a problem's position) is written as a piece in
# hand marked promoted, "in the box"; a gold, which has no promotion bit, as a promoted
# silver with the colour bit set.
PACKED_BITS = 256
_PAWN, _LANCE, _KNIGHT, _SILVER, _GOLD, _BISHOP, _ROOK = range(1, 8)
# how many of each piece type the 40 pieces hold (kings apart)
_MOST = np.array([0, 18, 4, 4, 4, 4, 2, 2], np.int64)


class _BitReader:
    """Reads the packed SFENs of many records at once: one cursor per record."""

    def __init__(self, packed: np.ndarray) -> None:
        bits = np.unpackbits(np.asarray(packed, np.uint8).reshape(-1, 32), axis=1, bitorder="little")
        # room to read past the end: a record that does is refused, never read out of bounds
        self.bits = np.concatenate([bits, np.zeros((len(bits), 16), np.uint8)], axis=1)
        self.cursor = np.zeros(len(bits), np.int64)
        self.rows = np.arange(len(bits))

    def read(self, active: np.ndarray, count: int = 1) -> np.ndarray:
        """The next `count` bits as an integer (first bit lowest) where `active`, else 0."""
        value = np.zeros(len(self.cursor), np.int64)
        for k in range(count):
            pos = np.minimum(self.cursor, PACKED_BITS + 15)
            value |= (self.bits[self.rows, pos].astype(np.int64) & active) << k
            self.cursor += active
        return value


def _piece_type(reader: _BitReader, active: np.ndarray, in_hand: bool) -> np.ndarray:
    """The piece type code read at each active record's cursor (0 empty; -1 inactive)."""
    kind = np.full(len(active), -1, np.int64)
    act = active.copy()
    if not in_hand:  # a board square: 0 is an empty square
        b = reader.read(act).astype(bool)
        kind[act & ~b] = 0
        act &= b
    b = reader.read(act).astype(bool)
    kind[act & ~b] = _PAWN
    act &= b
    b2, b3 = (reader.read(act).astype(bool) for _ in range(2))
    kind[act & ~b2 & ~b3] = _LANCE
    kind[act & ~b2 & b3] = _KNIGHT
    kind[act & b2 & ~b3] = _SILVER
    act &= b2 & b3
    b = reader.read(act).astype(bool)
    kind[act & ~b] = _GOLD
    act &= b
    b = reader.read(act).astype(bool)
    kind[act & ~b] = _BISHOP
    kind[act & b] = _ROOK
    return kind


def packed_sfen_errors(packed: np.ndarray) -> list[str | None]:
    """For each packed SFEN (uint8[N, 32]), why it is not a position the format can hold
    (None when it is): a king off the board, more pieces of a type than shogi has, or codes
    that do not end exactly at bit 256."""
    reader = _BitReader(packed)
    n = len(reader.cursor)
    errors: list[str | None] = [None] * n
    every = np.ones(n, bool)
    reader.read(every)  # side to move
    kings = np.stack([reader.read(every, 7), reader.read(every, 7)], axis=1)
    counts = np.zeros((n, 8), np.int64)
    for sq in range(81):
        active = (kings[:, 0] != sq) & (kings[:, 1] != sq)
        kind = _piece_type(reader, active, in_hand=False)
        piece = kind > 0
        reader.read(piece & (kind != _GOLD))  # promoted
        reader.read(piece)  # colour
        np.add.at(counts, (np.flatnonzero(piece), kind[piece]), 1)
    for _ in range(int(_MOST.sum())):
        active = reader.cursor < PACKED_BITS
        if not active.any():
            break
        kind = _piece_type(reader, active, in_hand=True)
        in_box = reader.read(active & (kind != _GOLD)).astype(bool)
        white = reader.read(active).astype(bool)  # colour
        kind[in_box & white & (kind == _SILVER)] = _GOLD  # a gold in the box
        np.add.at(counts, (np.flatnonzero(active), kind[active]), 1)
    too_many = (counts > _MOST).any(axis=1)
    for i in np.flatnonzero(
        (kings >= 81).any(axis=1) | (kings[:, 0] == kings[:, 1]) | too_many | (reader.cursor != PACKED_BITS)
    ):
        if kings[i].max() >= 81 or kings[i, 0] == kings[i, 1]:
            errors[i] = f"king squares {kings[i, 0]} and {kings[i, 1]} (0-80, distinct)"
        elif too_many[i]:
            errors[i] = f"more pieces than shogi has ({counts[i, 1:].tolist()} of P L N S G B R)"
        else:
            errors[i] = f"the codes end at bit {reader.cursor[i]}, not {PACKED_BITS}"
    return errors


def check_records(records: np.ndarray, source: str) -> None:
    """ValueError naming `source` and the first record whose packed SFEN is not a position."""
    errors = packed_sfen_errors(np.asarray(records["sfen"]))
    for i in np.flatnonzero(~np.isin(records["game_result"], (WIN, DRAW, LOSS))):
        errors[i] = errors[i] or f"game result {int(records['game_result'][i])} (1, 0 or -1)"
    bad = [i for i, e in enumerate(errors) if e is not None]
    if bad:
        raise ValueError(
            f"{source}: record {bad[0]} (of {len(errors)}) is not a packed SFEN: "
            f"{errors[bad[0]]}" + (f"; {len(bad) - 1} more bad records" if len(bad) > 1 else "")
        )


def board_of(record: np.void | np.ndarray) -> cshogi.Board:
    """A cshogi board set from a record's packed SFEN; ValueError if it does not decode."""
    error = packed_sfen_errors(np.asarray(record["sfen"]).reshape(1, 32))[0]
    if error is not None:
        raise ValueError(f"bad packed sfen: {error}")
    board = cshogi.Board()
    try:
        board.set_psfen(np.ascontiguousarray(record["sfen"]))
    except RuntimeError as exc:
        raise ValueError(f"bad packed sfen: {exc}") from None
    return board


def record_sfen(record: np.void) -> str:
    """The SFEN of a record, with its game ply as the move number."""
    fields = board_of(record).sfen().split()
    return " ".join(fields[:3] + [str(max(1, int(record["gamePly"])))])


def record_move(record: np.void) -> str:
    """The record's best move as USI text."""
    board = board_of(record)
    return cshogi.move_to_usi(board.move_from_move16(int(record["move"])))


def make_record(sfen: str, score: int, move_usi: str, game_ply: int, result: int) -> np.ndarray:
    """One PackedSfenValue (a 0-d structured array).

    score: from the side to move's view, clipped to the int16 range; game_ply: YaneuraOu's
    (the SFEN move number); result: WIN, DRAW or LOSS for the side to move."""
    if result not in (WIN, DRAW, LOSS):
        raise ValueError(f"result must be 1, 0 or -1, got {result!r}")
    board = cshogi.Board(sfen)
    move = board.move_from_usi(move_usi)
    if move == 0 or not board.is_legal(move):
        raise ValueError(f"illegal move {move_usi!r} in {sfen}")
    rec = np.zeros((), PSV_DTYPE)
    board.to_psfen(rec["sfen"])
    rec["score"] = max(-SCORE_LIMIT, min(SCORE_LIMIT, int(score)))
    rec["move"] = cshogi.move16(move)
    rec["gamePly"] = max(0, min(65535, int(game_ply)))
    rec["game_result"] = result
    return rec


def write_records(path: str, records: np.ndarray) -> None:
    """Write records atomically: a reader never sees a half-written file."""
    records = np.asarray(records, PSV_DTYPE)
    tmp = f"{path}.tmp{os.getpid()}"
    records.tofile(tmp)
    os.replace(tmp, path)


def read_records(path: str, mmap: bool = False) -> np.ndarray:
    """All records of a file; ValueError if it is missing or its size is not a whole number
    of records (the records themselves are checked by `check_records`)."""
    try:
        size = os.path.getsize(path)
    except OSError as exc:
        raise ValueError(f"{path}: {exc.strerror or exc}") from None
    if os.path.isdir(path):
        raise ValueError(f"{path}: a folder, not a PackedSfenValue file")
    if size % RECORD_BYTES:
        raise ValueError(
            f"{path}: {size} bytes is not a multiple of the "
            f"{RECORD_BYTES}-byte PackedSfenValue record (truncated?)"
        )
    if mmap:
        return np.memmap(path, PSV_DTYPE, mode="r") if size else np.zeros(0, PSV_DTYPE)
    return np.fromfile(path, PSV_DTYPE)


def read_shard(path: str) -> np.ndarray:
    """The records of one shard, checked: ValueError names the file and the problem."""
    records = read_records(path)
    if len(records) == 0:
        raise ValueError(f"{path}: empty file, no PackedSfenValue record")
    check_records(records, path)
    return records
