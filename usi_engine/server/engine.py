"""The engine behind the USI loop: `position`, `go`, `stop`, `ponderhit`, `gameover`.

The protocol thread (protocol.py) calls these methods. The pieces they use:
game.py (the position the GUI sent), backend.py (numba, Searcher and mate solver, set up
lazily), job.py (one `go`: clock, threads, the exactly-once answer), resign.py (when to
resign) and mate_probe.py (a df-pn probe before a timed search).
"""

from __future__ import annotations

import traceback
from typing import Callable

from . import mate_probe
from .backend import Backend
from ..book.player import BookPlayer
from .game_state import GameState
from .info import empty_info, format_info
from .job import SearchJob
from .options import CLEAR_HASH, Options, ascii_clean
from .resign import ResignRule
from .timeman import Budget, GoParams, TimeSettings, compute_budget

STOP_WAIT_S = 5.0  # a search that has not ended this long after `stop` is considered hung
# One legal move under a clock: search only this deep. Milliseconds, and deep enough that the
# score shown is not a static guess (a depth-1 search said +541 with mate in 8 plies ahead).
SINGLE_REPLY_DEPTH = 8


class UsiEngine:
    """The engine as a GUI sees it: the game, the book, one `go` at a time, exactly one answer.

    (``usi_engine.Engine`` is the in-process Python API; this class is what the USI server
    drives.)
    """

    def __init__(self, out, options: Options, log: Callable[[str], None] | None = None) -> None:
        self.out = out  # .send(line) / .send_many(lines) / .info(text), thread-safe
        self.options = options
        self.log = log or (lambda msg: None)
        self.backend = Backend(options, out, self.log)
        self.game = GameState(self.backend.position_cls)
        self.resign = ResignRule()
        self.book = BookPlayer()  # the opening book (usi_engine/book, docs/book.md)
        self._job: SearchJob | None = None
        self._ponder_stopped = False  # the last `stop` ended a ponder search
        self.quitting = False

    # ------------------------------------------------------------------ setup
    def preload(self) -> None:
        self.backend.preload()

    def ensure_ready(self) -> None:
        self.backend.ensure_ready(idle=not self.searching())

    def isready(self) -> None:
        """`isready`: set up the search and (re)read the book the options name (at
        `isready` only, as YaneuraOu does: never on a `go`'s clock)."""
        self.ensure_ready()
        self.book.load(self.options, self.out)

    def static_eval(self) -> int:
        """The `eval` command: static evaluation of the current position, side to move's view."""
        self.ensure_ready()
        return self.position().evaluate(self.backend.searcher.network)

    # ------------------------------------------------------------------ game state
    def searching(self) -> bool:
        """A search is using the search contexts (its answer is not out yet)."""
        job = self._job
        return job is not None and not job.answered

    def position(self):
        return self.game.position()

    def set_position(self, text: str) -> None:
        """`position ...`; ValueError (position unchanged) for anything malformed."""
        pos = self.game.set_position(text)
        limit = int(self.options["MaxMovesToDraw"])
        if limit > 0 and pos.game_ply() >= limit:
            self.out.info(f"game ply {pos.game_ply()} reached MaxMovesToDraw {limit}: the game is a draw")

    def new_game(self) -> None:
        self.stop(wait=True)
        self._ponder_stopped = False
        self.resign.reset()
        self.backend.new_game(idle=not self.searching())

    def press(self, button: str) -> None:
        """A button option: `Clear_Hash` forgets the TT and the histories (now when idle,
        else before the next search)."""
        if button == CLEAR_HASH:
            self.backend.new_game(idle=not self.searching())

    def gameover(self, result: str) -> None:
        self.stop(wait=True)
        self._ponder_stopped = False
        self.resign.reset()

    # ------------------------------------------------------------------ go / stop
    def go(self, params: GoParams, received: float | None = None) -> None:
        """Start thinking; `received` (time.monotonic()) is when the `go` line arrived:
        the GUI's clock runs from then, so ours does too."""
        if not self._previous_search_ended():
            self.out.info(
                f"the previous search did not stop within {STOP_WAIT_S:g} s: answering without a search"
            )
            self.out.send(self.fallback_answer(params))
            return
        self.ensure_ready()
        if params.is_mate:  # a first start compiles df-pn after readyok: not on go mate's clock
            self.backend.wait_for_mate_solver()
        job, target = self._new_job(params)
        if received is not None and not job.pondering:
            job.clock_start = min(job.clock_start, received)
        self.log(f"go {params} budget {job.budget}")
        self._job = job
        job.start(target, self._stability)

    def _previous_search_ended(self) -> bool:
        """Wait for the previous job's worker to end (it is ending already when its answer
        is out); a GUI that sends `go` before `stop` gets that search stopped first."""
        prev = self._job
        if prev is None:
            return True
        if not prev.answered:
            self.out.info("go received while thinking: stopping the previous search first")
            prev.request_stop()
        return prev.wait_finished(STOP_WAIT_S)

    def _new_job(self, params: GoParams):
        """The SearchJob for `go` and the function its worker runs."""
        np = self.backend.np
        stop_array = np.zeros(1, np.int32)
        if self.game.rejected is not None:
            return SearchJob(params, None, stop_array, None, 1), self._run_refusal
        pos = self.position().copy()
        settings = TimeSettings.from_options(self.options)
        if params.is_mate:
            return SearchJob(params, pos, stop_array, _mate_budget(params, settings), 1), self._run_mate
        relayed, self._ponder_stopped = self._ponder_stopped, False
        budget = compute_budget(params, pos.side_to_move(), pos.game_ply(), settings, relayed)
        root_moves = self._root_moves(pos, params.searchmoves)
        multipv = int(self.options["MultiPV"])
        if multipv > len(root_moves) > 0:  # as many lines as there are moves to show
            self.out.info(f"MultiPV {multipv}: showing {len(root_moves)}, one line per move to choose from")
            multipv = len(root_moves)
        job = SearchJob(params, pos, stop_array, budget, multipv)
        job.root_moves = root_moves
        return job, self._run_search

    def _root_moves(self, pos, searchmoves: list[str] | None) -> list[str]:
        """The moves to choose from: the legal moves, or those of `go searchmoves` that
        are legal (all legal moves, with an info string, when none is)."""
        legal = pos.legal_moves()
        if not searchmoves:
            return legal
        illegal = [m for m in searchmoves if m not in legal]
        if illegal:
            self.out.info("go: searchmoves: not legal here, ignored: " + ascii_clean(" ".join(illegal), 200))
        chosen = [m for m in dict.fromkeys(searchmoves) if m in legal]
        if legal and not chosen:
            self.out.info("go: searchmoves: no legal move given, searching all moves")
            return legal
        return chosen

    def fallback_answer(self, params: GoParams) -> str:
        """The answer to a `go` that could not start a search at all."""
        if params.is_mate:
            return "checkmate timeout"
        if self.game.rejected is not None:
            return "bestmove resign"
        try:
            legal = self.position().legal_moves()
            if legal:
                return f"bestmove {legal[0]}"
        except Exception:
            pass
        return "bestmove resign"

    def stop(self, wait: bool = False) -> None:
        job = self._job
        if job is None or job.finished():
            return
        # a ponder miss: the `go` that follows started on the server's clock long ago
        self._ponder_stopped = job.pondering and not self.quitting
        job.request_stop()
        if wait:
            job.wait_finished(STOP_WAIT_S)

    def ponderhit(self, params: GoParams | None = None, received: float | None = None) -> None:
        job = self._job
        if job is None or job.finished() or not job.pondering:
            return
        budget = job.budget
        if params is not None and params.has_clock() and job.pos is not None:
            settings = TimeSettings.from_options(self.options)
            budget = compute_budget(params, job.pos.side_to_move(), job.pos.game_ply(), settings)
        job.ponderhit(budget, received)

    def quit(self) -> None:
        self.quitting = True
        job = self._job
        if job is not None:
            job.request_stop()
            job.done.wait(0.5)

    # ------------------------------------------------------------------ worker side
    def _stability(self, job: SearchJob) -> float:
        """Best-move stability: the info stream's, averaged with the searcher's own."""
        s = job.tracker.stability()
        own = self.backend.stability()
        return s if own is None else 0.5 * (s + own)

    def _is_quitting(self) -> bool:
        return self.quitting

    def _run_search(self, job: SearchJob) -> None:
        lines: list[str] = []
        try:
            lines = self._search_answer(job)
        except Exception as exc:
            self.log(traceback.format_exc())
            self.out.info(f"internal error: {ascii_clean(repr(exc), 160)}")
            lines = [_first_legal_or_resign(job.pos)]
        finally:
            job.answer(self.out, lines or ["bestmove resign"], self.quitting)

    def _search_answer(self, job: SearchJob) -> list[str]:
        legal = job.root_moves
        special = self._answer_without_search(job, legal)
        if special is not None:
            job.wait_until_released(self._is_quitting)
            return special
        from_book = self.book.answer(job, self.options, self.out)
        if from_book is not None:
            return from_book
        timed = job.budget is not None and not job.params.infinite
        if timed and len(legal) > 1 and not job.pondering and mate_probe.worth_probing(job.budget.optimum):
            mate_info = mate_probe.probe(job.pos, legal, job.stop, job.budget.optimum, self.log)
            if mate_info is not None:
                return [format_info(mate_info), self._bestmove_line(mate_info.pv)]
        depth = job.params.depth
        if len(legal) == 1 and timed:  # the move is forced: a short search for the score
            depth = SINGLE_REPLY_DEPTH if depth is None else min(depth, SINGLE_REPLY_DEPTH)
        result = self._think(job, depth)
        job.wait_until_released(self._is_quitting)
        return self._final_lines(job, legal, result)

    def _answer_without_search(self, job: SearchJob, legal: list[str]) -> list[str] | None:
        """An entering-king declaration, or no legal move at all."""
        rule = str(self.options["EnteringKingRule"])
        if rule != "none":
            try:
                if job.pos.can_declare(rule):
                    return ["info string entering-king declaration", "bestmove win"]
            except Exception as exc:
                self.log(f"can_declare: {exc!r}")
        if not legal:
            return ["info string no legal move", "bestmove resign"]
        return None

    def _think(self, job: SearchJob, depth: int | None):
        """Run the searcher; None (after an info string) if it failed."""
        on_iteration = lambda info: job.on_iteration(info, self.out, self._stability, self.log)  # noqa: E731
        guard = self._mate_guard(job)
        try:
            restricted = job.params.searchmoves is not None
            return self.backend.searcher.think(
                job.pos,
                depth=depth,
                nodes=job.params.nodes,
                multipv=job.multipv,
                stop=job.stop,
                on_iteration=on_iteration,
                searchmoves=job.root_moves if restricted else None,
                consideration=bool(self.options["ConsiderationMode"]),
                mate_guard=guard,
            )
        except Exception as exc:
            self.log(traceback.format_exc())
            self.out.info(f"search error: {ascii_clean(repr(exc), 160)}; playing a fallback move")
            return None

    def _mate_guard(self, job: SearchJob):
        """The mate guard for a timed search or a ponder search (switch MateGuard), or None:
        not when analysing, nor before the background compile of df-pn is over."""
        if job.budget is None or job.params.infinite:
            return None
        try:
            if not self.backend.searcher.switches.get("MateGuard"):
                return None
            from ..search.mate_guard import MateGuard, nodes_for
            from ..search.tsume import default_solver, compiled

            if not compiled():
                return None
            guard = MateGuard(default_solver(), nodes_for(job.budget.optimum), job.stop)
        except Exception as exc:  # the search goes on without it
            self.log(f"mate guard: {exc!r}")
            return None
        guard.on_refuted = lambda move: self.out.info(f"mate guard: {move} walks into a mate by checks")
        return guard

    def _final_lines(self, job: SearchJob, legal: list[str], result) -> list[str]:
        """The final info line and the bestmove (or resign) for a finished search."""
        info = getattr(result, "info", None) or job.last_info
        best = getattr(result, "best", None)
        if best not in legal:
            fallback = info.pv[0] if info is not None and info.pv and info.pv[0] in legal else legal[0]
            if best is not None:
                self.out.info(
                    f"search returned no legal best move ({ascii_clean(best, 20)}); playing {fallback}"
                )
            best = fallback
            if info is not None and (not info.pv or info.pv[0] != best):
                info = None
        if info is not None:
            lines = [format_info(info, 1 if job.multipv == 1 else job.multipv)]
        else:
            lines = [empty_info(best, job.elapsed_ms() if job.clock_start else 0)]
        if not job.params.infinite and self.resign.should_resign(info, int(self.options["ResignValue"])):
            return lines + ["bestmove resign"]
        ponder = self._ponder_move(job.pos, best, result, info)
        lines.append(f"bestmove {best} ponder {ponder}" if ponder else f"bestmove {best}")
        return lines

    def _ponder_move(self, pos, best: str, result, info) -> str | None:
        """The move to ponder on after `best` (USI_Ponder on), checked to be legal."""
        if not self.options["USI_Ponder"]:
            return None
        ponder = getattr(result, "ponder", None)
        if ponder is None and info is not None and len(info.pv) >= 2 and info.pv[0] == best:
            ponder = info.pv[1]
        if ponder is None:
            return None
        try:
            after = pos.copy()
            after.push(best)
            return ponder if ponder in after.legal_moves() else None
        except Exception:
            return None

    def _bestmove_line(self, pv: list[str]) -> str:
        if self.options["USI_Ponder"] and len(pv) > 1:
            return f"bestmove {pv[0]} ponder {pv[1]}"
        return f"bestmove {pv[0]}"

    def _run_refusal(self, job: SearchJob) -> None:
        """`go` after a rejected `position`: the GUI's position is unknown, so no search;
        resigning beats a move for the wrong position (an illegal move, a foul)."""
        reason = ascii_clean(self.game.rejected or "", 300)
        answer = "checkmate timeout" if job.params.is_mate else "bestmove resign"
        try:
            job.wait_until_released(self._is_quitting)
        finally:
            job.answer(
                self.out,
                [f"info string go: no search, the last position was rejected ({reason})", answer],
                self.quitting,
            )

    def _run_mate(self, job: SearchJob) -> None:
        answer = "checkmate notimplemented"
        try:
            answer = self._mate_answer(job)
            job.wait_until_released(self._is_quitting)
        except Exception as exc:
            self.log(traceback.format_exc())
            self.out.info(f"mate search error: {ascii_clean(repr(exc), 160)}")
            answer = "checkmate timeout"
        finally:
            job.answer(self.out, [answer], self.quitting)

    def _mate_answer(self, job: SearchJob) -> str:
        """`go mate`: df-pn on the position; `checkmate <moves>|nomate|timeout`."""
        try:
            from ..search.tsume import solve
        except ImportError:
            return "checkmate notimplemented"
        limit = job.budget.maximum if job.budget is not None else None

        def on_info(nodes, nps, time_ms):
            self.out.send(f"info nodes {int(nodes)} nps {int(nps)} time {int(time_ms)}")

        status, moves = solve(job.pos, stop=job.stop, time_limit_ms=limit, on_info=on_info)
        if status == "mate" and moves:
            return "checkmate " + " ".join(moves)
        return "checkmate nomate" if status == "nomate" else "checkmate timeout"


def _mate_budget(params: GoParams, settings: TimeSettings) -> Budget | None:
    """`go mate <ms>`: the whole time less the network margin; `go mate infinite`: none."""
    limit = None if params.mate_infinite else params.mate
    if limit is None:
        return None
    t = max(1, limit - min(settings.network_delay, limit // 2))
    return Budget(t, t, t, use_fully=True)


def _first_legal_or_resign(pos) -> str:
    try:
        legal = pos.legal_moves()
        if legal:
            return f"bestmove {legal[0]}"
    except Exception:
        pass
    return "bestmove resign"
