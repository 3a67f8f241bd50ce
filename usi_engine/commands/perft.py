"""Perft: count the legal move tree of a position, verify a suite, compare with cshogi.

    usi-engine perft --sfen startpos --depth 5
    usi-engine perft --sfen startpos --depth 3 --divide
    usi-engine perft --sfen startpos --depth 5 --compare-cshogi
    usi-engine perft --suite tests/data/perft_suite.txt --max-depth 4
    usi-engine perft --startup

The count is timed alone: the numba functions are compiled (or loaded from the cache) by a
depth-1 call before the clock starts.  The last ply is counted without being played (bulk
counting), the same for cshogi.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from usi_engine.position import Position, START_SFEN, move_to_usi
from usi_engine.core.perft import perft
from usi_engine.core.types import MAX_MOVES
from usi_engine.core.movegen import generate, GEN_ALL
from usi_engine.core import board as cb


def load(sfen: str) -> Position:
    return Position(None if sfen.strip() == "startpos" else sfen)


def count(pos: Position, depth: int) -> int:
    buf = np.empty(MAX_MOVES * (max(depth, 1) + 1), np.int32)
    return int(perft(pos.arrays, buf, depth))


def timed_count(pos: Position, depth: int) -> tuple[int, float]:
    count(pos, 1)  # compile / load from cache, untimed
    t = time.perf_counter()
    n = count(pos, depth)
    return n, time.perf_counter() - t


def divide(pos: Position, depth: int) -> list[tuple[str, int]]:
    """Per root move leaf counts at `depth` (sorted by USI text)."""
    buf = np.empty(MAX_MOVES, np.int32)
    n = generate(pos.arrays, buf, GEN_ALL, True)
    out = []
    for m in buf[:n].copy():
        cb.do_move(pos.arrays, np.int32(m))
        out.append((move_to_usi(int(m)), count(pos, depth - 1) if depth > 1 else 1))
        cb.undo_move(pos.arrays)
    return sorted(out)


# --- cshogi, the independent oracle ---------------------------------------------------


def cshogi_board(sfen: str):
    import cshogi

    return cshogi.Board(START_SFEN if sfen.strip() == "startpos" else sfen)


def cshogi_perft(board, depth: int) -> int:
    """Recursive perft over cshogi's Board, the last ply counted without being played."""
    if depth <= 0:
        return 1
    moves = board.legal_moves
    if depth == 1:
        return len(moves)
    total = 0
    for m in list(moves):
        board.push(m)
        total += cshogi_perft(board, depth - 1)
        board.pop()
    return total


def cshogi_timed(sfen: str, depth: int) -> tuple[int, float]:
    board = cshogi_board(sfen)
    cshogi_perft(board, 1)
    t = time.perf_counter()
    n = cshogi_perft(board, depth)
    return n, time.perf_counter() - t


# --- suite ------------------------------------------------------------------------------


def parse_suite(path: str) -> list[tuple[int, str, list[tuple[int, int]]]]:
    """[(line number, sfen, [(depth, nodes), ...])] from an EPD-style file."""
    entries = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            fields = [x.strip() for x in line.split(";")]
            figures = []
            for field in fields[1:]:
                if not field:
                    continue
                key, _, value = field.partition(" ")
                if not key.startswith("D") or not key[1:].isdigit():
                    raise ValueError(f"{path}:{lineno}: bad field {field!r} (want 'D<depth> <nodes>')")
                figures.append((int(key[1:]), int(value)))
            entries.append((lineno, fields[0], figures))
    return entries


def run_suite(path: str, max_depth: int | None, compare_cshogi: bool = False) -> int:
    bad = checked = 0
    total_nodes = 0
    t0 = time.perf_counter()
    count(Position(), 1)
    for lineno, sfen, figures in parse_suite(path):
        try:
            pos = load(sfen)
        except ValueError as e:
            print(f"line {lineno}: bad sfen {sfen!r}: {e}")
            bad += 1
            continue
        for depth, want in figures:
            if max_depth is not None and depth > max_depth:
                continue
            got = count(pos, depth)
            checked += 1
            total_nodes += got
            if got != want:
                bad += 1
                print(f"line {lineno}: {sfen} depth {depth}: expected {want}, got {got}")
            if compare_cshogi:
                other = cshogi_perft(cshogi_board(sfen), depth)
                if other != want:
                    bad += 1
                    print(f"line {lineno}: {sfen} depth {depth}: expected {want}, cshogi {other}")
    secs = time.perf_counter() - t0
    print(f"suite {path}: {checked} counts checked, {bad} mismatches, {total_nodes} nodes in {secs:.2f} s")
    return 1 if bad else 0


# --- time to first use ------------------------------------------------------------------

_FIRST_USE = (
    "import time; t = time.perf_counter()\n"
    "import numpy as np\n"
    "from usi_engine.position import Position\n"
    "from usi_engine.core.perft import perft\n"
    "n = perft(Position().arrays, np.empty(1200, np.int32), 1)\n"
    "assert n == 30\n"
    "print(time.perf_counter() - t)\n"
)


def first_use(cache_dir: str) -> tuple[float, float]:
    """(seconds for import + first perft(1) inside the process, wall seconds of the process)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    t = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", _FIRST_USE], env=env, check=True, capture_output=True, text=True
    ).stdout
    return float(out.strip().splitlines()[-1]), time.perf_counter() - t


def startup() -> None:
    with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
        cold, cold_wall = first_use(cache)
        warm, warm_wall = first_use(cache)
    print(
        f"cold (empty NUMBA_CACHE_DIR, JIT compile): import + first perft(1) {cold:.2f} s "
        f"(process {cold_wall:.2f} s)"
    )
    print(
        f"warm (cache filled):                      import + first perft(1) {warm:.2f} s "
        f"(process {warm_wall:.2f} s)"
    )
    print(f"startup cold {cold:.3f} warm {warm:.3f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="usi-engine perft",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--sfen", default="startpos", help="SFEN or 'startpos'")
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--divide", action="store_true", help="one line per legal root move")
    ap.add_argument("--suite", metavar="FILE", help="verify an EPD-style suite (<sfen> ;D1 n ;D2 n ...)")
    ap.add_argument("--max-depth", type=int, help="skip suite depths above this")
    ap.add_argument(
        "--compare-cshogi",
        action="store_true",
        help="also count with cshogi in the same run (speed ratio; with --suite, verify it too)",
    )
    ap.add_argument(
        "--startup",
        action="store_true",
        help="time import + first perft(1) in a fresh process, cold and warm numba cache",
    )
    args = ap.parse_args(argv)

    if args.startup:
        startup()
        return 0
    if args.suite:
        return run_suite(args.suite, args.max_depth, args.compare_cshogi)
    try:
        pos = load(args.sfen)
    except ValueError as e:
        print(f"bad sfen: {e}", file=sys.stderr)
        return 2
    if args.depth < 0:
        print("depth must be >= 0", file=sys.stderr)
        return 2
    if args.divide:
        count(pos, 1)
        t = time.perf_counter()
        rows = divide(pos, args.depth)
        secs = time.perf_counter() - t
        for usi, n in rows:
            print(f"{usi}: {n}")
        nodes = sum(n for _, n in rows)
        print(f"moves {len(rows)}")
    else:
        nodes, secs = timed_count(pos, args.depth)
    print(f"sfen {pos.sfen()}")
    print(f"depth {args.depth}")
    nps = nodes / secs if secs > 0 else float("inf")
    if args.compare_cshogi:
        cn, cs = cshogi_timed(args.sfen, args.depth)
        cnps = cn / cs if cs > 0 else float("inf")
        status = "agree" if cn == nodes else f"DISAGREE (ours {nodes})"
        print(f"cshogi nodes {cn} seconds {cs:.3f} nps {cnps:.0f} ({status})")
        print(f"ratio ours/cshogi {nps / cnps:.2f}")
        if cn != nodes:
            print(f"nodes {nodes} seconds {secs:.3f} nps {nps:.0f}")
            return 1
    print(f"nodes {nodes} seconds {secs:.3f} nps {nps:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
