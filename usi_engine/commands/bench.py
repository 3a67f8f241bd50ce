"""Search benchmark: a fixed set of positions searched to a fixed depth.

    usi-engine bench                        # every position to the default depth
    usi-engine bench --depth 10 --hash 64   # another depth / hash size
    usi-engine bench --threads 2            # Lazy SMP (node counts vary run to run)
    usi-engine bench --movetime 500         # 500 ms a position instead of a depth
    usi-engine bench --positions my.txt     # another position file
    usi-engine bench --time-to-depth 12     # time to depth 12 with 1 and 2 threads
    usi-engine bench --startpos-1s          # depth reached in 1 s from the start position
    usi-engine bench --depth-1s             # median depth reached in 1 s, middle games
    usi-engine bench --tune QsEvasionSee=90 # a search constant changed (core/params.py)
    usi-engine bench --verify               # parse every position with Position,
                                            # python-shogi and cshogi, then exit

Before each position the searcher forgets everything (`Searcher.new_game()`, TT generation
back to 0), so with one thread each position's node count depends only on the position, the
depth and the hash size.  The sum over the positions, the last line's
`total nodes <N> seconds <S> nps <X>`, is the engine's signature: any change to the search
or the evaluation that changes the tree changes it.  Compilation (or loading the numba
cache) happens in `Searcher.warmup()` before anything is timed; only `think` is timed.
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
import threading
import time

import numpy as np

from usi_engine.core.params import INDEX, PARAMS, defaults
from usi_engine.position import Position
from usi_engine.search import factory
from usi_engine.search.searcher import CutoffCounts, Searcher, IterationInfo

from . import data_file

DEFAULT_POSITIONS = data_file("bench_positions.txt")
DEFAULT_DEPTH = 11
# 2^21 entries of 16 bytes: the signature's table (64 MB of the 24-byte entries before 2026-12-01)
DEFAULT_HASH_MB = 32
# --time-to-depth uses these entries of the position file (0-based, data lines only):
# the start position, two openings, two middle games, an endgame and the matsuri position.
TIME_TO_DEPTH_INDICES = (0, 3, 6, 11, 13, 18, 28)


# --- positions ---------------------------------------------------------------------------
def load_positions(path: str) -> list[tuple[str, str]]:
    """[(sfen or 'startpos', comment)] from '<sfen>  # comment' lines; '#' lines ignored."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            sfen, _, comment = text.partition("#")
            out.append((sfen.strip(), comment.strip()))
    return out


def make_position(sfen: str) -> Position:
    return Position(None if sfen == "startpos" else sfen)


def verify(positions: list[tuple[str, str]]) -> int:
    """Parse every position with our Position, python-shogi and cshogi; 0 when all agree."""
    import shogi
    import cshogi

    bad = 0
    for i, (sfen, comment) in enumerate(positions, 1):
        try:
            ours = make_position(sfen)
            ps = shogi.Board() if sfen == "startpos" else shogi.Board(sfen)
            cs = cshogi.Board() if sfen == "startpos" else cshogi.Board(sfen)
            problems = []
            if not cs.is_ok():
                problems.append("cshogi: not ok")
            if sorted(ours.legal_moves()) != sorted(m.usi() for m in ps.legal_moves):
                problems.append("legal moves differ from python-shogi")
            if sorted(ours.legal_moves()) != sorted(cshogi.move_to_usi(m) for m in cs.legal_moves):
                problems.append("legal moves differ from cshogi")
            if not ours.legal_moves():
                problems.append("no legal move")
        except Exception as exc:  # noqa: BLE001 - report and go on
            problems = [f"{type(exc).__name__}: {exc}"]
        if problems:
            bad += 1
            print(f"{i:3d} BAD {'; '.join(problems)}: {sfen}")
        else:
            print(f"{i:3d} ok  {len(ours.legal_moves()):4d} legal moves  {comment[:60]}")
    print(f"{len(positions) - bad}/{len(positions)} positions ok")
    return 1 if bad else 0


# --- searching ---------------------------------------------------------------------------
def score_text(info: IterationInfo | None) -> str:
    if info is None:
        return "-"
    if info.score_mate is not None:
        return f"mate {info.score_mate}"
    return f"cp {info.score_cp}"


def fresh(searcher: Searcher) -> None:
    """Forget everything so that a search depends only on its position and limits."""
    searcher.new_game()
    searcher.generation = 0


def timed_think(
    searcher: Searcher, pos: Position, *, depth: int | None, movetime_ms: int | None, on_iteration=None
):
    """(ThinkResult, seconds): one search, only `think` timed; movetime via a Timer on stop."""
    stop = np.zeros(1, np.int32)
    timer = None
    if movetime_ms is not None:
        timer = threading.Timer(movetime_ms / 1000.0, lambda: stop.__setitem__(0, 1))
    t0 = time.perf_counter()
    if timer is not None:
        timer.start()
    try:
        result = searcher.think(
            pos,
            depth=depth,
            nodes=None,
            multipv=1,
            stop=stop,
            on_iteration=on_iteration or (lambda info: None),
        )
    finally:
        if timer is not None:
            timer.cancel()
    return result, time.perf_counter() - t0


def parse_tunes(pairs: list[str]) -> list[int] | None:
    """core/params.py's table with `NAME=VALUE` settings applied (None: none given).
    ValueError names what is wrong: the form, an unknown name, a value out of its range."""
    if not pairs:
        return None
    values = defaults()
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or not text.strip().lstrip("-").isdigit():
            raise ValueError(f"--tune {pair!r}: expected NAME=INTEGER, e.g. QsMoveCount=2")
        if name not in INDEX:
            near = difflib.get_close_matches(name, INDEX, n=1)
            hint = f" (did you mean {near[0]}?)" if near else ""
            raise ValueError(f"--tune {pair!r}: no tunable named {name!r}{hint}")
        param, value = PARAMS[INDEX[name]], int(text)
        if not param.lo <= value <= param.hi:
            raise ValueError(f"--tune {pair!r}: {name} ranges over {param.lo}..{param.hi}")
        values[INDEX[name]] = value
    return values


def make_searcher(hash_mb: int, threads: int, search_params: list[int] | None = None, net=None) -> Searcher:
    """A warmed-up searcher; `net` (NetArrays) evaluates with that network, None with the
    hand-made evaluation."""
    settings = factory.SearchSettings(hash_mb=hash_mb, threads=threads, search_params=search_params)
    searcher = factory.make_searcher(settings)
    if net is not None:
        searcher.set_network(net)
    t0 = time.perf_counter()
    searcher.warmup()
    print(f"# warm-up (compile / load numba cache) {time.perf_counter() - t0:.2f} s, not timed")
    return searcher


def bench(args, positions) -> None:
    searcher = make_searcher(args.hash, args.threads, args.search_params, args.net)
    limit = f"movetime {args.movetime} ms" if args.movetime else f"depth {args.depth}"
    print(f"# {len(positions)} positions, {limit}, threads {args.threads}, hash {args.hash} MB")
    print(f"{'#':>3} {'nodes':>10} {'time s':>8} {'nodes/s':>9} {'depth':>5} {'best':>7}  score")
    total_nodes, total_time, cpu_time = 0, 0.0, 0.0
    cutoffs = CutoffCounts()
    for i, (sfen, _comment) in enumerate(positions, 1):
        pos = make_position(sfen)
        fresh(searcher)
        cpu0 = time.process_time()
        result, seconds = timed_think(
            searcher, pos, depth=None if args.movetime else args.depth, movetime_ms=args.movetime
        )
        cpu_time += time.process_time() - cpu0
        cutoffs += searcher.cutoff_counts()
        info = result.info
        nodes = info.nodes if info else 0
        total_nodes += nodes
        total_time += seconds
        nps = int(nodes / seconds) if seconds > 0 else 0
        print(
            f"{i:3d} {nodes:10d} {seconds:8.3f} {nps:9d} {info.depth if info else 0:5d} "
            f"{result.best or '-':>7}  {score_text(info)}",
            flush=True,
        )
    nps = int(total_nodes / total_time) if total_time > 0 else 0
    # CPU time of the process during the searches: well below threads x wall time means
    # other jobs were sharing the cores, and nps is low by about that factor.
    print(
        f"# cpu {cpu_time:.3f} s for {total_time:.3f} s wall with {args.threads} thread(s); "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    print(f"# move ordering: {cutoffs}")
    print(f"total nodes {total_nodes} seconds {total_time:.3f} nps {nps}")


def time_to_depth(args, positions) -> None:
    """Time to complete depth D with 1 and with 2 threads on a few positions."""
    chosen = [i for i in TIME_TO_DEPTH_INDICES if i < len(positions)] or [0]
    searchers = {n: make_searcher(args.hash, n, args.search_params, args.net) for n in (1, 2)}
    print(
        f"# time to depth {args.time_to_depth}, hash {args.hash} MB, "
        f"positions {', '.join(str(i + 1) for i in chosen)}"
    )
    print(f"{'#':>3} {'1 thread s':>11} {'nodes':>10} {'2 threads s':>12} {'nodes':>10} {'speed-up':>8}")
    totals = {1: 0.0, 2: 0.0}
    cpu = {1: 0.0, 2: 0.0}
    for i in chosen:
        pos = make_position(positions[i][0])
        row = {}
        for n, searcher in searchers.items():
            fresh(searcher)
            cpu0 = time.process_time()
            result, seconds = timed_think(searcher, pos, depth=args.time_to_depth, movetime_ms=None)
            cpu[n] += time.process_time() - cpu0
            row[n] = (seconds, result.info.nodes if result.info else 0)
            totals[n] += seconds
        print(
            f"{i + 1:3d} {row[1][0]:11.3f} {row[1][1]:10d} {row[2][0]:12.3f} {row[2][1]:10d} "
            f"{row[1][0] / row[2][0]:8.2f}",
            flush=True,
        )
    print(
        f"# cpu {cpu[1]:.3f} s with 1 thread, {cpu[2]:.3f} s with 2 (2 threads at full speed use "
        f"about twice their wall time); load average {os.getloadavg()[0]:.2f}"
    )
    print(
        f"time to depth {args.time_to_depth}: 1 thread {totals[1]:.3f} s, 2 threads "
        f"{totals[2]:.3f} s, speed-up {totals[1] / totals[2]:.2f}"
    )


def startpos_1s(args) -> None:
    """Deepest iteration completed in one second from the start position."""
    searcher = make_searcher(args.hash, args.threads, args.search_params, args.net)
    fresh(searcher)
    done: list[IterationInfo] = []

    def on_iteration(info: IterationInfo) -> None:
        if info.bound is None and info.multipv == 1:
            done.append(info)

    result, seconds = timed_think(
        searcher, Position(), depth=None, movetime_ms=1000, on_iteration=on_iteration
    )
    last = done[-1] if done else None
    nodes = result.info.nodes if result.info else 0
    print(
        f"startpos 1 s: depth {last.depth if last else 0} (seldepth {last.seldepth if last else 0}) "
        f"best {result.best} {score_text(last)} nodes {nodes} seconds {seconds:.3f} "
        f"nps {int(nodes / seconds)} threads {args.threads}"
    )


def depth_1s(args, positions) -> None:
    """Median of the deepest iteration completed in 1 s (--movetime to change it) over the
    middle-game positions (comment starting 'middle game'), and their node rate.  With
    --nodes N each search gets N nodes instead: the same figure without the machine's load
    (1 s is about 1.2 M nodes on an idle core)."""
    searcher = make_searcher(args.hash, args.threads, args.search_params, args.net)
    chosen = [
        (i, sfen) for i, (sfen, comment) in enumerate(positions, 1) if comment.startswith("middle game")
    ]
    movetime = args.movetime or 1000
    limit = f"{args.nodes} nodes" if args.nodes else f"{movetime} ms"
    print(f"# depth in {limit}, {len(chosen)} middle-game positions, threads {args.threads}")
    print(f"{'#':>3} {'depth':>5} {'seldepth':>8} {'nodes':>10} {'nodes/s':>9} {'best':>7}  score")
    depths, total_nodes, total_time, cpu_time = [], 0, 0.0, 0.0
    for i, sfen in chosen:
        fresh(searcher)
        done: list[IterationInfo] = []

        def on_iteration(info: IterationInfo) -> None:
            if info.bound is None and info.multipv == 1:
                done.append(info)

        cpu0 = time.process_time()
        if args.nodes:
            t0 = time.perf_counter()
            result = searcher.think(
                make_position(sfen),
                depth=None,
                nodes=args.nodes,
                multipv=1,
                stop=np.zeros(1, np.int32),
                on_iteration=on_iteration,
            )
            seconds = time.perf_counter() - t0
        else:
            result, seconds = timed_think(
                searcher, make_position(sfen), depth=None, movetime_ms=movetime, on_iteration=on_iteration
            )
        cpu_time += time.process_time() - cpu0
        last = done[-1] if done else None
        nodes = result.info.nodes if result.info else 0
        depths.append(last.depth if last else 0)
        total_nodes += nodes
        total_time += seconds
        print(
            f"{i:3d} {depths[-1]:5d} {last.seldepth if last else 0:8d} {nodes:10d} "
            f"{int(nodes / seconds):9d} {result.best or '-':>7}  {score_text(last)}",
            flush=True,
        )
    depths.sort()
    n = len(depths)
    median = depths[n // 2] if n % 2 else (depths[n // 2 - 1] + depths[n // 2]) / 2
    print(f"# cpu {cpu_time:.3f} s for {total_time:.3f} s wall; load average {os.getloadavg()[0]:.2f}")
    print(
        f"median depth {median} over {n} middle games in {limit}, "
        f"nps {int(total_nodes / total_time) if total_time > 0 else 0}"
    )


def main(argv: list[str] | None = None, net=None) -> int:
    """The bench's command line; `net` (NetArrays, from `usi-engine nnue-bench search`) searches
    with that network instead of the hand-made evaluation."""
    ap = argparse.ArgumentParser(
        prog="usi-engine bench",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "--depth", type=int, default=DEFAULT_DEPTH, help=f"search depth (default {DEFAULT_DEPTH})"
    )
    ap.add_argument("--threads", type=int, default=1, help="search threads, Lazy SMP (default 1)")
    ap.add_argument("--hash", type=int, default=DEFAULT_HASH_MB, help=f"hash MB (default {DEFAULT_HASH_MB})")
    ap.add_argument("--positions", default=DEFAULT_POSITIONS, help="position file")
    ap.add_argument("--movetime", type=int, metavar="MS", help="time per position instead of a depth")
    ap.add_argument("--time-to-depth", type=int, metavar="D", help="time to depth D with 1 and 2 threads")
    ap.add_argument("--startpos-1s", action="store_true", help="depth reached in 1 s from startpos")
    ap.add_argument(
        "--depth-1s",
        action="store_true",
        help="median depth reached in 1 s (or --movetime) over the middle games",
    )
    ap.add_argument("--nodes", type=int, metavar="N", help="--depth-1s: N nodes a position instead of 1 s")
    ap.add_argument(
        "--tune",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a search constant of core/params.py set for this run (repeatable): the tree "
        "of a setting before its games",
    )
    ap.add_argument("--verify", action="store_true", help="check every position parses, then exit")
    args = ap.parse_args(argv)
    args.net = net
    try:
        args.search_params = parse_tunes(args.tune)
    except ValueError as exc:
        ap.error(str(exc))
    positions = load_positions(args.positions)
    if args.verify:
        return verify(positions)
    if args.time_to_depth:
        time_to_depth(args, positions)
    elif args.startpos_1s:
        startpos_1s(args)
    elif args.depth_1s:
        depth_1s(args, positions)
    else:
        bench(args, positions)
    return 0


if __name__ == "__main__":
    sys.exit(main())
