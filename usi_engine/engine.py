"""Game state and the thinking machinery behind the USI loop.

The protocol thread (protocol.py) calls these methods; a search runs in a worker
thread (numba releases the GIL) and a monitor thread owns the clock: it sets
``stop[0] = 1`` when the budget from timeman.py runs out. Every `go` gets exactly
one `bestmove` (or one `checkmate` for `go mate`), printed by the worker.

Heavy modules (numba, usi_engine.position / searcher / tsume) are imported lazily:
at `isready`, or at the first `position` / `go` if a GUI skips `isready`.
"""

from __future__ import annotations

import threading
import time
import traceback
from typing import Callable

from .options import Options, ascii_clean
from .timeman import Budget, Clock, GoParams, StabilityTracker, TimeSettings, compute_budget

MATE_SCORE_CP = 100000      # a mate score, in centipawns, for the resign rule
NEVER_RESIGN = 99999        # ResignValue at this value: never resign
RESIGN_STREAK = 2           # resign when this many searches in a row end below -ResignValue
MONITOR_PERIOD_S = 0.005
MATE_PROBE_MIN_MS = 300     # below this optimum time no df-pn probe precedes the search
MATE_PROBE_SHARE = 0.1      # share of the optimum time the probe may use


def format_info(info, multipv_total: int = 1) -> str:
    """An IterationInfo as a USI `info` line."""
    parts = ["info", "depth", str(int(info.depth)), "seldepth", str(int(max(info.seldepth, info.depth)))]
    if multipv_total > 1:
        parts += ["multipv", str(int(info.multipv))]
    if info.score_mate is not None:
        parts += ["score", "mate", str(int(info.score_mate))]
    else:
        parts += ["score", "cp", str(int(info.score_cp or 0))]
    if info.bound in ("lowerbound", "upperbound"):
        parts.append(info.bound)
    parts += ["nodes", str(int(info.nodes)), "nps", str(int(info.nps)), "time", str(int(info.time_ms)),
              "hashfull", str(int(info.hashfull))]
    if info.pv:
        parts += ["pv"] + [str(m) for m in info.pv]
    return " ".join(parts)


def score_as_cp(info) -> int | None:
    if info is None:
        return None
    if info.score_mate is not None:
        return MATE_SCORE_CP if info.score_mate > 0 else -MATE_SCORE_CP
    return info.score_cp


class SearchJob:
    """One `go`: its parameters, stop flag, clock and the exactly-once bestmove."""

    def __init__(self, params: GoParams, pos, stop_array, budget: Budget | None, multipv: int) -> None:
        self.params = params
        self.pos = pos
        self.stop = stop_array
        self.budget = budget
        self.multipv = multipv
        self.pondering = params.ponder
        self.stop_requested = False
        self.wake = threading.Event()        # stop / ponderhit / quit
        self.done = threading.Event()        # the answer has been printed
        self.clock: Clock | None = None
        self.clock_start = 0.0
        self.go_time = time.monotonic()
        self.tracker = StabilityTracker()
        self.last_info = None                # last IterationInfo with multipv 1
        self.answered = False
        self.lock = threading.Lock()
        self.worker: threading.Thread | None = None
        self.monitor: threading.Thread | None = None
        if not self.pondering:
            self.start_clock(budget)

    def start_clock(self, budget: Budget | None, credit_ms: float = 0.0) -> None:
        self.clock_start = time.monotonic()
        self.clock = Clock(budget, credit_ms) if budget is not None else None

    def elapsed_ms(self) -> float:
        return (time.monotonic() - self.clock_start) * 1000.0

    def request_stop(self) -> None:
        self.stop_requested = True
        self.stop[0] = 1
        self.wake.set()


class Engine:
    def __init__(self, out, options: Options, log: Callable[[str], None] | None = None) -> None:
        self.out = out                      # .send(line) / .send_many(lines) / .info(text), thread-safe
        self.options = options
        self.log = log or (lambda msg: None)
        self._init_lock = threading.RLock()
        self._position_cls = None
        self._searcher = None
        self._mate_mb = None                # MateHash the mate solver's table was made with
        self._np = None
        self._ready = False
        self._config_key = None
        self._known_switches: set[str] = set()
        self._newgame_pending = False
        self._pos = None                    # current position (None = start position)
        self._pos_cache: tuple[str, object] | None = None
        self._job: SearchJob | None = None
        self._job_lock = threading.Lock()
        self._resign_streak = 0
        self.quitting = False
        self._eval_key = ("<internal>", 16)  # (EvalDir, FV_SCALE) now in use

    # ------------------------------------------------------------------ lazy init
    def _import_position(self):
        with self._init_lock:
            if self._position_cls is None:
                from .position import Position
                self._position_cls = Position
            return self._position_cls

    def preload(self) -> None:
        """Import the heavy modules in the background after `usi` (no compile)."""
        def run():
            try:
                self._import_position()
                import usi_engine.searcher  # noqa: F401
            except Exception as exc:  # reported properly at isready
                self.log(f"preload failed: {exc!r}")
        threading.Thread(target=run, name="preload", daemon=True).start()

    def ensure_ready(self) -> None:
        """Import, create the Searcher, declare its switches, configure, warm up (once)."""
        with self._init_lock:
            if not self._ready:
                import numpy as np
                self._np = np
                self._import_position()
                from .searcher import Searcher
                added = self.options.add_switches(dict(getattr(Searcher, "SWITCHES", {}) or {}))
                for name in added:
                    self.log(f"switch {name} found only at import time")
                for msg in self.options.report_pending() + self.options.take_messages():
                    self.out.info(msg)
                self._known_switches = set(getattr(Searcher, "SWITCHES", {}) or {})
                searcher = Searcher()
                self._searcher = searcher
                self._configure(force=True)
                t0 = time.monotonic()
                searcher.warmup()
                self._exercise_position()
                self._warmup_mate()
                self.log(f"warmup {time.monotonic() - t0:.2f}s")
                self._ready = True
                self._newgame_pending = False
            if not self.searching():
                self._configure()
                self._load_evaluation()
                if self._newgame_pending:
                    self._searcher.new_game()
                    self._newgame_pending = False

    def _exercise_position(self) -> None:
        """Call each Position method the front end uses once, so that numba has loaded
        (or compiled) them before the first clock runs."""
        pos = self._position_cls()
        for rule in ("none", "CSA24", "CSA27"):
            pos.can_declare(rule)
        work = pos.copy()
        work.push(work.legal_moves()[0])
        work.is_check()
        work.side_to_move()
        work.game_ply()
        work.sfen()
        self._position_cls.from_usi("startpos moves 7g7f")

    def _warmup_mate(self) -> None:
        """Compile (or load) the mate solver now, so that `go mate` answers within its limit."""
        try:
            from .tsume import solve
        except ImportError:
            return
        try:
            pos = self._position_cls("4k4/9/4P4/9/9/9/9/9/4K4 b G 1")
            solve(pos, stop=self._np.zeros(1, self._np.int32), time_limit_ms=None, nodes=10000)
        except Exception as exc:
            self.log(f"mate warmup: {exc!r}")

    def _configure(self, force: bool = False) -> None:
        opts = self.options
        switches = {k: v for k, v in opts.switches().items() if k in self._known_switches}
        key = (int(opts["USI_Hash"]), int(opts["Threads"]), int(opts["DrawValue"]),
               tuple(sorted(switches.items())))
        if force or key != self._config_key:
            self._searcher.configure(hash_mb=key[0], threads=key[1], draw_value=key[2],
                                     switches=dict(key[3]))
            self._config_key = key
        mate_mb = int(opts["MateHash"])
        if force or mate_mb != self._mate_mb:
            from .tsume import default_solver
            default_solver(mate_mb)
            self._mate_mb = mate_mb

    def _load_evaluation(self) -> None:
        """EvalDir / FV_SCALE changed: load the network; a bad file is reported and the
        evaluation in use stays (tried again at the next isready)."""
        key = (str(self.options["EvalDir"]).strip(), int(self.options["FV_SCALE"]))
        if key == self._eval_key:
            return
        from .core.network import load_eval_dir, network_arrays
        try:
            net = load_eval_dir(key[0])
        except ValueError as exc:
            self.out.info(f"EvalDir: {ascii_clean(exc, 300)}; keeping the previous evaluation")
            return
        self._searcher.set_network(None if net is None else network_arrays(net, key[1]))
        self._eval_key = key
        self.out.info("evaluation: hand-made" if net is None else
                      f"evaluation: {net.name} from {ascii_clean(net.source, 200)}, FV_SCALE {key[1]}")

    def static_eval(self) -> int:
        """The `eval` command: static evaluation of the current position, side to move's view."""
        self.ensure_ready()
        return self.position().evaluate(self._searcher.network)

    # ------------------------------------------------------------------ state
    def searching(self) -> bool:
        job = self._job
        return job is not None and not job.done.is_set()

    def position(self):
        if self._pos is None:
            self._pos = self._import_position()()
        return self._pos

    def set_position(self, text: str) -> None:
        """`position ...`; ValueError (position unchanged) for anything malformed."""
        Position = self._import_position()
        text = " ".join(text.split())
        if not text:
            raise ValueError("position: missing 'startpos' or 'sfen'")
        head = text.split(" ", 1)[0]
        if head not in ("startpos", "sfen"):
            raise ValueError(f"position: expected 'startpos' or 'sfen', got '{ascii_clean(head, 40)}'")
        cached = self._pos_cache
        pos = None
        if cached is not None and text.startswith(cached[0] + " "):
            # the GUI resends the whole game each move: push only the new moves
            rest = text[len(cached[0]) + 1:].split(" ")
            has_moves = " moves " in cached[0] + " " or cached[0].endswith(" moves")
            if not has_moves and rest and rest[0] == "moves":
                rest = rest[1:]
                has_moves = True
            if has_moves and "moves" not in rest:
                pos = cached[1].copy()
                for mv in rest:
                    try:
                        pos.push(mv)
                    except ValueError as exc:
                        raise ValueError(f"position: illegal or unparseable move '{ascii_clean(mv, 20)}' "
                                         f"({ascii_clean(exc, 80)})") from None
        if pos is None:
            pos = Position.from_usi(text)
        self._pos = pos
        self._pos_cache = (text, pos.copy())
        limit = int(self.options["MaxMovesToDraw"])
        if limit > 0 and pos.game_ply() >= limit:
            self.out.info(f"game ply {pos.game_ply()} reached MaxMovesToDraw {limit}: the game is a draw")

    def new_game(self) -> None:
        self.stop(wait=True)
        self._resign_streak = 0
        if self._ready and not self.searching():
            self._searcher.new_game()
        else:
            self._newgame_pending = True

    # ------------------------------------------------------------------ go / stop
    def go(self, params: GoParams, received: float | None = None) -> None:
        """Start thinking; `received` (time.monotonic()) is when the `go` line arrived:
        the GUI's clock runs from then, so ours does too."""
        if self.searching():
            self.out.info("go received while thinking: stopping the previous search first")
            self.stop(wait=True)
        self.ensure_ready()
        pos = self.position().copy()
        np = self._np
        stop_array = np.zeros(1, np.int32)
        settings = TimeSettings.from_options(self.options)
        if params.is_mate:
            limit = None if params.mate_infinite else params.mate
            budget = None
            if limit is not None:
                t = max(1, limit - min(settings.network_delay, limit // 2))
                budget = Budget(t, t, t, use_fully=True)
            job = SearchJob(params, pos, stop_array, budget, 1)
            target = self._run_mate
        else:
            budget = compute_budget(params, pos.side_to_move(), pos.game_ply(), settings)
            job = SearchJob(params, pos, stop_array, budget, int(self.options["MultiPV"]))
            target = self._run_search
        if received is not None and not job.pondering:
            job.clock_start = min(job.clock_start, received)
        self.log(f"go {params} budget {budget}")
        with self._job_lock:
            self._job = job
        job.worker = threading.Thread(target=target, args=(job,), name="search", daemon=True)
        job.monitor = threading.Thread(target=self._monitor, args=(job,), name="monitor", daemon=True)
        job.worker.start()
        job.monitor.start()

    def fallback_answer(self, params: GoParams) -> str:
        """The answer to a `go` that could not start a search at all."""
        if params.is_mate:
            return "checkmate timeout"
        try:
            legal = self.position().legal_moves()
            if legal:
                return f"bestmove {legal[0]}"
        except Exception:
            pass
        return "bestmove resign"

    def stop(self, wait: bool = False) -> None:
        job = self._job
        if job is None or job.done.is_set():
            return
        job.request_stop()
        if wait:
            job.done.wait(5.0)

    def ponderhit(self, params: GoParams | None = None, received: float | None = None) -> None:
        job = self._job
        if job is None or job.done.is_set() or not job.pondering:
            return
        budget = job.budget
        if params is not None and params.has_clock():
            settings = TimeSettings.from_options(self.options)
            budget = compute_budget(params, job.pos.side_to_move(), job.pos.game_ply(), settings)
        pondered_ms = (time.monotonic() - job.go_time) * 1000.0
        job.start_clock(budget, credit_ms=pondered_ms)
        if received is not None:
            job.clock_start = min(job.clock_start, received)
        job.pondering = False
        job.wake.set()

    def gameover(self, result: str) -> None:
        self.stop(wait=True)
        self._resign_streak = 0

    def quit(self) -> None:
        self.quitting = True
        job = self._job
        if job is not None:
            job.request_stop()
            job.done.wait(0.5)

    # ------------------------------------------------------------------ threads
    def _stability(self, job: SearchJob) -> float:
        s = job.tracker.stability()
        searcher = self._searcher
        if searcher is not None and hasattr(searcher, "stability"):
            try:
                s = 0.5 * (s + float(searcher.stability()))
            except Exception:
                pass
        return s

    def _monitor(self, job: SearchJob) -> None:
        """Owns the clock: stop the search at the deadline (checked every 5 ms)."""
        while not job.done.is_set() and not job.stop[0]:
            clock = job.clock
            if clock is not None and not job.pondering:
                elapsed = job.elapsed_ms()
                if elapsed >= clock.budget.maximum or clock.should_stop(elapsed, self._stability(job)):
                    self.log(f"monitor stop at {elapsed:.0f} ms")
                    job.stop[0] = 1
                    break
            job.done.wait(MONITOR_PERIOD_S)

    def _on_iteration(self, job: SearchJob, info) -> None:
        try:
            self.out.send(format_info(info, job.multipv))
            if info.multipv == 1:
                best = info.pv[0] if info.pv else None
                job.tracker.update(int(info.depth), best)
                if info.pv:
                    job.last_info = info
            clock = job.clock
            if (clock is not None and not job.pondering and info.bound is None
                    and info.multipv == job.multipv
                    and not clock.start_next_iteration(job.elapsed_ms(), self._stability(job))):
                job.stop[0] = 1
        except Exception as exc:  # never let reporting kill the search
            self.log(f"on_iteration: {exc!r}")

    def _wait_until_released(self, job: SearchJob) -> None:
        """USI: while pondering or in `go infinite`, bestmove waits for stop / ponderhit."""
        while (job.pondering or job.params.infinite) and not job.stop_requested and not self.quitting:
            job.wake.wait(0.05)
            job.wake.clear()

    def _answer(self, job: SearchJob, lines: list[str]) -> None:
        with job.lock:
            if job.answered:
                return
            job.answered = True
        if not self.quitting:
            self.out.send_many(lines)
        job.done.set()

    def _run_search(self, job: SearchJob) -> None:
        lines: list[str] = []
        try:
            lines = self._search_answer(job)
        except Exception as exc:
            self.log(traceback.format_exc())
            self.out.info(f"internal error: {ascii_clean(repr(exc), 160)}")
            lines = ["bestmove resign"]
            try:
                legal = job.pos.legal_moves()
                if legal:
                    lines = [f"bestmove {legal[0]}"]
            except Exception:
                pass
        finally:
            self._answer(job, lines or ["bestmove resign"])

    def _search_answer(self, job: SearchJob) -> list[str]:
        pos = job.pos
        legal = pos.legal_moves()
        rule = str(self.options["EnteringKingRule"])
        declare = False
        if rule != "none":
            try:
                declare = bool(pos.can_declare(rule))
            except Exception as exc:
                self.log(f"can_declare: {exc!r}")
        if declare:
            self._wait_until_released(job)
            return ["info string entering-king declaration", "bestmove win"]
        if not legal:
            self._wait_until_released(job)
            return ["info string no legal move", "bestmove resign"]

        timed = job.budget is not None and not job.params.infinite
        depth = job.params.depth
        if len(legal) == 1 and timed:
            depth = 1  # one legal move: answer at once (a depth-1 search for the info line)
        elif timed and not job.pondering and job.budget.optimum >= MATE_PROBE_MIN_MS:
            mate_info = self._mate_probe(job, legal)
            if mate_info is not None:
                return [format_info(mate_info), self._bestmove_line(mate_info.pv)]
        result = None
        try:
            result = self._searcher.think(pos, depth=depth, nodes=job.params.nodes, multipv=job.multipv,
                                          stop=job.stop, on_iteration=lambda info: self._on_iteration(job, info))
        except Exception as exc:
            self.log(traceback.format_exc())
            self.out.info(f"search error: {ascii_clean(repr(exc), 160)}; playing a fallback move")
        self._wait_until_released(job)

        info = getattr(result, "info", None) or job.last_info
        best = getattr(result, "best", None)
        if best not in legal:
            fallback = info.pv[0] if info is not None and info.pv and info.pv[0] in legal else legal[0]
            if best is not None:
                self.out.info(f"search returned no legal best move ({ascii_clean(best, 20)}); playing {fallback}")
            best = fallback
            if info is not None and (not info.pv or info.pv[0] != best):
                info = None
        lines = []
        if info is not None:
            lines.append(format_info(info, 1 if job.multipv == 1 else job.multipv))
        else:
            ms = int(job.elapsed_ms()) if job.clock_start else 0
            lines.append(f"info depth 0 seldepth 0 score cp 0 nodes 0 nps 0 time {ms} hashfull 0 pv {best}")

        # resign rule: the score stayed below -ResignValue for a few searches
        resign_value = int(self.options["ResignValue"])
        score = score_as_cp(info)
        if resign_value < NEVER_RESIGN and not job.params.infinite and score is not None:
            if score <= -resign_value:
                self._resign_streak += 1
            else:
                self._resign_streak = 0
            if self._resign_streak >= RESIGN_STREAK:
                return lines + ["bestmove resign"]

        ponder = None
        if self.options["USI_Ponder"]:
            ponder = getattr(result, "ponder", None)
            if ponder is None and info is not None and len(info.pv) >= 2 and info.pv[0] == best:
                ponder = info.pv[1]
            if ponder is not None:
                try:
                    after = pos.copy()
                    after.push(best)
                    if ponder not in after.legal_moves():
                        ponder = None
                except Exception:
                    ponder = None
        lines.append(f"bestmove {best} ponder {ponder}" if ponder else f"bestmove {best}")
        return lines

    def _mate_probe(self, job: SearchJob, legal: list[str]):
        """A short df-pn run before the main search: a long forced mate that alpha-beta's
        horizon (or its material count) hides is proven here and played out."""
        if job.pos.is_check():
            return None
        from .tsume import default_solver
        from .searcher import IterationInfo
        solver = default_solver()
        start = time.monotonic()
        try:
            status, moves = solver.solve(job.pos, stop=job.stop,
                                         time_limit_ms=int(job.budget.optimum * MATE_PROBE_SHARE))
        except Exception as exc:
            self.log(f"mate probe: {exc!r}")
            return None
        if status != "mate" or not moves or moves[0] not in legal:
            return None
        ms = int((time.monotonic() - start) * 1000)
        nodes = int(solver.nodes)
        return IterationInfo(len(moves), len(moves), 1, None, len(moves), None, nodes, ms,
                             nodes * 1000 // max(ms, 1), 0, list(moves))

    def _bestmove_line(self, pv: list[str]) -> str:
        if self.options["USI_Ponder"] and len(pv) > 1:
            return f"bestmove {pv[0]} ponder {pv[1]}"
        return f"bestmove {pv[0]}"

    def _run_mate(self, job: SearchJob) -> None:
        answer = "checkmate notimplemented"
        try:
            try:
                from .tsume import solve
            except ImportError:
                solve = None
            if solve is not None:
                limit = job.budget.maximum if job.budget is not None else None
                def on_info(nodes, nps, time_ms):
                    self.out.send(f"info nodes {int(nodes)} nps {int(nps)} time {int(time_ms)}")
                status, moves = solve(job.pos, stop=job.stop, time_limit_ms=limit, on_info=on_info)
                if status == "mate" and moves:
                    answer = "checkmate " + " ".join(moves)
                elif status == "nomate":
                    answer = "checkmate nomate"
                else:
                    answer = "checkmate timeout"
            self._wait_until_released(job)
        except Exception as exc:
            self.log(traceback.format_exc())
            self.out.info(f"mate search error: {ascii_clean(repr(exc), 160)}")
            answer = "checkmate timeout"
        finally:
            self._answer(job, [answer])
