"""Stopping a long command (a match, a tuning run, data generation) by a signal.

Ctrl-C and `kill` should stop a long job the same way: the work already finished is kept,
and everything the job started ends with it.  :func:`stop_on_signals` makes SIGINT and
SIGTERM raise :class:`Stopped` in the main thread while the job runs.  The handlers are
installed explicitly because a shell starts a background job (``cmd &`` in a script) with
SIGINT ignored, and Python then never raises KeyboardInterrupt at all.

A few library waits must not be broken into: :func:`stops_held` makes a stop arrive just
after one instead of inside it, and :func:`first_done` is the pools' wait so guarded.

A worker process of such a job (a multiprocessing pool's) calls :func:`stop_with_the_run`
first: the job alone decides when to stop, and what the worker started (a teacher engine)
ends with it.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, wait
from contextlib import contextmanager

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
PARENT_CHECK_SECONDS = 1.0  # how often a worker process checks that its run is still there


class Stopped(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived; ``signame`` says which, ``exit_code`` is the shell's
    128 + the signal's number (130 for SIGINT, 143 for SIGTERM)."""

    def __init__(self, signum: int) -> None:
        self.signame = signal.Signals(signum).name
        self.exit_code = 128 + signum
        super().__init__(self.signame)


def _raise_stopped(signum: int, frame: object) -> None:
    raise Stopped(signum)


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """SIGINT and SIGTERM raise :class:`Stopped` inside the block (main thread only); the
    previous handlers come back after it, so an in-process caller (a test, a notebook)
    keeps its own."""
    previous = {signum: signal.signal(signum, _raise_stopped) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@contextmanager
def stops_held() -> Iterator[None]:
    """SIGINT and SIGTERM arriving inside the block are noted, and delivered again, with
    the handlers of the moment, when it ends; a signal the process ignores stays ignored.
    Only for a block that returns soon (a wait with a timeout of a fraction of a second).

    concurrent.futures' ``wait`` and ``as_completed`` lock the condition of every future
    they watch, one by one in a Python loop.  An exception raised by a signal handler
    between two of those locks leaves the ones already taken held for good, and the pool's
    own threads block on them as they finish a unit: the run hangs at its stop.

    Off the main thread (where no handler runs) the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    arrived: list[int] = []
    previous: dict[int, Callable | int] = {}
    try:
        for signum in STOP_SIGNALS:
            handler = signal.getsignal(signum)
            if handler not in (signal.SIG_IGN, None):  # None: set outside Python, left alone
                previous[signum] = signal.signal(signum, lambda signum, frame: arrived.append(signum))
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for signum in dict.fromkeys(arrived):
            signal.raise_signal(signum)  # its handler runs here, outside the wait


def first_done(futures: Iterable[Future], timeout: float) -> tuple[set[Future], set[Future]]:
    """concurrent.futures' ``wait(futures, timeout, FIRST_COMPLETED)`` (done, not done),
    with a stop held until the wait has ended (:func:`stops_held`): how a pool's owner waits
    for its next result.  `timeout` is short, as it delays a stop by as much."""
    with stops_held():
        done, pending = wait(futures, timeout=timeout, return_when=FIRST_COMPLETED)
    return done, pending


def stop_with_the_run(release: Callable[[], None]) -> None:
    """For a pool worker: ignore SIGINT (Ctrl-C reaches the whole process group, and the run
    decides how to stop); on SIGTERM (the run terminating its workers), and when the run
    that started it is gone (killed with SIGKILL, it could not stop its workers, and each
    would go on alone), call `release` (end what the worker started: its teacher engine)
    and exit at once.

    The exit is os._exit, not an exception: a signal can arrive while the worker is inside
    a C callback (numba compiling), where an exception raised by the handler is printed and
    dropped, and the worker would go on while the run waits for it forever."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, lambda signum, frame: _leave(release, 128 + signum))
    threading.Thread(target=_watch_parent, args=(os.getppid(), release), daemon=True).start()


def _leave(release: Callable[[], None], exit_code: int) -> None:
    try:
        release()
    finally:
        os._exit(exit_code)


def _watch_parent(parent: int, release: Callable[[], None]) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_SECONDS)
    _leave(release, 128 + signal.SIGTERM)
