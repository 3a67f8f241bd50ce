"""One `go`: its parameters, stop flag, clock, threads, and the exactly-once answer.

A search runs in a worker thread (numba releases the GIL); a monitor thread owns the
clock and sets ``stop[0] = 1`` when the budget from timeman.py runs out. The worker
prints the answer (`bestmove`, or `checkmate` for `go mate`) exactly once.
"""

from __future__ import annotations

import threading
import time
from typing import Callable

from .info import format_info
from .timeman import Budget, Clock, GoParams, StabilityTracker

MONITOR_PERIOD_S = 0.005


class SearchJob:
    def __init__(self, params: GoParams, pos, stop_array, budget: Budget | None, multipv: int) -> None:
        self.params = params
        self.pos = pos
        self.stop = stop_array
        self.budget = budget
        self.multipv = multipv
        self.root_moves: list[str] = []  # the moves to choose from (go searchmoves)
        self.pondering = params.ponder
        self.stop_requested = False
        self.wake = threading.Event()  # stop / ponderhit / quit
        self.done = threading.Event()  # the answer has been printed
        self.clock: Clock | None = None
        self.clock_start = 0.0
        self.deadline: float | None = None  # ms: the stop was decided, it happens then
        self.go_time = time.monotonic()
        self.tracker = StabilityTracker()
        self.last_info = None  # last IterationInfo with multipv 1
        self.answered = False
        self.lock = threading.Lock()
        self.worker: threading.Thread | None = None
        self.monitor: threading.Thread | None = None
        if not self.pondering:
            self.start_clock(budget)

    # ------------------------------------------------------------------ clock
    def start_clock(self, budget: Budget | None, credit_ms: float = 0.0) -> None:
        self.clock_start = time.monotonic()
        self.clock = Clock(budget, credit_ms) if budget is not None else None
        self.deadline = None

    def elapsed_ms(self) -> float:
        return (time.monotonic() - self.clock_start) * 1000.0

    def ponderhit(self, budget: Budget | None, received: float | None) -> None:
        """The pondered move was played: the clock starts now (or when the line arrived)."""
        pondered_ms = (time.monotonic() - self.go_time) * 1000.0
        self.start_clock(budget, credit_ms=pondered_ms)
        if received is not None:
            self.clock_start = min(self.clock_start, received)
        self.pondering = False
        self.wake.set()

    # ------------------------------------------------------------------ threads
    def start(self, target: Callable[["SearchJob"], None], stability: Callable[["SearchJob"], float]) -> None:
        """Run `target(job)` in the worker thread and the clock in the monitor thread."""
        self.worker = threading.Thread(target=target, args=(self,), name="search", daemon=True)
        self.monitor = threading.Thread(target=self._monitor, args=(stability,), name="monitor", daemon=True)
        self.worker.start()
        self.monitor.start()

    def _monitor(self, stability: Callable[["SearchJob"], float]) -> None:
        """Owns the clock: stop the search at the deadline (checked every 5 ms)."""
        while not self.done.is_set() and not self.stop[0]:
            clock = self.clock
            if clock is not None and not self.pondering:
                elapsed = self.elapsed_ms()
                if self.deadline is None and clock.should_stop(elapsed, stability(self)):
                    self.decide_stop(elapsed)
                if self.deadline is not None and elapsed >= self.deadline:
                    self.stop[0] = 1
                    break
            self.done.wait(MONITOR_PERIOD_S)

    def decide_stop(self, elapsed_ms: float) -> None:
        """The clock says stop: now, or at the end of the current whole second when the
        rest of it is free; the monitor stops the search then."""
        if self.deadline is None:
            self.deadline = self.clock.stop_time(elapsed_ms)
        if elapsed_ms >= self.deadline:
            self.stop[0] = 1

    def request_stop(self) -> None:
        self.stop_requested = True
        self.stop[0] = 1
        self.wake.set()

    def finished(self) -> bool:
        """The answer has been printed."""
        return self.done.is_set()

    def wait_finished(self, timeout: float) -> bool:
        """Wait until the answer is out and the worker thread has ended; False on timeout."""
        deadline = time.monotonic() + timeout
        if not self.done.wait(timeout):
            return False
        worker = self.worker
        if worker is not None and worker is not threading.current_thread():
            worker.join(max(0.0, deadline - time.monotonic()))
            return not worker.is_alive()
        return True

    def wait_until_released(self, quitting: Callable[[], bool]) -> None:
        """USI: while pondering or in `go infinite`, bestmove waits for stop / ponderhit."""
        while (self.pondering or self.params.infinite) and not self.stop_requested and not quitting():
            self.wake.wait(0.05)
            self.wake.clear()

    # ------------------------------------------------------------------ output
    def on_iteration(self, info, out, stability: Callable[["SearchJob"], float], log) -> None:
        """Print an iteration's info line; stop when no further iteration fits the budget."""
        try:
            out.send(format_info(info, self.multipv))
            if info.multipv == 1:
                best = info.pv[0] if info.pv else None
                self.tracker.update(int(info.depth), best)
                if info.pv:
                    self.last_info = info
            clock = self.clock
            # the time check waits for the iteration's last line (fewer than MultiPV when
            # there are fewer root moves)
            if (
                clock is not None
                and not self.pondering
                and info.bound is None
                and getattr(info, "last_line", info.multipv == self.multipv)
                and not clock.start_next_iteration(self.elapsed_ms(), stability(self))
            ):
                self.decide_stop(self.elapsed_ms())
        except Exception as exc:  # never let reporting kill the search
            log(f"on_iteration: {exc!r}")

    def answer(self, out, lines: list[str], quitting: bool) -> None:
        """Print the answer, once whatever happens. The search is over by then (helpers
        joined): `answered` is set before the bestmove goes out, so a `go` that the GUI
        sends the moment it reads it finds the engine idle."""
        with self.lock:
            if self.answered:
                return
            self.answered = True
        if not quitting:
            out.send_many(lines)
        self.done.set()
