"""Clock use per game from a `usi-engine match` --out directory (its logs): for each engine and
game, the share of the main time spent by ply 60 and 120 (the clock the engine was sent,
increments included) and the least time it had left before a move, then the medians.

    usi-engine clock-use runs/fischer 60000      # the --out directory, the --time in ms

Each engine process (the log's tag, e.g. `w1#1`) is followed on its own, so the games of
a match played with --concurrency are not mixed up.
"""

import argparse
import pathlib
import re
import statistics
import sys

LINE = re.compile(r"^\s*\d+\.\d+ (\S+) > (.*)$")
POSITION = re.compile(r"position (?:startpos|sfen \S+ \S+ \S+ \S+)(?: moves (.*))?$")
GO = re.compile(r"go (?:ponder )?btime (\d+) wtime (\d+)")


def games_in(log: pathlib.Path) -> list[list[tuple[int, int]]]:
    """Per game: (ply, our time left) before each of our moves."""
    games, current, ply = [], {}, {}
    for raw in log.read_text(errors="replace").splitlines():
        m = LINE.match(raw)
        if not m:
            continue
        tag, text = m.groups()
        if text.startswith("usinewgame"):
            current[tag] = []
            games.append(current[tag])
        elif p := POSITION.match(text):
            ply[tag] = len(p.group(1).split()) if p.group(1) else 0
        elif (g := GO.match(text)) and tag in current:
            current[tag].append((ply[tag], int(g.group(1 + ply[tag] % 2))))
    return [g for g in games if g]


def spent_by(moves: list[tuple[int, int]], at: int, main_ms: int) -> float | None:
    """Share of the main time spent before our move at ply `at` (None: the game ended first)."""
    if moves[-1][0] < at - 2:
        return None
    left = [t for p, t in moves if p <= at]
    return (main_ms - left[-1]) / main_ms if left else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="usi-engine clock-use",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("out", type=pathlib.Path, metavar="DIR", help="the match's --out directory")
    ap.add_argument("main_ms", type=int, metavar="TIME", help="the match's --time: main time in ms")
    args = ap.parse_args(argv)
    out, main_ms = args.out, args.main_ms

    def fmt(x):
        return "-" if x is None else f"{x:.0%}"

    by60, by120, least = [], [], []
    for log in sorted((out / "logs").glob("*.log")):
        for n, moves in enumerate(games_in(log), 1):
            s60, s120 = spent_by(moves, 60, main_ms), spent_by(moves, 120, main_ms)
            low = min(t for _, t in moves)
            print(
                f"{log.stem} game {n}: {len(moves)} moves to ply {moves[-1][0]}, spent by ply 60 "
                f"{fmt(s60)}, by ply 120 {fmt(s120)}, least left {low} ms"
            )
            by60 += [s60] if s60 is not None else []
            by120 += [s120] if s120 is not None else []
            least.append(low)
    if least:

        def med(xs):
            return fmt(statistics.median(xs)) if xs else "-"

        print(
            f"median spent by ply 60 {med(by60)} ({len(by60)} games), by ply 120 {med(by120)} "
            f"({len(by120)} games); least left {min(least)} ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
