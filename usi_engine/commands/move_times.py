"""Time per move from a `usi-engine match` --out folder (its logs/*.log), seen three ways:

* relay: from the opponent's `bestmove` to our `go` or `ponderhit` (what a GUI spends
  passing the move on; a server's clock is already running);
* engine: from our `go` or `ponderhit` to our `bestmove` (what the engine's clock sees);
* server: relay + engine, the time a server charges for the move.

    usi-engine move-times runs/ponder-relay           # the --out folder

Both engines' logs of one worker (tags `w1#1`, `w1#2`, ... for worker 1) are merged by
time; each log counts from its own start, and the logs of a match start within a
millisecond of each other.  Prints, per engine and kind of move (`go`, `ponderhit`), the
median and the largest of each figure, and how many moves took longer than a limit
(`--over`, default 900 ms, on the server's clock).
"""

from __future__ import annotations

import argparse
import pathlib
import re
import statistics
import sys
from dataclasses import dataclass

LINE = re.compile(r"^\s*(\d+\.\d+) (\S+) ([<>]) (.*)$")


@dataclass
class Move:
    engine: str
    kind: str  # "go" or "ponderhit"
    relay_ms: float
    engine_ms: float

    @property
    def server_ms(self) -> float:
        return self.relay_ms + self.engine_ms


def events(log: pathlib.Path) -> list[tuple[float, str, str, str, str]]:
    """(seconds, engine, worker, direction, text) of each line of one engine's log."""
    out = []
    for raw in log.read_text(errors="replace").splitlines():
        m = LINE.match(raw)
        if m:
            t, tag, direction, text = m.groups()
            out.append((float(t), log.stem, tag.split("#")[0], direction, text))
    return out


def moves(folder: pathlib.Path) -> list[Move]:
    """Every move answered after the opponent's move, in time order per worker."""
    merged = sorted(e for log in sorted((folder / "logs").glob("*.log")) for e in events(log))
    found: list[Move] = []
    last_bestmove: dict[tuple[str, str], float] = {}  # (worker, engine) -> time
    started: dict[tuple[str, str], tuple[float, str, float]] = {}
    for t, engine, worker, direction, text in merged:
        key = (worker, engine)
        if direction == ">" and (text == "ponderhit" or (text.startswith("go ") and " ponder" not in text)):
            theirs = [s for (w, e), s in last_bestmove.items() if w == worker and e != engine]
            if theirs and max(theirs) <= t:
                kind = "ponderhit" if text == "ponderhit" else "go"
                started[key] = (t, kind, (t - max(theirs)) * 1000.0)
        elif direction == ">" and text.startswith(("usinewgame", "stop")):
            started.pop(key, None)  # a new game, or a ponder miss: not a move
        elif direction == "<" and text.startswith("bestmove"):
            last_bestmove[key] = t
            if key in started:
                t0, kind, relay = started.pop(key)
                found.append(Move(engine, kind, relay, (t - t0) * 1000.0))
    return found


def report(found: list[Move], over_ms: float) -> str:
    lines = [
        f"{'engine':<10} {'kind':<9} {'moves':>6} {'relay med/max':>14} "
        f"{'engine med/max':>15} {'server med/max':>15} {'over ' + str(int(over_ms)):>9}"
    ]
    for engine in sorted({m.engine for m in found}):
        for kind in ("go", "ponderhit"):
            sel = [m for m in found if m.engine == engine and m.kind == kind]
            if not sel:
                continue

            def pair(values: list[float]) -> str:
                return f"{statistics.median(values):.0f}/{max(values):.0f}"

            lines.append(
                f"{engine:<10} {kind:<9} {len(sel):>6} "
                f"{pair([m.relay_ms for m in sel]):>14} "
                f"{pair([m.engine_ms for m in sel]):>15} "
                f"{pair([m.server_ms for m in sel]):>15} "
                f"{sum(m.server_ms > over_ms for m in sel):>9}"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="usi-engine move-times",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("folder", help="a usi-engine match --out folder")
    ap.add_argument(
        "--over",
        type=float,
        default=900.0,
        metavar="MS",
        help="count moves longer than this on the server's clock (default 900)",
    )
    args = ap.parse_args(argv)
    folder = pathlib.Path(args.folder)
    if not (folder / "logs").is_dir():
        print(f"move_times: {folder}: no logs/ folder (not a scripts/match.py --out folder)", file=sys.stderr)
        return 2
    found = moves(folder)
    if not found:
        print(f"move_times: {folder}: no move found in the logs", file=sys.stderr)
        return 2
    print(report(found, args.over))
    return 0


if __name__ == "__main__":
    sys.exit(main())
