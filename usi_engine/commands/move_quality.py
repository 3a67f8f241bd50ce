"""Move quality at equal nodes: what a deeper search says each engine's choices cost.

    usi-engine move-quality --games runs/screen/base     # ours and YaneuraOu's NNUE build
                                                        # (same network), 100,000 nodes each,
                                                        # judged by YaneuraOu at 2,000,000
    usi-engine move-quality --games runs/m --engine cmd="python -m usi_engine" name=base \\
        --engine cmd="python -m usi_engine" name=x option.Tune_LmrRoot=1 --concurrency 2
    usi-engine move-quality --positions F.txt --nodes 300000 --judge-nodes 4000000

Positions: every `--every`-th ply from `--from-ply` of each CSA record in DIR/games (a
`usi-engine match --out` folder), each with the game's moves before it, so that repetitions
count (an odd step, as the default 5, takes both sides to move); or each line of
`--positions` ('<sfen>  # comment').

The judge (`--judge`, by default YaneuraOu's NNUE build loading this engine's shipped
network) searches each position with `go nodes J`: its move and its score. Positions it
scores beyond +-1500 cp are decided and left out. Each engine then searches each position
with `go nodes N`; where it chose another move, the judge searches that move alone (`go
nodes J searchmoves M`). The move's loss is the judge's score of its own move minus its score
of the engine's, at least 0 and at most 1000 cp (a mate counts as 3000 cp), so that a single
mate does not make the mean; resigning (or declaring) a position the judge has not decided
costs the whole 1000.

The report gives, per engine: the positions, how often it found the judge's move, its mean
loss a move with the standard error, the moves that lost 300 cp or more, and its score bias
(its own score minus the judge's, both capped at 3000 cp: above 0, it is more optimistic
for the side to move than the judge); and the mean losses by the kind of move the judge
chose (an evasion, a capture, a check, a drop, another board move), which say where an
engine misses what the judge finds. Then each engine against the first, position by
position: the difference of the mean losses, with its standard error, and of the judge's
moves found. One position's pair is one sample, so these differences are much tighter than
the engines' separate figures.

The judge's answers are kept in `--cache` (JSON; the key holds the judge's command, options
and nodes), so a second run asks it only of moves it has not judged before. One run at a time
per cache file.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import cshogi

from usi_engine.api import Score
from usi_engine.interrupt import Stopped, stop_on_signals
from usi_engine.match.config import EngineSpec
from usi_engine.record import read_record
from usi_engine.usiproc import EngineError, UsiProcess

from .bench import load_positions
from .node_rate import YANEURAOU_NNUE, default_engines, parse_engine, yaneuraou_nnue

MATE_AS_CP = 3000  # a mate score counts as this many centipawns
LOSS_CAP = 1000  # no single move costs more than this in the mean
DECIDED = 1500  # positions the judge scores beyond this are left out
BIG_LOSS = 300  # a move losing this much is counted apart
READY_TIMEOUT_S = 180.0
SEARCH_TIMEOUT_S = 600.0
SAVE_EVERY = 20  # the judge's answers are written to --cache after this many searches
NOT_A_MOVE = ("resign", "win", "")  # bestmove answers the judge cannot search alone


@dataclass(frozen=True)
class Probe:
    """One position: `position` command arguments ('sfen ... moves ...') and where it came from."""

    position: str
    label: str


@dataclass
class Choice:
    """One engine's move in one position, and what the judge says of it."""

    label: str
    kind: str  # move_kind of the judge's move
    move: str
    score: int  # the engine's own, centipawns capped at MATE_AS_CP
    judge_move: str
    judge_best: int  # the judge's score of its own move
    judge_of_move: int  # the judge's score of the engine's move

    @property
    def found(self) -> bool:
        return self.move == self.judge_move

    @property
    def loss(self) -> int:
        return min(max(self.judge_best - self.judge_of_move, 0), LOSS_CAP)

    @property
    def bias(self) -> int:
        return self.score - self.judge_best


def capped_cp(score: str | None) -> int:
    """A USI score ('cp 35', 'mate -3') as centipawns within +-MATE_AS_CP (0 when none)."""
    if not score:
        return 0
    parsed = Score.parse(score)
    if parsed.is_mate:
        return MATE_AS_CP if parsed.mate > 0 else -MATE_AS_CP
    return max(-MATE_AS_CP, min(MATE_AS_CP, parsed.cp))


KINDS = ("evasion", "capture", "check", "drop", "board move")


def move_kind(position: str, usi: str) -> str:
    """What sort of move `usi` is in `position`: an evasion (the side to move is in check),
    a capture, a check (that captures nothing), a drop, or any other board move."""
    board = cshogi.Board()
    board.set_position(position)
    if board.is_check():
        return "evasion"
    move = board.move_from_usi(usi)
    if not cshogi.move_is_drop(move) and board.piece(cshogi.move_to(move)) != 0:
        return "capture"
    board.push(move)
    if board.is_check():
        return "check"
    return "drop" if cshogi.move_is_drop(move) else "board move"


def positions_from_games(folder: str, every: int, from_ply: int) -> list[Probe]:
    """The positions before plies from_ply, from_ply + every, ... (counted from 1) of each
    record in folder/games/*.csa."""
    paths = sorted(glob.glob(os.path.join(folder, "games", "*.csa")))
    if not paths:
        raise ValueError(f"no games/*.csa in {folder}")
    probes = []
    for path in paths:
        record = read_record(path)
        head = f"sfen {record.start_sfen}"
        for ply in range(from_ply, len(record.moves) + 1, every):
            before = record.moves[: ply - 1]
            position = f"{head} moves {' '.join(before)}" if before else head
            probes.append(Probe(position, f"{os.path.basename(path)}:{ply}"))
    return probes


def positions_from_file(path: str) -> list[Probe]:
    return [Probe(f"sfen {sfen}", f"{path}:{i}") for i, (sfen, _) in enumerate(load_positions(path), 1)]


class Judge:
    """The deep search every move is measured by, its answers kept in a JSON file."""

    def __init__(self, spec: EngineSpec, nodes: int, cache_path: str | None) -> None:
        self.spec, self.nodes, self.cache_path = spec, nodes, cache_path
        self.identity = json.dumps([spec.cmd, sorted(spec.options.items()), nodes])
        self.answers: dict[str, list] = {}  # "position|move" ('' for its own) -> [move, cp]
        self.asked = 0  # searches this run
        self.lock = threading.Lock()
        if cache_path and os.path.exists(cache_path):
            with open(cache_path, encoding="utf-8") as fh:
                self.answers = json.load(fh).get(self.identity, {})

    def known(self, position: str, move: str = "") -> list | None:
        with self.lock:
            return self.answers.get(f"{position}|{move}")

    def ask(self, engine: UsiProcess, position: str, move: str = "") -> list:
        """[move, cp] of the judge's search of `position` (of `move` alone when given)."""
        found = self.known(position, move)
        if found is not None:
            return found
        go = f"go nodes {self.nodes}" + (f" searchmoves {move}" if move else "")
        engine.new_game(READY_TIMEOUT_S)
        result = engine.go(f"position {position}", go, SEARCH_TIMEOUT_S)
        answer = [result.bestmove, capped_cp(result.score)]
        with self.lock:
            self.answers[f"{position}|{move}"] = answer
            self.asked += 1
            due = self.asked % SAVE_EVERY == 0
        if due:
            self.save()  # a run killed outright loses at most this many searches
        return answer

    def save(self) -> None:
        if not self.cache_path:
            return
        with self.lock:
            every: dict[str, dict] = {}
            if os.path.exists(self.cache_path):
                with open(self.cache_path, encoding="utf-8") as fh:
                    every = json.load(fh)
            every[self.identity] = dict(self.answers)
            tmp = self.cache_path + ".tmp"
            Path(tmp).write_text(json.dumps(every), encoding="utf-8")
            os.replace(tmp, self.cache_path)  # a kill mid-write leaves the old file whole


class _Crew:
    """The threads of one stage, each with its share of the positions, and the engines each
    opens. A stop (SIGINT, SIGTERM) kills the engines, so that no search holds a thread,
    then waits for the threads, whose answers so far are saved."""

    def __init__(self) -> None:
        self.halt = threading.Event()
        self.engines: dict[threading.Thread, list[UsiProcess]] = {}
        self.lock = threading.Lock()

    def open(self, spec: EngineSpec) -> UsiProcess:
        """An engine for the calling thread, ended with it."""
        engine = UsiProcess(spec.cmd, tag=spec.name, cwd=spec.cwd)
        with self.lock:
            self.engines.setdefault(threading.current_thread(), []).append(engine)
        engine.open(spec.options, READY_TIMEOUT_S)
        return engine

    def run(self, work, items: Sequence, concurrency: int) -> None:
        """work(crew, part) on up to `concurrency` threads; the first error is raised once
        all have ended."""
        errors: list[BaseException] = []

        def guarded(part):
            try:
                work(self, part)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller below
                if not self.halt.is_set():  # after a stop, a killed engine's error is expected
                    errors.append(exc)
                self.halt.set()
            finally:
                with self.lock:
                    mine = self.engines.pop(threading.current_thread(), [])
                for engine in mine:
                    engine.quit()

        parts = [items[i::concurrency] for i in range(concurrency) if items[i::concurrency]]
        threads = [threading.Thread(target=guarded, args=(part,)) for part in parts]
        for t in threads:
            t.start()
        try:
            for t in threads:
                while t.is_alive():
                    t.join(0.2)  # short waits: a signal's handler runs between them
        except Stopped:
            self.halt.set()
            with self.lock:
                for engines in self.engines.values():
                    for engine in engines:
                        engine.kill_at_once()
            for t in threads:
                t.join()
            raise
        if errors:
            raise errors[0]


def judge_positions(judge: Judge, probes: list[Probe], concurrency: int) -> list[Probe]:
    """The judge's own move for every position; those not yet decided."""

    def work(crew: _Crew, part: Sequence[Probe]) -> None:
        engine = None
        try:
            for probe in part:
                if crew.halt.is_set():
                    return
                if judge.known(probe.position) is None:
                    engine = engine or crew.open(judge.spec)
                    judge.ask(engine, probe.position)
        finally:
            judge.save()

    _Crew().run(work, probes, concurrency)
    return [p for p in probes if abs(judge.known(p.position)[1]) < DECIDED]


def engine_choices(
    spec: EngineSpec, nodes: int, judge: Judge, probes: list[Probe], concurrency: int
) -> list[Choice]:
    """The engine's move in each position at `nodes`, each judged."""
    found: dict[str, Choice] = {}

    def work(crew: _Crew, part: Sequence[Probe]) -> None:
        engine = crew.open(spec)
        referee = None
        try:
            for probe in part:
                if crew.halt.is_set():
                    return
                engine.new_game(READY_TIMEOUT_S)
                result = engine.go(f"position {probe.position}", f"go nodes {nodes}", SEARCH_TIMEOUT_S)
                best_move, best = judge.known(probe.position)
                if result.bestmove == best_move:
                    of_move = best
                elif result.bestmove in NOT_A_MOVE:
                    of_move = -MATE_AS_CP  # resigning a position the judge holds loses it all
                else:
                    if judge.known(probe.position, result.bestmove) is None:
                        referee = referee or crew.open(judge.spec)
                    of_move = judge.ask(referee, probe.position, result.bestmove)[1]
                kind = move_kind(probe.position, best_move)
                found[probe.label] = Choice(
                    probe.label, kind, result.bestmove, capped_cp(result.score), best_move, best, of_move
                )
        finally:
            judge.save()

    _Crew().run(work, probes, concurrency)
    return [found[p.label] for p in probes]


def _mean_se(values: Sequence[float]) -> tuple[float, float]:
    se = statistics.stdev(values) / len(values) ** 0.5 if len(values) > 1 else 0.0
    return statistics.fmean(values), se


def summary_line(name: str, choices: Sequence[Choice]) -> str:
    n = len(choices)
    hits = sum(c.found for c in choices)
    loss, se = _mean_se([c.loss for c in choices])
    big = sum(c.loss >= BIG_LOSS for c in choices)
    bias = statistics.fmean(c.bias for c in choices)
    found = f"{hits} ({100 * hits / n:.1f}%)"
    return f"{name[:20]:20s} {n:9d} {found:>14s} {loss:9.1f} ({se:4.1f}) {big:7d} {bias:+11.1f}"


def paired_line(name: str, first: Sequence[Choice], other: Sequence[Choice]) -> str:
    diff, se = _mean_se([b.loss - a.loss for a, b in zip(first, other)])
    hits = sum(b.found for b in other) - sum(a.found for a in first)
    return f"{name}: {diff:+.1f} +- {se:.1f} cp a move, judge's move {hits:+d}"


def report(names: Sequence[str], results: Sequence[Sequence[Choice]]) -> Iterable[str]:
    yield f"{'engine':20s} positions   judge's move  mean loss (se) {BIG_LOSS}+ cp  score bias"
    for name, choices in zip(names, results):
        yield summary_line(name, choices)
    yield "mean loss by the kind of the judge's move: " + ", ".join(names)
    for kind in KINDS:
        rows = [[c for c in choices if c.kind == kind] for choices in results]
        if rows[0]:
            losses = "  ".join(f"{statistics.fmean(c.loss for c in row):6.1f}" for row in rows)
            yield f"  {kind:11s} {len(rows[0]):5d} positions  {losses}"
    if len(names) > 1:
        yield f"against {names[0]}, position by position (loss difference, standard error):"
        for name, choices in zip(names[1:], results[1:]):
            yield paired_line(name, results[0], choices)


def _ended_early(exc: EngineError | Stopped) -> int:
    """The exit status of a run an engine's failure or a signal ended; the message says which."""
    if isinstance(exc, Stopped):
        print(f"move-quality: stopped ({exc.signame}); the judge's answers so far are kept", file=sys.stderr)
        return exc.exit_code
    print(f"move-quality: {exc}", file=sys.stderr)
    return 1


def _args(argv: list[str] | None) -> tuple[argparse.ArgumentParser, argparse.Namespace]:
    ap = argparse.ArgumentParser(
        prog="usi-engine move-quality",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    source = ap.add_mutually_exclusive_group(required=True)
    source.add_argument("--games", metavar="DIR", help="a match folder: positions from its games/*.csa")
    source.add_argument("--positions", metavar="FILE", help="'<sfen>  # comment' per line")
    ap.add_argument("--every", type=int, default=5, metavar="N", help="every Nth ply of a game (default 5)")
    ap.add_argument("--from-ply", type=int, default=24, metavar="N", help="the first ply taken (default 24)")
    ap.add_argument(
        "--engine", nargs="+", action="append", metavar="KEY=VALUE", help="cmd=, name=, option.X="
    )
    ap.add_argument(
        "--nodes", type=int, default=100_000, help="nodes a move for each engine (default 100000)"
    )
    ap.add_argument("--judge", nargs="+", metavar="KEY=VALUE", help="the judge: cmd=, option.X= (YaneuraOu)")
    ap.add_argument("--judge-nodes", type=int, default=2_000_000, help="the judge's nodes (default 2000000)")
    ap.add_argument("--cache", metavar="FILE", help="the judge's answers, kept between runs (JSON)")
    ap.add_argument("--concurrency", type=int, default=1, metavar="N", help="positions searched at once")
    ap.add_argument("--out", metavar="FILE", help="every engine's choices, one JSON object a line")
    args = ap.parse_args(argv)
    if args.every < 1 or args.from_ply < 1 or args.nodes < 1 or args.judge_nodes < 1 or args.concurrency < 1:
        ap.error("--every, --from-ply, --nodes, --judge-nodes and --concurrency must be at least 1")
    return ap, args


def main(argv: list[str] | None = None) -> int:
    ap, args = _args(argv)
    try:
        engines = [parse_engine(tokens) for tokens in args.engine] if args.engine else default_engines()
        judge_spec = parse_engine(["name=judge"] + args.judge) if args.judge else yaneuraou_nnue("judge")
        probes = (
            positions_from_games(args.games, args.every, args.from_ply)
            if args.games
            else positions_from_file(args.positions)
        )
    except (ValueError, OSError) as exc:
        ap.error(str(exc))
    if (not args.judge or not args.engine) and not YANEURAOU_NNUE.exists():
        ap.error(f"{YANEURAOU_NNUE} not found: run from the repository root or name --judge and --engine")
    judge = Judge(judge_spec, args.judge_nodes, args.cache)
    source = args.games or args.positions
    try:
        with stop_on_signals():  # a kill, too, ends the engines
            live = judge_positions(judge, probes, args.concurrency)
            print(
                f"# {len(probes)} positions from {source}; {len(live)} not decided by the judge "
                f"({judge_spec.name}, {args.judge_nodes} nodes); the engines at {args.nodes} nodes"
            )
            results = [engine_choices(spec, args.nodes, judge, live, args.concurrency) for spec in engines]
    except (EngineError, Stopped) as exc:
        return _ended_early(exc)
    if not live:
        print("move-quality: every position is decided; nothing to measure", file=sys.stderr)
        return 1
    names = [spec.name for spec in engines]
    for line in report(names, results):
        print(line)
    print(f"# the judge searched {judge.asked} times in this run")
    if args.out:
        rows = [{"engine": n, **c.__dict__, "loss": c.loss} for n, cs in zip(names, results) for c in cs]
        Path(args.out).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return 0
