"""Stopping a long command (a match, a tuning run, data generation) by a signal.

Ctrl-C and `kill` should stop a long job the same way: the work already finished is kept,
and everything the job started ends with it.  :func:`stop_on_signals` makes SIGINT and
SIGTERM raise :class:`Stopped` in the main thread while the job runs.  The handlers are
installed explicitly because a shell starts a background job (``cmd &`` in a script) with
SIGINT ignored, and Python then never raises KeyboardInterrupt at all.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


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
