"""PackedSfenValue shards damaged: truncated mid-record, bits flipped, bytes overwritten,
random bytes.  Reading one gives its records or a ValueError naming the file, never another
exception and never a crash of cshogi's decoder (which trusts its input: see psv.py).

The shards are real: tests/data/training, made by scripts/gensfen.py.
"""

from __future__ import annotations

import random
from pathlib import Path

import cshogi
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzing import CASES, byte_mutation, fuzz_settings
from usi_engine.training.data import psv
from usi_engine.training.learn import dataset as ds

DATA = Path(__file__).resolve().parent / "data" / "training"
SHARD = DATA / "shard_00000.bin"
SHARD_BYTES = SHARD.read_bytes()


def read_or_refuse(path: Path) -> np.ndarray | None:
    """The property: the decoded positions, or a ValueError that names the file."""
    CASES["psv shard"] += 1
    try:
        positions = ds.load_positions([str(path)])
    except ValueError as exc:
        assert str(path) in str(exc), exc
        return None
    records = psv.read_shard(str(path))
    assert len(positions) == len(records) > 0
    for rec in records[:3]:
        psv.record_sfen(rec)
    return records


@fuzz_settings()
@given(data=st.data())
def test_damaged_shard(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("psv") / "shard.bin"
    damaged = byte_mutation(SHARD_BYTES, data.draw)
    path.write_bytes(damaged)
    records = read_or_refuse(path)
    if len(damaged) % psv.RECORD_BYTES:
        assert records is None  # a torn record is never read as one


@fuzz_settings()
@given(
    raw=st.binary(min_size=32, max_size=32 * 40).map(
        lambda b: b[: len(b) // psv.RECORD_BYTES * psv.RECORD_BYTES]
    )
)
def test_random_shard(tmp_path_factory, raw):
    path = tmp_path_factory.mktemp("psv") / "random.bin"
    path.write_bytes(raw)
    read_or_refuse(path)


@fuzz_settings()
@given(packed=st.binary(min_size=32, max_size=32))
def test_packed_sfen_check_keeps_cshogi_safe(packed):
    """Whatever the check lets through, cshogi decodes or refuses with its RuntimeError,
    never crashing (a crash ends the test process: the property is that it never happens)."""
    CASES["packed sfen"] += 1
    a = np.frombuffer(packed, np.uint8).copy()
    if psv.packed_sfen_errors(a.reshape(1, 32))[0] is None:
        board = cshogi.Board()
        try:
            board.set_psfen(a)
        except RuntimeError:
            return
        board.sfen()


def _packed_after_random_moves(board, rng, most: int) -> np.ndarray:
    """`board` after up to `most` random legal moves, as one packed SFEN (cshogi's own)."""
    for _ in range(rng.randrange(0, most)):
        moves = list(board.legal_moves)
        if not moves:
            break
        board.push(rng.choice(moves))
    out = np.zeros((1, 32), np.uint8)
    board.to_psfen(out[0])
    return out


def test_check_accepts_every_position_cshogi_packs():
    """The check reads the format as cshogi writes it: random playouts (promotions, many
    pieces in hand) and the shipped shards all pass."""
    rng = random.Random(7)
    packed = [psv.read_shard(str(f))["sfen"] for f in sorted(DATA.glob("*.bin"))]
    packed += [_packed_after_random_moves(cshogi.Board(), rng, 250) for _ in range(200)]
    packed += [
        _packed_after_random_moves(cshogi.Board(sfen), rng, 30)
        for sfen in PIECES_IN_THE_BOX
        for _ in range(20)
    ]
    errors = psv.packed_sfen_errors(np.concatenate(packed))
    assert errors.count(None) == len(errors) >= 900


# positions without the full set: the missing pieces are packed "in the box" (a gold as a
# promoted silver in hand with the colour bit set); the check counted those golds as silvers
# at first
PIECES_IN_THE_BOX = [
    "4k4/9/4p4/9/9/9/9/4R4/4K4 b - 1",
    "4k4/2+P6/9/9/9/9/9/9/4K4 b - 1",
    "4k4/9/9/9/9/9/9/9/4K4 b G 1",
    "8k/9/9/9/9/9/9/9/K8 w 2r2b4g4s4n4l18p 1",
    "lnsgkgsnl/9/9/9/9/9/9/9/LNSGKGSNL b - 1",
]


def test_truncated_shard_names_the_file(tmp_path):
    path = tmp_path / "cut.bin"
    path.write_bytes(SHARD_BYTES[:-7])
    with pytest.raises(ValueError) as err:
        psv.read_shard(str(path))
    assert str(err.value) == (
        f"{path}: {len(SHARD_BYTES) - 7} bytes is not a multiple of the "
        f"40-byte PackedSfenValue record (truncated?)"
    )


def test_empty_and_missing_shards_name_the_file(tmp_path):
    (tmp_path / "empty.bin").write_bytes(b"")
    for name, why in (("empty.bin", "empty file"), ("missing.bin", "No such file")):
        with pytest.raises(ValueError, match=why) as err:
            psv.read_shard(str(tmp_path / name))
        assert str(tmp_path / name) in str(err.value)


# --- faults the fuzzing found, kept as regressions -------------------------------------------
# 32 random bytes on which cshogi's set_psfen crashed the process (a segmentation fault);
# the first of many: about one random record in a few hundred did.
CRASHING_PSFEN = bytes.fromhex("accd1976c643dff77a657835146c5fb828c5291becf253ac350f39d6d2f8dad6")


def test_psfen_that_crashed_cshogi_is_refused(tmp_path):
    record = np.zeros(1, psv.PSV_DTYPE)
    record["sfen"][0] = np.frombuffer(CRASHING_PSFEN, np.uint8)
    with pytest.raises(ValueError, match="bad packed sfen"):
        psv.board_of(record[0])
    path = tmp_path / "crash.bin"
    record.tofile(path)
    with pytest.raises(ValueError, match="record 0 .* is not a packed SFEN") as err:
        ds.load_positions([str(path)])
    assert str(path) in str(err.value)
