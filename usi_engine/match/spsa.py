"""SPSA in fishtest's form: the arithmetic, the state, its checkpoint.

One iteration is one game pair between ``theta + c_k * flip`` and ``theta - c_k * flip``
(``flip`` a random +-1 per parameter), same opening, colours swapped.  Its ``result`` is
the wins minus the losses of the ``+`` side (-2..2), and every parameter moves by

    theta_i += a_k,i / c_k,i * result * flip_i          (clamped to [lo, hi])

with the per-parameter schedules of fishtest, set by the values wanted at the last
iteration ``N``: ``c_k = c_end * (N / (k + 1)) ** gamma`` and
``a_k = a_end * ((A + N) / (A + k + 1)) ** alpha``, ``a_end = r_end * c_end ** 2``.
``c_end`` is the perturbation that should make a small, measurable Elo difference
(core/params.py's ``step``); ``r_end`` (default 0.002) the learning rate at the end.

Pairs may be in flight at the same time (many workers): a :class:`Probe` carries its
iteration, flips and gains, and :meth:`Spsa.update` applies them to the current theta,
as fishtest does with its workers' reports.
"""

from __future__ import annotations

import json
import math
import os
import random
from dataclasses import asdict, dataclass, field
from typing import Any, Optional, Sequence

ALPHA = 0.602  # Spall's recommended decay exponents
GAMMA = 0.101
R_END = 0.002  # fishtest's default learning rate at the end


@dataclass(frozen=True)
class SpsaParam:
    """One tuned number: start value, bounds, perturbation and learning rate at the end."""

    name: str
    start: float
    lo: float
    hi: float
    c_end: float
    r_end: float = R_END

    def __post_init__(self) -> None:
        if not self.lo <= self.start <= self.hi:
            raise ValueError(f"{self.name}: start {self.start} outside [{self.lo}, {self.hi}]")
        if self.c_end <= 0 or self.r_end <= 0:
            raise ValueError(f"{self.name}: c_end and r_end must be positive")


@dataclass(frozen=True)
class Probe:
    """One iteration handed out: the values of the ``+`` and ``-`` sides and the gains."""

    k: int
    flips: tuple[int, ...]
    c: tuple[float, ...]  # c_k per parameter
    gain: tuple[float, ...]  # a_k / c_k per parameter
    plus: tuple[float, ...]
    minus: tuple[float, ...]


@dataclass
class Spsa:
    """The SPSA state; :meth:`probe` hands out pairs, :meth:`update` takes their results."""

    params: list[SpsaParam]
    iterations: int  # N: pairs planned (sets the schedules)
    big_a: Optional[float] = None  # A: default 10% of N, as fishtest
    alpha: float = ALPHA
    gamma: float = GAMMA
    seed: Optional[int] = None
    theta: list[float] = field(default_factory=list)
    handed_out: int = 0  # probes given so far (the next probe's k)
    done: int = 0  # results applied
    history: list[list[float]] = field(default_factory=list)  # theta after each update
    results: list[int] = field(default_factory=list)  # each update's result
    rng_state: Optional[Any] = None

    def __post_init__(self) -> None:
        if self.iterations < 1:
            raise ValueError("SPSA needs at least one iteration")
        if self.big_a is None:
            self.big_a = 0.1 * self.iterations
        if not self.theta:
            self.theta = [p.start for p in self.params]
        if not self.history:
            self.history = [list(self.theta)]
        self._rng = random.Random(self.seed)
        if self.rng_state is not None:
            self._rng.setstate(_as_state(self.rng_state))

    # -- schedules ------------------------------------------------------------
    def c_k(self, i: int, k: int) -> float:
        """Perturbation of parameter ``i`` at iteration ``k`` (0-based)."""
        return self.params[i].c_end * (self.iterations / (k + 1)) ** self.gamma

    def a_k(self, i: int, k: int) -> float:
        """Step size of parameter ``i`` at iteration ``k``."""
        p = self.params[i]
        assert self.big_a is not None
        a_end = p.r_end * p.c_end**2
        return a_end * ((self.big_a + self.iterations) / (self.big_a + k + 1)) ** self.alpha

    # -- iterations -----------------------------------------------------------
    @property
    def finished(self) -> bool:
        return self.done >= self.iterations

    def probe(self) -> Probe:
        """The next pair to play: theta +- c_k * flip, clamped to the bounds."""
        k = self.handed_out
        self.handed_out += 1
        flips = tuple(self._rng.choice((-1, 1)) for _ in self.params)
        c = tuple(self.c_k(i, k) for i in range(len(self.params)))
        gain = tuple(self.a_k(i, k) / c[i] for i in range(len(self.params)))
        plus = tuple(self._clamp(i, t + ci * f) for i, (t, ci, f) in enumerate(zip(self.theta, c, flips)))
        minus = tuple(self._clamp(i, t - ci * f) for i, (t, ci, f) in enumerate(zip(self.theta, c, flips)))
        self.rng_state = self._rng.getstate()
        return Probe(k, flips, c, gain, plus, minus)

    def update(self, probe: Probe, result: float) -> None:
        """Apply a pair's ``result`` (wins - losses of the ``+`` side, -2..2)."""
        self.theta = [
            self._clamp(i, t + g * result * f)
            for i, (t, g, f) in enumerate(zip(self.theta, probe.gain, probe.flips))
        ]
        self.done += 1
        self.history.append(list(self.theta))
        self.results.append(int(result) if float(result).is_integer() else result)

    def _clamp(self, i: int, value: float) -> float:
        p = self.params[i]
        return min(p.hi, max(p.lo, value))

    def rounded(self, values: Optional[Sequence[float]] = None) -> dict[str, int]:
        """``values`` (default theta) rounded to the engine's integers, by name."""
        values = self.theta if values is None else values
        return {p.name: int(math.floor(v + 0.5)) for p, v in zip(self.params, values)}

    # -- checkpoint -------------------------------------------------------------
    def to_json(self) -> dict:
        data = asdict(self)
        data["params"] = [asdict(p) for p in self.params]
        data["rng_state"] = self._rng.getstate()
        data["handed_out"] = self.done  # probes in flight are lost with the process
        return data

    @classmethod
    def from_json(cls, data: dict) -> "Spsa":
        data = dict(data)
        data["params"] = [SpsaParam(**p) for p in data["params"]]
        return cls(**data)

    def save(self, path: str) -> None:
        """Write the checkpoint atomically (a crash leaves the previous one)."""
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            json.dump(self.to_json(), f)
        os.replace(path + ".tmp", path)

    @classmethod
    def load(cls, path: str) -> "Spsa":
        with open(path, encoding="utf-8") as f:
            return cls.from_json(json.load(f))


def _as_state(state: Any) -> tuple:
    """random.Random state back from JSON lists."""
    version, internal, gauss = state
    return (version, tuple(internal), gauss)
