"""Running a match: tables of engines playing the scheduled games concurrently.

Each worker thread keeps its own process of every engine it has played with and
reuses it for the next game (``usinewgame``); an engine that crashed or hung is
killed and started again for its next game.  Results come back to the calling
thread, which saves the records, updates the statistics, checks the SPRT and
stops the match (Ctrl-C, SPRT decision) by setting the shared abort event.

The records of finished games stay in memory for the caller, and the collecting thread
moves them out of the garbage collector's reach as each game comes in
(:func:`keep_out_of_collections`): the threads that time the engines' moves live in the
same process, and a collection holds them all still while it runs.
"""

from __future__ import annotations

import gc
import os
import queue
import re
import threading
import time
from typing import Callable, Iterable, Optional

from .config import EngineSpec, MatchConfig
from .game import GameSettings, Player, play_game
from .records import GameRecord
from .referee import BLACK, Reason
from .results import MatchResult, save_game, save_summary
from .schedule import ScheduledGame, schedule
from ..usiproc import EngineLog


def keep_out_of_collections() -> None:
    """Freeze every object alive now, the records of finished games above all, so that
    no later collection scans them.

    A match keeps every record: each move with its score and PV, some 400,000 objects
    after 1,400 games.  A full collection scans them all while holding the GIL, so the
    worker threads that time the engines' answers stand still with it.  Before this, such
    pauses of 0.2-0.55 s came every 7 to 12 minutes of a long match, and at 0.1 s byoyomi each
    could become a time loss the engine never made (its own `info` said 50 ms).  Young
    garbage is collected first, so little of it is frozen with the records."""
    gc.collect(1)
    gc.freeze()


class Table:
    """Where one game at a time is played: a process of every engine it has met, started
    on demand and reused game after game (a thread of :class:`Match`, or a Ray actor)."""

    def __init__(
        self,
        config: MatchConfig,
        logs: list[EngineLog],
        tag: str,
        abort: threading.Event,
        ever_ready: Optional[list[threading.Event]] = None,
    ) -> None:
        self.config = config
        self.logs = logs
        self.tag = tag
        self.abort = abort
        self.settings = GameSettings(
            config.max_moves, config.margin_ms, config.hang_timeout_ms, config.move_timeout_ms, config.event
        )
        self.players: dict[int, Player] = {}
        # per engine, set once any of its processes has been ready (shared by a match's tables)
        self.ever_ready = ever_ready or [threading.Event() for _ in config.engines]

    def player(self, i: int) -> Player:
        if i not in self.players:
            self.players[i] = Player(
                self.config.engines[i],
                self.logs[i],
                self.tag,
                self.abort,
                self.config.ready_timeout_s,
                self.ever_ready[i],
            )
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

    times_moves_here = True  # its worker threads time the engines (keep_out_of_collections)

    def __init__(self, config: MatchConfig) -> None:
        self.config = config
        self.plan = schedule(
            len(config.engines), config.games, config.openings, config.gauntlet, config.opening_start
        )
        self.abort = threading.Event()
        t0 = time.monotonic()  # one time base: the engines' logs merge by time
        self.logs = [EngineLog(self._log_path(e), t0=t0) for e in config.engines]
        self.result = MatchResult(config, len(self.plan))
        self.ever_ready = [threading.Event() for _ in config.engines]
        self._finished_workers = 0

    def _log_path(self, spec: EngineSpec) -> Optional[str]:
        if not self.config.out_dir:
            return None
        os.makedirs(os.path.join(self.config.out_dir, "logs"), exist_ok=True)
        os.makedirs(os.path.join(self.config.out_dir, "games"), exist_ok=True)
        return os.path.join(
            self.config.out_dir, "logs", re.sub(r"[^A-Za-z0-9_.+-]+", "_", spec.name) + ".log"
        )

    def _worker(
        self, wid: int, todo: "queue.Queue[ScheduledGame]", done: "queue.Queue[Optional[GameRecord]]"
    ) -> None:
        table = Table(self.config, self.logs, f"w{wid}", self.abort, self.ever_ready)
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
        frozen_before = gc.get_freeze_count()
        todo: "queue.Queue[ScheduledGame]" = queue.Queue()
        for game in self.plan:
            todo.put(game)
        done: "queue.Queue[Optional[GameRecord]]" = queue.Queue()
        n_workers = max(1, min(self.config.concurrency, len(self.plan)))
        threads = [
            threading.Thread(target=self._worker, args=(w + 1, todo, done), daemon=True)
            for w in range(n_workers)
        ]
        for t in threads:
            t.start()
        try:
            self._collect(done, n_workers, on_game)
        except KeyboardInterrupt:
            self.result.interrupted = True
            self.abort.set()
            self._drain(done, n_workers - self._finished_workers)
        finally:  # also when on_game raised: the caller's process is not left frozen
            if frozen_before == 0:  # the caller froze nothing of its own: give the collector all back
                gc.unfreeze()
        for t in threads:
            t.join(timeout=10)
        for log in self.logs:
            log.close()
        self.result.seconds = time.monotonic() - started
        if self.config.out_dir:
            save_summary(self.config.out_dir, self.result)
        return self.result

    def _collect(
        self,
        done: "queue.Queue[Optional[GameRecord]]",
        n_workers: int,
        on_game: Optional[Callable[[MatchResult, GameRecord], None]],
    ) -> None:
        while self._finished_workers < n_workers:
            try:
                game = done.get(timeout=0.2)
            except queue.Empty:
                continue
            if game is None:
                self._finished_workers += 1
            elif game.outcome is not None and self._accept(game) and on_game is not None:
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

    def _accept(self, game: GameRecord) -> bool:
        """Count a finished game (False: not counted, the match stops: an engine never
        started)."""
        assert game.outcome is not None
        if game.outcome.reason is Reason.NOT_STARTED:
            loser = game.white if game.outcome.winner == BLACK else game.black
            if self.result.not_started is None:
                self.result.not_started = f"{loser} could not start: {game.outcome.detail}"
            self.abort.set()
            return False
        self.result.add(game)
        if self.config.out_dir:
            save_game(self.config.out_dir, game)
            save_summary(self.config.out_dir, self.result)
        if self.times_moves_here:
            keep_out_of_collections()
        sprt = self.config.sprt
        if sprt is not None and self.result.sprt_result is None:
            decision = sprt.decide(self.result.first_engine().results.penta)
            if decision is not None:
                self.result.sprt_result = decision
                self.abort.set()
        return True
