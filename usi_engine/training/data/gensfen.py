"""Self-play data generation: shards of PackedSfenValue records, made in parallel.

Shards are made in this process (one worker), in a pool of processes, or as Ray tasks on a
cluster (ray_gen.py).  A run writes into one folder: ``gensfen.json`` (the settings that decide the data),
then ``shard_NNNNN.bin`` files of exactly ``shard_size`` records, each with a
``shard_NNNNN.json`` of its statistics.  Shard ``i`` plays games whose random choices are
seeded by ``(seed, i, game number)`` only, so a shard's bytes do not depend on the number
of workers or on which worker made it; a run that is stopped and started again makes only
the shards that are missing (a shard file appears whole, by rename, or not at all).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import queue as queue_mod
import random
import re
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from ...position import START_SFEN
from ...usiproc import EngineError
from ...progress import progress_bar
from . import psv
from .selfplay import PlayConfig, play_game
from .workers import CONTEXT, WorkerPool, start_teacher
from ..run_identity import differing_settings, without_unset

MANIFEST = "gensfen.json"
TEACHER_RETRIES = 3  # a game the teacher fails on is replayed this often, then left out
TEACHER_FAILED_GAMES = 3  # games left out in a row: the teacher is broken and the run stops
GIVE_UP_GAMES = 1000  # games in a row without a kept position: the settings are wrong


@dataclass(frozen=True)
class GenConfig:
    """A generation run.  `identity()` is what must match to resume a folder."""

    out: str
    positions: int
    shard_size: int = 10000
    seed: int = 1
    depth: int | None = 6
    nodes: int | None = None
    hash_mb: int = 16
    evaldir: str | None = None  # our search's network (None: hand-made evaluation)
    teacher: str | None = None
    teacher_go: str = "depth 8"
    teacher_opening_go: str | None = None  # the teacher's go in the opening (None: teacher_go)
    teacher_options: tuple[tuple[str, str], ...] = ()
    teacher_timeout: float = 600.0  # seconds one teacher search may take before a restart
    openings: tuple[str, ...] = (START_SFEN,)
    play: PlayConfig = field(default_factory=PlayConfig)
    workers: int = 1
    max_seconds: float | None = None
    ray_address: str | None = None  # run the shards as Ray tasks ("local": a local Ray)

    def shard_count(self) -> int:
        return -(-self.positions // self.shard_size)

    def identity(self) -> dict:
        d = dataclasses.asdict(self)
        for k in ("out", "positions", "workers", "max_seconds", "ray_address", "teacher_timeout"):
            d.pop(k)
        d = without_unset(d, ("evaldir", "teacher_opening_go"))
        d["teacher_options"] = [list(kv) for kv in self.teacher_options]
        d["openings"] = list(self.openings)
        d["record_bytes"] = psv.RECORD_BYTES
        return d


def shard_path(out: str, index: int, ext: str = "bin") -> str:
    return os.path.join(out, f"shard_{index:05d}.{ext}")


def shard_done(cfg: GenConfig, index: int) -> bool:
    path = shard_path(cfg.out, index)
    return (
        os.path.exists(path)
        and os.path.getsize(path) == cfg.shard_size * psv.RECORD_BYTES
        and os.path.exists(shard_path(cfg.out, index, "json"))
    )


def make_labeler(cfg: GenConfig):
    from .labeler import OwnSearch, UsiTeacher

    if cfg.teacher:
        return UsiTeacher(
            cfg.teacher,
            cfg.teacher_go,
            dict(cfg.teacher_options),
            cfg.teacher_timeout,
            cfg.teacher_opening_go,
        )
    return OwnSearch(cfg.depth, cfg.nodes, cfg.hash_mb, cfg.evaldir)


def generate_shard(cfg: GenConfig, index: int, labeler, report=None) -> tuple[np.ndarray, dict]:
    """Play games until shard `index` holds `shard_size` records; (records, statistics).

    `report(n)` is called after each game with the number of records it added."""
    t0 = time.monotonic()
    records: list[np.ndarray] = []
    reasons, skipped, results = Counter(), Counter(), Counter()
    games = unbalanced = dry = 0
    left_out: list[str] = []  # seeds of the games the teacher failed on every time
    failed_in_a_row = 0
    while len(records) < cfg.shard_size:
        seed = f"{cfg.seed}/{index}/{games}"
        outcome = play_seeded_game(cfg, seed, labeler)
        games += 1
        if isinstance(outcome, EngineError):
            left_out.append(seed)
            failed_in_a_row += 1
            if failed_in_a_row >= TEACHER_FAILED_GAMES:
                raise outcome
            continue
        failed_in_a_row = 0
        if outcome.reason == "unbalanced opening":
            unbalanced += 1
        else:
            reasons[outcome.reason] += 1
            results[{1: "black", -1: "white", 0: "draw"}[outcome.result_black]] += 1
        skipped.update(outcome.skipped)
        take = outcome.records[: cfg.shard_size - len(records)]
        records.extend(take)
        dry = 0 if take else dry + 1
        if dry >= GIVE_UP_GAMES:
            raise RuntimeError(
                f"{GIVE_UP_GAMES} games in a row kept no position: check the "
                f"opening limit, eval limit and write_min_ply settings"
            )
        if report is not None:
            report(len(take))
    data = np.array(records, psv.PSV_DTYPE)
    stats = {
        "shard": index,
        "positions": len(data),
        "games": games,
        "unbalanced_openings": unbalanced,
        "end_reasons": dict(reasons),
        "winners": dict(results),
        "skipped": dict(skipped),
        "teacher_failed_games": left_out,
        "mean_abs_score": float(np.abs(data["score"].astype(np.float64)).mean()) if len(data) else 0.0,
        "seconds": round(time.monotonic() - t0, 3),
    }
    return data, stats


def play_seeded_game(cfg: GenConfig, seed: str, labeler):
    """One game from its seed, or the teacher's last error when the game is left out.

    A teacher that crashes or never answers (a loaded machine) is started afresh and the game
    replayed from its seed, so the shard's records stay what they would have been.  A game
    that fails TEACHER_RETRIES + 1 times is left out: some builds hang for good on one
    position when their hash table holds what the game's earlier searches left (a YaneuraOu
    NNUE build did, at depth 10), and a replay plays into the same state."""
    for attempt in range(TEACHER_RETRIES + 1):
        rng = random.Random(seed)
        start = rng.choice(cfg.openings)
        try:
            return play_game(rng, labeler, cfg.play, start)
        except EngineError as exc:
            if not hasattr(labeler, "restart"):
                raise
            last = attempt == TEACHER_RETRIES
            what = "leaving the game out" if last else "replaying the game"
            print(
                f"gensfen: game {seed}: teacher failed ({exc}); restarting it and {what}",
                file=sys.stderr,
                flush=True,
            )
            labeler.restart()
            if last:
                return exc


def save_shard(cfg: GenConfig, index: int, data: np.ndarray, stats: dict) -> None:
    meta = shard_path(cfg.out, index, "json")
    with open(meta + ".tmp", "w", encoding="utf-8") as fh:
        json.dump(stats, fh, indent=1, sort_keys=True)
    os.replace(meta + ".tmp", meta)
    psv.write_records(shard_path(cfg.out, index), data)


# --- worker processes -------------------------------------------------------------------
_worker: dict = {}


def _worker_init(cfg: GenConfig, progress) -> None:
    _worker["cfg"] = cfg
    _worker["progress"] = progress
    _worker["labeler"] = start_teacher(lambda: make_labeler(cfg))


def _worker_shard(index: int, deadline: float | None) -> dict | None:
    """Make and save one shard; None when the deadline passed before it started."""
    if deadline is not None and time.time() >= deadline:
        return None
    cfg, progress = _worker["cfg"], _worker["progress"]
    data, stats = generate_shard(cfg, index, _worker["labeler"], report=progress.put)
    save_shard(cfg, index, data, stats)
    return stats


# --- the run -----------------------------------------------------------------------------
def prepare_folder(cfg: GenConfig) -> None:
    """Create the folder, or check that an existing one was made with the same settings."""
    os.makedirs(cfg.out, exist_ok=True)
    path = os.path.join(cfg.out, MANIFEST)
    ident = cfg.identity()
    if os.path.exists(path):
        with open(path, encoding="utf-8") as fh:
            old = json.load(fh)
        diff = differing_settings(old, ident)
        if diff:
            shown = "; ".join(f"{k}: {old.get(k)!r} there, {ident.get(k)!r} now" for k in diff)
            raise ValueError(
                f"{cfg.out} holds a run with other settings ({shown}); "
                f"resume with the same settings or use another folder"
            )
        return
    with open(path + ".tmp", "w", encoding="utf-8") as fh:
        json.dump(ident, fh, indent=1, sort_keys=True)
    os.replace(path + ".tmp", path)


def remove_temporaries(folder: str, prefix: str) -> list[str]:
    """Delete the temporary files a killed run left (``<prefix>NNNNN.<ext>.tmp...``, the
    names files are written under before their rename); the names removed."""
    stale = [name for name in os.listdir(folder) if re.match(rf"^{re.escape(prefix)}\d+\.\w+\.tmp", name)]
    for name in stale:
        os.remove(os.path.join(folder, name))
    return stale


class DeadlineNotice:
    """Says once, on stderr, when `--minutes` runs out: no shard starts after it, and the
    shards in progress are finished (a cut shard would be lost), so a run ends up to one
    shard's time after its deadline.  A timer thread says it on time, whichever way the
    shards are made; a context manager, so that a run that ends first says nothing."""

    def __init__(self, deadline: float | None) -> None:
        self.deadline = deadline
        self._timer: threading.Timer | None = None

    def __enter__(self) -> DeadlineNotice:
        if self.deadline is not None:
            self._timer = threading.Timer(max(0.0, self.deadline - time.time()), self._say)
            self._timer.daemon = True
            self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._timer is not None:
            self._timer.cancel()

    def passed(self) -> bool:
        return self.deadline is not None and time.time() >= self.deadline

    @staticmethod
    def _say() -> None:
        print(
            f"gensfen: --minutes ran out at {time.strftime('%H:%M:%S')}: no new shard "
            "starts; the shards in progress are finished first",
            file=sys.stderr,
            flush=True,
        )


def run(cfg: GenConfig, show_progress: bool = True) -> dict:
    """Make every missing shard; returns the summary of the whole folder."""
    prepare_folder(cfg)
    remove_temporaries(cfg.out, "shard_")
    todo = [i for i in range(cfg.shard_count()) if not shard_done(cfg, i)]
    deadline = time.time() + cfg.max_seconds if cfg.max_seconds else None
    t0 = time.monotonic()
    bar = progress_bar(len(todo) * cfg.shard_size, show_progress, smoothing=0.05)
    made = 0
    with DeadlineNotice(deadline) as notice:
        if todo and cfg.ray_address:
            from .ray_gen import ShardFunctions, run_ray

            made = run_ray(cfg, todo, deadline, bar, ShardFunctions(make_labeler, generate_shard, save_shard))
        elif todo and cfg.workers <= 1:
            made = _run_here(cfg, todo, notice, bar)
        elif todo:
            made = _run_pool(cfg, todo, deadline, bar)
    bar.close()
    summary = summarize(cfg)
    summary["this_run"] = {
        "shards_made": made,
        "seconds": round(time.monotonic() - t0, 1),
        "workers": cfg.workers,
    }
    path = os.path.join(cfg.out, "summary.json")
    with open(path + ".tmp", "w", encoding="utf-8") as fh:
        json.dump(summary, fh, indent=1, sort_keys=True)
    os.replace(path + ".tmp", path)
    return summary


def _run_here(cfg: GenConfig, todo: list[int], notice: DeadlineNotice, bar) -> int:
    labeler = make_labeler(cfg)
    made = 0
    try:
        for i in todo:
            if notice.passed():
                break
            data, stats = generate_shard(cfg, i, labeler, report=bar.update)
            save_shard(cfg, i, data, stats)
            made += 1
    finally:
        labeler.close()
    return made


def _run_pool(cfg: GenConfig, todo: list[int], deadline: float | None, bar) -> int:
    progress = CONTEXT.Queue()  # positions made, reported by the workers while they play

    def show_progress() -> None:
        while True:
            try:
                bar.update(progress.get_nowait())
            except queue_mod.Empty:
                return

    made = 0
    with WorkerPool(min(cfg.workers, len(todo)), _worker_init, (cfg, progress)) as pool:
        for stats in pool.results(functools.partial(_worker_shard, deadline=deadline), todo, show_progress):
            made += stats is not None
    show_progress()
    return made


def summarize(cfg: GenConfig) -> dict:
    """Totals over every finished shard of the folder."""
    shards, positions, games, unbalanced, seconds, left_out = 0, 0, 0, 0, 0.0, 0
    reasons, winners, skipped = Counter(), Counter(), Counter()
    for i in range(cfg.shard_count()):
        if not shard_done(cfg, i):
            continue
        with open(shard_path(cfg.out, i, "json"), encoding="utf-8") as fh:
            s = json.load(fh)
        shards += 1
        positions += s["positions"]
        games += s["games"]
        unbalanced += s["unbalanced_openings"]
        seconds += s["seconds"]
        reasons.update(s["end_reasons"])
        winners.update(s["winners"])
        skipped.update(s["skipped"])
        left_out += len(s.get("teacher_failed_games", []))  # shards made before it had none
    return {
        "folder": cfg.out,
        "shards": shards,
        "shards_planned": cfg.shard_count(),
        "positions": positions,
        "games": games,
        "unbalanced_openings": unbalanced,
        "teacher_failed_games": left_out,
        "end_reasons": dict(reasons),
        "winners": dict(winners),
        "skipped": dict(skipped),
        "worker_seconds": round(seconds, 1),
        "positions_per_worker_second": round(positions / seconds, 1) if seconds else 0.0,
    }


def format_summary(s: dict) -> str:
    lines = [
        f"{s['folder']}: {s['shards']}/{s['shards_planned']} shards, {s['positions']} positions "
        f"from {s['games']} games ({s['unbalanced_openings']} unbalanced openings dropped, "
        f"{s['teacher_failed_games']} left out when the teacher failed)",
        f"  winners: {s['winners']}",
        f"  game ends: {s['end_reasons']}",
        f"  positions skipped: {s['skipped']}",
        f"  {s['positions_per_worker_second']} positions/s per worker",
    ]
    if "this_run" in s:
        r = s["this_run"]
        lines.append(f"  this run: {r['shards_made']} shards in {r['seconds']} s with {r['workers']} workers")
    return "\n".join(lines)
