"""Searching the positions of a growing book: in this process, in worker processes on
every core, or on Ray actors (`usi-engine makebook search --workers N --ray ADDRESS`).

All three are a :class:`PositionSearcher`: `search(sfens, stopped)` yields each position
with its moves in the order given, whichever engine finished first, so `expand()` adds
them to the book in frontier order and the book written does not depend on the number of
workers.  Every engine starts each position afresh (`Engine.new_game`): the hash table and
the histories of the positions it searched before would otherwise change its moves, and
which positions a worker searched before depends on the timing.

A worker holds one warmed `Engine` built from the run's options.  Its failures come back
as text (:class:`Failure`), never as a pickled traceback, and the driver raises them as
:class:`SearchFailed` naming the position; a worker that dies is noticed on the next poll,
so nothing waits forever.  Ray is imported only for `--ray`, through cluster.py.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import signal
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, NamedTuple, Protocol, Sequence

from .format import BookMove

POLL_S = 0.2  # how often a waiting driver looks at Ctrl-C and at dead workers
CLOSE_WAIT_S = 5.0  # how long an idle worker may take to quit before it is terminated

Options = Mapping[str, str]
Found = tuple[str, list[BookMove]]  # a position (SFEN) and its moves


class SearchFailed(RuntimeError):
    """A worker could not search a position, or ended; the message names the position."""


@dataclass(frozen=True)
class SearchLimits:
    """How each position is searched: to `depth` plies or `nodes` nodes, `multipv` lines."""

    depth: int | None
    nodes: int | None
    multipv: int


class Failure(NamedTuple):
    """An exception raised in a worker, as text that crosses any process boundary."""

    kind: str  # the exception's class name
    text: str

    @classmethod
    def of(cls, exc: BaseException) -> "Failure":
        return cls(type(exc).__name__, str(exc))

    def __str__(self) -> str:
        return f"{self.kind}: {self.text}"


def search_position(engine, sfen: str, limits: SearchLimits) -> list[BookMove]:
    """MultiPV search of one position from a fresh start: its moves as book entries
    (side to move's view, best first)."""
    from ..api import Limit

    engine.new_game()  # nothing learned from earlier positions: see the module's docstring
    infos = engine.analyse(sfen, Limit(depth=limits.depth, nodes=limits.nodes), multipv=limits.multipv)
    out = []
    for info in infos:
        if not info.pv:
            continue
        ponder = str(info.pv[1]) if len(info.pv) > 1 else None
        out.append(BookMove(str(info.pv[0]), ponder, info.score.to_cp(), int(info.depth), 1))
    return out


class PositionSearcher(Protocol):
    """What expand() searches with."""

    workers: int  # engines searching at once

    def search(self, sfens: Sequence[str], stopped: Callable[[], bool]) -> Iterator[Found]:
        """Each position of `sfens` with its moves, in that order.  Once `stopped()` is
        true no further position starts; those already started are finished and yielded."""
        ...

    def close(self) -> None: ...


# --- in this process -----------------------------------------------------------------------
class InProcess:
    """One engine in this process, one position after another (`--workers 1`)."""

    workers = 1

    def __init__(self, options: Options, limits: SearchLimits) -> None:
        from ..api import Engine

        self._engine = Engine(options)  # compiles or loads the search (numba) first
        self._limits = limits

    def search(self, sfens: Sequence[str], stopped: Callable[[], bool]) -> Iterator[Found]:
        for sfen in sfens:
            if stopped():
                return
            yield sfen, search_position(self._engine, sfen, self._limits)

    def close(self) -> None:
        self._engine.close()

    def __enter__(self) -> "InProcess":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --- the worker's side ---------------------------------------------------------------------
class BookEngine:
    """A worker's engine: built once from the options, then searching the positions it is
    handed.  Never raises: a failure is returned as a :class:`Failure`."""

    def __init__(self, options: Options, limits: SearchLimits) -> None:
        self.limits = limits
        self.engine: Any = None
        self.failure: Failure | None = None
        try:
            from ..api import Engine

            self.engine = Engine(options)
        except Exception as exc:  # reported by ready(): the driver decides what it means
            self.failure = Failure.of(exc)

    def ready(self) -> Failure | None:
        """None once the engine is warmed up, or why it could not start."""
        return self.failure

    def search(self, sfen: str) -> list[BookMove] | Failure:
        try:
            return search_position(self.engine, sfen, self.limits)
        except Exception as exc:
            return Failure.of(exc)

    def close(self) -> None:
        if self.engine is not None:
            self.engine.close()


def ignore_interrupts() -> None:
    """Ctrl-C reaches every process of the terminal's group; it is the driver's to handle
    (it stops handing out positions and lets the ones started finish)."""
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread: no signal reaches this code there
        pass


def start_failure(worker: str, failure: Failure) -> Exception:
    """The driver's error for an engine that did not start: a bad option stays the
    ValueError that the in-process engine raises, anything else names the worker."""
    if failure.kind == "ValueError":
        return ValueError(failure.text)
    return SearchFailed(f"{worker}: the engine did not start: {failure}")


# --- handing positions to several workers --------------------------------------------------
class Workers:
    """The driver's side of several workers, each searching one position at a time.
    Subclasses say how to hand a position to a worker (`_send`) and how to read finished
    ones (`_receive`); positions are handed out in order, so the positions started are
    always the first ones, and yielded in order."""

    workers: int

    def __init__(self) -> None:
        self._running: dict[int, tuple[int, str]] = {}  # worker -> (index, SFEN)
        self._broken = False

    def _send(self, worker: int, sfen: str) -> None:
        raise NotImplementedError

    def _receive(self, timeout: float) -> list[tuple[int, list[BookMove] | Failure]]:
        """(worker, moves or failure) for the positions finished within `timeout`
        seconds; SearchFailed when a worker with a position is gone."""
        raise NotImplementedError

    def search(self, sfens: Sequence[str], stopped: Callable[[], bool]) -> Iterator[Found]:
        if self._broken:
            raise SearchFailed("the workers were left with unfinished positions")
        idle = list(reversed(range(self.workers)))  # popped from the end: worker 0 first
        finished: dict[int, list[BookMove]] = {}
        sent = given = 0
        try:
            while given < sent or (sent < len(sfens) and not stopped()):
                while idle and sent < len(sfens) and not stopped():
                    worker = idle.pop()
                    self._running[worker] = (sent, sfens[sent])
                    self._send(worker, sfens[sent])
                    sent += 1
                for worker, result in self._receive(POLL_S):
                    index, sfen = self._running.pop(worker)
                    if isinstance(result, Failure):
                        raise SearchFailed(f"worker {worker} could not search {sfen}: {result}")
                    finished[index] = result
                    idle.append(worker)
                while given in finished:
                    yield sfens[given], finished.pop(given)
                    given += 1
        finally:
            # left early (an error, or the caller stopped reading): stale results would
            # answer the next round's positions, so this searcher takes no more
            self._broken = bool(self._running)

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> "Workers":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --- worker processes ----------------------------------------------------------------------
def _serve(worker: int, options: Options, limits: SearchLimits, inbox, outbox) -> None:
    """A worker process: report ready (or why not), then search each SFEN from `inbox`
    until None comes."""
    ignore_interrupts()
    held = BookEngine(options, limits)
    outbox.put((worker, held.ready()))
    try:
        while (sfen := inbox.get()) is not None:
            outbox.put((worker, held.search(sfen)))
    finally:
        held.close()


class ProcessPool(Workers):
    """`workers` processes on this machine, each with its own engine (`--workers N`)."""

    def __init__(self, options: Options, limits: SearchLimits, workers: int) -> None:
        super().__init__()
        # spawn: a worker starts clean (no inherited numba or thread state) on every platform
        ctx = multiprocessing.get_context("spawn")
        self.workers = workers
        self._results = ctx.Queue()
        self._inboxes = [ctx.Queue() for _ in range(workers)]
        self._procs = [
            ctx.Process(
                target=_serve,
                args=(i, dict(options), limits, self._inboxes[i], self._results),
                name=f"makebook-worker-{i}",
                daemon=True,  # never outlives the driver
            )
            for i in range(workers)
        ]
        try:
            for proc in self._procs:
                proc.start()
            self._await_ready()
        except BaseException:
            self.close()
            raise

    def _await_ready(self) -> None:
        waiting = set(range(self.workers))
        while waiting:
            try:
                worker, failure = self._results.get(timeout=POLL_S)
            except queue.Empty:
                self._check_alive(waiting)
                continue
            waiting.discard(worker)
            if failure is not None:
                raise start_failure(f"worker process {worker}", failure)

    def _check_alive(self, workers) -> None:
        for worker in workers:
            proc = self._procs[worker]
            if not proc.is_alive():
                doing = self._running.get(worker)
                what = f"while searching {doing[1]}" if doing else "before its engine was ready"
                raise SearchFailed(f"worker process {worker} ended (exit code {proc.exitcode}) {what}")

    def _send(self, worker: int, sfen: str) -> None:
        self._inboxes[worker].put(sfen)

    def _receive(self, timeout: float) -> list[tuple[int, list[BookMove] | Failure]]:
        try:
            return [self._results.get(timeout=timeout)]
        except queue.Empty:
            self._check_alive(list(self._running))
            return []

    def close(self) -> None:
        """Tell idle workers to quit; terminate the busy ones and those that do not."""
        for worker, proc in enumerate(self._procs):
            if proc.is_alive() and worker not in self._running:
                self._inboxes[worker].put(None)
        for worker, proc in enumerate(self._procs):
            if proc.pid is None:
                continue  # never started
            if worker in self._running:
                proc.terminate()
            proc.join(CLOSE_WAIT_S)
            if proc.is_alive():
                proc.terminate()
                proc.join()
        for q in [*self._inboxes, self._results]:
            q.cancel_join_thread()  # a dead reader must not keep this process from exiting
            q.close()
        self._procs = []


# --- Ray actors ----------------------------------------------------------------------------
class _RayBookEngine(BookEngine):
    """A BookEngine as a Ray actor: Ctrl-C at the driver's terminal is not its to handle."""

    def __init__(self, options: Options, limits: SearchLimits) -> None:
        ignore_interrupts()
        super().__init__(options, limits)


def threads_of(options: Options) -> int:
    """The Threads option's value (1 when not given or not a number): the cores one engine
    searches with."""
    for name, value in options.items():
        if name.strip().lower() == "threads":
            try:
                return max(1, int(value))
            except ValueError:
                return 1  # the engine names the bad value when it starts
    return 1


def _first_line(exc: BaseException) -> str:
    """The exception's class and the first line of its message (Ray's run to pages)."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


class RayActors(Workers):
    """One actor per worker on a Ray cluster (`--ray ADDRESS`); `workers` 0 means as many
    as the cluster's CPUs hold, each actor taking the cores of its Threads."""

    def __init__(self, options: Options, limits: SearchLimits, workers: int, address: str) -> None:
        super().__init__()
        import ray

        from ..cluster import LOCAL, connect, package_path_env

        cpus = threads_of(options)
        local_cpus = workers * cpus if address == LOCAL and workers else None
        self._owns_connection = connect(address, num_cpus=local_cpus, runtime_env=package_path_env())
        self._pending: dict[Any, int] = {}  # object ref -> worker
        self._actors: list[Any] = []
        try:
            self.workers = workers or max(1, int(ray.cluster_resources().get("CPU", 1)) // cpus)
            actor = ray.remote(num_cpus=cpus)(_RayBookEngine)
            self._actors = [actor.remote(dict(options), limits) for _ in range(self.workers)]
            self._await_ready()
        except BaseException:
            self.close()
            raise

    def _await_ready(self) -> None:
        import ray

        try:
            failures = ray.get([a.ready.remote() for a in self._actors])
        except ray.exceptions.RayError as exc:  # an actor could not even be created
            raise SearchFailed(f"the Ray workers did not start: {_first_line(exc)}") from exc
        for i, failure in enumerate(failures):
            if failure is not None:
                raise start_failure(f"Ray worker {i}", failure)

    def _send(self, worker: int, sfen: str) -> None:
        self._pending[self._actors[worker].search.remote(sfen)] = worker

    def _receive(self, timeout: float) -> list[tuple[int, list[BookMove] | Failure]]:
        import ray

        done, _ = ray.wait(list(self._pending), num_returns=1, timeout=timeout)
        out = []
        for ref in done:
            worker = self._pending.pop(ref)
            try:
                out.append((worker, ray.get(ref)))
            except ray.exceptions.RayError as exc:  # the actor or its node died
                sfen = self._running[worker][1]
                raise SearchFailed(
                    f"Ray worker {worker} failed while searching {sfen}: {_first_line(exc)}"
                ) from exc
        return out

    def close(self) -> None:
        import ray

        for actor in self._actors:
            ray.kill(actor)
        self._actors = []
        if self._owns_connection:
            ray.shutdown()
            self._owns_connection = False


# --- choosing ------------------------------------------------------------------------------
def make_searcher(
    options: Options, limits: SearchLimits, workers: int = 1, ray_address: str | None = None
) -> InProcess | ProcessPool | RayActors:
    """The searcher for `--workers` and `--ray`: Ray actors when an address is given;
    otherwise worker processes, `workers` of them (0: as many as this machine's cores hold
    at Threads cores each), or this process alone for 1.  Returns once every engine is
    warmed up; ValueError when the options are refused."""
    if workers < 0:
        raise ValueError(f"--workers {workers}: give 0 (every core) or more")
    if ray_address:
        return RayActors(options, limits, workers, ray_address)
    if workers == 0:
        workers = max(1, (os.cpu_count() or 1) // threads_of(options))
    if workers == 1:
        return InProcess(options, limits)
    return ProcessPool(options, limits, workers)
