"""Matches on a Ray cluster (``usi-engine match --ray ADDRESS``).

The driver keeps the schedule, the statistics and the files; the games run in Ray
actors, one per concurrent game, each a :class:`~.runner.Table` that keeps its
engines' processes on its node from game to game.  A game is one actor call: its
record and the USI log lines it produced come back as soon as it ends, the driver
counts it (once: by game index), writes it to ``--out``, updates the SPRT, and gives
the actor the next game.  When the SPRT decides (or on Ctrl-C) dispatch stops and the
games in flight are aborted, as in a local match.  An actor that dies (its process or
its node) loses only its game in flight: the game goes back to the queue and a new
actor takes the dead one's place.

Only this module imports ``ray``; without ``--ray`` it is never loaded.
"""

from __future__ import annotations

import collections
import threading
import time
from typing import Any, Callable, Optional

import ray
from ray.exceptions import RayActorError

from ..cluster import connect as connect_cluster, package_path_env
from .records import GameRecord
from .config import MatchConfig
from .results import MatchResult, save_summary
from .runner import Match, Table
from .schedule import ScheduledGame
from ..usiproc import EngineLog

MAX_REPLACEMENTS = 20  # dead actors replaced before the match gives up on more


class RemoteTable:
    """The actor: a :class:`Table` whose logs are kept in memory for the driver."""

    def __init__(self, config: MatchConfig, tag: str, keep_logs: bool = True) -> None:
        self.abort = threading.Event()
        t0 = time.monotonic()
        self.logs = [EngineLog(None, memory=keep_logs, t0=t0) for _ in config.engines]
        self.table = Table(config, self.logs, tag, self.abort)

    def play(self, game: ScheduledGame) -> tuple[GameRecord, list[list[str]]]:
        record = self.table.play(game)
        return record, [log.drain() for log in self.logs]

    def play_games(self, games: list[ScheduledGame]) -> tuple[list[GameRecord], list[list[str]]]:
        records = self.table.play_games(games)
        return records, [log.drain() for log in self.logs]

    def stop(self) -> None:
        """Abort the game in flight (runs beside :meth:`play`: the actor is threaded)."""
        self.abort.set()

    def close(self) -> list[list[str]]:
        self.table.close()
        return [log.drain() for log in self.logs]


def connect(address: str, num_cpus: Optional[int] = None, working_dir: Optional[str] = None) -> bool:
    """Join or start the cluster at ``address`` (:func:`usi_engine.cluster.connect`);
    True if this call connected (so the caller disconnects at the end).

    ``working_dir`` is shipped to every node and is the engines' working directory there
    (so ``cmd=python -m usi_engine`` runs this checkout); without it the nodes must have
    the engines at the same paths, and ``usi_engine`` is found through PYTHONPATH.
    """
    if working_dir:
        runtime_env: dict[str, Any] = {
            "working_dir": working_dir,
            "excludes": [".git", "__pycache__", "match-results", "*.log", ".venv"],
        }
    else:
        runtime_env = package_path_env()
    return connect_cluster(address, num_cpus=num_cpus, runtime_env=runtime_env)


class RayMatch(Match):
    """A :class:`Match` whose games are played by Ray actors."""

    times_moves_here = False  # the actors time their games in their own processes

    def __init__(self, config: MatchConfig, cpus_per_game: float = 1.0) -> None:
        super().__init__(config)
        self.cpus_per_game = cpus_per_game
        self.remote_cls = ray.remote(max_concurrency=2)(RemoteTable)
        self.actors_started = 0
        self.rescheduled = 0  # games given back to the queue by a dead actor
        self._stopping = False

    def _new_actor(self) -> Any:
        self.actors_started += 1
        return self.remote_cls.options(num_cpus=self.cpus_per_game).remote(
            self.config, f"r{self.actors_started}"
        )

    def _write_logs(self, logs: list[list[str]]) -> None:
        for log, lines in zip(self.logs, logs):
            if lines:
                log.write_lines(lines)

    def run(self, on_game: Optional[Callable[[MatchResult, GameRecord], None]] = None) -> MatchResult:
        """Play the match on the cluster; Ctrl-C or an SPRT decision stops it."""
        started = time.monotonic()
        todo = collections.deque(self.plan)
        counted: set[int] = set()
        self.n_actors = max(1, min(self.config.concurrency, len(self.plan)))
        idle = [self._new_actor() for _ in range(self.n_actors)]
        busy: dict[Any, tuple[Any, ScheduledGame]] = {}
        try:
            while busy or (todo and not self.abort.is_set()):
                while idle and todo and not self.abort.is_set():
                    actor, game = idle.pop(), todo.popleft()
                    busy[actor.play.remote(game)] = (actor, game)
                if not busy:
                    break
                ready, _ = ray.wait(list(busy), num_returns=1, timeout=0.5)
                for ref in ready:
                    actor, game = busy.pop(ref)
                    self._finish(ref, actor, game, todo, idle, counted, on_game)
                if self.abort.is_set():
                    self._stop(busy)
        except KeyboardInterrupt:
            self.result.interrupted = True
            self.abort.set()
            self._drain_remote(busy, idle, counted)
        self._close(idle + [a for a, _ in busy.values()])
        for log in self.logs:
            log.close()
        self.result.seconds = time.monotonic() - started
        if self.config.out_dir:
            save_summary(self.config.out_dir, self.result)
        return self.result

    def _finish(
        self,
        ref: Any,
        actor: Any,
        game: ScheduledGame,
        todo: collections.deque,
        idle: list,
        counted: set[int],
        on_game: Optional[Callable[[MatchResult, GameRecord], None]],
    ) -> None:
        """Take one actor's answer: count its game, or requeue it if the actor died."""
        try:
            record, logs = ray.get(ref)
        except RayActorError:
            self.rescheduled += 1
            if game.index not in counted:
                todo.appendleft(game)
            if self.actors_started - self.n_actors < MAX_REPLACEMENTS:
                idle.append(self._new_actor())
            return
        self._write_logs(logs)
        idle.append(actor)
        if record.outcome is None or game.index in counted:
            return  # aborted, or (never expected) a second answer for a counted game
        counted.add(game.index)
        if self._accept(record) and on_game is not None:
            on_game(self.result, record)

    def _stop(self, busy: dict) -> None:
        if self._stopping:
            return
        self._stopping = True
        for actor, _ in busy.values():
            actor.stop.remote()

    def _drain_remote(self, busy: dict, idle: list, counted: set[int]) -> None:
        """After Ctrl-C: abort the games in flight, keep those that finished anyway."""
        self._stop(busy)
        deadline = time.monotonic() + 15
        while busy and time.monotonic() < deadline:
            try:
                ready, _ = ray.wait(list(busy), num_returns=1, timeout=0.5)
            except KeyboardInterrupt:
                return
            for ref in ready:
                actor, game = busy.pop(ref)
                self._finish(ref, actor, game, collections.deque(), idle, counted, None)

    def _close(self, actors: list) -> None:
        """Quit every engine, collect the last log lines, end the actors."""
        closing = {actor.close.remote(): actor for actor in actors}
        try:
            done, _ = ray.wait(list(closing), num_returns=len(closing), timeout=15)
            for ref in done:
                try:
                    self._write_logs(ray.get(ref))
                except RayActorError:
                    pass
        finally:
            for actor in actors:
                ray.kill(actor)


def run_match_ray(
    config: MatchConfig,
    address: str,
    on_game: Optional[Callable[[MatchResult, GameRecord], None]] = None,
    working_dir: Optional[str] = None,
    cpus_per_game: float = 1.0,
) -> MatchResult:
    """Play ``config`` on the Ray cluster at ``address`` (see :func:`connect`)."""
    owned = connect(
        address,
        num_cpus=(config.concurrency or None) if address == "local" else None,
        working_dir=working_dir,
    )
    try:
        if config.concurrency <= 0:
            config.concurrency = max(1, int(ray.cluster_resources().get("CPU", 1) // cpus_per_game))
        return RayMatch(config, cpus_per_game).run(on_game)
    finally:
        if owned:
            ray.shutdown()


class RayPool:
    """Runs batches of games (a tuner's pairs) on Ray actors: :meth:`submit` a batch
    under a key, :meth:`next_done` gives (key, records) as batches end; records is None
    when the actor died (the caller resubmits)."""

    def __init__(self, config: MatchConfig, slots: int, cpus_per_game: float = 1.0) -> None:
        self.config = config
        self.slots = slots
        self.cpus_per_game = cpus_per_game
        self.remote_cls = ray.remote(max_concurrency=2)(RemoteTable)
        self.started = 0
        self.idle = [self._new_actor() for _ in range(slots)]
        self.busy: dict[Any, tuple[Any, Any]] = {}
        self.lost = 0

    def _new_actor(self) -> Any:
        self.started += 1
        return self.remote_cls.options(num_cpus=self.cpus_per_game).remote(
            self.config, f"r{self.started}", False
        )

    def free(self) -> int:
        return len(self.idle)

    def in_flight(self) -> int:
        return len(self.busy)

    def submit(self, key: Any, games: list[ScheduledGame]) -> None:
        actor = self.idle.pop()
        self.busy[actor.play_games.remote(games)] = (actor, key)

    def next_done(self, timeout: float) -> Optional[tuple[Any, Optional[list[GameRecord]]]]:
        ready, _ = ray.wait(list(self.busy), num_returns=1, timeout=timeout)
        if not ready:
            return None
        actor, key = self.busy.pop(ready[0])
        try:
            records, _ = ray.get(ready[0])
        except RayActorError:
            self.lost += 1
            if self.started - self.slots < MAX_REPLACEMENTS:
                self.idle.append(self._new_actor())
            return key, None
        self.idle.append(actor)
        return key, records

    def stop(self) -> None:
        for actor, _ in self.busy.values():
            actor.stop.remote()

    def close(self) -> None:
        actors = self.idle + [a for a, _ in self.busy.values()]
        refs = [a.close.remote() for a in actors]
        try:
            ray.wait(refs, num_returns=len(refs), timeout=15)
        finally:
            for actor in actors:
                ray.kill(actor)
