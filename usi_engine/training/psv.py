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
SCORE_LIMIT = 32000          # int16 range, kept clear of YaneuraOu's mate values


def pack_sfen(sfen: str) -> np.ndarray:
    """The 32-byte packed SFEN of a position (the move number is not part of it)."""
    board = cshogi.Board(sfen)
    out = np.zeros(32, np.uint8)
    board.to_psfen(out)
    return out


def board_of(record: np.void | np.ndarray) -> cshogi.Board:
    """A cshogi board set from a record's packed SFEN; ValueError if it does not decode."""
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
    """All records of a file; ValueError if its size is not a whole number of records."""
    size = os.path.getsize(path)
    if size % RECORD_BYTES:
        raise ValueError(f"{path}: {size} bytes is not a multiple of the "
                         f"{RECORD_BYTES}-byte PackedSfenValue record (truncated?)")
    if mmap:
        return np.memmap(path, PSV_DTYPE, mode="r") if size else np.zeros(0, PSV_DTYPE)
    return np.fromfile(path, PSV_DTYPE)
