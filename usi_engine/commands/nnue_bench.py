"""NNUE speed: the search bench with a network, and the cost of the evaluator's parts.

    usi-engine nnue-bench search --evaldir DIR [--depth 11]    # usi-engine bench's bench,
                                                               # evaluating with DIR/nn.bin
    usi-engine nnue-bench search --evaldir handmade            # the hand-made evaluation
    usi-engine nnue-bench search --evaldir DIR --movetime 1000 # 1 s a position
    usi-engine nnue-bench search --evaldir internal --depth-1s # bench --depth-1s
    usi-engine nnue-bench search --evaldir internal --tune QuietCheckBonus=16384
                                                               # with the shipped network
    usi-engine nnue-bench micro --evaldir DIR                  # ns per refresh, per
                                                               # incremental update, per
                                                               # forward pass

`micro` measures this thread's CPU time (time.thread_time), so other jobs sharing the cores
inflate it less than wall time; it takes the bench positions and every legal move from them: a full refresh rebuilds
one perspective's accumulator, an incremental update replays one move onto one perspective
(quiet moves and captures reported apart), the forward pass runs the affine layers on valid
accumulators, and "do + evaluate + undo" is what the search pays per evaluated child.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
from numba import njit

from usi_engine.core import board as cb
from usi_engine.core import nnue as cn
from usi_engine.core.evaluate import evaluate
from usi_engine.core.movegen import generate, GEN_ALL
from usi_engine.search.factory import load_network
from usi_engine.core.types import MAX_MOVES

from . import bench as search_bench


def load(evaldir: str):
    """NetArrays of the network an EvalDir value names, or None for the hand-made evaluation
    ('handmade', '<internal>')."""
    loaded = load_network(evaldir)
    if loaded is None:
        return None
    print(f"# network {loaded.name} from {loaded.source}")
    return loaded.arrays


def run_search(args) -> None:
    net = load(args.evaldir)
    argv = ["--depth", str(args.depth), "--threads", str(args.threads), "--hash", str(args.hash)]
    if args.movetime:
        argv += ["--movetime", str(args.movetime)]
    if args.depth_1s:
        argv.append("--depth-1s")
    for pair in args.tune:
        argv += ["--tune", pair]
    search_bench.main(argv, net=net)


@njit(cache=False, _nrt=False)
def _time_refresh(pos, reps):
    ply = pos.st[cb.ST_PLY]
    for _ in range(reps):
        cn.refresh_in_full(pos, pos.acc[ply, 0], 0)  # not the king cache: every feature
        cn.refresh_in_full(pos, pos.acc[ply, 1], 1)
    return pos.acc[ply, 0, 0]


@njit(cache=False, _nrt=False)
def _time_replay(pos, reps, persp):
    ply = pos.st[cb.ST_PLY] - 1
    offset = cn.feature_offset(pos, persp)
    halfkp = pos.net.info[0] == 2
    for _ in range(reps):
        cn._replay(pos, ply, persp, offset, halfkp)
    return pos.acc[ply + 1, persp, 0]


@njit(cache=False, _nrt=False)
def _time_forward(pos, reps):
    s = 0
    for _ in range(reps):
        s += cn.raw_output(pos)
    return s


@njit(cache=False, _nrt=False)
def _time_children(pos, moves, n, reps):
    s = 0
    for _ in range(reps):
        for i in range(n):
            cb.do_move(pos, moves[i])
            s += evaluate(pos)
            cb.undo_move(pos)
    return s


def _per_call(fn, calls, *args) -> float:
    fn(*args)  # compile
    best = float("inf")
    for _ in range(5):
        t0 = time.thread_time()  # CPU time: other jobs on the cores do not count
        fn(*args)
        best = min(best, time.thread_time() - t0)
    return best / calls * 1e9


def run_micro(args) -> None:
    net = load(args.evaldir)
    if net is None:
        sys.exit("micro needs a network: --evaldir DIR")
    pos = cb.new_position(net)
    buf = np.zeros(MAX_MOVES, np.int32)
    reps = args.reps
    results = {
        "refresh (one perspective)": [],
        "replay quiet move (one perspective)": [],
        "replay capture (one perspective)": [],
        "forward pass": [],
        "do + evaluate + undo (per child)": [],
    }
    positions = search_bench.load_positions(search_bench.DEFAULT_POSITIONS)
    for sfen, _ in positions:
        src = search_bench.make_position(sfen)
        cb.copy_into(pos, src.arrays)
        if pos.st[cb.ST_KING] < 0 or pos.st[cb.ST_KING + 1] < 0:
            continue
        cn.raw_output(pos)
        results["refresh (one perspective)"].append(_per_call(_time_refresh, 2 * reps, pos, reps))
        results["forward pass"].append(_per_call(_time_forward, reps, pos, reps))
        n = generate(pos, buf, GEN_ALL, False)
        moves = buf[:n].copy()
        results["do + evaluate + undo (per child)"].append(
            _per_call(_time_children, n * max(1, reps // n), pos, moves, n, max(1, reps // n))
        )
        for m in moves[:40]:
            capture = pos.board[m & 127] != 0 and ((m >> 7) & 127) < 81
            king = ((m >> 15) & 15) == 8
            cb.do_move(pos, m)
            persp = 1 - int(pos.st[cb.ST_SIDE])  # a perspective no king move refreshes
            if not king:
                key = "replay capture (one perspective)" if capture else "replay quiet move (one perspective)"
                results[key].append(_per_call(_time_replay, reps // 10, pos, reps // 10, persp))
            cb.undo_move(pos)
    print(f"# load average {os.getloadavg()[0]:.2f}; median over positions (and moves) of the best of 5")
    for key, values in results.items():
        print(f"{key:40s} {np.median(values):8.0f} ns   ({len(values)} samples)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        prog="usi-engine nnue-bench",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("what", choices=("search", "micro"))
    ap.add_argument("--evaldir", default="handmade", help="folder holding nn.bin, or handmade")
    ap.add_argument("--depth", type=int, default=search_bench.DEFAULT_DEPTH)
    ap.add_argument(
        "--movetime",
        type=int,
        metavar="MS",
        help="search: time per position instead of a depth (a random network's tree "
        "at a fixed depth can be far larger than a real one's)",
    )
    ap.add_argument(
        "--depth-1s",
        action="store_true",
        help="search: median depth reached in 1 s (or --movetime) on the middle games",
    )
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--hash", type=int, default=search_bench.DEFAULT_HASH_MB)
    ap.add_argument(
        "--tune",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="search: a search constant of core/params.py set for this run (repeatable), as "
        "usi-engine bench --tune",
    )
    ap.add_argument("--reps", type=int, default=20000, help="micro: calls per measurement")
    args = ap.parse_args(argv)
    if args.what == "search":
        run_search(args)
    else:
        run_micro(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
