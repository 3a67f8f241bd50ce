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

On a whole-second clock (every number a multiple of 1000, as shogi servers send; the
server charges each move in whole seconds rounded down), RoundUpToFullSecond moves every
stop to just before the next whole second, NetworkDelay early: that thinking is free.
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
    mate: int | None = None  # go mate <ms>
    mate_infinite: bool = False  # go mate infinite (or bare go mate)
    is_mate: bool = False
    searchmoves: list[str] | None = None  # restrict the root to these moves (USI text)

    def has_clock(self) -> bool:
        return any(v is not None for v in (self.btime, self.wtime, self.byoyomi, self.binc, self.winc))


_INT_KEYS = ("btime", "wtime", "byoyomi", "binc", "winc", "movetime", "depth", "nodes")
_GO_KEYWORDS = set(_INT_KEYS) | {"infinite", "ponder", "mate", "searchmoves"}


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
        elif tok == "searchmoves":
            # the moves run to the end of the line or to the next go keyword
            j = i + 1
            while j < n and tokens[j].lower() not in _GO_KEYWORDS:
                j += 1
            params.searchmoves = tokens[i + 1 : j]
            if not params.searchmoves:
                errors.append("go: searchmoves without moves, ignored")
                params.searchmoves = None
            i = j
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
    # whole-second clock (RoundUpToFullSecond): stop just before the next whole second,
    # `round_margin` ms early; None when the clock is not in whole seconds
    round_margin: int | None = None


@dataclass
class TimeSettings:
    network_delay: int = 60
    network_delay2: int = 120
    minimum_thinking_time: int = 100
    slow_mover: int = 100  # percent
    round_up: bool = True  # RoundUpToFullSecond

    @classmethod
    def from_options(cls, options) -> "TimeSettings":
        return cls(
            int(options["NetworkDelay"]),
            int(options["NetworkDelay2"]),
            int(options["MinimumThinkingTime"]),
            int(options["SlowMover"]),
            bool(options["RoundUpToFullSecond"]),
        )


# Main time is planned over the rest of a game of GAME_PLIES plies (a shogi game lasts
# about 120; longer ones must not lose on time), never fewer than MIN_MOVES_TO_GO of our
# moves. Spending remaining/moves_to_go each move uses about 75% of the main time by
# ply 120 and leaves a geometric reserve for longer games.
GAME_PLIES = 160
MIN_MOVES_TO_GO = 20
# The search stops between 55% and 100% of its soft limit (an iteration it cannot finish
# is not started), so it spends about this share of the optimum; the plan is divided by it.
SPENT_SHARE = 0.55
FREE_FRACTION_MS = 700  # whole-second clock: the uncharged part of a move, calibrated by
# tests/test_timeman.py's simulated games (70-90% spent by ply 120)
HICCUP_RESERVE_MS = 300  # seen: a search that started 340 ms after its `go` on a loaded
# 2-core machine
PONDERHIT_RELAY_MS = 150  # a ponder search's clock starts at `ponderhit` (or at the `go`
# after a stopped ponder search), but the server's started when it
# sent the move to the GUI: ShogiHome's bridge took up to 72 ms to
# pass a move on with two engines pondering on 2 cores (a plain
# `go` took under 5 ms); kept twice that in reserve
MAX_STEAL = 4.0  # an unstable search may take this many optimum times...
MAX_SHARE = 0.25  # ... but never more than this share of the main time left


def main_time_reserve(time_left: int, inc: int, settings: TimeSettings) -> int:
    """Main time kept out of the plan, at most half of what is left.

    The cost of answering (NetworkDelay a move) for MIN_MOVES_TO_GO moves, so that a long
    sudden-death game ends with fast moves, not with a fallen flag; an increment pays that
    cost itself as far as it goes (2 s + 0.1 s kept half of its main time unused when the
    reserve ignored it). Plus HICCUP_RESERVE_MS for a process that a loaded machine keeps
    off the CPU for a few hundred milliseconds.
    """
    unpaid_delay = max(0, settings.network_delay - inc)
    return min(time_left // 2, unpaid_delay * MIN_MOVES_TO_GO + HICCUP_RESERVE_MS)


def moves_to_go(ply: int) -> int:
    """Estimated number of our own moves still to play."""
    return max(MIN_MOVES_TO_GO, (GAME_PLIES - max(0, ply)) // 2)


def whole_seconds(go: GoParams) -> bool:
    """True when every clock value is a whole number of seconds (a shogi server's clock)."""
    values = [v for v in (go.btime, go.wtime, go.byoyomi, go.binc, go.winc) if v]
    return bool(values) and all(v % 1000 == 0 for v in values)


def round_up_to_second(t_ms: float, margin: int, hard: int) -> int:
    """The last moment before the whole second that `t_ms` falls in, `margin` ms early: a
    server that charges whole seconds rounded down charges no more for it. Never past `hard`."""
    t = -(-int(t_ms) // 1000) * 1000 - margin
    if t < t_ms:
        t += 1000
    return int(min(t, hard))


def compute_budget(
    go: GoParams, side: int, ply: int, settings: TimeSettings, relayed: bool = False
) -> Budget | None:
    """The thinking budget for `go` with `side` (0 black, 1 white) to move at game ply `ply`.

    `relayed`: a `go` that follows a stopped ponder search (the GUI stopped it and waited
    for its answer while the server's clock ran); keeps PONDERHIT_RELAY_MS in reserve, as
    `go ponder` does.  None means no time limit (infinite, or only depth / nodes limits).
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
    if go.ponder or relayed:
        margin += PONDERHIT_RELAY_MS
    # a margin larger than half of what is available would leave nothing to think with
    margin = min(margin, total // 2)
    hard = max(1, total - margin)

    if time_left <= 0:
        # only byoyomi left (or nothing at all): use it fully
        t = hard if byo > 0 else max(1, min(hard, inc // 2))
        return Budget(t, t, t, use_fully=byo > 0)

    usable = time_left - main_time_reserve(time_left, inc, settings)
    # the increment comes back after every move: spend it all, plus a share of the main time
    share = (usable / moves_to_go(ply) + inc) / SPENT_SHARE
    optimum = share * settings.slow_mover / 100.0
    maximum = min(share * MAX_STEAL, usable * MAX_SHARE + inc)
    round_margin = margin if settings.round_up and whole_seconds(go) else None
    if round_margin is not None:
        # a server charging whole seconds rounded down charges less than the thinking
        # (the stop moves to the end of its second): plan that much more
        optimum += FREE_FRACTION_MS
    byo_base = max(0, byo - margin) if byo > 0 else 0
    optimum += byo_base
    maximum += byo_base
    # MinimumThinkingTime never eats more than a move's share of a short main time
    minimum = max(min(settings.minimum_thinking_time, usable // MIN_MOVES_TO_GO), byo_base)

    maximum = int(min(hard, maximum))
    maximum = max(1, maximum)
    optimum = int(min(maximum, max(optimum, minimum)))
    minimum = int(min(max(1, minimum), maximum))
    if round_margin is not None:
        maximum = round_up_to_second(maximum, round_margin, hard)  # free on this clock
    return Budget(minimum, max(1, optimum), maximum, round_margin=round_margin)


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

    PONDER_CREDIT = 0.5  # share of the ponder time counted as spent after ponderhit

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

    def stop_time(self, decided_ms: float) -> float:
        """When to really stop once the search decided to stop at `decided_ms`: on a
        whole-second clock the rest of the current second costs nothing (RoundUpToFullSecond)."""
        margin = self.budget.round_margin
        if margin is None:
            return decided_ms
        return round_up_to_second(decided_ms, margin, self.budget.maximum)

    def start_next_iteration(self, elapsed_ms: float, stability: float) -> bool:
        """Checked when an iteration ends: is there time for another one?"""
        if self.budget.use_fully:
            return elapsed_ms < self.budget.maximum
        if elapsed_ms < self.budget.minimum:
            return True
        return elapsed_ms + self.credit < 0.55 * self.soft_limit(stability)
