"""A match played by cshogi's match client (``python -m cshogi.cli``): a second referee for
the figures of ``usi-engine match``, on the same openings in the same order.

    usi-engine cshogi-match --engine1 launchers/usi-engine.sh --name1 usi_engine \\
        --engine2 /usr/games/fairy-stockfish --name2 fairy --options2 Threads:1,Hash:256 \\
        --games 100 --byoyomi 1000 --openings usi_engine/data/openings_heldout.txt \\
        --concurrency 2 --out runs/fairy-heldout-cshogi

Opening i of the file is pair i: one run of the client plays it twice, each engine Black
once (engine 1 first), and ``--concurrency`` runs go at once. Each pair's result is kept in
``pairs.jsonl`` as it ends, so the same command after a stop plays only the pairs not yet
played. The report is W-L-D, the pentanomial Elo with its interval (the statistics of
``usi-engine match``) and how the games ended.

cshogi's client starts an engine by its path alone, without arguments, in the file's folder:
give this engine as ``launchers/usi-engine.sh`` or the ``usi-engine`` console script. It
keeps no clock at byoyomi alone, so a slow move is never lost on time there, where
``usi-engine match`` forfeits a move more than 300 ms late. It writes each game's CSA record
under ``csa/pair-NNNN/`` and its own output in ``logs/pair-NNNN.log``.

Ctrl-C or a ``kill`` of the run (SIGINT, SIGTERM) ends every client and the engines it
started; the pairs they were playing are played again by the next run.  A run killed
outright (SIGKILL) takes them with it within seconds (usi_engine.orphan_guard). A pair
that outlasts ``--pair-timeout`` (an engine died: the client then waits for ever) is killed
and stops the run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import threading
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import TextIO

from usi_engine.interrupt import Stopped, first_done, stop_on_signals
from usi_engine.match.config import Opening, load_openings
from usi_engine.match.stats import Results, summarize

PAIRS = "pairs.jsonl"
SETTINGS = "settings.json"
POLL_SECONDS = 0.2  # how long a wait for the next pair lasts, at most, before a stop is seen
PAIR_START_SECONDS = 120  # a pair's time limit: the engines' start (a cold compile) ...
PLY_SLACK_SECONDS = 1.0  # ... and each ply's byoyomi plus this

# how cshogi's client announces the end of a game ("まで{n}手で..."), in its own words
ENDINGS = (
    ("千日手", "sennichite"),
    ("持将棋", "max moves"),
    ("入玉宣言", "declaration"),
    ("反則", "illegal move or repetition"),
    ("切れ負け", "time"),
    ("の勝ち", "checkmate or resignation"),
)


@dataclass(frozen=True)
class Settings:
    """What a run is: a folder holds the pairs of one run only."""

    engine1: str
    engine2: str
    name1: str
    name2: str
    options1: str
    options2: str
    byoyomi: int
    max_moves: int
    openings: str
    opening_start: int


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="usi-engine cshogi-match",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    for n in (1, 2):
        p.add_argument(f"--engine{n}", required=True, help=f"engine {n}'s executable (a path)")
        p.add_argument(f"--name{n}", default=f"engine{n}", help=f"engine {n}'s name in the report")
        p.add_argument(f"--options{n}", default="", help="USI options as Name:value,Name:value")
    p.add_argument("--games", type=int, default=100, help="games, an even number (default 100)")
    p.add_argument("--byoyomi", type=int, default=1000, help="byoyomi in ms (default 1000)")
    p.add_argument("--max-moves", type=int, default=256, help="a draw after this many moves (256)")
    p.add_argument("--openings", required=True, help="an opening file (startpos moves ... lines)")
    p.add_argument("--opening-start", type=int, default=1, help="first opening, from 1")
    p.add_argument("--concurrency", type=int, default=1, help="client runs at once (default 1)")
    p.add_argument(
        "--pair-timeout", type=float, default=None,
        help="seconds a pair may take before its client is killed and the run stops (default: "
        f"{PAIR_START_SECONDS} + 2 games x --max-moves x (byoyomi + {PLY_SLACK_SECONDS:g} s))",
    )  # fmt: skip
    p.add_argument("--out", required=True, help="folder of the results, records and logs")
    return p.parse_args(argv)


def pair_time_limit(s: Settings) -> float:
    """Seconds a pair of games may take at most.  cshogi's client waits for ever on an
    engine that died (and spins a core doing so), so a pair past this is a failure."""
    return PAIR_START_SECONDS + 2 * s.max_moves * (s.byoyomi / 1000 + PLY_SLACK_SECONDS)


def chosen_openings(path: str, start: int, pairs: int) -> list[Opening]:
    """The openings played, each a ``startpos moves`` line; ValueError says what is wrong."""
    openings = load_openings(path)
    chosen = openings[start - 1 : start - 1 + pairs]
    if len(chosen) < pairs:
        raise ValueError(
            f"{path}: {len(openings)} openings, not enough for {pairs} pairs from opening {start}"
        )
    for number, opening in enumerate(chosen, start):
        line = opening.describe()
        if not line.startswith("startpos moves "):
            raise ValueError(
                f"{path}: opening {number} does not start from the initial position, "
                f"which is all cshogi's client plays: {line[:80]}"
            )
    return chosen


def client_command(s: Settings, openings_file: str, index: int, csa_dir: str) -> list[str]:
    """cshogi's client playing opening `index` (from 0) of `openings_file`, both colours."""
    return [
        sys.executable, "-m", "cshogi.cli", s.engine1, s.engine2,
        "--name1", s.name1, "--name2", s.name2,
        "--options1", s.options1, "--options2", s.options2,
        "--games", "2", "--byoyomi", str(s.byoyomi), "--draw", str(s.max_moves),
        "--opening", openings_file, "--opening-index", str(index), "--opening-moves", "100000",
        "--csa", csa_dir,
    ]  # fmt: skip


def read_pair(output: str, s: Settings) -> list[dict]:
    """The two games of one client run, from its output: engine 1's score, the ending and
    the plies played, the opening's included."""
    endings, plies = [], []
    for line in output.splitlines():
        if line.startswith("まで"):
            endings.append(next((word for mark, word in ENDINGS if mark in line), "other"))
            length = re.match(r"まで(\d+)手", line)
            if not length:
                raise ValueError(f"the client's ending line gives no length: {line[:80]}")
            plies.append(int(length.group(1)))
    head = f"{s.name1} vs {s.name2}: "
    totals = [
        tuple(int(x) for x in line[len(head) :].split()[0].split("-"))
        for line in output.splitlines()
        if line.startswith(head)
    ]
    if len(endings) != 2 or len(totals) != 2:
        raise ValueError("the client did not finish both games")
    games, before = [], (0, 0, 0)
    for ending, total, played in zip(endings, totals, plies):
        won, lost, drawn = (a - b for a, b in zip(total, before))
        games.append({"score": 1.0 if won else 0.0 if lost else 0.5, "ending": ending, "plies": played})
        before = total
    return games


class Clients:
    """The client runs going on now. Each starts in a process group of its own, which the
    engines it starts join, so that a stop ends a client and its engines together: a Ctrl-C
    at a terminal reaches them all, but a ``kill`` of the run, or a stop of a run started in
    the background, reaches the run alone.  The group's leader is an orphan guard, which
    ends the group if the run is killed outright."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: set[subprocess.Popen] = set()
        self._stopped = False

    def run(self, cmd: list[str], timeout: float) -> tuple[int | None, str, str]:
        """The client's exit status (None if it ran past `timeout` seconds and was killed,
        with its engines), stdout and stderr; RuntimeError once stopped."""
        with self._lock:  # no client starts after stop() has ended those running
            if self._stopped:
                raise RuntimeError("the run was stopped")
            proc = subprocess.Popen(
                [sys.executable, "-m", "usi_engine.orphan_guard", *cmd], stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True, encoding="utf-8", errors="replace",
                start_new_session=True,
            )  # fmt: skip
            self._running.add(proc)
        try:
            try:
                stdout, stderr = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                stdout, stderr = proc.communicate()
                return None, stdout, stderr
        finally:
            with self._lock:
                self._running.discard(proc)
        return proc.returncode, stdout, stderr

    def stop(self) -> None:
        """Kill every client running and its engines; start no more."""
        with self._lock:
            self._stopped = True
            for proc in self._running:
                _kill_group(proc)


def _kill_group(proc: subprocess.Popen) -> None:
    """Kill a client, its guard and its engines (the process group the guard leads)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:  # it ended meanwhile
        pass


def play_pair(
    clients: Clients,
    s: Settings,
    out: str,
    openings_file: str,
    index: int,
    opening_plies: int,
    timeout: float,
) -> dict:
    """Opening `index` of `openings_file` (`opening_plies` long) played by the client within
    `timeout` seconds; its record, or RuntimeError naming the log."""
    name = f"pair-{index + 1:04d}"
    log = os.path.join(out, "logs", name + ".log")
    # a folder per pair: the client names a record by the engines and the second it began
    cmd = client_command(s, openings_file, index, os.path.join(out, "csa", name))
    returncode, stdout, stderr = clients.run(cmd, timeout)
    with open(log, "w", encoding="utf-8") as fh:
        fh.write(stdout + stderr)
    try:
        if returncode is None:
            raise ValueError(
                f"the client did not finish in {timeout:g} s (an engine that died or hung?) and was killed"
            )
        if returncode != 0:
            raise ValueError(f"the client exited with {returncode}")
        games = read_pair(stdout, s)
    except ValueError as exc:
        raise RuntimeError(f"pair {index + 1}: {exc}; its output is in {log}") from None
    return {
        "pair": index + 1, "opening": s.opening_start + index, "opening_plies": opening_plies,
        "games": games,
    }  # fmt: skip


def load_pairs(out: str, s: Settings) -> dict[int, dict]:
    """The pairs already played in `out`, by number; ValueError if it holds another run."""
    path = os.path.join(out, SETTINGS)
    if os.path.exists(path):
        with open(path, encoding="utf-8") as fh:
            old = json.load(fh)
        diff = sorted(k for k, v in asdict(s).items() if old.get(k) != v)
        if diff:
            raise ValueError(f"{out} holds a run with other settings ({', '.join(diff)}): use another --out")
    else:
        os.makedirs(out, exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(asdict(s), fh, indent=1)
    pairs: dict[int, dict] = {}
    if os.path.exists(os.path.join(out, PAIRS)):
        with open(os.path.join(out, PAIRS), encoding="utf-8") as fh:
            for line in fh:
                if line.strip():  # a line cut by a kill is not complete JSON: played again
                    try:
                        record = json.loads(line)
                    except json.JSONDecodeError:
                        continue
                    pairs[record["pair"]] = record
    return pairs


def lost_before_moving(pairs: list[dict], s: Settings) -> dict[str, int]:
    """Per engine, the games it lost by resignation or checkmate before it made a move after
    the opening.  An engine that cannot search (started by a python without numba, say)
    resigns at its first ``go``, and a match of such games ends in seconds with a score that
    reads like any other.  The client does not show the engines' output, so the game's
    length is the sign: it ended within one ply of the opening.  Pairs kept by a version
    that did not record lengths are not counted."""
    lost: Counter[str] = Counter()
    for pair in pairs:
        for game in pair["games"]:
            if game["ending"] != "checkmate or resignation" or "plies" not in game:
                continue
            if game["plies"] - pair["opening_plies"] <= 1:
                lost[s.name1 if game["score"] == 0.0 else s.name2] += 1
    return dict(lost)


def report(pairs: list[dict], s: Settings) -> str:
    results, endings = Results(), Counter()
    for pair in pairs:
        for game in pair["games"]:
            results.add_game(game["score"])
            endings[game["ending"]] += 1
        results.add_pair(sum(g["score"] for g in pair["games"]))
    summary = summarize(results.wins, results.losses, results.draws, results.penta)
    lines = [
        f"{s.name1} vs {s.name2} (cshogi's client): {summary.line()}",
        f"Endings: {', '.join(f'{e} {n}' for e, n in endings.most_common())}",
    ]
    unmoved = lost_before_moving(pairs, s)
    if unmoved:
        lines.append(
            "Lost before its first move: "
            + ", ".join(f"{name} {n}" for name, n in unmoved.items())
            + " (resigned or mated at its first turn after the opening: could it search?"
            " the client does not show an engine's info strings: start it by hand)"
        )
    return "\n".join(lines)


def keep_pairs(futures: list[Future], log: TextIO, done: dict[int, dict]) -> str | None:
    """Each pair's record into `log` and `done` as it ends; after a pair fails, none starts,
    the pairs running still count, and the first failure is returned.  A stop arrives
    between waits (interrupt.first_done), never inside one, where it would leave futures
    locked and the pairs' threads blocked at their end."""
    failure = None
    pending = set(futures)
    while pending:
        finished, pending = first_done(pending, POLL_SECONDS)
        for future in finished:
            if future.cancelled():
                continue
            try:
                record = future.result()
            except RuntimeError as exc:
                failure = failure or str(exc)
                for f in futures:
                    f.cancel()
                continue
            log.write(json.dumps(record) + "\n")
            log.flush()
            done[record["pair"]] = record
            scores = "-".join(f"{g['score']:g}" for g in record["games"])
            print(f"pair {record['pair']} (opening {record['opening']}): {scores}", flush=True)
    return failure


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    if a.games < 2 or a.games % 2:
        raise SystemExit(f"cshogi-match: --games is an even number of at least 2, not {a.games}")
    if a.opening_start < 1 or a.concurrency < 1:
        raise SystemExit("cshogi-match: --opening-start and --concurrency count from 1")
    if a.pair_timeout is not None and not a.pair_timeout > 0:
        raise SystemExit(
            f"cshogi-match: --pair-timeout is a number of seconds above 0, not {a.pair_timeout:g}"
        )
    settings = Settings(
        *(os.path.abspath(e) for e in (a.engine1, a.engine2)),
        a.name1, a.name2, a.options1, a.options2, a.byoyomi, a.max_moves, os.path.abspath(a.openings),
        a.opening_start,
    )  # fmt: skip
    try:
        openings = chosen_openings(a.openings, a.opening_start, a.games // 2)
        done = load_pairs(a.out, settings)
    except ValueError as exc:
        raise SystemExit(f"cshogi-match: {exc}") from None
    for folder in ("csa", "logs"):
        os.makedirs(os.path.join(a.out, folder), exist_ok=True)
    # the openings as the client reads them: line i is pair i, nothing else in the file
    openings_file = os.path.join(a.out, "openings.txt")
    with open(openings_file, "w", encoding="utf-8") as fh:
        fh.write("".join(o.describe() + "\n" for o in openings))
    todo = [i for i in range(len(openings)) if i + 1 not in done]
    print(f"cshogi-match: {len(openings)} pairs, {len(done)} played before, {len(todo)} to play", flush=True)
    clients = Clients()
    with ThreadPoolExecutor(a.concurrency) as pool, open(os.path.join(a.out, PAIRS), "a+") as log:
        log.seek(0, os.SEEK_END)
        if log.tell() > 0:  # a line cut by a kill is ended, so that the next one stands alone
            log.seek(log.tell() - 1)
            if log.read(1) != "\n":
                log.write("\n")
        timeout = a.pair_timeout or pair_time_limit(settings)
        futures = [
            pool.submit(
                play_pair, clients, settings, a.out, openings_file, i, len(openings[i].moves), timeout
            )
            for i in todo
        ]
        try:
            with stop_on_signals():
                failure = keep_pairs(futures, log, done)
        except Stopped as exc:  # the pairs being played end unfinished, and are not kept
            for f in futures:
                f.cancel()
            clients.stop()
            print(f"cshogi-match: stopped ({exc.signame}); the same command goes on", flush=True)
            return exc.exit_code
    if failure:
        print(f"cshogi-match: stopped ({failure}); the same command goes on", flush=True)
        return 1
    print(report([done[k] for k in sorted(done)], settings), flush=True)
    return 0
