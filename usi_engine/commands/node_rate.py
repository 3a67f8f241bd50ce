"""Node rate and depth side by side: USI engines search the same positions for the same
time, one thread each, taking turns position by position, and each reports what it searched.

    usi-engine node-rate                     # ours against YaneuraOu's NNUE build loading
                                             # our shipped network, 1 s on the 8 middle games
    usi-engine node-rate --byoyomi 3000 --positions F.txt
    usi-engine node-rate --depth 12          # the trees: nodes to each depth, branching factor
    usi-engine node-rate --match-logs runs/m # each engine's node rate and depth in a match
    usi-engine node-rate --engine cmd="python -m usi_engine" name=new \\
        --engine cmd="python -m usi_engine" name=old dir=../old --engine cmd=... name=yo ...
    usi-engine node-rate --engine cmd="python -m usi_engine" name=ours \\
        --engine cmd=PATH name=other option.EvalDir=DIR option.Threads=1

Each position is a fresh game (`usinewgame`) searched with `go btime 0 wtime 0 byoyomi N`;
every engine gets `Threads 1`, `USI_Hash 256`, `NetworkDelay 0` and `NetworkDelay2 0`
(an `option.NAME=` of your own wins). The figures are the engine's own: the nodes and the
time of its last `info` line that has both, and the depth of its last `info` with a depth
and a PV. Each engine counts nodes and depth its own way, so depth is a hint; nodes per
second is the comparable figure. The median node rate over the positions and the ratio of
each median to the last engine's close the report. Time them on an idle machine: the
`# load` line says what else ran.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from usi_engine.interrupt import Stopped, stop_on_signals
from usi_engine.match.cli import engine_from_fields, parse_engine_tokens
from usi_engine.match.config import EngineSpec
from usi_engine.usiproc import EngineError, UsiProcess

from . import PACKAGE, data_file
from .bench import load_positions

YANEURAOU_NNUE = Path("../shared/opponents/yaneuraou/YaneuraOu-nnue-halfkp64")
SHIPPED_NETWORK_DIR = PACKAGE / "eval"  # holds nn.bin
FAIR_OPTIONS = {"Threads": "1", "USI_Hash": "256", "NetworkDelay": "0", "NetworkDelay2": "0"}
EVERY_ITERATION = {"PvInterval": "0"}  # set where the engine declares it
READY_TIMEOUT_S = 180.0


@dataclass
class Searched:
    """What one engine reported for one position."""

    depth: int = 0
    seldepth: int = 0
    nodes: int = 0
    time_ms: int = 0
    bestmove: str = ""
    nodes_at: dict[int, int] = field(default_factory=dict)  # depth -> nodes when it ended

    @property
    def nps(self) -> int:
        return self.nodes * 1000 // self.time_ms if self.time_ms > 0 else 0


def parse_engine(tokens: list[str]) -> EngineSpec:
    """`cmd=... name=... option.X=Y dir=...` (as `usi-engine match --engine`), with the fair
    options under the user's own."""
    spec = engine_from_fields(parse_engine_tokens(tokens), {})
    spec.options = {**FAIR_OPTIONS, **spec.options}
    return spec


def yaneuraou_nnue(name: str = "YaneuraOu-nnue") -> EngineSpec:
    """YaneuraOu's NNUE build loading this engine's shipped network, the fair options set."""
    return EngineSpec(
        [str(YANEURAOU_NNUE)],
        name,
        {**FAIR_OPTIONS, "EvalDir": str(SHIPPED_NETWORK_DIR), "BookFile": "no_book"},
    )


def default_engines() -> list[EngineSpec]:
    """Ours with its shipped network; YaneuraOu's NNUE build loading that same file."""
    ours = EngineSpec([sys.executable, "-m", "usi_engine"], "usi_engine", dict(FAIR_OPTIONS))
    return [ours, yaneuraou_nnue()]


def read_info(tokens: list[str], out: Searched) -> None:
    """Fold one `info` line's depth, seldepth, nodes and time into `out`."""
    values: dict[str, int] = {}
    for key, value in zip(tokens[1:], tokens[2:]):
        if key in ("depth", "seldepth", "nodes", "time") and value.lstrip("-").isdigit():
            values.setdefault(key, int(value))
        if key in ("pv", "string"):
            break
    if "depth" in values and "pv" in tokens:
        out.depth = values["depth"]
        out.seldepth = values.get("seldepth", out.seldepth)
        if "nodes" in values:
            out.nodes_at[out.depth] = values["nodes"]
    if "nodes" in values and "time" in values:
        out.nodes, out.time_ms = values["nodes"], values["time"]


def search(engine: UsiProcess, sfen: str, go: str, timeout_s: float) -> Searched:
    engine.new_game(READY_TIMEOUT_S)
    engine.send(f"position sfen {sfen}")
    engine.send(f"go {go}")
    out = Searched()
    deadline = time.monotonic() + timeout_s
    while True:
        tokens = engine.readline(deadline).split()
        if tokens[:1] == ["info"]:
            read_info(tokens, out)
        elif tokens[:1] == ["bestmove"]:
            out.bestmove = tokens[1] if len(tokens) > 1 else ""
            return out


def run_engines(
    specs: list[EngineSpec], positions: list[tuple[int, str]], go: str, timeout_s: float
) -> list[list[Searched]]:
    """Each position searched by every engine in turn, so that what else the machine does
    at that moment weighs on both alike."""
    engines = [UsiProcess(spec.cmd, tag=spec.name, cwd=spec.cwd) for spec in specs]
    try:
        for engine, spec in zip(engines, specs):
            engine.start()
            engine.usi(READY_TIMEOUT_S)
            # every iteration reported, also by YaneuraOu (it otherwise prints a PV every 300 ms)
            quiet = {name: value for name, value in EVERY_ITERATION.items() if name in engine.options}
            engine.setoptions({**quiet, **spec.options})
            engine.isready(READY_TIMEOUT_S)
        results: list[list[Searched]] = [[] for _ in specs]
        for _, sfen in positions:
            for engine, rows in zip(engines, results):
                rows.append(search(engine, sfen, go, timeout_s))
        return results
    finally:
        for engine in engines:
            engine.quit()


LOG_LINE = re.compile(r"^\s*[\d.]+ (\S+) ([<>]) (.*)$")
MIN_MOVE_MS = 100  # shorter searches (book moves, forced replies) say little about speed


def moves_in_log(path: Path) -> list[Searched]:
    """One Searched per move that an engine's match log shows (`usi-engine match --out`:
    logs/NAME.log, a tag per engine process), from the engine's own last info lines."""
    moves: list[Searched] = []
    current: dict[str, Searched] = {}
    for raw in path.read_text(errors="replace").splitlines():
        m = LOG_LINE.match(raw)
        if not m:
            continue
        tag, direction, text = m.groups()
        tokens = text.split()
        if direction == ">" and tokens[:1] == ["go"]:
            current[tag] = Searched()
        elif direction == "<" and tag in current:
            if tokens[:1] == ["info"]:
                read_info(tokens, current[tag])
            elif tokens[:1] == ["bestmove"]:
                moves.append(current.pop(tag))
    return moves


def match_report(out_dir: str) -> int:
    """Median node rate and depth of each engine over its moves in a match's logs."""
    logs = sorted(Path(out_dir, "logs").glob("*.log"))
    if not logs:
        print(f"node-rate: no logs/*.log in {out_dir}", file=sys.stderr)
        return 1
    for log in logs:
        moves = [m for m in moves_in_log(log) if m.time_ms >= MIN_MOVE_MS]
        if not moves:
            print(f"{log.stem}: no move of {MIN_MOVE_MS} ms or more with nodes and time")
            continue
        nps = statistics.median(m.nps for m in moves)
        depth = statistics.median(m.depth for m in moves)
        print(f"{log.stem}: median nodes/s {nps:.0f}, median depth {depth:g} over {len(moves)} moves")
    return 0


def middle_games(path: str) -> list[tuple[int, str]]:
    """(line number, sfen) of the positions whose comment starts 'middle game' (the bench
    file's), or of every position when none is so marked."""
    positions = load_positions(path)
    chosen = [(i, s) for i, (s, comment) in enumerate(positions, 1) if comment.startswith("middle game")]
    return chosen or [(i, s) for i, (s, _) in enumerate(positions, 1)]


def report(
    engines: list[EngineSpec], results: list[list[Searched]], positions: list[tuple[int, str]]
) -> None:
    header = "".join(f" | {e.name[:24]:>24} {'':>14}" for e in engines)
    print(f"{'#':>3}{header}")
    print(
        f"{'':>3}" + "".join(f" | {'depth':>7} {'seldepth':>8} {'nodes':>10} {'nodes/s':>9}" for _ in engines)
    )
    for row, (index, _) in enumerate(positions):
        cells = "".join(
            f" | {r[row].depth:7d} {r[row].seldepth:8d} {r[row].nodes:10d} {r[row].nps:9d}" for r in results
        )
        print(f"{index:3d}{cells}")
    medians = []
    for engine, rows in zip(engines, results):
        nps = statistics.median(r.nps for r in rows)
        depth = statistics.median(r.depth for r in rows)
        medians.append(nps)
        print(f"{engine.name}: median nodes/s {nps:.0f}, median depth {depth:g} over {len(rows)} positions")
    last = engines[-1].name
    for engine, nps in zip(engines[:-1], medians):
        if medians[-1] > 0:
            print(f"node rate {engine.name} / {last}: {nps / medians[-1]:.2f}")


def tree_report(engines: list[EngineSpec], results: list[list[Searched]], depth: int) -> None:
    """At a fixed depth: the nodes each engine needed, per depth and per position (medians),
    and the effective branching factor of its last plies."""
    first = max(1, depth - 4)
    print(f"median nodes to finish each depth ({first}-{depth}) and effective branching factor")
    totals = []
    for engine, rows in zip(engines, results):
        per_depth = [statistics.median(r.nodes_at.get(d, 0) for r in rows) for d in range(first, depth + 1)]
        below, top = per_depth[0], per_depth[-1]
        ebf = (top / below) ** (1 / (depth - first)) if below > 0 and depth > first else 0.0
        totals.append(top)
        cells = " ".join(f"{d}:{n:.0f}" for d, n in zip(range(first, depth + 1), per_depth))
        print(f"{engine.name}: {cells}; branching factor {ebf:.2f}")
    last = engines[-1].name
    for engine, nodes in zip(engines[:-1], totals):
        if totals[-1] > 0:
            print(f"nodes to depth {depth} {engine.name} / {last}: {nodes / totals[-1]:.2f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="usi-engine node-rate",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "--engine", nargs="+", action="append", metavar="KEY=VALUE", help="cmd=, name=, option.NAME="
    )
    ap.add_argument("--byoyomi", type=int, default=1000, metavar="MS", help="time a position (default 1000)")
    ap.add_argument(
        "--depth", type=int, metavar="N", help="go depth N instead: nodes per depth (the tree, not the clock)"
    )
    ap.add_argument(
        "--positions", default=data_file("bench_positions.txt"), help="'<sfen>  # comment' per line"
    )
    ap.add_argument(
        "--match-logs", metavar="DIR", help="a match's --out directory: each engine's moves there"
    )
    args = ap.parse_args(argv)
    if args.match_logs:
        return match_report(args.match_logs)
    try:
        engines = [parse_engine(tokens) for tokens in args.engine] if args.engine else default_engines()
    except ValueError as exc:
        ap.error(str(exc))
    if not args.engine and not YANEURAOU_NNUE.exists():
        ap.error(
            f"{YANEURAOU_NNUE} not found: run from the repository root or name the engines with --engine"
        )
    positions = middle_games(args.positions)
    if args.depth:
        go, timeout_s, limit = f"depth {args.depth}", 3600.0, f"depth {args.depth}"
    else:
        go, timeout_s = f"btime 0 wtime 0 byoyomi {args.byoyomi}", args.byoyomi / 1000 + 30
        limit = f"byoyomi {args.byoyomi} ms"
    print(f"# {len(positions)} positions from {args.positions}, {limit}, the engines in turn")
    try:
        with stop_on_signals():  # a kill, too, ends the engines (each in a session of its own)
            results = run_engines(engines, positions, go, timeout_s)
    except EngineError as exc:
        print(f"node-rate: {exc}", file=sys.stderr)
        return 1
    except Stopped as exc:
        print(f"node-rate: stopped ({exc.signame})", file=sys.stderr)
        return exc.exit_code
    report(engines, results, positions)
    if args.depth:
        tree_report(engines, results, args.depth)
    print(f"# load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    return 0
