"""The search's tunable constants: one table, one source of truth.

Each entry names a number the search uses (a margin, a reduction divisor, a history bound).
The search reads them at run time from `ctx.sp` (an int64 array filled from `defaults()`), so a
tuner can change them per game without recompiling; `SP_<NAME>` is each entry's index.
Tooling (USI options when tuning, shogiarena's `usi_tunables`, SPSA) reads `PARAMS`.
This module is pure Python: importing it must not import numba.
"""
from typing import NamedTuple


class Param(NamedTuple):
    name: str       # CamelCase, as a USI option would name it
    default: int
    lo: int         # the range a tuner may explore
    hi: int
    step: int       # SPSA's perturbation c at the end of a run (fishtest's c_end)
    doc: str


PARAMS: tuple[Param, ...] = (
    Param("RazorMargin", 320, 100, 800, 20, "razoring: static + margin*depth below alpha"),
    Param("FutilityMargin", 110, 40, 300, 10, "reverse futility: static - margin*(depth-improving) >= beta"),
    Param("HistoryPrune", 3000, 500, 10000, 250, "quiet moves with history below -this*depth are skipped"),
)

INDEX = {p.name: i for i, p in enumerate(PARAMS)}


def defaults() -> list[int]:
    return [p.default for p in PARAMS]


# SP_<UPPER_SNAKE> index constants, for numba code (module-level ints are compile-time constants)
def _snake(name: str) -> str:
    out = ""
    for i, ch in enumerate(name):
        if ch.isupper() and i > 0 and not name[i - 1].isupper():
            out += "_"
        out += ch.upper()
    return out


for _i, _p in enumerate(PARAMS):
    globals()["SP_" + _snake(_p.name)] = _i
SP_NB = len(PARAMS)
