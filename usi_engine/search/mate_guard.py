"""The mate guard: before the search settles on a move, df-pn asks whether the opponent
then mates by a sequence of checks (a tonshi, the sudden mate one did not see coming).

Alpha-beta sees a mating attack only as far as its horizon, and its evaluation can rate
the position well while a long sequence of checks ends the game: in 100 games against GPS
Shogi at 1 s, GPS announced a mate right after a move that our search scored above -300 in
19 games, and df-pn proves 12 of those mates in 300 to 445,000 nodes (docs/mate.md,
`usi-engine score-gap --prove`). A move df-pn proves losing is taken out of the root and
the iteration searched again. A move df-pn could not judge within its budget stays: the
guard only removes what it proved.

The searcher asks the guard after each finished iteration from `MIN_DEPTH` on, once per
distinct best move; the probes' time is the search's own (the same clock, the same stop
flag). Most probes end at once (median 10 nodes, mean 2,521 over every move of those
games); one that proves nothing in time spends its whole budget, so a search makes at
most `MAX_UNPROVEN` of those.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..position import Position

MIN_DEPTH = 6  # earlier iterations change their minds too often to be worth a probe
MAX_UNPROVEN = 3  # probes that proved nothing (the costly ones) a search may spend
MAX_REFUTED = 8  # moves a search may take out: past that, the position is lost anyway
NODES_PER_MS = 30  # a probe's budget: about 5% of the optimum time at df-pn's node rate
MIN_NODES = 5_000


def nodes_for(optimum_ms: int) -> int:
    """The df-pn node budget of one probe for a move with this optimum thinking time."""
    return max(MIN_NODES, int(optimum_ms) * NODES_PER_MS)


class MateGuard:
    """Judges candidate moves of one search. `solver` is a tsume.MateSolver; each probe
    starts on an empty table (a new generation), as every solve does."""

    def __init__(self, solver, nodes: int, stop: np.ndarray) -> None:
        self.solver = solver
        self.nodes = int(nodes)
        self.stop = stop
        self.judged: set[str] = set()
        self.refuted: list[str] = []
        self.on_refuted: Callable[[str], None] = lambda move: None

    def may_probe(self, depth: int, move: str) -> bool:
        """Whether to probe `move`, the best after an iteration of `depth`."""
        if depth < MIN_DEPTH or move in self.judged:
            return False
        unproven = len(self.judged) - len(self.refuted)
        return unproven < MAX_UNPROVEN and len(self.refuted) < MAX_REFUTED

    def walks_into_mate(self, pos: Position, move: str) -> bool:
        """True when df-pn proves that after `move` the opponent mates by checks."""
        self.judged.add(move)
        after = pos.copy()
        after.push(move)
        if self.solver.prove(after, stop=self.stop, nodes=self.nodes) != "mate":
            return False
        self.refuted.append(move)
        self.on_refuted(move)
        return True
