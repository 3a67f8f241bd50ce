"""Positions labelled by the hand-made evaluation (usi_engine/training/data/distill.py): every
label is the engine's static evaluation of the record's position, no position is in check,
the same seed gives the same bytes, a finished file is kept, bad settings are refused."""

import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from usi_engine.position import Position
from usi_engine.training.data import psv
from usi_engine.training.data.distill import DistillConfig, distill_records, run

REPO = Path(__file__).resolve().parent.parent
SHARD = REPO / "tests" / "data" / "training" / "shard_00000.bin"


def some_records(n=40):
    return psv.read_records(str(SHARD))[:n]


def test_labels_are_the_hand_made_evaluation():
    records = some_records()
    made = distill_records(records, DistillConfig((), "", variants=2), random.Random(5))
    assert len(records) < len(made) <= 3 * len(records)
    originals = {bytes(r["sfen"]) for r in records}
    assert sum(bytes(m["sfen"]) in originals for m in made) >= len(records)  # none was in check
    for rec in made:
        pos = Position(psv.record_sfen(rec))
        assert not pos.is_check()
        assert int(rec["score"]) == pos.evaluate()
        assert rec["move"] == 0 and rec["game_result"] == 0
    assert np.std(made["score"].astype(float)) > 100


def test_same_seed_same_bytes_and_a_finished_file_is_kept(tmp_path):
    cfg = DistillConfig((str(SHARD),), str(tmp_path / "a"), variants=1, seed=3)
    run(cfg, log=lambda s: None)
    first = (tmp_path / "a" / "distill_00000.bin").read_bytes()
    run(DistillConfig((str(SHARD),), str(tmp_path / "b"), variants=1, seed=3), log=lambda s: None)
    assert (tmp_path / "b" / "distill_00000.bin").read_bytes() == first
    run(DistillConfig((str(SHARD),), str(tmp_path / "c"), variants=1, seed=4), log=lambda s: None)
    assert (tmp_path / "c" / "distill_00000.bin").read_bytes() != first
    (tmp_path / "a" / "distill_00000.bin").write_bytes(first[:400])  # a shorter, whole file
    summary = run(cfg, log=lambda s: None)
    assert summary["output_positions"] == 10  # kept, not remade


def test_bad_settings_are_refused(tmp_path):
    with pytest.raises(ValueError, match="max_random at least 1"):
        run(DistillConfig((str(SHARD),), str(tmp_path), max_random=0), log=lambda s: None)
    r = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "distill_data.py"),
            str(tmp_path / "none"),
            "--out",
            str(tmp_path / "o"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert r.returncode == 2 and "no such file or folder" in r.stderr
    assert not (tmp_path / "o").exists()
