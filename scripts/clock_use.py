#!/usr/bin/env python3
"""Clock use per game from a scripts/match.py --out directory (its logs): for each engine and
game, the share of the main time spent by ply 60 and 120 (the clock the engine was sent,
increments included) and the least time it had left before a move.

    python scripts/clock_use.py runs/fischer 60000      # the --out directory, the --time in ms
"""
import re, sys, pathlib
out = pathlib.Path(sys.argv[1]); main_ms = int(sys.argv[2])
for log in sorted((out / "logs").glob("*.log")):
    game, ply, rows = 0, 0, []
    for line in log.read_text().splitlines():
        if "> usinewgame" in line:
            game += 1
        m = re.search(r"> position (?:startpos|sfen \S+ \S+ \S+ \S+)(?: moves (.*))?$", line)
        if m:
            ply = len(m.group(1).split()) if m.group(1) else 0
        m = re.search(r"> go (?:ponder )?btime (\d+) wtime (\d+)", line)
        if m:
            rows.append((game, ply, int(m.group(1 + ply % 2))))
    for g in sorted({r[0] for r in rows}):
        mine = [(p, left) for gg, p, left in rows if gg == g]
        def spent(at):
            cand = [left for p, left in mine if p <= at]
            return (main_ms - cand[-1]) / main_ms if cand and mine[-1][0] >= at - 2 else None
        s60, s120 = spent(60), spent(120)
        fmt = lambda x: "-" if x is None else f"{x:.0%}"
        print(f"{log.stem} game {g}: {len(mine)} moves to ply {mine[-1][0]}, spent by ply 60 {fmt(s60)}, "
              f"by ply 120 {fmt(s120)}, least left {min(l for _, l in mine)} ms")
