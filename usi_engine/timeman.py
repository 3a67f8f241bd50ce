"""Time management: `go` parameters -> a thinking budget; a clock that says when to stop.

Pure Python, standard library only (imported before `usi` is answered).

The budget has three numbers, all in milliseconds from the moment the clock starts
(the `go` line, or `ponderhit` for a ponder search):

* ``minimum``: do not stop earlier (MinimumThinkingTime; with byoyomi, the whole
  byoyomi minus the margin, since byoyomi left unused is lost);
* ``optimum``: the target for a normal move, scaled by the stability of the best
  move (x0.5 when stable, x1.5 when it keeps changing);
* ``maximum``: the hard deadline, never passed; it keeps NetworkDelay (or
  NetworkDelay2 when byoyomi is in play) in reserve so that the bestmove reaches the
  GUI before the flag falls.
"""

from __future__ import annotations

from dataclasses import dataclass

BARE_GO_MS = 1000  # `go` with no limit at all: think this long (a GUI waits for a bestmove)


@dataclass
class GoParams:
    btime: int | None = None
    wtime: int | None = None
    byoyomi: int | None = None
    binc: int | None = None
    winc: int | None = None
    movetime: int | None = None
    depth: int | None = None
    nodes: int | None = None
    infinite: bool = False
    ponder: bool = False
    mate: int | None = None        # go mate <ms>
    mate_infinite: bool = False    # go mate infinite (or bare go mate)
    is_mate: bool = False

    def has_clock(self) -> bool:
        return any(v is not None for v in (self.btime, self.wtime, self.byoyomi, self.binc, self.winc))


_INT_KEYS = ("btime", "wtime", "byoyomi", "binc", "winc", "movetime", "depth", "nodes")


def parse_go(tokens: list[str]) -> tuple[GoParams, list[str]]:
    """Parse the tokens after `go` (also used for `ponderhit` with times).

    Returns the parameters and a list of problems (each becomes an info string);
    a bad value leaves its parameter unset.
    """
    params = GoParams()
    errors: list[str] = []
    i = 0
    n = len(tokens)
    while i < n:
        tok = tokens[i].lower()
        if tok in _INT_KEYS:
            if i + 1 >= n:
                errors.append(f"go: missing value after {tok}")
                i += 1
                continue
            raw = tokens[i + 1]
            try:
                value = int(raw)
            except ValueError:
                errors.append(f"go: {tok} needs an integer, got '{_clean(raw)}'")
                i += 2
                continue
            if value < 0:
                if tok in ("btime", "wtime"):
                    value = 0  # some GUIs send a negative remaining time at the flag: think minimally
                else:
                    errors.append(f"go: {tok} must not be negative, got {value}")
                    i += 2
                    continue
            setattr(params, tok, value)
            i += 2
        elif tok == "infinite":
            params.infinite = True
            i += 1
        elif tok == "ponder":
            params.ponder = True
            i += 1
        elif tok == "mate":
            params.is_mate = True
            if i + 1 < n and tokens[i + 1].lower() == "infinite":
                params.mate_infinite = True
                i += 2
            elif i + 1 < n and tokens[i + 1].lstrip("-").isdigit():
                params.mate = max(0, int(tokens[i + 1]))
                i += 2
            else:
                params.mate_infinite = True
                i += 1
        elif tok in ("searchmoves",):
            errors.append("go: searchmoves is not supported, ignored")
            i = n
        else:
            errors.append(f"go: unknown parameter '{_clean(tokens[i])}' ignored")
            i += 1
    return params, errors


def _clean(text: str) -> str:
    out = "".join(c if 32 <= ord(c) < 127 else "?" for c in text)
    return out[:40] + ("..." if len(out) > 40 else "")


@dataclass
class Budget:
    minimum: int
    optimum: int
    maximum: int
    use_fully: bool = False  # think until `maximum` whatever the stability (byoyomi only, movetime)


@dataclass
class TimeSettings:
    network_delay: int = 60
    network_delay2: int = 120
    minimum_thinking_time: int = 100
    slow_mover: int = 100  # percent

    @classmethod
    def from_options(cls, options) -> "TimeSettings":
        return cls(int(options["NetworkDelay"]), int(options["NetworkDelay2"]),
                   int(options["MinimumThinkingTime"]), int(options["SlowMover"]))


def moves_to_go(ply: int) -> int:
    """Estimated number of our own moves still to play (a shogi game lasts ~120 plies)."""
    return max(20, 60 - max(0, ply) // 4)


def compute_budget(go: GoParams, side: int, ply: int, settings: TimeSettings) -> Budget | None:
    """The thinking budget for `go` with `side` (0 black, 1 white) to move at game ply `ply`.

    None means no time limit (infinite, or only depth / nodes limits).
    """
    if go.infinite:
        return None
    if go.movetime is not None:
        margin = min(settings.network_delay, go.movetime // 2)
        t = max(1, go.movetime - margin)
        return Budget(t, t, t, use_fully=True)
    if not go.has_clock():
        if go.depth is not None or go.nodes is not None:
            return None
        return Budget(BARE_GO_MS, BARE_GO_MS, BARE_GO_MS, use_fully=True)

    time_left = (go.btime if side == 0 else go.wtime) or 0
    inc = (go.binc if side == 0 else go.winc) or 0
    byo = go.byoyomi or 0
    total = time_left + byo
    margin = settings.network_delay2 if byo > 0 else settings.network_delay
    # a margin larger than half of what is available would leave nothing to think with
    margin = min(margin, total // 2)
    hard = max(1, total - margin)

    if time_left <= 0:
        # only byoyomi left (or nothing at all): use it fully
        t = hard if byo > 0 else max(1, min(hard, inc // 2))
        return Budget(t, t, t, use_fully=byo > 0)

    mtg = moves_to_go(ply)
    share = time_left / mtg + inc * 0.8
    optimum = share * settings.slow_mover / 100.0
    maximum = min(share * 4.0, time_left / 4.0 + inc)
    byo_base = max(0, byo - margin) if byo > 0 else 0
    optimum += byo_base
    maximum += byo_base
    minimum = max(settings.minimum_thinking_time, byo_base)

    maximum = int(min(hard, maximum))
    maximum = max(1, maximum)
    optimum = int(min(maximum, max(optimum, minimum)))
    minimum = int(min(minimum, maximum))
    return Budget(minimum, max(1, optimum), maximum)


class StabilityTracker:
    """Best-move stability from the stream of IterationInfo: 0 (changing) .. 1 (stable)."""

    def __init__(self) -> None:
        self.changes = 0.0
        self.iterations = 0
        self.last_best: str | None = None
        self.last_depth = 0

    def update(self, depth: int, best: str | None) -> None:
        if depth > self.last_depth:
            self.changes *= 0.5
            self.iterations += 1
            self.last_depth = depth
        if best is not None and self.last_best is not None and best != self.last_best:
            self.changes += 1.0
        if best is not None:
            self.last_best = best

    def stability(self) -> float:
        if self.iterations < 3:
            return 0.5
        return 1.0 / (1.0 + self.changes)


class Clock:
    """Turns a Budget into stop decisions; times are milliseconds since the clock started.

    `credit` is thinking already done before the clock started (pondering on a move that
    was then played): the search is that much deeper already, so the soft decisions count
    it, while the minimum and the hard maximum stay on the real clock.
    """

    PONDER_CREDIT = 0.5    # share of the ponder time counted as spent after ponderhit

    def __init__(self, budget: Budget, credit_ms: float = 0.0) -> None:
        self.budget = budget
        self.credit = 0.0 if budget.use_fully else credit_ms * self.PONDER_CREDIT

    def soft_limit(self, stability: float) -> int:
        b = self.budget
        if b.use_fully:
            return b.maximum
        s = min(1.0, max(0.0, stability))
        scaled = b.optimum * (1.5 - s)
        return int(min(b.maximum, max(b.minimum, scaled)))

    def should_stop(self, elapsed_ms: float, stability: float) -> bool:
        """Checked by the monitor thread every few milliseconds."""
        if elapsed_ms >= self.budget.maximum:
            return True
        return elapsed_ms >= self.budget.minimum and elapsed_ms + self.credit >= self.soft_limit(stability)

    def start_next_iteration(self, elapsed_ms: float, stability: float) -> bool:
        """Checked when an iteration ends: is there time for another one?"""
        if self.budget.use_fully:
            return elapsed_ms < self.budget.maximum
        if elapsed_ms < self.budget.minimum:
            return True
        return elapsed_ms + self.credit < 0.55 * self.soft_limit(stability)
