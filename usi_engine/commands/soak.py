"""A long soak: many games at short time controls, then an audit of every USI exchange.

The legs are `usi-engine match` runs of our engine against itself (byoyomi 100 and 300 ms,
Fischer 2 s + 0.1 s, ponder on and off) and, with --gnushogi, against GNU Shogi through
its xshogi adapter.  The audit reads each leg's summary.json and USI logs and counts what
a GUI user would notice: games lost by our engine on time, by an illegal move, a crash or
a hang; lines our engine wrote on stderr; `go` received while a search was still running;
each `go` answered by exactly one `bestmove`; the longest think against its time control.

    usi-engine soak --games 1000 --out runs/soak            # play, then audit
    usi-engine soak --audit runs/soak                       # audit what is there
    usi-engine soak --games 20 --gnushogi ../shared/opponents/gnushogi-usi --legs gnushogi

Exit status 0 when the audit finds nothing wrong, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from usi_engine.match import cli as match_cli

from . import data_file

OPENINGS = Path(data_file("openings_balanced.txt"))
FOULS = {"illegal move", "time loss", "crash", "timeout", "false win declaration"}
BUSY_LINE = "go received while thinking"


@dataclass(frozen=True)
class Leg:
    """One match of the soak: its share of the games and its `usi-engine match` flags."""

    name: str
    share: float
    flags: tuple[str, ...]
    versus_gnushogi: bool = False


LEGS = (
    Leg("byoyomi100", 0.25, ("--byoyomi", "100")),
    Leg("byoyomi100-ponder", 0.20, ("--byoyomi", "100", "--ponder")),
    Leg("byoyomi300-ponder", 0.10, ("--byoyomi", "300", "--ponder")),
    Leg("fischer2+0.1", 0.25, ("--time", "2000", "--inc", "100")),
    Leg("fischer2+0.1-ponder", 0.20, ("--time", "2000", "--inc", "100", "--ponder")),
    # GNU Shogi thinks in whole seconds and overshoots (see ../shared/opponents/README.md):
    # it gets 1 s a move and a margin wide enough for its 6-10 s overshoots (a margin of
    # 5 s still ended 16 of 16 games on its clock); our engine keeps 300 ms
    Leg("gnushogi", 0.0, ("--margin", "30000"), versus_gnushogi=True),
)


def play_leg(
    leg: Leg, games: int, out: Path, engine_cmd: str, gnushogi: str | None, concurrency: int | None
) -> int:
    argv = [
        "--games",
        str(games),
        "--openings",
        str(OPENINGS),
        "--out",
        str(out / leg.name),
        "--event",
        f"soak {leg.name}",
        "--quiet",
        *leg.flags,
    ]
    if concurrency:
        argv += ["--concurrency", str(concurrency)]
    if leg.versus_gnushogi:
        if not gnushogi:
            raise SystemExit("the gnushogi leg needs --gnushogi PATH (the xshogi adapter)")
        argv += [
            "--engine",
            f"cmd={engine_cmd}",
            "name=usi_engine",
            "byoyomi=300",
            "--engine",
            f"cmd={gnushogi}",
            "name=gnushogi",
            "byoyomi=1000",
        ]
    else:
        argv += [
            "--engine",
            f"cmd={engine_cmd}",
            "name=usi_engine-a",
            "--engine",
            f"cmd={engine_cmd}",
            "name=usi_engine-b",
        ]
    return match_cli.main(argv)


# -- the audit -------------------------------------------------------------------------

LOG_LINE = re.compile(r"^\s*(\d+\.\d+) (\S+) ([<>!*]) ?(.*)$")


@dataclass
class LogAudit:
    stderr_lines: int = 0
    busy_lines: int = 0
    go: int = 0
    bestmove: int = 0
    unbalanced_processes: int = 0
    longest_ms: float = 0.0  # go (or ponderhit) to bestmove, ponder searches excluded


def audit_log(path: Path) -> LogAudit:
    """Per engine process (the log's tag): stderr, busy lines, go/bestmove balance, longest move."""
    a = LogAudit()
    per_tag: dict[str, list[int]] = {}
    started: dict[str, float | None] = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for raw in f:
            m = LOG_LINE.match(raw)
            if not m:
                continue
            t, tag, direction, text = float(m[1]), m[2], m[3], m[4]
            counts = per_tag.setdefault(tag, [0, 0])
            if direction == "!":
                a.stderr_lines += 1
            elif direction == ">" and text.startswith("go"):
                counts[0] += 1
                started[tag] = None if text.startswith("go ponder") else t
            elif direction == ">" and text.startswith("ponderhit"):
                started[tag] = t
            elif direction == ">" and text.startswith("stop"):
                started[tag] = None  # a ponder miss: the answer is discarded
            elif direction == "<" and text.startswith("bestmove"):
                counts[1] += 1
                t0 = started.pop(tag, None)
                if t0 is not None:
                    a.longest_ms = max(a.longest_ms, (t - t0) * 1000.0)
            elif direction == "<" and BUSY_LINE in text:
                a.busy_lines += 1
    for go, best in per_tag.values():
        a.go += go
        a.bestmove += best
        # a process killed at the end of a match may owe one answer; more is a fault
        if not 0 <= go - best <= 1:
            a.unbalanced_processes += 1
    return a


def ours(name: str) -> bool:
    return name.startswith("usi_engine")


def audit_leg(leg_dir: Path) -> dict:
    summary = json.loads((leg_dir / "summary.json").read_text())
    reasons: Counter = Counter()
    fouls = 0
    for r in summary["results"]:
        reasons[r["reason"]] += 1
        loser = {"1-0": r["white"], "0-1": r["black"]}.get(r["result"])
        if r["reason"] in FOULS and loser is not None and ours(loser):
            fouls += 1
    logs = [audit_log(p) for p in sorted((leg_dir / "logs").glob("*.log")) if ours(p.stem)]
    return {
        "leg": leg_dir.name,
        "games": summary["games"],
        "endings": dict(reasons),
        "fouls": fouls,
        "stderr": sum(a.stderr_lines for a in logs),
        "busy": sum(a.busy_lines for a in logs),
        "go": sum(a.go for a in logs),
        "bestmove": sum(a.bestmove for a in logs),
        "unbalanced": sum(a.unbalanced_processes for a in logs),
        "longest_ms": max((a.longest_ms for a in logs), default=0.0),
        "time_control": summary["engines"][0]["time_control"],
        "ponder": summary["engines"][0]["ponder"],
    }


def audit(out: Path) -> int:
    rows = [audit_leg(d) for d in sorted(out.iterdir()) if (d / "summary.json").exists()]
    if not rows:
        print(f"no finished leg under {out}")
        return 1
    print(
        "| leg | time control | ponder | games | our fouls | stderr lines | go while busy "
        "| go / bestmove | longest move | endings |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        endings = ", ".join(f"{k} {v}" for k, v in sorted(r["endings"].items(), key=lambda kv: -kv[1]))
        print(
            f"| {r['leg']} | {r['time_control']} | {'on' if r['ponder'] else 'off'} | {r['games']} "
            f"| {r['fouls']} | {r['stderr']} | {r['busy']} | {r['go']} / {r['bestmove']} "
            f"| {r['longest_ms'] / 1000:.2f} s | {endings} |"
        )
    total = sum(r["games"] for r in rows)
    bad = sum(r["fouls"] + r["stderr"] + r["busy"] + r["unbalanced"] for r in rows)
    print(
        f"\n{total} games; {'nothing wrong' if bad == 0 else f'{bad} problems'} "
        "(fouls: our engine lost by an illegal move, on time, by a crash or a hang)"
    )
    return 0 if bad == 0 else 1


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("PYTHONUNBUFFERED", "1")  # for the engines it starts
    p = argparse.ArgumentParser(
        prog="usi-engine soak",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--games", type=int, default=1000, help="games over the self-play legs")
    p.add_argument("--gnu-games", type=int, default=20, help="games of the gnushogi leg")
    p.add_argument("--out", type=Path, default=Path("runs/soak"))
    p.add_argument(
        "--engine", default=f"{shlex.quote(sys.executable)} -m usi_engine", help="our engine's command"
    )
    p.add_argument("--gnushogi", help="GNU Shogi's USI adapter; adds the gnushogi leg")
    p.add_argument("--legs", nargs="+", choices=[leg.name for leg in LEGS], help="play only these legs")
    p.add_argument("--concurrency", type=int, help="games at the same time (default: cores)")
    p.add_argument("--audit", type=Path, metavar="DIR", help="only audit the legs in DIR")
    args = p.parse_args(argv)
    if args.audit:
        return audit(args.audit)
    legs = [
        leg
        for leg in LEGS
        if (args.legs is None or leg.name in args.legs) and (not leg.versus_gnushogi or args.gnushogi)
    ]
    for leg in legs:
        games = args.gnu_games if leg.versus_gnushogi else round(args.games * leg.share)
        games += games % 2  # whole pairs: colours swapped
        if games:
            print(f"== {leg.name}: {games} games", flush=True)
            if play_leg(leg, games, args.out, args.engine, args.gnushogi, args.concurrency) == 130:
                break  # interrupted: audit what was played
    return audit(args.out)


if __name__ == "__main__":
    sys.exit(main())
