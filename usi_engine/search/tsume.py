"""Tsume-shogi solver for `go mate`: df-pn in numba (core/dfpn.py), driven from Python.

>>> from usi_engine.position import Position
>>> status, moves = solve(Position("4k4/9/4P4/9/9/9/9/9/9 b G2r2b3g4s4n4l17p 1"))
>>> status, moves
('mate', ['G*5b'])

How time works: the numba search runs `nogil` in slices of nodes; between slices Python
reads the clock, calls `on_info(nodes, nps, time_ms)` about once a second and checks the
time and node limits.  Near the end a slice is cut to the nodes the time left allows at
the rate measured so far, and so is the one call that reads out the shortest line (half of
what is left: the rest is for the proof's line), so the limits hold for the whole solve.
The `stop` array (np.int32[1]) is also polled inside numba every 1024 nodes, so setting
``stop[0] = 1`` from another thread ends a slice at once.

Answers: ("mate", usi_moves) with the shortest mate against the longest resistance (all
interpositions count as moves), ("nomate", []) when the attacker has no forced mate by
checks, ("timeout", []) when a limit or the stop flag ended the search first.  When the
mate is proven but the exact shortest line does not fit in the time left, the line of the
proof found is returned (a valid forced mate, possibly not the shortest).
"""

from __future__ import annotations

import threading
import time

import numpy as np

from ..core import board as cb
from ..core import dfpn as cm
from ..core.types import MAX_HISTORY, MAX_MOVES
from ..core.movegen import generate, GEN_ALL
from ..position import Position, move_to_usi

DEFAULT_TABLE_MB = 64
_SLICE_MIN = 20_000
_INFO_EVERY_S = 1.0
_WARMUP_SFEN = "4k4/9/4P4/9/9/9/9/9/4K4 b G 1"  # mate in one: G*5b
_EXACT_MIN_NODES = 2_000_000  # the shortest-mate pass may spend this many nodes at least,
_EXACT_FACTOR = 4  # or this many times the nodes the proof took
_PV_MAX_NODES = 50_000_000  # one exact_pv call's allowance when no limit bounds it
_PV_TIME_SHARE = 0.5  # of the time left, what exact_pv may take (the rest: the proof line)


class _Limits:
    """A solve's time and node limits.  numba cannot read the clock, so the search runs in
    slices of nodes: about 0.1 s each at the rate measured so far, and near the end only
    the nodes the time left allows."""

    def __init__(self, params, stop, time_limit_ms, nodes) -> None:
        self.params = params
        self.start = time.perf_counter()
        self.deadline = None if time_limit_ms is None else self.start + max(0, time_limit_ms) / 1000.0
        self.node_cap = None if nodes is None else max(1, int(nodes))
        self.stop = np.zeros(1, np.int32) if stop is None else stop
        self.slice_nodes = _SLICE_MIN

    def out_of_budget(self) -> bool:
        if self.stop[0] != 0:
            return True
        if self.deadline is not None and time.perf_counter() >= self.deadline:
            return True
        return self.node_cap is not None and self.params[cm.P_NODES] >= self.node_cap

    def measured(self, nodes: int, seconds: float) -> None:
        """A slice searched `nodes` in `seconds`: aim the next ones at about 0.1 s."""
        if seconds > 0 and nodes > 0:
            self.slice_nodes = max(_SLICE_MIN, min(5_000_000, int(nodes / seconds * 0.1)))

    def nodes_in_time_left(self, share: float = 1.0) -> int | None:
        if self.deadline is None:
            return None
        elapsed = time.perf_counter() - self.start
        rate = self.params[cm.P_NODES] / elapsed if elapsed > 0 else 0.0
        return int(rate * max(0.0, self.deadline - time.perf_counter()) * share)

    def next_limit(self) -> int:
        """The node count at which the next slice stops."""
        step = self.slice_nodes
        left = self.nodes_in_time_left()
        if left is not None and self.params[cm.P_NODES] > 0:
            step = max(1_000, min(step, left))
        limit = int(self.params[cm.P_NODES]) + step
        return min(limit, self.node_cap) if self.node_cap is not None else limit

    def pv_allowance(self) -> int:
        """The nodes the one call that reads out the shortest line may take."""
        allowance = _PV_MAX_NODES
        left = self.nodes_in_time_left(_PV_TIME_SHARE)
        if left is not None:
            allowance = min(allowance, left)
        if self.node_cap is not None:
            allowance = min(allowance, self.node_cap - int(self.params[cm.P_NODES]))
        return max(1, allowance)


class MateSolver:
    """Owns the proof-number table (allocated once) and the work buffers."""

    def __init__(self, table_mb: int = DEFAULT_TABLE_MB) -> None:
        self.table_mb = int(table_mb)
        self.table = cm.new_table(self.table_mb)
        self.work = cm.new_work()
        self._pos = cb.new_position()
        self._lock = threading.Lock()
        self.nodes = 0

    def clear(self) -> None:
        """Forget everything (a new generation makes every entry empty)."""
        self.table.params[cm.P_GEN] += 1

    def resize(self, table_mb: int) -> None:
        if int(table_mb) != self.table_mb:
            self.table_mb = int(table_mb)
            self.table = cm.new_table(self.table_mb)

    def warmup(self) -> None:
        """Load (or compile) every numba function a solve calls from Python: a mate in one
        solved, then its line read from the proof as well, the way a solve does when the
        shortest line does not fit in its limits; otherwise a game's first such `go mate`
        would compile in the middle of it."""
        pos = Position(_WARMUP_SFEN)
        self.solve(pos, nodes=10_000)
        with self._lock:
            a, tt = self._pos, self.table
            cb.copy_into(a, pos.arrays)
            work = self.work._replace(stop=np.zeros(1, np.int32))
            self._proof_line(a, tt, work, lambda: False, lambda: int(tt.params[cm.P_NODES]) + 10_000)

    # ------------------------------------------------------------------------------------
    def solve(
        self,
        pos: Position,
        *,
        stop: np.ndarray | None = None,
        time_limit_ms: int | None = None,
        nodes: int | None = None,
        on_info=None,
    ) -> tuple[str, list[str]]:
        with self._lock:
            answer = self._solve(pos, stop, time_limit_ms, nodes, on_info)
        _compiled.set()
        return answer

    def prove(
        self,
        pos: Position,
        *,
        stop: np.ndarray | None = None,
        time_limit_ms: int | None = None,
        nodes: int | None = None,
    ) -> str:
        """Only whether the side to move mates by checks: "mate", "nomate" or "timeout".
        The df-pn proof alone, without the shortest line: what a caller needs that asks
        whether a move walks into a mate (search/mate_guard.py)."""
        with self._lock:
            status = self._prove(self._start(pos), _Limits(self.table.params, stop, time_limit_ms, nodes))
        _compiled.set()
        return status

    def _start(self, pos: Position):
        """Copy `pos` into the solver's position and open a new search on the table."""
        a = self._pos
        cb.copy_into(a, pos.arrays)
        params = self.table.params
        ply = int(a.st[cb.ST_PLY])
        params[cm.P_GEN] += 1
        params[cm.P_NODES] = 0
        params[cm.P_ROOTPLY] = ply
        params[cm.P_MAXDEPTH] = max(1, min(cm.MAX_DEPTH, MAX_HISTORY - ply - 4))
        return a

    def _prove(self, a, limits: "_Limits", report=lambda force=False: None) -> str:
        """df-pn from `a` in slices until proven, disproven or out of budget."""
        params = self.table.params
        work = self.work._replace(stop=limits.stop)
        status = None
        while status is None:
            if limits.out_of_budget():
                status = "timeout"
                break
            params[cm.P_LIMIT] = limits.next_limit()
            t0 = time.perf_counter()
            n0 = int(params[cm.P_NODES])
            pn, dn = cm.dfpn_run(a, self.table, work, 0)
            limits.measured(int(params[cm.P_NODES]) - n0, time.perf_counter() - t0)
            if pn == 0:
                status = "mate"
            elif dn == 0:
                status = "nomate"
            report()
        self.nodes = int(params[cm.P_NODES])
        return status

    def _solve(self, pos, stop, time_limit_ms, nodes, on_info):
        a = self._start(pos)
        tt = self.table
        params = tt.params
        limits = _Limits(params, stop, time_limit_ms, nodes)
        work = self.work._replace(stop=limits.stop)
        start = limits.start
        last_info = start

        def report(force=False):
            nonlocal last_info
            now = time.perf_counter()
            if on_info is not None and (force or now - last_info >= _INFO_EVERY_S):
                elapsed = now - start
                n = int(params[cm.P_NODES])
                on_info(n, int(n / elapsed) if elapsed > 0 else 0, int(elapsed * 1000))
                last_info = now

        # --- 1. prove or disprove --------------------------------------------------------
        status = self._prove(a, limits, report)
        if status != "mate":
            report(force=True)
            return status, []

        # --- 2. the shortest mate against the longest resistance --------------------------
        proof_nodes = int(params[cm.P_NODES])
        cap = proof_nodes + max(_EXACT_MIN_NODES, _EXACT_FACTOR * proof_nodes)

        def exact_budget_gone():
            return limits.out_of_budget() or params[cm.P_NODES] >= cap

        def exact_limit():
            return min(limits.next_limit(), cap)

        line = self._exact_line(a, tt, work, exact_budget_gone, exact_limit, limits.pv_allowance, report)
        if line is None:
            line = self._proof_line(a, tt, work, limits.out_of_budget, limits.next_limit)
        self.nodes = int(params[cm.P_NODES])
        report(force=True)
        if line is None:
            return "timeout", []
        return "mate", [move_to_usi(int(m)) for m in line]

    def _exact_line(self, a, tt, work, out_of_budget, next_limit, pv_allowance, report):
        """The shortest mate by iterative deepening of the exact search, then its line in
        one numba call of at most `pv_allowance()` nodes; None when a budget ran out."""
        params = tt.params
        budget = 1
        while budget < 2 * cm.MAX_DEPTH:
            while True:
                if out_of_budget():
                    return None
                params[cm.P_LIMIT] = next_limit()
                v, aborted = cm.exact_run(a, tt, work, budget)
                report()
                if not aborted:
                    break
            if v < cm.INF:
                out = np.zeros(int(v) + 1, np.int32)
                params[cm.P_LIMIT] = params[cm.P_NODES] + pv_allowance()
                n = cm.exact_pv(a, tt, work, int(v), out)
                if n == int(v):
                    return [int(m) for m in out[:n]]
                return None
            budget += 2
        return None

    def _proof_line(self, a, tt, work, out_of_budget, next_limit):
        """Follow the df-pn proof: the attacker takes the proven child of the shortest
        stored proof, the defender the longest; children missing from the table are
        proved again.  Returns None if the budget runs out."""
        moves = np.zeros(MAX_MOVES, np.int32)
        line = []
        played = 0
        try:
            for depth in range(2 * cm.MAX_DEPTH):
                or_node = depth % 2 == 0
                us = int(a.st[cb.ST_SIDE])
                attacker = us if or_node else 1 - us
                if or_node:
                    n = cm.generate_checks(a, moves)
                else:
                    n = generate(a, moves, GEN_ALL, True)
                    if n == 0:
                        return line
                cand = [int(m) for m in moves[:n]]
                chosen, chosen_len = None, None
                if or_node and not any(cm.probe_after(a, tt, int(m), attacker)[0] == 0 for m in cand):
                    # no proven check in the table (overwritten): prove this node again
                    if not self._reprove(a, tt, work, depth & 1, out_of_budget, next_limit):
                        return None
                for m in cand:
                    pn, dn, ln, found = cm.probe_after(a, tt, int(m), attacker)
                    if not or_node and pn != 0:
                        cb.do_move(a, int(m))
                        ok = self._reprove(a, tt, work, (depth + 1) & 1, out_of_budget, next_limit)
                        cb.undo_move(a)
                        if not ok:
                            return None
                        pn, dn, ln, found = cm.probe_after(a, tt, int(m), attacker)
                        if pn != 0:
                            return None
                    if pn == 0:
                        if chosen is None or (ln < chosen_len if or_node else ln > chosen_len):
                            chosen, chosen_len = m, ln
                if chosen is None:
                    return None
                cb.do_move(a, int(chosen))
                played += 1
                line.append(chosen)
            return None
        finally:
            for _ in range(played):
                cb.undo_move(a)

    @staticmethod
    def _reprove(a, tt, work, depth, out_of_budget, next_limit) -> bool:
        """df-pn on the current position (repetitions counted from here on); True once it
        is proven, False if disproven here or out of budget."""
        params = tt.params
        saved_root = int(params[cm.P_ROOTPLY])
        params[cm.P_ROOTPLY] = int(a.st[cb.ST_PLY])
        try:
            while not out_of_budget():
                params[cm.P_LIMIT] = next_limit()
                pn, dn = cm.dfpn_run(a, tt, work, depth)
                if pn == 0:
                    return True
                if dn == 0:
                    return False
            return False
        finally:
            params[cm.P_ROOTPLY] = saved_root


_compiled = threading.Event()  # set when a solve has run: the df-pn code is compiled


def compiled() -> bool:
    """Whether the df-pn code is compiled (or loaded from numba's cache). After a first start
    backend.py compiles it in the background; until then a solve waits for the compiler."""
    return _compiled.is_set()


_default: MateSolver | None = None
_default_lock = threading.Lock()


def default_solver(table_mb: int | None = None) -> MateSolver:
    global _default
    with _default_lock:
        if _default is None:
            _default = MateSolver(table_mb or DEFAULT_TABLE_MB)
        elif table_mb is not None:
            _default.resize(table_mb)
        return _default


def warmup() -> None:
    """Load the default solver's numba code (MateSolver.warmup)."""
    default_solver().warmup()


def solve(
    pos: Position,
    *,
    stop: np.ndarray | None = None,
    time_limit_ms: int | None = None,
    nodes: int | None = None,
    on_info=None,
) -> tuple[str, list[str]]:
    """Solve `pos` as a tsume problem for the side to move, with the module's default solver
    (a 64 MiB table allocated on first use)."""
    return default_solver().solve(pos, stop=stop, time_limit_ms=time_limit_ms, nodes=nodes, on_info=on_info)
