"""Long jobs killed with SIGKILL in the middle and started again with the same command: they
go on where they stopped, no file is torn, nothing finished is written twice, and the result
is byte for byte the one of a run never stopped (same seed).

Each job is a real, tiny run of its script: gensfen (self-play shards), rescore (our own
engine as the teacher) and train_nnue (K+P on the fixture shards).
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data" / "training"


def script(name: str, *args) -> list[str]:
    return [sys.executable, str(REPO / "scripts" / name)] + [str(a) for a in args]


def run_whole(argv: list[str]) -> str:
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def kill_when(argv: list[str], ready, timeout: float = 300.0) -> None:
    """Start `argv`, SIGKILL it the moment `ready()` holds; it must not have ended by itself."""
    proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + timeout
    try:
        while not ready():
            assert proc.poll() is None, f"ended before the kill: {proc.stderr.read()[-2000:]!r}"
            assert time.monotonic() < deadline, "never got far enough to be killed"
            time.sleep(0.002)
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def files_of(folder: Path, pattern: str) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.glob(pattern))}


def stamps(folder: Path, pattern: str) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in folder.glob(pattern)}


# --- gensfen --------------------------------------------------------------------------------
def test_gensfen_killed_resumes_to_the_same_shards(tmp_path):
    shard_bytes = 20 * 40
    args = [
        "--positions",
        120,
        "--shard-size",
        20,
        "--depth",
        2,
        "--workers",
        1,
        "--seed",
        5,
        "--no-progress",
    ]
    whole, broken = tmp_path / "whole", tmp_path / "broken"
    run_whole(script("gensfen.py", "--out", whole, *args))
    kill_when(script("gensfen.py", "--out", broken, *args), lambda: (broken / "shard_00001.bin").exists())
    left = files_of(broken, "shard_*.bin")
    assert 2 <= len(left) < 6, sorted(left)
    assert all(len(b) == shard_bytes for b in left.values()), "a torn shard"
    # what a writer killed mid-write leaves: its temporary file, never the shard's own name
    (broken / "shard_00005.bin.tmp99999").write_bytes(b"\0" * 333)
    kept = stamps(broken, "shard_*.bin")
    out = run_whole(script("gensfen.py", "--out", broken, *args))
    assert f"this run: {6 - len(left)} shards" in out
    assert {k: v for k, v in stamps(broken, "shard_*.bin").items() if k in kept} == kept, (
        "a finished shard was written again"
    )
    assert files_of(broken, "shard_*.bin") == files_of(whole, "shard_*.bin")
    assert not list(broken.glob("*.tmp*"))


# --- rescore --------------------------------------------------------------------------------
def test_rescore_killed_resumes_to_the_same_files(tmp_path):
    args = [
        DATA,
        "--every",
        8,
        "--teacher",
        f"{sys.executable} -m usi_engine",
        "--teacher-go",
        "depth 2",
        "--teacher-option",
        "Threads=1",
        "--workers",
        1,
        "--no-progress",
    ]
    whole, broken = tmp_path / "whole", tmp_path / "broken"
    asked = int(
        re.search(r"\((\d+) asked this run", run_whole(script("rescore.py", *args, "--out", whole)))[1]
    )
    kill_when(script("rescore.py", *args, "--out", broken), lambda: (broken / "rescore_00000.bin").exists())
    left = files_of(broken, "rescore_*.bin")
    assert 1 <= len(left) < 3
    kept = stamps(broken, "rescore_*.bin")
    out = run_whole(script("rescore.py", *args, "--out", broken))
    assert 0 < int(re.search(r"\((\d+) asked this run", out)[1]) < asked  # the rest only
    assert {k: v for k, v in stamps(broken, "rescore_*.bin").items() if k in kept} == kept
    assert files_of(broken, "rescore_*.bin") == files_of(whole, "rescore_*.bin")
    assert not list(broken.glob("*.tmp*"))


# --- train_nnue -----------------------------------------------------------------------------
def checkpoint_epoch(path: Path) -> int:
    try:
        return int(torch.load(path, weights_only=False)["epoch"])
    except Exception:  # not there yet (the rename is atomic: never half a file)
        return 0


def test_training_killed_resumes_to_the_same_network(tmp_path):
    args = [
        DATA,
        "--epochs",
        8,
        "--batch-size",
        64,
        "--seed",
        3,
        "--threads",
        1,
        "--device",
        "cpu",
        "--no-progress",
    ]
    whole, broken = tmp_path / "whole", tmp_path / "broken"
    run_whole(script("train_nnue.py", *args, "--out", whole))
    kill_when(
        script("train_nnue.py", *args, "--out", broken),
        lambda: checkpoint_epoch(broken / "checkpoint.pt") >= 2,
    )
    done = checkpoint_epoch(broken / "checkpoint.pt")
    assert 2 <= done < 8
    assert not (broken / "history.json").exists()  # the run had not finished
    # as a kill in the middle of writing the best network leaves it (the resumed run may
    # never write that name again)
    (broken / "best").mkdir(exist_ok=True)
    (broken / "best" / "nn.bin.tmp").write_bytes(b"torn")
    out = run_whole(script("train_nnue.py", *args, "--out", broken))
    assert "wrote" in out
    assert (broken / "nn.bin").read_bytes() == (whole / "nn.bin").read_bytes()
    assert (broken / "best" / "nn.bin").read_bytes() == (whole / "best" / "nn.bin").read_bytes()
    losses = [
        [
            (h["epoch"], h["train_loss"], h["val_loss"])
            for h in json.loads((f / "history.json").read_text())["history"]
        ]
        for f in (whole, broken)
    ]
    assert losses[0] == losses[1] and len(losses[0]) == 9
    assert not list(broken.rglob("*.tmp*"))


def test_training_refuses_a_checkpoint_of_other_settings(tmp_path, capsys):
    from usi_engine.commands import train as train_nnue

    args = [
        str(DATA),
        "--epochs",
        "1",
        "--batch-size",
        "64",
        "--threads",
        "1",
        "--device",
        "cpu",
        "--no-progress",
        "--out",
        str(tmp_path),
    ]
    assert train_nnue.main(args) == 0
    before = (tmp_path / "checkpoint.pt").read_bytes()
    # the summary names the architecture trained, the default when --arch was not given
    assert f"wrote {tmp_path / 'nn.bin'} (kp_256x2-32-32): val loss " in capsys.readouterr().out
    assert train_nnue.main(args + ["--lr", "0.01"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"train_nnue: {tmp_path / 'checkpoint.pt'} is from a run with other settings (lr): use "
        f"another --out, --resume it explicitly, or --fresh to start over"
    )
    assert (tmp_path / "checkpoint.pt").read_bytes() == before
    assert train_nnue.main(args + ["--lr", "0.01", "--fresh"]) == 0
    assert (tmp_path / "checkpoint.pt").read_bytes() != before


def test_training_with_a_score_factor_for_resumes_and_older_checkpoints_still_do(tmp_path, capsys):
    """--score-factor-for is part of a run's identity: the same factor goes on, another is
    refused; a checkpoint written before the setting existed (no such key) still resumes
    when the setting is unset."""
    import json

    import torch

    from usi_engine.commands import train as train_nnue

    base = [str(DATA), "--batch-size", "64", "--threads", "1", "--device", "cpu", "--no-progress"]
    scaled = base + ["--out", str(tmp_path / "a"), "--score-factor-for", f"{DATA}=0.5"]
    assert train_nnue.main(scaled + ["--epochs", "1"]) == 0
    capsys.readouterr()
    assert train_nnue.main(scaled + ["--epochs", "2"]) == 0
    assert "(epoch 1 done)" in capsys.readouterr().out  # went on, not started over
    assert json.loads((tmp_path / "a" / "history.json").read_text())["history"][-1]["epoch"] == 2
    assert train_nnue.main(base + ["--out", str(tmp_path / "a"), "--epochs", "3"]) == 2
    assert "other settings (score_factors)" in capsys.readouterr().err

    plain = base + ["--out", str(tmp_path / "b")]
    assert train_nnue.main(plain + ["--epochs", "1"]) == 0
    ckpt_path = tmp_path / "b" / "checkpoint.pt"
    ckpt = torch.load(ckpt_path, weights_only=False)
    del ckpt["train_config"]["score_factors"]  # as written before the setting existed
    torch.save(ckpt, ckpt_path)
    capsys.readouterr()
    assert train_nnue.main(plain + ["--epochs", "2"]) == 0
    assert "(epoch 1 done)" in capsys.readouterr().out


def test_a_setting_added_later_counts_only_when_set():
    from usi_engine.training.run_identity import differing_settings, without_unset

    older = {"depth": 6}  # written before "evaldir" and "factors" existed
    unset = without_unset({"depth": 6, "evaldir": None, "factors": ()}, ("evaldir", "factors"))
    assert unset == older and differing_settings(older, unset) == []
    assert without_unset({"depth": None}, ("evaldir",)) == {"depth": None}  # not a later one
    now = without_unset({"depth": 6, "evaldir": "eval", "factors": {}}, ("evaldir", "factors"))
    assert differing_settings(older, now) == ["evaldir"]
    assert differing_settings({"depth": 6, "seed": 1}, {"depth": 8, "seed": 1}) == ["depth"]


def test_two_paths_to_one_folder_are_one_setting(tmp_path):
    """A run resumed from another checkout whose `runs` links to the same folder names its
    teacher's network by another path: the same setting. Another folder is not."""
    from usi_engine.training.run_identity import differing_settings

    (tmp_path / "shared" / "eval").mkdir(parents=True)
    (tmp_path / "other-eval").mkdir()
    for checkout in ("a", "b"):
        (tmp_path / checkout).mkdir()
        (tmp_path / checkout / "runs").symlink_to(tmp_path / "shared")
    first = {"teacher_options": [["EvalDir", str(tmp_path / "a" / "runs" / "eval")], ["Threads", "1"]]}
    resumed = {"teacher_options": (("EvalDir", str(tmp_path / "b" / "runs" / "eval")), ("Threads", "1"))}
    assert differing_settings(first, resumed) == []
    moved = {"teacher_options": [["EvalDir", str(tmp_path / "other-eval")], ["Threads", "1"]]}
    assert differing_settings(first, moved) == ["teacher_options"]
    gone = {"teacher_options": [["EvalDir", str(tmp_path / "b" / "runs" / "none")], ["Threads", "1"]]}
    assert differing_settings(first, gone) == ["teacher_options"]
