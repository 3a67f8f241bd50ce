"""The schedule of a match: which engines meet, in game pairs sharing an opening."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from .config import Opening


@dataclass(frozen=True)
class ScheduledGame:
    index: int
    black: int
    white: int
    opening: Opening
    opening_index: int
    pair: int = 0  # the two games of a pair share the opening, colours swapped
    # per engine index, options for this game only (SPSA's perturbed values)
    engine_options: Optional[dict[int, dict[str, str]]] = field(default=None, compare=False, hash=False)


def pairings(n_engines: int, gauntlet: bool) -> list[tuple[int, int]]:
    """Engine pairs: first vs each other (gauntlet) or every pair (round robin)."""
    if gauntlet:
        return [(0, j) for j in range(1, n_engines)]
    return [(i, j) for i in range(n_engines) for j in range(i + 1, n_engines)]


def schedule(
    n_engines: int, games: int, openings: list[Opening], gauntlet: bool = False, opening_start: int = 0
) -> list[ScheduledGame]:
    """``games`` games per pair of engines, in game pairs: one opening twice with
    colours swapped, the two games next to each other (an odd last game is alone).
    The openings are used in turn from index ``opening_start``, wrapping around."""
    plan: list[ScheduledGame] = []
    pair = 0
    for k in range((games + 1) // 2):
        opening_index = (opening_start + k) % len(openings)
        for a, b in pairings(n_engines, gauntlet):
            pair += 1
            for black, white in ((a, b), (b, a))[: min(2, games - 2 * k)]:
                plan.append(
                    ScheduledGame(len(plan) + 1, black, white, openings[opening_index], opening_index, pair)
                )
    return plan
