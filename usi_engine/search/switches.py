"""The search's switches: each turns one technique of the search on (1) or off (0).

A plain module, without imports: the USI server declares every switch as an option when it
answers `usi`, before numba is imported (server/options.py), and the Searcher reads the
same table (search/searcher.py maps each name to its slot of the core's parameters).
The order here is the order in which `usi` declares them. Read-only: copy it to change it.
"""

from types import MappingProxyType
from typing import Mapping

# Mate1Ply is off by default: at 100 ms a move its cost outweighed what it found
# (self-play, 60 games: -58 +- 86 Elo with it on; again 80 games, -30.5 +- 67.2, with
# the shipped network). Measured again on 2026-11-30, once the probe had grown cheaper:
# -0.7 +- 17.4 Elo in 1,491 games, SPRT [0, 10] stopped undecided (docs/bench.md).
# Mate1PlyQuiescence, the same probe at quiescence nodes below beta, is on: +65.5 +- 27.7
# Elo at 0.1 s, SPRT H1 in 542 games (docs/bench.md).
# The classic techniques of the Japanese computer-shogi texts (multi-iterative deepening, YSS's half-ply
# extension and its full variant, Tsuruoka's one-side-limited PVS, ordering by a shallow
# search) are off: measured in docs/EXPERIMENTS.md. MateGuard (df-pn asks whether the best
# move walks into a mate by checks, search/mate_guard.py) is off until games measure it.
SWITCHES: Mapping[str, int] = MappingProxyType(
    {
        "NullMove": 1,
        "LMR": 1,
        "Futility": 1,
        "Razoring": 1,
        "CheckExtension": 1,
        "Mate1Ply": 0,
        "IIR": 1,
        "MultiIterativeDeepening": 0,
        "HalfPlyExtension": 0,
        "HalfPlyExtensionFull": 0,
        "OneSideLimitedPVS": 0,
        "ShallowSearchOrdering": 0,
        "CorrectionHistory": 1,
        "Mate1PlyQuiescence": 1,
        "MateGuard": 0,
    }
)
