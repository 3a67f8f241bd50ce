"""Worker processes for the long data jobs (gensfen, rescore).

Each worker holds one teacher engine for its whole life and does whole units of work (a
shard, a file), each saved on its own, so a stopped run goes on later from what is on disk.
What such a run needs of its pool, and multiprocessing.Pool does not give:

- a worker that dies (killed from outside, or by the out-of-memory killer) ends the run with
  :class:`WorkerDied`; Pool starts a replacement and waits for the lost unit forever;
- a worker whose set-up fails (its teacher does not start) ends the run with that error;
  Pool starts replacements that fail the same way, without end;
- a run that stops on an exception (Ctrl-C, SIGTERM, a failed unit) terminates every
  worker, and each kills its teacher on the way out (interrupt.stop_with_the_run);
- a stop never lands inside concurrent.futures' bookkeeping, which it would leave locked
  (interrupt.first_done), and only a few units are handed to the executor at a time, so a
  wait watches a few futures, not one per shard of a run.

concurrent.futures' ProcessPoolExecutor notices dead workers; this module adds the other two.
"""

from __future__ import annotations

import itertools
import multiprocessing
import multiprocessing.util
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from ...interrupt import Stopped, first_done, stop_with_the_run
from ...usiproc import EngineError

# spawn: a worker starts clean (no inherited numba or thread state) on every platform.
# Queues a worker is given at its start must come from this context.
CONTEXT = multiprocessing.get_context("spawn")
POLL_SECONDS = 0.2  # how often `results` calls its poll function while units run
UNITS_PER_WORKER = 2  # units handed to the executor per worker: one running, one waiting


class WorkerDied(RuntimeError):
    """A worker process ended without a word: killed from outside, or out of memory."""


ENDED_EARLY = (EngineError, WorkerDied, Stopped)  # what `ended_early` explains


def ended_early(command: str, exc: BaseException, what: str, folder: str) -> tuple[str, int]:
    """The line a resumable run prints when `exc` (one of ENDED_EARLY) ended it, and its
    exit code: the shell's 128 + signal for a stop, else 1."""
    if isinstance(exc, Stopped):
        reason, code = f"stopped by {exc.signame}", exc.exit_code
    elif isinstance(exc, EngineError):
        reason, code = f"the teacher failed: {exc}", 1
    else:
        reason, code = str(exc), 1
    return (
        f"{command}: {reason}; the finished {what} in {folder} are kept and the same command goes on from them",
        code,
    )


class WorkerPool:
    """`workers` processes, each set up once by ``initializer(*initargs)``; a context
    manager, so that leaving the block early terminates them."""

    def __init__(self, workers: int, initializer: Callable[..., None], initargs: tuple = ()) -> None:
        self._before = set(multiprocessing.active_children())
        self._workers = workers
        self._executor = ProcessPoolExecutor(
            workers, mp_context=CONTEXT, initializer=_set_up, initargs=(initializer, initargs)
        )

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self._executor.shutdown(wait=True)  # workers leave normally and close their teachers
            return
        for process in set(multiprocessing.active_children()) - self._before:
            process.terminate()
        # The executor's own thread sees its workers die, reaps them and ends; shutdown waits
        # for it.  Joining the workers here as well would race that thread for each exit
        # status, and a worker could be reported alive after the block.
        self._executor.shutdown(wait=True, cancel_futures=True)

    def results(
        self, task: Callable[[Any], Any], items: Iterable[Any], poll: Callable[[], None] | None = None
    ) -> Iterator[Any]:
        """``task(item)`` for every item, run in the workers, yielded as each finishes; `poll`
        is called every POLL_SECONDS meanwhile.  A unit's exception (or the set-up's) is
        raised here; a worker that died raises :class:`WorkerDied`."""
        waiting = iter(items)
        pending: set = set()
        while True:
            for item in itertools.islice(waiting, UNITS_PER_WORKER * self._workers - len(pending)):
                pending.add(self._executor.submit(_run, task, item))
            if not pending:
                return
            done, pending = first_done(pending, POLL_SECONDS)
            if poll is not None:
                poll()
            for future in done:
                try:
                    result = future.result()
                except BrokenProcessPool as exc:
                    raise WorkerDied(
                        "a worker process ended abruptly (killed from outside, or out of memory?)"
                    ) from exc
                yield result


# --- inside a worker ----------------------------------------------------------------------
_set_up_error: list[BaseException] = []
Teacher = TypeVar("Teacher")


def start_teacher(start: Callable[[], Teacher]) -> Teacher:
    """Start the worker's teacher engine (``start()``; it has ``kill`` and ``close``), tied
    to the worker's life: killed when the run stops the worker or the worker is orphaned,
    told to quit when the pool shuts down normally."""
    started: list = []
    # the stop handler is in place before the teacher starts; a stop during its start finds
    # no teacher to kill yet (the worker exits, and the teacher's pipes close with it)
    stop_with_the_run(release=lambda: started[0].kill() if started else None)
    teacher = start()
    started.append(teacher)
    multiprocessing.util.Finalize(teacher, teacher.close, exitpriority=10)
    return teacher


def _set_up(initializer: Callable[..., None], initargs: tuple) -> None:
    # An exception here would break the executor with only a log line; kept, it comes back
    # to the run as the first unit's exception, with its own text.
    try:
        initializer(*initargs)
    except Exception as exc:
        _set_up_error.append(exc)


def _run(task: Callable[[Any], Any], item: Any) -> Any:
    if _set_up_error:
        raise _set_up_error[0]
    return task(item)
