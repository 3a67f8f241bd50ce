"""The Python side of the search: iterative deepening, aspiration windows, MultiPV and
Lazy SMP threads around the numba `root_search`.

Python owns the clock: `think` runs in the caller's thread (numba releases the GIL), and
another thread stops it by setting `stop[0]`.  After every iteration (and every fail-high
or fail-low) it reports an `IterationInfo`, from which the protocol prints `info` lines.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..core import board as cb
from ..core import search as cs
from ..core.history import clear_histories, Histories
from ..core.compile_plan import engine_first
from ..core.correction import Corrections
from ..core.movegen import is_legal
from ..core.tt import new_table, probe, table_for_entries, hashfull, VALUE_MATE, VALUE_MATE_IN_MAX
from ..core.params import INDEX, defaults
from ..core.types import MAX_PLY
from ..position import Position, move_to_usi
from .mate_guard import MateGuard
from .switches import SWITCHES

DEFAULT_TT_ENTRIES = 1 << 20
ASPIRATION_DELTA = 40


# Lazy SMP helpers skip depths by a pattern (Stockfish 8's): helper i uses entry (i-1) % 20;
# it skips depth d when ((d + game ply + phase) // size) is odd, so helpers of one size
# cover different depths and larger sizes run further ahead.
SKIP_SIZE = (1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4)
SKIP_PHASE = (0, 1, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 6, 7)


def helper_skips(i: int, depth: int, ply: int) -> bool:
    """Whether Lazy SMP helper `i` (1..) skips iteration `depth` at game ply `ply`."""
    k = (i - 1) % len(SKIP_SIZE)
    return ((depth + ply + SKIP_PHASE[k]) // SKIP_SIZE[k]) % 2 == 1


def restrict_root(ctx, searchmoves: list[str]) -> int:
    """Keep only the root moves named in `searchmoves` (their order kept); all of them
    when none is a root move. Returns the number of root moves."""
    n = int(ctx.params[cs.P_ROOT_N])
    wanted = set(searchmoves)
    kept = [i for i in range(n) if move_to_usi(int(ctx.root_moves[i])) in wanted]
    if kept:
        ctx.root_moves[: len(kept)] = ctx.root_moves[kept]
        ctx.root_scores[: len(kept)] = ctx.root_scores[kept]
        ctx.params[cs.P_ROOT_N] = len(kept)
    return int(ctx.params[cs.P_ROOT_N])


def exclude_first_root_move(ctx) -> None:
    """Take the first root move out of the search: the others move up one place, and it
    stays just past the root's end."""
    n = int(ctx.params[cs.P_ROOT_N])
    ctx.root_moves[:n] = np.roll(ctx.root_moves[:n], -1)
    ctx.root_scores[:n] = np.roll(ctx.root_scores[:n], -1)
    ctx.params[cs.P_ROOT_N] = n - 1


@dataclass
class IterationInfo:
    """One `info` line: a finished iteration, a fail-high/low, or one MultiPV line."""

    depth: int
    seldepth: int
    multipv: int
    score_cp: int | None
    score_mate: int | None  # plies to mate, negative when the side to move is mated
    bound: str | None  # None exact, "lowerbound" or "upperbound"
    nodes: int
    time_ms: int
    nps: int
    hashfull: int
    pv: list[str] = field(default_factory=list)
    last_line: bool = True  # the last MultiPV line of its iteration


@dataclass
class ThinkResult:
    best: str | None  # None: no legal move
    ponder: str | None
    info: IterationInfo | None  # the line to print right before bestmove


@dataclass
class CutoffCounts:
    """The beta cutoffs of a search's full-width nodes below the root: a well-ordered search
    cuts off with its first move most of the time, and with an early move when not."""

    cutoffs: int = 0
    first_move: int = 0  # of them by the node's first move
    move_sum: int = 0  # the cutting moves' numbers, summed (1 for the first move)

    def __iadd__(self, other: CutoffCounts) -> CutoffCounts:
        self.cutoffs += other.cutoffs
        self.first_move += other.first_move
        self.move_sum += other.move_sum
        return self

    def __str__(self) -> str:
        if self.cutoffs == 0:
            return "no cutoff"
        return (
            f"{self.cutoffs} cutoffs, {100 * self.first_move / self.cutoffs:.1f}% by the first move,"
            f" mean move number {self.move_sum / self.cutoffs:.2f}"
        )


def score_fields(v: int) -> tuple[int | None, int | None]:
    """(cp, mate) for a search score from the side to move's point of view."""
    if v >= VALUE_MATE_IN_MAX:
        return None, VALUE_MATE - v
    if v <= -VALUE_MATE_IN_MAX:
        return None, -(VALUE_MATE + v)
    return v, None


class Searcher:
    """Owns the TT, one search context per thread, and runs `think`."""

    SWITCHES = SWITCHES  # search/switches.py: names, defaults and why
    # switches that work here in Python, not in the core: MateGuard (`think`'s mate_guard)
    PYTHON_SWITCHES = ("MateGuard",)
    # where each of the other switches goes in the core's parameters
    _SWITCH_PARAM = {
        "NullMove": cs.P_NULL_MOVE,
        "LMR": cs.P_LMR,
        "Futility": cs.P_FUTILITY,
        "Razoring": cs.P_RAZORING,
        "CheckExtension": cs.P_CHECK_EXT,
        "Mate1Ply": cs.P_MATE1,
        "IIR": cs.P_IIR,
        "MultiIterativeDeepening": cs.P_MID,
        "HalfPlyExtension": cs.P_HALF_PLY,
        "HalfPlyExtensionFull": cs.P_HALF_PLY_FULL,
        "OneSideLimitedPVS": cs.P_OSL,
        "ShallowSearchOrdering": cs.P_SHALLOW_ORDER,
        "CorrectionHistory": cs.P_CORRECTION,
        "Mate1PlyQuiescence": cs.P_QS_MATE1,
    }

    def __init__(self) -> None:
        self.tt = table_for_entries(DEFAULT_TT_ENTRIES)
        self.threads = 1
        self.draw_value = 0
        self.max_game_ply = 0  # MaxMovesToDraw inside the tree; 0: no limit
        self.search_params = defaults()  # core/params.py's tunable constants
        self.switches = dict(self.SWITCHES)
        self.generation = 0
        self._helper_stop = np.zeros(1, np.int32)
        self._contexts: list[cs.SearchCtx] = []
        self._positions: list[cb.PosArrays] = []
        self._best_changes: list[int] = []
        self.network = None  # core.network.NetArrays; None: hand-made evaluation
        self._ensure_contexts()

    # --- configuration ---------------------------------------------------------------
    def _ensure_contexts(self) -> None:
        while len(self._contexts) < self.threads:
            self._contexts.append(cs.new_context(self.tt, self._helper_stop, self.search_params))
            self._positions.append(cb.new_position(self.network))
        del self._contexts[self.threads :]
        del self._positions[self.threads :]
        self._contexts = [c._replace(tt=self.tt) for c in self._contexts]

    def configure(
        self,
        *,
        hash_mb: int | None = None,
        threads: int | None = None,
        draw_value: int | None = None,
        switches: dict[str, int] | None = None,
        max_game_ply: int | None = None,
        search_params: list[int] | None = None,
    ) -> None:
        """Change what is given; `search_params` is core/params.py's table in PARAMS order."""
        if hash_mb is not None:
            table = new_table(hash_mb)
            if table.shape != self.tt.shape:
                self.tt = table
        if threads is not None:
            self.threads = max(1, int(threads))
        if draw_value is not None:
            self.draw_value = int(draw_value)
        for name, value in (switches or {}).items():
            if name not in self.SWITCHES:
                raise ValueError(f"unknown search switch {name!r}")
            self.switches[name] = int(value)
        if max_game_ply is not None:
            self.max_game_ply = max(0, int(max_game_ply))
        if search_params is not None:
            self.search_params = [int(v) for v in search_params]
            for ctx in self._contexts:
                cs.set_search_params(ctx, self.search_params)
        self._ensure_contexts()

    def set_network(self, network) -> None:
        """Evaluate with `network` (core.network.NetArrays, or None for the hand-made
        evaluation): every thread gets positions carrying it; the TT's evaluations go."""
        self.network = network
        self._positions = [cb.new_position(network) for _ in self._positions]
        self.new_game()

    def new_game(self) -> None:
        """Forget everything learned: TT and all history tables."""
        self.tt.fill(0)
        for ctx in self._contexts:
            clear_histories(
                Histories(ctx.butterfly, ctx.continuation, ctx.counter, ctx.killers, ctx.capture, ctx.low_ply)
            )
            clear_histories(Corrections(ctx.corr_kings, ctx.corr_hands, ctx.corr_cont))

    def warmup(self) -> None:
        """Compile (or load from the cache) every search function and run a tiny search."""
        pos = Position("lnsgkgsnl/1r5b1/ppppppppp/9/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL w - 2")
        engine_first()  # on a first start, the helper process compiles the rest meanwhile
        result = self.think(
            pos, depth=3, nodes=None, multipv=1, stop=np.zeros(1, np.int32), on_iteration=lambda info: None
        )
        self._ponder_from_tt(pos, int(pos.parse_move(result.best)))  # compiled now, not in a game
        self.new_game()

    def stability(self) -> float:
        """1.0 when the best move held over the last iterations, towards 0 when it changed."""
        recent = self._best_changes[-4:]
        return 1.0 / (1.0 + sum(recent))

    # --- thinking --------------------------------------------------------------------
    def _prepare(
        self, i: int, pos: Position, stop: np.ndarray, node_limit: int, searchmoves: list[str] | None
    ) -> cs.SearchCtx:
        ctx = self._contexts[i]._replace(stop=stop)
        arrays = self._positions[i]
        cb.copy_into(arrays, pos.arrays)
        p = ctx.params
        p[cs.P_GENERATION] = self.generation
        p[cs.P_ROOT_SIDE] = pos.side_to_move()
        p[cs.P_DRAW_VALUE] = self.draw_value
        p[cs.P_NODE_LIMIT] = node_limit
        p[cs.P_MAX_GAME_PLY] = self.max_game_ply
        p[cs.P_PV_INDEX] = 0
        for name, index in self._SWITCH_PARAM.items():
            p[index] = self.switches[name]
        cs.init_root(arrays, ctx)
        if searchmoves:
            restrict_root(ctx, searchmoves)
        return ctx

    def _nodes(self) -> int:
        return int(sum(int(c.stats[cs.S_NODES]) for c in self._contexts))

    def cutoff_counts(self) -> CutoffCounts:
        """How well the last search ordered its moves (all threads together)."""
        return CutoffCounts(
            *(
                int(sum(int(c.stats[field]) for c in self._contexts))
                for field in (cs.S_CUTOFFS, cs.S_FIRST_MOVE_CUTOFFS, cs.S_CUTOFF_MOVE_SUM)
            )
        )

    def think(
        self,
        pos: Position,
        *,
        depth: int | None,
        nodes: int | None,
        multipv: int,
        stop: np.ndarray,
        on_iteration: Callable[[IterationInfo], None],
        searchmoves: list[str] | None = None,
        consideration: bool = False,
        mate_guard: MateGuard | None = None,
    ) -> ThinkResult:
        """Iterative deepening until `depth`, `nodes`, or stop[0] is set.

        searchmoves: USI moves the root is restricted to (`go searchmoves`); ignored when
        none of them is a root move. consideration (ConsiderationMode): when the search
        stops inside an iteration, report that iteration's lines as they stand.
        mate_guard (one line only): a best move that df-pn proves walks into a mate is
        taken out of the root and the iteration searched again without it.
        """
        self.generation = (self.generation + 1) & 255
        self._best_changes = []
        start = time.monotonic()
        ctx = self._prepare(0, pos, stop, nodes or 0, searchmoves)
        arrays = self._positions[0]
        n_root = int(ctx.params[cs.P_ROOT_N])
        if n_root == 0:
            return ThinkResult(None, None, None)
        max_depth = min(depth or MAX_PLY - 1, MAX_PLY - 1)
        multipv = max(1, min(multipv, n_root))
        helpers = self._start_helpers(pos, max_depth, searchmoves)
        last_scores = [0] * multipv
        lines: list[IterationInfo | None] = [None] * multipv
        pvs: list[list[int]] = [[]] * multipv
        final: IterationInfo | None = None
        best_move = int(ctx.root_moves[0])
        best_pv = [best_move]
        if multipv > 1:
            mate_guard = None
        try:
            d = 0
            while d < max_depth:
                d += 1
                previous_best = best_move
                for k in range(multipv):
                    ctx.params[cs.P_PV_INDEX] = k
                    score, failed_high = self._aspiration(
                        arrays, ctx, d, last_scores[k], k, start, on_iteration
                    )
                    if ctx.stats[cs.S_ABORTED]:
                        # the root's first move is the best of what this iteration finished:
                        # a move of the stopped window's search, or (RootFailHighMove) the
                        # move that failed high in the window before
                        if k == 0 and ctx.stats[cs.S_ROOT_DONE] > 0:
                            best_move = int(ctx.root_moves[0])
                            best_pv = self._pv(ctx)
                        elif k == 0 and failed_high is not None and self._fail_high_move():
                            best_move = int(ctx.root_moves[0])
                            best_pv = self._pv(ctx)
                            last_scores[0] = failed_high
                            final = self._info(ctx, d, 1, failed_high, "lowerbound", start, best_pv)
                        if consideration:
                            self._report_unfinished(ctx, d, k, lines, start, on_iteration)
                        break
                    last_scores[k] = score
                    pvs[k] = self._pv(ctx)
                    lines[k] = self._info(ctx, d, k + 1, score, None, start, pvs[k])
                    if k == 0:
                        best_move = int(ctx.root_moves[0])
                        best_pv = pvs[0]
                if ctx.stats[cs.S_ABORTED]:
                    break
                if multipv > 1:
                    self._sort_lines(ctx, lines, last_scores, pvs)
                    best_move = int(ctx.root_moves[0])
                    best_pv = pvs[0]
                if mate_guard is not None and self._guard_refutes(mate_guard, pos, ctx, d, last_scores[0]):
                    best_move = int(ctx.root_moves[0])
                    best_pv = [best_move]
                    last_scores[0] = int(ctx.root_scores[0])
                    final = None
                    d -= 1  # the same depth again, without the move
                    continue
                self._best_changes.append(best_move != previous_best)
                for k, line in enumerate(lines):
                    line.last_line = k == multipv - 1
                    on_iteration(line)
                final = lines[0]
                if stop[0] or self._mate_proven(last_scores[0], d):
                    break
        finally:
            self._helper_stop[0] = 1
            for t in helpers:
                t.join()
        if final is None or final.pv[:1] != [move_to_usi(best_move)]:
            final = self._info(
                ctx,
                max(1, final.depth if final else 1),
                1,
                last_scores[0],
                None,
                start,
                [move_to_usi(m) for m in best_pv],
            )
        else:
            final = self._info(ctx, final.depth, 1, last_scores[0], final.bound, start, final.pv)
        if len(final.pv) == 1:
            final.pv += self._ponder_from_tt(pos, best_move)
        ponder = final.pv[1] if len(final.pv) > 1 else None
        return ThinkResult(move_to_usi(best_move), ponder, final)

    def _ponder_from_tt(self, pos: Position, best_move: int) -> list[str]:
        """The reply the table holds for the position after `best_move`, as a one-move
        list (empty when there is none, or it is not legal there).  A PV of one move comes
        from a fail high at the root, or from a cutoff right below it; a GUI still wants a
        move to ponder on, so it is read from the table as Stockfish does."""
        child = pos.copy().arrays
        cb.do_move(child, best_move)
        hit, reply = probe(self.tt, child.keys[child.st[cb.ST_PLY]])[:2]
        reply = int(reply)
        if not hit or reply == 0 or not is_legal(child, reply):
            return []
        return [move_to_usi(reply)]

    @staticmethod
    def _guard_refutes(guard: MateGuard, pos: Position, ctx, depth: int, score: int) -> bool:
        """Ask the mate guard about the iteration's best move; when it walks into a mate
        (and another move is left), move it past the end of the root moves."""
        n = int(ctx.params[cs.P_ROOT_N])
        best = move_to_usi(int(ctx.root_moves[0]))
        if n < 2 or abs(score) >= VALUE_MATE_IN_MAX or not guard.may_probe(depth, best):
            return False
        if not guard.walks_into_mate(pos, best):
            return False
        exclude_first_root_move(ctx)
        return True

    @staticmethod
    def _sort_lines(ctx, lines, scores, pvs) -> None:
        """MultiPV lines best first, as Stockfish sorts its root moves after each line: line
        k is searched among the moves the earlier lines left, in its own window, so it can
        end above one of them.  The root moves follow, so the next iteration starts from
        the best.  A stable sort: equal scores keep their order."""
        order = sorted(range(len(scores)), key=lambda k: -scores[k])
        if order == list(range(len(scores))):
            return
        n = len(order)
        ctx.root_moves[:n] = ctx.root_moves[order]  # fancy indexing copies first
        ctx.root_scores[:n] = ctx.root_scores[order]
        lines[:] = [lines[k] for k in order]
        scores[:] = [scores[k] for k in order]
        pvs[:] = [pvs[k] for k in order]
        for i, line in enumerate(lines):
            line.multipv = i + 1

    def _report_unfinished(self, ctx, d, k, lines, start, on_iteration) -> None:
        """ConsiderationMode: the lines of iteration `d`, stopped while searching line k:
        lines before k are finished at depth d, line k as far as it got (when at least one
        root move was searched), the others from depth d - 1. None ends an iteration."""
        if ctx.stats[cs.S_ROOT_DONE] > 0:
            lines = list(lines)
            lines[k] = self._info(ctx, d, k + 1, int(ctx.root_scores[k]), None, start, self._pv(ctx))
        elif k == 0:
            return  # nothing new since the last finished iteration
        for line in lines:
            if line is not None:
                line.last_line = False
                on_iteration(line)

    def _aspiration(self, arrays, ctx, d, previous, k, start, on_iteration):
        """Search one iteration in a window around the previous score, widening on failure.
        Returns the score and, when the last window failed high, that window's score (the
        move that did is then the root's first), else None."""
        inf = cs.VALUE_INF
        delta = ASPIRATION_DELTA
        alpha, beta = (-inf, inf) if d < 4 else (max(previous - delta, -inf), min(previous + delta, inf))
        failed_high = None
        highs = 0  # fail highs since the last fail low (AspirationFailHighReduction)
        while True:
            depth = max(1, d - highs * self._fail_high_reduction())
            score = int(cs.root_search(arrays, ctx, alpha, beta, depth * cs.ONE_PLY))
            if ctx.stats[cs.S_ABORTED]:
                return score, failed_high
            if score <= alpha and alpha > -inf:
                on_iteration(self._info(ctx, d, k + 1, score, "upperbound", start, self._pv(ctx)))
                beta = (alpha + beta) // 2
                alpha = max(score - delta, -inf)
                failed_high = None  # the window fell below: no move of it beat the last best
                highs = 0
            elif score >= beta and beta < inf:
                on_iteration(self._info(ctx, d, k + 1, score, "lowerbound", start, self._pv(ctx)))
                beta = min(score + delta, inf)
                failed_high = score
                highs += 1
            else:
                return score, failed_high
            delta += delta // 2 + 10

    def _fail_high_move(self) -> bool:
        return self.search_params[INDEX["RootFailHighMove"]] != 0

    def _fail_high_reduction(self) -> int:
        return self.search_params[INDEX["AspirationFailHighReduction"]]

    @staticmethod
    def _mate_proven(score: int, depth: int) -> bool:
        return abs(score) >= VALUE_MATE_IN_MAX and depth >= VALUE_MATE - abs(score) + 4

    @staticmethod
    def _pv(ctx) -> list[int]:
        n = int(ctx.pv_len[0])
        return [int(m) for m in ctx.pv[0, : max(n, 1)]]

    def _info(self, ctx, depth, multipv, score, bound, start, pv) -> IterationInfo:
        elapsed = time.monotonic() - start
        nodes = self._nodes()
        cp, mate = score_fields(score)
        pv_text = [move_to_usi(m) if isinstance(m, int) else m for m in pv]
        return IterationInfo(
            depth,
            int(ctx.stats[cs.S_SELDEPTH]),
            multipv,
            cp,
            mate,
            bound,
            nodes,
            int(elapsed * 1000),
            int(nodes / elapsed) if elapsed > 0 else 0,
            int(hashfull(self.tt, self.generation)),
            pv_text,
        )

    # --- Lazy SMP ------------------------------------------------------------------------
    def _start_helpers(
        self, pos: Position, max_depth: int, searchmoves: list[str] | None
    ) -> list[threading.Thread]:
        self._helper_stop[0] = 0
        threads = []
        for i in range(1, self.threads):
            ctx = self._prepare(i, pos, self._helper_stop, 0, searchmoves)
            t = threading.Thread(target=self._helper, args=(i, ctx, max_depth, pos.game_ply()), daemon=True)
            t.start()
            threads.append(t)
        return threads

    def _helper(self, i: int, ctx, max_depth: int, ply: int) -> None:
        """A helper thread deepens on its own, sharing only the TT, and skips the depths
        its skip pattern says: helpers spread over depths instead of repeating the main
        thread's work."""
        arrays = self._positions[i]
        for d in range(1, max_depth + 1):
            if helper_skips(i, d, ply):
                continue
            cs.root_search(arrays, ctx, -cs.VALUE_INF, cs.VALUE_INF, d * cs.ONE_PLY)
            if self._helper_stop[0]:
                return
