#!/usr/bin/env python
"""Make a book of balanced openings for matches (`scripts/match.py --openings FILE`).

Each opening starts from the initial position and plays `--plies` moves, every one chosen at
random among the moves that a shallow MultiPV search rates within `--spread` cp of the best,
so the lines look like real play rather than random moves.  The final position is searched
deeper and kept only if its score lies within `--balance` cp of zero and it is new.  Lines are
written as `startpos moves ...`, the form every USI engine (and the GNU Shogi adapter) reads.

    python scripts/make_openings.py --count 300 --out scripts/openings_balanced.txt
"""
from __future__ import annotations

import argparse
import random
import sys
import time

import numpy as np

from usi_engine.position import Position
from usi_engine.searcher import Searcher


def search(searcher: Searcher, pos: Position, depth: int, multipv: int) -> list[tuple[str, int]]:
    """[(first move, score cp)] of the last finished iteration's MultiPV lines, best first."""
    lines: dict[int, tuple[int, str, int]] = {}

    def keep(info) -> None:
        if info.pv and info.score_cp is not None and info.bound is None:
            lines[info.multipv] = (info.depth, info.pv[0], info.score_cp)

    searcher.think(pos, depth=depth, nodes=None, multipv=multipv, stop=np.zeros(1, np.int32),
                   on_iteration=keep)
    return [(move, cp) for _, (_, move, cp) in sorted(lines.items())]


def make_opening(searcher: Searcher, rng: random.Random, plies: int, spread: int,
                 depth: int, multipv: int) -> list[str] | None:
    pos = Position()
    moves: list[str] = []
    for _ in range(plies):
        lines = search(searcher, pos, depth, multipv)
        if not lines:
            return None
        best = lines[0][1]
        choices = [move for move, cp in lines if cp >= best - spread]
        move = rng.choice(choices)
        pos.push(move)
        moves.append(move)
    return moves


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=300, help="openings to write")
    ap.add_argument("--plies", type=int, default=16, help="moves in each opening")
    ap.add_argument("--depth", type=int, default=5, help="depth of the move-choice search")
    ap.add_argument("--multipv", type=int, default=4, help="candidate moves per ply")
    ap.add_argument("--spread", type=int, default=60, help="cp below the best still chosen")
    ap.add_argument("--check-depth", type=int, default=9, help="depth of the balance check")
    ap.add_argument("--balance", type=int, default=120, help="keep |score| <= this cp")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)

    rng = random.Random(args.seed)
    searcher = Searcher()
    searcher.warmup()
    seen: set[str] = set()
    kept = tried = 0
    start = time.monotonic()
    with open(args.out, "w", encoding="ascii") as fh:
        fh.write(f"# {args.count} balanced openings: {args.plies} plies from the start position, "
                 f"each within {args.balance} cp at depth {args.check_depth}\n")
        fh.write(f"# made by: python scripts/make_openings.py --count {args.count} --plies {args.plies} "
                 f"--seed {args.seed} --out ...\n")
        while kept < args.count:
            tried += 1
            searcher.new_game()
            moves = make_opening(searcher, rng, args.plies, args.spread, args.depth, args.multipv)
            if moves is None:
                continue
            pos = Position()
            for move in moves:
                pos.push(move)
            if pos.sfen() in seen:
                continue
            lines = search(searcher, pos, args.check_depth, 1)
            if not lines or abs(lines[0][1]) > args.balance:
                continue
            seen.add(pos.sfen())
            fh.write("startpos moves " + " ".join(moves) + "\n")
            fh.flush()
            kept += 1
            print(f"\r{kept}/{args.count} kept of {tried} tried, {time.monotonic() - start:.0f} s",
                  end="", file=sys.stderr)
    print(file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
