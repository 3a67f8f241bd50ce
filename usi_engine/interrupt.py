"""Stopping a long command (a match, a tuning run, data generation) by a signal.

Ctrl-C and `kill` should stop a long job the same way: the work already finished is kept,
and everything the job started ends with it.  :func:`stop_on_signals` makes SIGINT and
SIGTERM raise :class:`Stopped` in the main thread while the job runs.  The handlers are
installed explicitly because a shell starts a background job (``cmd &`` in a script) with
SIGINT ignored, and Python then never raises KeyboardInterrupt at all.

A worker process of such a job (a multiprocessing pool's) calls :func:`stop_with_the_run`
first: the job alone decides when to stop, and what the worker started (a teacher engine,
closed by its ``multiprocessing.util.Finalize``) ends with it.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
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


def stop_with_the_run() -> None:
    """For a pool worker: ignore SIGINT (Ctrl-C reaches the whole process group; the run
    decides, and a worker that died of it would only be replaced), leave through SystemExit
    on SIGTERM (pool.terminate()), so that the worker's finalizers run, and send itself that
    SIGTERM when the run that started it is gone (killed with SIGKILL, it could not stop its
    workers, and each would go on alone)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _exit_worker)
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()


def _exit_worker(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_SECONDS)
    os.kill(os.getpid(), signal.SIGTERM)
