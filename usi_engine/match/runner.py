"""Running a match: clocks, openings, the game loop, concurrent scheduling, summary.

Each worker thread keeps its own process of every engine it has played with and
reuses it for the next game (``usinewgame``); an engine that crashed or hung is
killed and started again for its next game.  Results come back to the calling
thread, which saves the records, updates the statistics, checks the SPRT and
stops the match (Ctrl-C, SPRT decision) by setting the shared abort event.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import queue
import random
import re
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional

import shogi

from .records import GameRecord, MoveRecord, to_csa, to_kif
from .referee import BLACK, WHITE, Outcome, Reason, Referee
from .stats import Results, Sprt, Summary, fmt_elo, summarize, summarize_results
from ..usiproc import Aborted, EngineCrashed, EngineError, EngineLog, EngineTimeout, UsiProcess

# -- configuration -------------------------------------------------------------


@dataclass
class TimeControl:
    """Limits of one engine: main time, Fischer increment, byoyomi, nodes, depth (0 = none)."""

    time_ms: int = 0
    inc_ms: int = 0
    byoyomi_ms: int = 0
    nodes: int = 0
    depth: int = 0

    @property
    def has_clock(self) -> bool:
        return bool(self.time_ms or self.inc_ms or self.byoyomi_ms)

    def describe(self) -> str:
        parts = []
        if self.time_ms or self.inc_ms:
            parts.append(f"{self.time_ms / 1000:g}s+{self.inc_ms / 1000:g}s")
        if self.byoyomi_ms:
            parts.append(f"byoyomi {self.byoyomi_ms / 1000:g}s")
        if self.nodes:
            parts.append(f"nodes {self.nodes}")
        if self.depth:
            parts.append(f"depth {self.depth}")
        return ", ".join(parts) or "unlimited"


@dataclass
class EngineSpec:
    """How to start one engine and how it plays."""

    cmd: list[str]
    name: str
    options: dict[str, str] = field(default_factory=dict)
    tc: TimeControl = field(default_factory=TimeControl)
    cwd: Optional[str] = None
    ponder: bool = False  # think on the opponent's time (go ponder / ponderhit / stop)

    def usi_options(self) -> dict[str, str]:
        """The options to set: the user's, after ``USI_Ponder`` when pondering (as a GUI)."""
        return {"USI_Ponder": "true", **self.options} if self.ponder else dict(self.options)


@dataclass(frozen=True)
class Opening:
    """A start position and the moves played from it before the engines take over."""

    sfen: str = shogi.STARTING_SFEN
    moves: tuple[str, ...] = ()

    def describe(self) -> str:
        head = "startpos" if self.sfen == shogi.STARTING_SFEN else f"sfen {self.sfen}"
        return f"{head} moves {' '.join(self.moves)}" if self.moves else head


@dataclass
class MatchConfig:
    """Everything a match needs; see ``scripts/match.py --help``."""

    engines: list[EngineSpec]
    games: int = 2
    concurrency: int = os.cpu_count() or 1
    openings: list[Opening] = field(default_factory=lambda: [Opening()])
    max_moves: int = 256
    margin_ms: int = 300
    hang_timeout_ms: int = 5000
    move_timeout_ms: int = 60000
    ready_timeout_s: float = 120.0
    gauntlet: bool = False
    opening_start: int = 0                 # index of the first pair's opening (wraps around)
    sprt: Optional[Sprt] = None
    out_dir: Optional[str] = None
    event: str = "usi_engine match"
    ray_address: Optional[str] = None      # play on a Ray cluster (see raycluster.py)
    ray_working_dir: Optional[str] = None  # shipped to the nodes, the engines' directory
    ray_cpus_per_game: float = 1.0


# -- openings ----------------------------------------------------------------


def parse_opening_line(line: str) -> Optional[Opening]:
    """Parse ``[position] startpos|sfen SFEN|SFEN [moves ...]``; None for blanks/comments."""
    tokens = line.split("#", 1)[0].split()
    if not tokens:
        return None
    if tokens[0] == "position":
        tokens = tokens[1:]
    moves: list[str] = []
    if "moves" in tokens:
        cut = tokens.index("moves")
        tokens, moves = tokens[:cut], tokens[cut + 1:]
    if tokens == ["startpos"]:
        sfen = shogi.STARTING_SFEN
    else:
        if tokens and tokens[0] == "sfen":
            tokens = tokens[1:]
        if len(tokens) == 3:
            tokens.append("1")
        if len(tokens) != 4:
            raise ValueError(f"bad opening line: {line.strip()!r}")
        sfen = " ".join(tokens)
    Referee(sfen, moves, max_moves=10 ** 9)  # raises ValueError if illegal
    return Opening(sfen, tuple(moves))


def load_openings(path: str) -> list[Opening]:
    """All openings of a file, one per line."""
    with open(path, encoding="utf-8") as f:
        openings = [o for o in (parse_opening_line(line) for line in f) if o is not None]
    if not openings:
        raise ValueError(f"no openings in {path}")
    return openings


PIECE_VALUES = {
    shogi.PAWN: 1, shogi.LANCE: 3, shogi.KNIGHT: 4, shogi.SILVER: 5, shogi.GOLD: 6,
    shogi.BISHOP: 8, shogi.ROOK: 10, shogi.KING: 0, shogi.PROM_PAWN: 6, shogi.PROM_LANCE: 6,
    shogi.PROM_KNIGHT: 6, shogi.PROM_SILVER: 6, shogi.PROM_BISHOP: 10, shogi.PROM_ROOK: 12,
}


def material_balance(board: shogi.Board) -> int:
    """Material of black minus white (pawn units, pieces in hand included)."""
    total = 0
    for square in shogi.SQUARES:
        piece = board.piece_at(square)
        if piece is not None:
            total += PIECE_VALUES[piece.piece_type] * (1 if piece.color == BLACK else -1)
    for color, sign in ((BLACK, 1), (WHITE, -1)):
        for piece_type, count in board.pieces_in_hand[color].items():
            total += sign * count * PIECE_VALUES[piece_type]
    return total


def random_opening(plies: int, rng: random.Random, max_imbalance: int = 2,
                   tries: int = 10000) -> Opening:
    """``plies`` random legal moves from the start; rejects unbalanced or decided positions."""
    for _ in range(tries):
        board = shogi.Board()
        moves = []
        for _ in range(plies):
            legal = list(board.legal_moves)
            if not legal:
                break
            move = rng.choice(legal)
            board.push(move)
            moves.append(move.usi())
        if (len(moves) == plies and not board.is_check() and not board.is_game_over()
                and abs(material_balance(board)) <= max_imbalance):
            return Opening(shogi.STARTING_SFEN, tuple(moves))
    raise RuntimeError(f"no balanced random opening of {plies} plies found")


def random_openings(count: int, plies: int, seed: Optional[int]) -> list[Opening]:
    """``count`` distinct (when possible) random balanced openings."""
    rng = random.Random(seed)
    found: list[Opening] = []
    for _ in range(count):
        opening = random_opening(plies, rng)
        for _ in range(20):
            if opening not in found:
                break
            opening = random_opening(plies, rng)
        found.append(opening)
    return found


# -- scheduling --------------------------------------------------------------


@dataclass(frozen=True)
class ScheduledGame:
    index: int
    black: int
    white: int
    opening: Opening
    opening_index: int
    pair: int = 0  # the two games of a pair share the opening, colours swapped
    # per engine index, options for this game only (SPSA's perturbed values)
    engine_options: Optional[dict[int, dict[str, str]]] = field(default=None, compare=False, hash=False)


def pairings(n_engines: int, gauntlet: bool) -> list[tuple[int, int]]:
    """Engine pairs: first vs each other (gauntlet) or every pair (round robin)."""
    if gauntlet:
        return [(0, j) for j in range(1, n_engines)]
    return [(i, j) for i in range(n_engines) for j in range(i + 1, n_engines)]


def schedule(n_engines: int, games: int, openings: list[Opening],
             gauntlet: bool = False, opening_start: int = 0) -> list[ScheduledGame]:
    """``games`` games per pair of engines, in game pairs: one opening twice with
    colours swapped, the two games next to each other (an odd last game is alone).
    The openings are used in turn from index ``opening_start``, wrapping around."""
    plan: list[ScheduledGame] = []
    pair = 0
    for k in range((games + 1) // 2):
        opening_index = (opening_start + k) % len(openings)
        for a, b in pairings(n_engines, gauntlet):
            pair += 1
            for black, white in ((a, b), (b, a))[:min(2, games - 2 * k)]:
                plan.append(ScheduledGame(len(plan) + 1, black, white, openings[opening_index],
                                          opening_index, pair))
    return plan


# -- clocks and players ------------------------------------------------------


class Clock:
    """One side's clock.  The increment is available for the current move, as in USI
    GUIs; byoyomi is used once the main time is gone."""

    def __init__(self, tc: TimeControl) -> None:
        self.tc = tc
        self.remaining_ms = float(tc.time_ms)

    def allowed_ms(self) -> Optional[float]:
        """Time this move may take (None if the engine plays by nodes/depth only)."""
        if not self.tc.has_clock:
            return None
        return self.remaining_ms + self.tc.inc_ms + self.tc.byoyomi_ms

    def consume(self, elapsed_ms: float) -> None:
        self.remaining_ms = max(0.0, self.remaining_ms + self.tc.inc_ms - elapsed_ms)


def go_command(clocks: tuple[Clock, Clock], side: int, ponder: bool = False) -> str:
    """The USI ``go`` (``go ponder``) for ``side`` given both clocks."""
    tc = clocks[side].tc
    parts = ["go", "ponder"] if ponder else ["go"]
    if tc.has_clock:
        parts += [f"btime {int(clocks[BLACK].remaining_ms)}", f"wtime {int(clocks[WHITE].remaining_ms)}"]
        if tc.byoyomi_ms:
            parts.append(f"byoyomi {tc.byoyomi_ms}")
        if tc.inc_ms:
            parts += [f"binc {clocks[BLACK].tc.inc_ms}", f"winc {clocks[WHITE].tc.inc_ms}"]
    if tc.nodes:
        parts.append(f"nodes {tc.nodes}")
    if tc.depth:
        parts.append(f"depth {tc.depth}")
    return " ".join(parts)


class Player:
    """An engine as seen by one worker: a process started on demand and reused."""

    def __init__(self, spec: EngineSpec, log: EngineLog, tag: str, abort: threading.Event,
                 ready_timeout_s: float) -> None:
        self.spec = spec
        self.log = log
        self.tag = tag
        self.abort = abort
        self.ready_timeout_s = ready_timeout_s
        self.proc: Optional[UsiProcess] = None
        self.starts = 0
        self.ponder_move: Optional[str] = None  # the reply it is pondering on, if any
        self.applied: dict[str, str] = {}       # options the process has been given

    def new_game(self, options: Optional[dict[str, str]] = None) -> UsiProcess:
        """A ready process (started or restarted if needed) that got ``usinewgame``.

        ``options`` override the spec's for this game (a tuner's values): a running
        process gets ``setoption`` for what differs from what it has, before ``isready``.
        """
        wanted = {**self.spec.usi_options(), **(options or {})}
        if self.proc is None or not self.proc.alive:
            self.discard()
            self.starts += 1
            self.proc = UsiProcess(self.spec.cmd, self.log, f"{self.tag}#{self.starts}",
                                   self.spec.cwd, self.abort)
            self.proc.open(wanted, self.ready_timeout_s)
        else:
            self.proc.setoptions({k: v for k, v in wanted.items() if self.applied.get(k) != v})
            self.proc.isready(self.ready_timeout_s)
        self.applied = wanted
        self.ponder_move = None
        self.proc.send("usinewgame")
        return self.proc

    def discard(self) -> None:
        """Kill the process (after a crash or hang); the next game starts a new one."""
        self.ponder_move = None
        if self.proc is not None:
            self.proc.kill()
            self.proc = None

    def close(self) -> None:
        if self.proc is not None:
            self.proc.quit()
            self.proc = None


# -- one game ----------------------------------------------------------------


@dataclass
class GameSettings:
    max_moves: int = 256
    margin_ms: int = 300
    hang_timeout_ms: int = 5000
    move_timeout_ms: int = 60000
    event: str = "usi_engine match"


def _failure(ref: Referee, exc: EngineError, loser: Optional[int] = None) -> Outcome:
    reason = Reason.TIMEOUT if isinstance(exc, EngineTimeout) else Reason.CRASH
    return ref.forfeit(reason, str(exc), loser)


def _start_players(players: tuple[Player, Player], ref: Referee,
                   options: tuple[Optional[dict[str, str]], Optional[dict[str, str]]] = (None, None)
                   ) -> Optional[Outcome]:
    """Get both engines ready (with these per-side option overrides); an engine that
    fails to start loses."""
    for side in (BLACK, WHITE):
        try:
            players[side].new_game(options[side])
        except EngineError as exc:
            players[side].discard()
            return _failure(ref, exc, loser=side)
    return None


def _think(player: Player, ref: Referee, clocks: tuple[Clock, Clock],
           settings: GameSettings) -> tuple[Optional[Outcome], Optional[MoveRecord], Optional[str]]:
    """Ask the side to move for its move: (outcome if the game ends, the move played,
    the engine's ponder move).

    An engine pondering on the opponent's last move gets ``ponderhit`` and its clock
    runs from there; one pondering on another move gets ``stop``, its answer is
    discarded, and a normal ``go`` follows, as in a GUI.
    """
    side = ref.turn
    proc = player.proc
    assert proc is not None
    allowed = clocks[side].allowed_ms()
    budget = (allowed + settings.margin_ms) if allowed is not None else settings.move_timeout_ms
    expected, player.ponder_move = player.ponder_move, None
    hit = expected is not None and ref.moves[-1:] == [expected]
    if expected is not None and not hit:
        miss = _stop_pondering(player, settings)
        if miss is not None:
            return ref.forfeit(miss[0], f"{miss[1]} (after a ponder miss)"), None, None
    try:
        if hit:
            result = proc.ponderhit(budget / 1000)
        else:
            result = proc.go(ref.position_command(), go_command(clocks, side), budget / 1000)
    except EngineTimeout:
        result = proc.stop_search(settings.hang_timeout_ms / 1000)
        if result is None:
            player.discard()
            what = "ponderhit" if hit else "go"
            return ref.forfeit(Reason.TIMEOUT, f"no bestmove {budget:.0f} ms after {what}"), None, None
    except EngineCrashed as exc:
        player.discard()
        return _failure(ref, exc), None, None
    if allowed is not None and result.elapsed_ms > allowed + settings.margin_ms:
        return ref.forfeit(Reason.TIME_LOSS, f"{result.elapsed_ms:.0f} ms > {allowed:.0f} ms "
                                             f"+ {settings.margin_ms} ms margin"), None, None
    if allowed is None and result.elapsed_ms > settings.move_timeout_ms:
        return ref.forfeit(Reason.TIMEOUT, f"{result.elapsed_ms:.0f} ms for one move"), None, None
    clocks[side].consume(result.elapsed_ms)
    if result.bestmove == "resign":
        return ref.resign(), None, None
    if result.bestmove == "win":
        return ref.declare_win(), None, None
    before = ref.ply
    outcome = ref.play(result.bestmove)
    if ref.ply == before:
        return outcome, None, None
    record = MoveRecord(ref.moves[-1], result.elapsed_ms, result.score, result.pv, result.depth)
    return outcome, record, result.ponder


def _stop_pondering(player: Player, settings: GameSettings) -> Optional[tuple[Reason, str]]:
    """``stop`` a pondering engine and discard its answer; (reason, detail) if it failed."""
    proc = player.proc
    assert proc is not None
    player.ponder_move = None
    if proc.stop_search(settings.hang_timeout_ms / 1000) is not None:
        return None
    crashed = not proc.alive
    player.discard()
    if crashed:
        return Reason.CRASH, "engine exited while pondering"
    return Reason.TIMEOUT, f"no bestmove {settings.hang_timeout_ms} ms after stop"


def _start_pondering(player: Player, ref: Referee, clocks: tuple[Clock, Clock],
                     ponder: Optional[str]) -> Optional[Outcome]:
    """After the engine's move: ``go ponder`` on its expected reply (if legal)."""
    if not player.spec.ponder or not ponder or not ref.is_legal(ponder):
        return None
    side = 1 - ref.turn  # the engine that just moved
    move = shogi.Move.from_usi(ponder).usi()
    assert player.proc is not None
    try:
        player.proc.go_ponder(ref.position_command([move]), go_command(clocks, side, ponder=True))
    except EngineCrashed as exc:
        player.discard()
        return ref.forfeit(Reason.CRASH, str(exc), loser=side)
    player.ponder_move = move
    return None


def _tell_result(players: tuple[Player, Player], outcome: Outcome) -> None:
    for side in (BLACK, WHITE):
        proc = players[side].proc
        if proc is None or not proc.alive:
            continue
        word = "draw" if outcome.winner is None else ("win" if outcome.winner == side else "lose")
        try:
            proc.gameover(word)
        except EngineError:
            players[side].discard()


def play_game(game: ScheduledGame, players: tuple[Player, Player], settings: GameSettings) -> GameRecord:
    """Play one game; ``outcome`` of the record is None if the match was aborted."""
    ref = Referee(game.opening.sfen, game.opening.moves, settings.max_moves)
    record = GameRecord(game.index, players[BLACK].spec.name, players[WHITE].spec.name,
                        game.opening.sfen, [MoveRecord(m, book=True) for m in ref.moves],
                        event=settings.event, black_engine=game.black, white_engine=game.white,
                        opening=game.opening_index, pair=game.pair)
    clocks = (Clock(players[BLACK].spec.tc), Clock(players[WHITE].spec.tc))
    try:
        overrides = game.engine_options or {}
        outcome = _start_players(players, ref, (overrides.get(game.black), overrides.get(game.white)))
        while outcome is None:
            mover = players[ref.turn]
            outcome, move, ponder = _think(mover, ref, clocks, settings)
            if move is not None:
                record.moves.append(move)
            if outcome is None:
                outcome = _start_pondering(mover, ref, clocks, ponder)
        for player in players:  # the game ended on the opponent's move
            if player.ponder_move is not None:
                _stop_pondering(player, settings)
    except Aborted:
        record.ended = dt.datetime.now()
        return record
    record.outcome = outcome
    record.ended = dt.datetime.now()
    _tell_result(players, outcome)
    return record


# -- the match ---------------------------------------------------------------


@dataclass
class PairResult:
    """Results of engine ``a`` against engine ``b``: W-L-D and the pentanomial of
    finished game pairs (``pending`` holds ``a``'s score in a pair's first game)."""

    a: int
    b: int
    results: Results = field(default_factory=Results)
    pending: dict[int, float] = field(default_factory=dict)

    @property
    def wins(self) -> int:
        return self.results.wins

    @property
    def losses(self) -> int:
        return self.results.losses

    @property
    def draws(self) -> int:
        return self.results.draws

    def add(self, game: GameRecord) -> None:
        assert game.outcome is not None
        a_side = BLACK if game.black_engine == self.a else WHITE
        winner = game.outcome.winner
        score = 0.5 if winner is None else float(winner == a_side)
        self.results.add_game(score)
        if game.pair in self.pending:
            self.results.add_pair(self.pending.pop(game.pair) + score)
        else:
            self.pending[game.pair] = score

    def summary(self) -> Summary:
        return summarize_results(self.results)


@dataclass
class MatchResult:
    """Finished games and the statistics, updated as games come in."""

    config: MatchConfig
    planned: int
    games: list[GameRecord] = field(default_factory=list)
    pairs: dict[tuple[int, int], PairResult] = field(default_factory=dict)
    sprt_result: Optional[str] = None
    interrupted: bool = False
    seconds: float = 0.0  # wall time of the match

    def add(self, game: GameRecord) -> None:
        self.games.append(game)
        key = (min(game.black_engine, game.white_engine), max(game.black_engine, game.white_engine))
        self.pairs.setdefault(key, PairResult(*key)).add(game)

    def first_engine(self) -> PairResult:
        """Engine 0's results against all others together (the SPRT input)."""
        total = PairResult(0, -1)
        for (a, _), pair in self.pairs.items():
            if a == 0:
                total.results += pair.results
        return total

    def progress_line(self) -> str:
        total = self.first_engine()
        s = total.summary()
        line = (f"games {len(self.games)}/{self.planned}  {self.config.engines[0].name}: "
                f"W-L-D {s.wins}-{s.losses}-{s.draws}  pairs {'-'.join(map(str, s.pentanomial))}  "
                f"Elo {fmt_elo(s.elo)} +- {fmt_elo(s.elo_error, sign=False)}")
        if self.config.sprt is not None:
            line += f"  LLR {self.config.sprt.llr(s.pentanomial):.2f}"
            if any(self.config.sprt.prior):
                line += " (all runs)"
        return line

    def report(self) -> str:
        """The final human-readable report."""
        names = [e.name for e in self.config.engines]
        rate = f" in {self.seconds:.1f} s ({len(self.games) / self.seconds:.2f} games/s)" \
            if self.seconds > 0 else ""
        lines = [f"Finished {len(self.games)} of {self.planned} games{rate}"
                 + (" (interrupted)" if self.interrupted else "")]
        for (a, b), pair in sorted(self.pairs.items()):
            lines.append(f"{names[a]} vs {names[b]}: {pair.summary().line()}")
        if len(self.config.engines) > 2:
            lines.append("Points: " + ", ".join(f"{n} {p:g}" for n, p in self.points().items()))
        sprt = self.config.sprt
        if sprt is not None:
            t = self.first_engine().results
            lines.append(f"SPRT elo0={sprt.elo0:g} elo1={sprt.elo1:g} alpha={sprt.alpha:g} "
                         f"beta={sprt.beta:g}: LLR {sprt.llr(t.penta):.2f} (pentanomial, "
                         f"{t.pairs} pairs; trinomial "
                         f"{sprt.llr_trinomial(t.wins, t.losses, t.draws):.2f}) "
                         f"[{sprt.lower:.2f}, {sprt.upper:.2f}] -> "
                         f"{self.sprt_result or 'no decision'}")
            if any(sprt.prior):
                total = sprt.total(t.penta)
                both = summarize(0, 0, 0, total)     # pairs only: earlier W-L-D are not known
                lines.append(f"  the pentanomial LLR counts the earlier runs' pairs "
                             f"{'-'.join(map(str, sprt.prior))} too: all runs together, pairs "
                             f"{'-'.join(map(str, total))}, Elo {fmt_elo(both.elo)} "
                             f"+- {fmt_elo(both.elo_error, sign=False)}")
        reasons = Counter(g.outcome.reason.value for g in self.games if g.outcome)
        lines.append("Endings: " + ", ".join(f"{r} {n}" for r, n in reasons.most_common()))
        return "\n".join(lines)

    def points(self) -> dict[str, float]:
        names = [e.name for e in self.config.engines]
        points = {n: 0.0 for n in names}
        for g in self.games:
            assert g.outcome is not None
            for side, idx in ((BLACK, g.black_engine), (WHITE, g.white_engine)):
                w = g.outcome.winner
                points[names[idx]] += 0.5 if w is None else float(w == side)
        return points

    def to_json(self) -> dict:
        """The ``summary.json`` content."""
        cfg = self.config
        t = self.first_engine()
        data: dict = {
            "engines": [{"name": e.name, "cmd": e.cmd, "options": e.options,
                         "time_control": e.tc.describe(), "ponder": e.ponder} for e in cfg.engines],
            "planned_games": self.planned, "games": len(self.games),
            "interrupted": self.interrupted, "seconds": round(self.seconds, 3),
            "pairs": [{"engine": cfg.engines[a].name, "opponent": cfg.engines[b].name,
                       **p.summary().as_dict()} for (a, b), p in sorted(self.pairs.items())],
            "first_engine": {"engine": cfg.engines[0].name, **t.summary().as_dict()},
            "points": self.points(),
            "results": [game_json(g) for g in sorted(self.games, key=lambda g: g.index)],
        }
        if cfg.sprt is not None:
            r = t.results
            data["sprt"] = {"elo0": cfg.sprt.elo0, "elo1": cfg.sprt.elo1, "alpha": cfg.sprt.alpha,
                            "beta": cfg.sprt.beta, "model": "pentanomial",
                            "llr": cfg.sprt.llr(r.penta),
                            "llr_trinomial": cfg.sprt.llr_trinomial(r.wins, r.losses, r.draws),
                            "lower": cfg.sprt.lower, "upper": cfg.sprt.upper,
                            "result": self.sprt_result, "prior_pentanomial": list(cfg.sprt.prior),
                            "total_pentanomial": cfg.sprt.total(r.penta)}
        return data


def game_json(game: GameRecord) -> dict:
    assert game.outcome is not None
    return {"index": game.index, "black": game.black, "white": game.white,
            "result": game.outcome.result_str, "reason": game.outcome.reason.value,
            "detail": game.outcome.detail, "plies": len(game.moves), "opening": game.opening,
            "pair": game.pair,
            "record": record_basename(game)}


def record_basename(game: GameRecord) -> str:
    safe = [re.sub(r"[^A-Za-z0-9_.+-]+", "_", n) for n in (game.black, game.white)]
    return f"games/{game.index:04d}-{safe[0]}-vs-{safe[1]}"


def save_game(out_dir: str, game: GameRecord) -> None:
    base = os.path.join(out_dir, record_basename(game))
    with open(base + ".csa", "w", encoding="utf-8") as f:
        f.write(to_csa(game))
    with open(base + ".kif", "w", encoding="utf-8") as f:
        f.write(to_kif(game))


def save_summary(out_dir: str, result: MatchResult) -> None:
    path = os.path.join(out_dir, "summary.json")
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(result.to_json(), f, indent=2, ensure_ascii=False)
    os.replace(path + ".tmp", path)


class Table:
    """Where one game at a time is played: a process of every engine it has met, started
    on demand and reused game after game (a thread of :class:`Match`, or a Ray actor)."""

    def __init__(self, config: MatchConfig, logs: list[EngineLog], tag: str,
                 abort: threading.Event) -> None:
        self.config = config
        self.logs = logs
        self.tag = tag
        self.abort = abort
        self.settings = GameSettings(config.max_moves, config.margin_ms, config.hang_timeout_ms,
                                     config.move_timeout_ms, config.event)
        self.players: dict[int, Player] = {}

    def player(self, i: int) -> Player:
        if i not in self.players:
            self.players[i] = Player(self.config.engines[i], self.logs[i], self.tag, self.abort,
                                     self.config.ready_timeout_s)
        return self.players[i]

    def play(self, game: ScheduledGame) -> GameRecord:
        """Play ``game``; its ``outcome`` is None if the match was aborted meanwhile."""
        return play_game(game, (self.player(game.black), self.player(game.white)), self.settings)

    def play_games(self, games: Iterable[ScheduledGame]) -> list[GameRecord]:
        """Play ``games`` one after the other (a tuner's pair); stops at an abort."""
        records = []
        for game in games:
            records.append(self.play(game))
            if records[-1].outcome is None:
                break
        return records

    def close(self) -> None:
        for p in self.players.values():
            p.close()
        self.players.clear()


class Match:
    """A scheduled match; :meth:`run` plays it and returns the :class:`MatchResult`."""

    def __init__(self, config: MatchConfig) -> None:
        self.config = config
        self.plan = schedule(len(config.engines), config.games, config.openings, config.gauntlet,
                             config.opening_start)
        self.abort = threading.Event()
        t0 = time.monotonic()       # one time base: the engines' logs merge by time
        self.logs = [EngineLog(self._log_path(e), t0=t0) for e in config.engines]
        self.result = MatchResult(config, len(self.plan))
        self._finished_workers = 0

    def _log_path(self, spec: EngineSpec) -> Optional[str]:
        if not self.config.out_dir:
            return None
        os.makedirs(os.path.join(self.config.out_dir, "logs"), exist_ok=True)
        os.makedirs(os.path.join(self.config.out_dir, "games"), exist_ok=True)
        return os.path.join(self.config.out_dir, "logs", re.sub(r"[^A-Za-z0-9_.+-]+", "_", spec.name) + ".log")

    def _worker(self, wid: int, todo: "queue.Queue[ScheduledGame]",
                done: "queue.Queue[Optional[GameRecord]]") -> None:
        table = Table(self.config, self.logs, f"w{wid}", self.abort)
        try:
            while not self.abort.is_set():
                try:
                    game = todo.get_nowait()
                except queue.Empty:
                    break
                done.put(table.play(game))
        finally:
            table.close()
            done.put(None)

    def run(self, on_game: Optional[Callable[[MatchResult, GameRecord], None]] = None) -> MatchResult:
        """Play the match; Ctrl-C or an SPRT decision stops it with the games so far."""
        started = time.monotonic()
        todo: "queue.Queue[ScheduledGame]" = queue.Queue()
        for game in self.plan:
            todo.put(game)
        done: "queue.Queue[Optional[GameRecord]]" = queue.Queue()
        n_workers = max(1, min(self.config.concurrency, len(self.plan)))
        threads = [threading.Thread(target=self._worker, args=(w + 1, todo, done), daemon=True)
                   for w in range(n_workers)]
        for t in threads:
            t.start()
        try:
            self._collect(done, n_workers, on_game)
        except KeyboardInterrupt:
            self.result.interrupted = True
            self.abort.set()
            self._drain(done, n_workers - self._finished_workers)
        for t in threads:
            t.join(timeout=10)
        for log in self.logs:
            log.close()
        self.result.seconds = time.monotonic() - started
        if self.config.out_dir:
            save_summary(self.config.out_dir, self.result)
        return self.result

    def _collect(self, done: "queue.Queue[Optional[GameRecord]]", n_workers: int,
                 on_game: Optional[Callable[[MatchResult, GameRecord], None]]) -> None:
        while self._finished_workers < n_workers:
            try:
                game = done.get(timeout=0.2)
            except queue.Empty:
                continue
            if game is None:
                self._finished_workers += 1
            elif game.outcome is not None:
                self._accept(game)
                if on_game is not None:
                    on_game(self.result, game)

    def _drain(self, done: "queue.Queue[Optional[GameRecord]]", remaining: int) -> None:
        """After an abort: keep the games that still finished, wait for the workers."""
        while remaining > 0:
            try:
                game = done.get(timeout=15)
            except (queue.Empty, KeyboardInterrupt):
                return
            if game is None:
                remaining -= 1
            elif game.outcome is not None:
                self._accept(game)

    def _accept(self, game: GameRecord) -> None:
        self.result.add(game)
        if self.config.out_dir:
            save_game(self.config.out_dir, game)
            save_summary(self.config.out_dir, self.result)
        sprt = self.config.sprt
        if sprt is not None and self.result.sprt_result is None:
            decision = sprt.decide(self.result.first_engine().results.penta)
            if decision is not None:
                self.result.sprt_result = decision
                self.abort.set()


def unique_names(names: Iterable[str]) -> list[str]:
    """Make engine names unique by appending ``-2``, ``-3``..."""
    seen: Counter = Counter()
    out = []
    for name in names:
        seen[name] += 1
        out.append(name if seen[name] == 1 else f"{name}-{seen[name]}")
    return out
