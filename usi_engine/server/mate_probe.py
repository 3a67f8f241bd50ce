"""The mate probe: a short df-pn run before a timed search.

Alpha-beta's horizon (and its material count) can hide a long forced mate that df-pn
proves in milliseconds; a proven mate is then played out move by move.
"""

from __future__ import annotations

import time

MATE_PROBE_MIN_MS = 300  # below this optimum time no probe precedes the search
MATE_PROBE_SHARE = 0.1  # share of the optimum time the probe may use


def worth_probing(optimum_ms: int) -> bool:
    """Only when the move has enough time that a 10% probe costs little."""
    return optimum_ms >= MATE_PROBE_MIN_MS


def probe(pos, legal: list[str], stop, optimum_ms: int, log=lambda msg: None):
    """An IterationInfo holding a proven mate line for the side to move, or None.

    `stop` is the search's stop flag: a `stop` from the GUI ends the probe too.
    """
    if pos.is_check():
        return None  # evasions: the search handles these quickly and df-pn gains little
    from ..search.searcher import IterationInfo
    from ..search.tsume import default_solver, compiled

    if not compiled():
        return None  # the first seconds after a first start: df-pn is still being compiled
    solver = default_solver()
    start = time.monotonic()
    try:
        status, moves = solver.solve(pos, stop=stop, time_limit_ms=int(optimum_ms * MATE_PROBE_SHARE))
    except Exception as exc:
        log(f"mate probe: {exc!r}")
        return None
    if status != "mate" or not moves or moves[0] not in legal:
        return None
    ms = int((time.monotonic() - start) * 1000)
    nodes = int(solver.nodes)
    return IterationInfo(
        len(moves),
        len(moves),
        1,
        None,
        len(moves),
        None,
        nodes,
        ms,
        nodes * 1000 // max(ms, 1),
        0,
        list(moves),
    )
