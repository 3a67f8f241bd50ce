"""Positions labelled by the hand-made evaluation, to pretrain a network on what it knows.

A network trained from scratch on a few hundred thousand searched positions predicts those
searches worse than the hand-made evaluation does (docs/training.md): it must first learn
material, piece-square values and king safety from too little data.  The hand-made
evaluation costs nothing to ask, so this makes as many labelled positions as wanted: each
position of the given PackedSfenValue files, and `variants` more reached from it by one
to `max_random` uniformly random legal moves, each labelled with the hand-made static
evaluation from the side to move's view.  Positions in check or without a legal move are
left out (the search never evaluates them statically).

The records are ordinary PackedSfenValue records with three differences a reader must
know: the score is a static evaluation, not a search score; the move is 0 (none); the game
result is 0 (train on them with ``--lambda 1``).  A file's bytes depend only on its input
file, `variants`, `max_random` and `seed`.
"""

from __future__ import annotations

import os
import random
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import cshogi
import numpy as np

from . import psv


@dataclass(frozen=True)
class DistillConfig:
    inputs: tuple[str, ...]  # PackedSfenValue files
    out: str  # folder of the output files (one per input)
    variants: int = 3  # random continuations per input position
    max_random: int = 4  # at most this many random moves for a continuation
    seed: int = 1
    workers: int = 1


def _label(board: cshogi.Board, game_ply: int) -> np.ndarray | None:
    """The record of `board` with its hand-made evaluation, or None if it is not kept."""
    from ...position import Position

    if board.is_check() or not any(True for _ in board.legal_moves):
        return None
    rec = np.zeros((), psv.PSV_DTYPE)
    board.to_psfen(rec["sfen"])
    rec["score"] = max(-psv.SCORE_LIMIT, min(psv.SCORE_LIMIT, Position(board.sfen()).evaluate()))
    rec["gamePly"] = max(0, min(65535, game_ply))
    return rec


def distill_records(records: np.ndarray, cfg: DistillConfig, rng: random.Random) -> np.ndarray:
    """The labelled records made from `records` (each position, then its variants)."""
    out = []
    for rec in records:
        ply = int(rec["gamePly"])
        base = psv.board_of(rec)
        kept = _label(base, ply)
        if kept is not None:
            out.append(kept)
        for _ in range(cfg.variants):
            board = psv.board_of(rec)
            plies = rng.randint(1, cfg.max_random)
            for _ in range(plies):
                moves = list(board.legal_moves)
                if not moves:
                    break
                board.push(rng.choice(moves))
            kept = _label(board, ply + plies)
            if kept is not None:
                out.append(kept)
    return np.array(out, psv.PSV_DTYPE) if out else np.zeros(0, psv.PSV_DTYPE)


def output_path(cfg: DistillConfig, index: int) -> str:
    return os.path.join(cfg.out, f"distill_{index:05d}.bin")


def _one_file(args: tuple[DistillConfig, int]) -> tuple[str, int, int]:
    cfg, index = args
    path = output_path(cfg, index)
    records = psv.read_records(cfg.inputs[index])
    if os.path.exists(path):  # resumable: a file is whole or absent
        return path, len(records), len(psv.read_records(path))
    rng = random.Random(f"{cfg.seed}:{index}")
    made = distill_records(records, cfg, rng)
    psv.write_records(path, made)
    return path, len(records), len(made)


def run(cfg: DistillConfig, log=print) -> dict:
    """Make one output file per input file, `cfg.workers` processes; returns a summary."""
    if cfg.variants < 0 or cfg.max_random < 1:
        raise ValueError("variants must be at least 0 and max_random at least 1")
    os.makedirs(cfg.out, exist_ok=True)
    jobs = [(cfg, i) for i in range(len(cfg.inputs))]
    if cfg.workers > 1:
        from ...search.factory import make_searcher

        make_searcher(warmup=True)  # compile once before the workers load the cache
        with ProcessPoolExecutor(cfg.workers) as pool:
            done = list(pool.map(_one_file, jobs))
    else:
        done = [_one_file(job) for job in jobs]
    summary = {
        "files": len(done),
        "input_positions": sum(d[1] for d in done),
        "output_positions": sum(d[2] for d in done),
    }
    log(
        f"{summary['output_positions']} positions labelled by the hand-made evaluation from "
        f"{summary['input_positions']} input positions in {summary['files']} files -> {cfg.out}"
    )
    return summary
