"""One game between two engines: the clocks, the ``go`` command, the players'
processes, pondering as a GUI drives it, and the game loop."""

from __future__ import annotations

import datetime as dt
import threading
from dataclasses import dataclass
from typing import Optional

import shogi

from .config import EngineSpec, TimeControl
from .records import GameRecord, MoveRecord
from .referee import BLACK, RESIGNED_UNSEARCHED, WHITE, Outcome, Reason, Referee
from .schedule import ScheduledGame
from ..usiproc import Aborted, EngineCrashed, EngineError, EngineLog, EngineTimeout, SearchResult, UsiProcess

# -- clocks and players ------------------------------------------------------


class GameClock:
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


def go_command(clocks: tuple[GameClock, GameClock], side: int, ponder: bool = False) -> str:
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

    def __init__(
        self,
        spec: EngineSpec,
        log: EngineLog,
        tag: str,
        abort: threading.Event,
        ready_timeout_s: float,
        ever_ready: Optional[threading.Event] = None,
    ) -> None:
        self.spec = spec
        self.log = log
        self.tag = tag
        self.abort = abort
        self.ready_timeout_s = ready_timeout_s
        self.proc: Optional[UsiProcess] = None
        self.starts = 0
        self.ponder_move: Optional[str] = None  # the reply it is pondering on, if any
        self.applied: dict[str, str] = {}  # options the process has been given
        # set once any process of this engine has said `readyok` (shared by a match's tables)
        self.ever_ready = ever_ready if ever_ready is not None else threading.Event()

    def new_game(self, options: Optional[dict[str, str]] = None) -> UsiProcess:
        """A ready process (started or restarted if needed) that got ``usinewgame``.

        ``options`` override the spec's for this game (a tuner's values): a running
        process gets ``setoption`` for what differs from what it has, before ``isready``.
        """
        wanted = {**self.spec.usi_options(), **(options or {})}
        if self.proc is None or not self.proc.alive:
            self.discard()
            self.starts += 1
            self.proc = UsiProcess(
                self.spec.cmd, self.log, f"{self.tag}#{self.starts}", self.spec.cwd, self.abort
            )
            self.proc.open(wanted, self.ready_timeout_s)
        else:
            self.proc.setoptions({k: v for k, v in wanted.items() if self.applied.get(k) != v})
            self.proc.isready(self.ready_timeout_s)
        self.ever_ready.set()
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


def _start_players(
    players: tuple[Player, Player],
    ref: Referee,
    options: tuple[Optional[dict[str, str]], Optional[dict[str, str]]] = (None, None),
) -> Optional[Outcome]:
    """Get both engines ready (with these per-side option overrides); an engine that
    fails to start loses, and one that has never been ready in this match ends it
    (``Reason.NOT_STARTED``: the runner stops rather than count forfeits)."""
    for side in (BLACK, WHITE):
        try:
            players[side].new_game(options[side])
        except EngineError as exc:
            players[side].discard()
            if not players[side].ever_ready.is_set():
                return ref.forfeit(Reason.NOT_STARTED, str(exc), loser=side)
            return _failure(ref, exc, loser=side)
    return None


def _think(
    player: Player, ref: Referee, clocks: tuple[GameClock, GameClock], settings: GameSettings
) -> tuple[Optional[Outcome], Optional[MoveRecord], Optional[str]]:
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
        return ref.forfeit(Reason.TIME_LOSS, _time_loss_detail(result, allowed, settings)), None, None
    if allowed is None and result.elapsed_ms > settings.move_timeout_ms:
        return ref.forfeit(Reason.TIMEOUT, f"{result.elapsed_ms:.0f} ms for one move"), None, None
    clocks[side].consume(result.elapsed_ms)
    if result.bestmove == "resign":
        searched = result.score is not None or result.depth is not None
        return ref.resign("" if searched else RESIGNED_UNSEARCHED), None, None
    if result.bestmove == "win":
        return ref.declare_win(), None, None
    before = ref.ply
    outcome = ref.play(result.bestmove)
    if ref.ply == before:
        return outcome, None, None
    record = MoveRecord(ref.moves[-1], result.elapsed_ms, result.score, result.pv, result.depth)
    return outcome, record, result.ponder


def _time_loss_detail(result: SearchResult, allowed: float, settings: GameSettings) -> str:
    """What the runner measured, and what the engine's own clock said last: an engine that
    reports far less than the runner measured was not the slow one (a stalled machine or
    runner, or output held back)."""
    detail = f"{result.elapsed_ms:.0f} ms > {allowed:.0f} ms + {settings.margin_ms} ms margin"
    if result.time_ms is not None:
        detail += f"; its last info said time {result.time_ms}"
    return detail


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


def _start_pondering(
    player: Player, ref: Referee, clocks: tuple[GameClock, GameClock], ponder: Optional[str]
) -> Optional[Outcome]:
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
    record = GameRecord(
        game.index,
        players[BLACK].spec.name,
        players[WHITE].spec.name,
        game.opening.sfen,
        [MoveRecord(m, book=True) for m in ref.moves],
        event=settings.event,
        black_engine=game.black,
        white_engine=game.white,
        opening=game.opening_index,
        pair=game.pair,
    )
    clocks = (GameClock(players[BLACK].spec.tc), GameClock(players[WHITE].spec.tc))
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
