"""The heavy half of the engine: numba, the Searcher and the mate solver, set up lazily.

Nothing here is imported before `usi` is answered. The first `isready` (or the first
`position` / `go` of a GUI that skips it) imports numba, makes the Searcher (factory.py)
with the options' settings, and warms the compiled code up, so that no clock runs while
numba compiles or loads its cache; the network EvalDir names is loaded at `isready`
(factory.load_network), and again after EvalDir or FV_SCALE change. The mate solver (df-pn, about a fifth of the compile
work) is compiled right after, in the background: `readyok` does not wait for it, the
mate probe before a search is skipped until it is ready, and `go mate` waits for it. On an
empty numba cache a helper process (precompile.py) compiles, on another core, the parts of
the search this compile comes to last, the Position methods, and the mate solver.
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from typing import Callable

from .. import precompile
from .options import Options, ascii_clean
from ..search.factory import SearchSettings, configure, load_network, make_searcher


class Backend:
    def __init__(self, options: Options, out, log: Callable[[str], None]) -> None:
        self.options = options
        self.out = out
        self.log = log
        self.lock = threading.RLock()  # setup and configuration
        self._import_lock = threading.Lock()
        self.np = None
        self.searcher = None
        self.ready = False
        self._position_cls = None
        self._settings: SearchSettings | None = None  # those the Searcher has now
        self._mate_mb = None  # MateHash the mate solver's table was made with
        self._newgame_pending = False
        self._eval_key = None  # (EvalDir, FV_SCALE) now in use; None: not loaded
        self._mate_warm = threading.Event()  # set when the mate solver is compiled (or failed)
        self._mate_thread: threading.Thread | None = None
        self._machine: tuple[int | None, int] | None = None  # (memory MB, cores): limits.py
        self._last_request: tuple[int, int, int] | None = None
        self._precompile = None  # the helper process of a first start (precompile.py)

    # ------------------------------------------------------------------ imports
    def position_cls(self):
        """usi_engine.position.Position, imported on first use."""
        with self._import_lock:
            if self._position_cls is None:
                from ..position import Position

                self._position_cls = Position
            return self._position_cls

    def preload(self) -> None:
        """Set everything up in the background as soon as `usi` is answered: numba compiles
        (or loads its cache) while the GUI shows the options, and `isready` finds the work
        done or under way instead of starting it."""

        def run():
            try:
                with self.lock:
                    if not self.ready:
                        self._first_setup()
            except Exception as exc:  # isready tries again and reports it
                self.log(f"preload failed: {exc!r}")

        threading.Thread(target=run, name="preload", daemon=True).start()

    # ------------------------------------------------------------------ readiness
    def ensure_ready(self, idle: bool) -> None:
        """Import, create the Searcher, configure, warm up (once);
        when `idle` (no search running), apply changed options and a pending new game."""
        with self.lock:
            if not self.ready:
                self._first_setup()
            if idle:
                self.configure()
                self.load_evaluation()
                if self._newgame_pending:
                    self.searcher.new_game()
                    self._newgame_pending = False

    def _first_setup(self) -> None:
        import numpy as np

        self.np = np
        self.position_cls()
        # on an empty numba cache a second process compiles what this one comes to last
        self._precompile = precompile.start()
        for msg in self.options.report_pending() + self.options.take_messages():
            self.out.info(msg)
        self.searcher = make_searcher()
        self.configure(force=True)
        t0 = time.monotonic()
        self.searcher.warmup()
        from ..position import exercise_methods

        exercise_methods()
        self.log(f"warmup {time.monotonic() - t0:.2f}s")
        self.ready = True
        self._newgame_pending = False
        self._mate_thread = threading.Thread(target=self._warmup_mate, name="mate-warmup", daemon=True)
        self._mate_thread.start()

    def _warmup_mate(self) -> None:
        """Compile (or load) the mate solver after `readyok`, so that `go mate` answers within
        its limit. It holds the solver while it compiles: a `go mate` meanwhile waits for it
        (before its clock starts), the mate probe of a search skips (tsume.compiled())."""
        t0 = time.monotonic()
        try:
            from ..search.tsume import warmup

            warmup()
            self.log(f"mate solver warmup {time.monotonic() - t0:.2f}s")
        except Exception as exc:
            self.log(f"mate warmup: {exc!r}")
        finally:
            self._mate_warm.set()

    def wait_for_mate_solver(self, timeout: float | None = None) -> bool:
        """Wait until the background compile of the mate solver is over (`go mate`,
        `--warmup`); at once when none was started."""
        if self._mate_thread is None:
            return True
        return self._mate_warm.wait(timeout)

    def configure(self, force: bool = False) -> None:
        """Pass the options to the Searcher and the mate solver (only what changed); tables
        and threads beyond what the machine has are reduced to fit (limits.py)."""
        opts = self.options
        hash_mb, mate_mb, threads = self._fitted(
            int(opts["USI_Hash"]), int(opts["MateHash"]), int(opts["Threads"])
        )
        settings = replace(SearchSettings.from_options(opts), hash_mb=hash_mb, threads=threads)
        if force or settings != self._settings:
            try:
                configure(self.searcher, settings)
            except MemoryError:  # the machine is short of memory now: keep the old table
                self.out.info(f"USI_Hash {hash_mb} MB: out of memory, keeping the table in use")
                configure(self.searcher, replace(settings, hash_mb=None))
            self._settings = settings
        if force or mate_mb != self._mate_mb:
            from ..search.tsume import default_solver

            try:
                default_solver(mate_mb)
            except MemoryError:
                self.out.info(f"MateHash {mate_mb} MB: out of memory, keeping the table in use")
            self._mate_mb = mate_mb

    def _fitted(self, hash_mb: int, mate_mb: int, threads: int) -> tuple[int, int, int]:
        """The option values the machine can hold; an info string once per request cut."""
        from . import limits

        if self._machine is None:  # measured once, before the tables grow
            self._machine = (limits.memory_mb(), limits.cores())
        memory, cores = self._machine
        hash_mb, mate_mb, notes = limits.fit_tables(hash_mb, mate_mb, memory)
        threads, more = limits.fit_threads(threads, cores)
        request = (int(self.options["USI_Hash"]), int(self.options["MateHash"]), int(self.options["Threads"]))
        if request != self._last_request:
            self._last_request = request
            for note in notes + more:
                self.out.info(note)
        return hash_mb, mate_mb, threads

    def load_evaluation(self) -> None:
        """EvalDir / FV_SCALE changed: load the network; a bad file is reported and the
        evaluation in use stays (tried again at the next isready)."""
        key = (str(self.options["EvalDir"]).strip(), int(self.options["FV_SCALE"]))
        if key == self._eval_key:
            return
        try:
            net = load_network(key[0], key[1])
        except ValueError as exc:
            self.out.info(f"EvalDir: {ascii_clean(exc, 300)}; keeping the previous evaluation")
            return
        self.searcher.set_network(None if net is None else net.arrays)
        self._eval_key = key
        self.out.info(
            "evaluation: hand-made"
            if net is None
            else f"evaluation: {net.name} from {ascii_clean(net.source, 200)}, FV_SCALE {key[1]}"
        )

    def new_game(self, idle: bool) -> None:
        """Forget the previous game (TT, histories) now if idle, else before the next search."""
        if self.ready and idle:
            self.searcher.new_game()
        else:
            self._newgame_pending = True

    def stability(self) -> float | None:
        """The searcher's own best-move stability, if it keeps one."""
        searcher = self.searcher
        if searcher is not None and hasattr(searcher, "stability"):
            try:
                return float(searcher.stability())
            except Exception:
                return None
        return None
