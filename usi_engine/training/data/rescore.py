"""Positions scored again by another USI engine: a stronger judge for positions we reached.

Self-play teaches a network what our own search believes.  Where that belief is wrong in a
way our search cannot see (a king that a few drops will mate, while the material count says
+1,500), more rounds of self-play only repeat it.  Playing whole games with a slow teacher
(`gensfen.py --teacher`) costs a full search per ply, captures and checks included; this
instead takes positions that self-play already kept, in the distribution our engine meets,
and asks the teacher for its score and best move on a sample of them.  (YaneuraOu's learner
calls this rescoring.)

Each output file holds, for one input file, the sampled records the teacher judged quiet:
its score (side to move's view) and best move replace ours; the game ply and the game result
stay.  A record is dropped when the teacher reports a mate, a score beyond `eval_limit`, a
capture as its best move (as gensfen drops them), no move, or a move that is not legal.  A
file is written whole or not at all, so a run can be stopped and run again.
"""

from __future__ import annotations

import os
import random
import time
from collections import Counter
from dataclasses import dataclass

import numpy as np

from . import psv
from .gensfen import remove_temporaries
from .workers import WorkerPool, start_teacher


@dataclass(frozen=True)
class RescoreConfig:
    inputs: tuple[str, ...]  # PackedSfenValue files
    out: str  # folder of the output files (one per input)
    teacher: str  # the USI engine's command
    teacher_go: str = "depth 8"  # its go arguments
    teacher_options: tuple[tuple[str, str], ...] = ()
    every: int = 1  # score about one record in `every`
    eval_limit: int = 3000  # drop records the teacher scores beyond this
    seed: int = 1
    workers: int = 1
    minutes: float | None = None  # start no new file after this long


def output_path(cfg: RescoreConfig, index: int) -> str:
    return os.path.join(cfg.out, f"rescore_{index:05d}.bin")


def sample(records: np.ndarray, every: int, rng: random.Random) -> np.ndarray:
    """About one record in `every`, in file order (a fixed seed picks the same ones)."""
    if every <= 1:
        return records
    keep = [i for i in range(len(records)) if rng.randrange(every) == 0]
    return records[keep]


def chosen_records(cfg: RescoreConfig, index: int) -> np.ndarray:
    """The records of input file `index` that the teacher is asked about."""
    return sample(psv.read_records(cfg.inputs[index]), cfg.every, random.Random(f"{cfg.seed}:{index}"))


def rescore_record(rec: np.void, teacher, eval_limit: int) -> tuple[np.ndarray | None, str]:
    """(the record with the teacher's score and move, "kept"), or (None, why it was dropped)."""
    from .labeler import Game
    from .selfplay import is_capture
    from ...position import Position

    sfen = psv.record_sfen(rec)
    pos = Position(sfen)
    lines = teacher.search(Game(sfen, [], pos), 1)
    if not lines:
        return None, "no move"
    best = lines[0]
    if best.mate is not None:
        return None, "mate"
    if abs(best.cp) > eval_limit:
        return None, "beyond eval limit"
    if best.move not in pos.legal_moves():
        return None, "illegal move"
    if is_capture(pos, best.move):
        return None, "capture"
    out = psv.make_record(sfen, best.cp, best.move, int(rec["gamePly"]), int(rec["game_result"]))
    return out, "kept"


def rescore_file(cfg: RescoreConfig, index: int, teacher) -> dict:
    """Score the sample of input file `index` and write its output file; its statistics."""
    path = output_path(cfg, index)
    if os.path.exists(path):  # resumable: a file is whole or absent
        return {"file": index, "kept": len(psv.read_records(path)), "reused": True}
    t0 = time.monotonic()
    chosen = chosen_records(cfg, index)
    teacher.new_game()
    kept, why = [], Counter()
    for rec in chosen:
        out, reason = rescore_record(rec, teacher, cfg.eval_limit)
        why[reason] += 1
        if out is not None:
            kept.append(out)
    psv.write_records(path, np.array(kept, psv.PSV_DTYPE) if kept else np.zeros(0, psv.PSV_DTYPE))
    return {
        "file": index,
        "kept": len(kept),
        "asked": len(chosen),
        "reasons": dict(why),
        "seconds": round(time.monotonic() - t0, 2),
        "reused": False,
    }


# --- how far the teacher's scores are from ours -------------------------------------------
def fit_result_scale(scores: np.ndarray, results: np.ndarray) -> tuple[float, float]:
    """(scale, log loss): the s for which sigmoid(score / s) best predicts the game results
    (win 1, draw 1/2, loss 0, by cross-entropy), searched on a log grid from 50 to 20,000."""
    t = (np.asarray(results, np.float64) + 1.0) / 2.0
    x = np.asarray(scores, np.float64)
    best = (np.inf, 0.0)
    for scale in np.exp(np.linspace(np.log(50.0), np.log(20000.0), 400)):
        p = np.clip(1.0 / (1.0 + np.exp(-x / scale)), 1e-9, 1.0 - 1e-9)
        loss = float(-(t * np.log(p) + (1.0 - t) * np.log(1.0 - p)).mean())
        best = min(best, (loss, float(scale)))
    return best[1], best[0]


def compare(cfg: RescoreConfig) -> dict:
    """Our scores and the teacher's on the positions of the finished output files.

    Both are fitted to the game results the records carry: the ratio of the two scales is
    the factor that puts the teacher's centipawns in ours (`train_nnue.py --score-factor`),
    and the two losses say whose scores predicted the games better."""
    ours, theirs, results = [], [], []
    for index in range(len(cfg.inputs)):
        out = output_path(cfg, index)
        if not os.path.exists(out):
            continue
        by_sfen = {psv.record_sfen(r): int(r["score"]) for r in chosen_records(cfg, index)}
        for rec in psv.read_records(out):
            ours.append(by_sfen[psv.record_sfen(rec)])
            theirs.append(int(rec["score"]))
            results.append(int(rec["game_result"]))
    if len(ours) < 2:
        raise ValueError(f"{cfg.out} holds fewer than two rescored positions to compare")
    x, y, r = (np.array(v, np.float64) for v in (ours, theirs, results))
    our_scale, our_loss = fit_result_scale(x, r)
    their_scale, their_loss = fit_result_scale(y, r)
    return {
        "positions": len(x),
        "correlation": float(np.corrcoef(x, y)[0, 1]),
        "median_abs": (float(np.median(np.abs(x))), float(np.median(np.abs(y)))),
        "result_scale": (our_scale, their_scale),
        "result_loss": (our_loss, their_loss),
        "factor": our_scale / their_scale,
    }


def format_comparison(c: dict) -> str:
    (mo, mt), (so, st), (lo, lt) = c["median_abs"], c["result_scale"], c["result_loss"]
    return (
        f"{c['positions']} positions: correlation {c['correlation']:.3f}; median |score| "
        f"ours {mo:.0f}, teacher {mt:.0f}\n"
        f"against the game results: ours sigmoid(score/{so:.0f}) loss {lo:.4f}, "
        f"teacher sigmoid(score/{st:.0f}) loss {lt:.4f}\n"
        f"--score-factor {c['factor']:.2f} puts the teacher's centipawns in ours"
    )


# --- worker processes: one teacher engine each ---------------------------------------------
_worker: dict = {}


def _make_teacher(cfg: RescoreConfig):
    from .labeler import UsiTeacher

    return UsiTeacher(cfg.teacher, cfg.teacher_go, dict(cfg.teacher_options))


def _worker_init(cfg: RescoreConfig, deadline: float | None) -> None:
    _worker["cfg"], _worker["deadline"] = cfg, deadline
    _worker["teacher"] = start_teacher(lambda: _make_teacher(cfg))


def _worker_file(index: int) -> dict | None:
    """One file's statistics; None when the deadline passed before it started."""
    deadline = _worker["deadline"]
    if deadline is not None and time.time() >= deadline:
        return None
    return rescore_file(_worker["cfg"], index, _worker["teacher"])


def run(cfg: RescoreConfig, log=print, show_progress: bool = True) -> dict:
    """Rescore every input file not yet done (until the deadline); a summary of this run."""
    from ...progress import progress_bar

    if cfg.every < 1:
        raise ValueError(f"every must be at least 1, got {cfg.every}")
    for path in cfg.inputs:  # refuse a bad input before anything is written
        psv.read_shard(path)
    os.makedirs(cfg.out, exist_ok=True)
    remove_temporaries(cfg.out, "rescore_")  # what a killed run was writing
    deadline = time.time() + 60.0 * cfg.minutes if cfg.minutes else None
    todo = list(range(len(cfg.inputs)))
    done: list[dict] = []
    expected = sum(os.path.getsize(f) // psv.RECORD_BYTES for f in cfg.inputs) // cfg.every
    bar = progress_bar(expected, show_progress, smoothing=0.05)  # positions asked
    if cfg.workers <= 1:
        teacher = _make_teacher(cfg)
        try:
            for i in todo:
                if deadline is not None and time.time() >= deadline:
                    break
                done.append(rescore_file(cfg, i, teacher))
                bar.update(done[-1].get("asked", 0))
        finally:
            teacher.close()
    else:
        with WorkerPool(min(cfg.workers, len(todo)), _worker_init, (cfg, deadline)) as pool:
            for stats in pool.results(_worker_file, todo):
                if stats is not None:
                    bar.update(stats.get("asked", 0))
                    done.append(stats)
    bar.close()
    reasons: Counter = Counter()
    for d in done:
        reasons.update(d.get("reasons", {}))
    summary = {
        "files": len(done),
        "kept": sum(d["kept"] for d in done),
        "asked": sum(d.get("asked", 0) for d in done),
        "reasons": dict(reasons),
        "worker_seconds": round(sum(d.get("seconds", 0.0) for d in done), 1),
    }
    log(
        f"{summary['kept']} positions rescored by {cfg.teacher} ({summary['asked']} asked this "
        f"run; {dict(reasons)}) in {summary['files']} files -> {cfg.out}"
    )
    return summary
