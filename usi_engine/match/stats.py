"""Match statistics: Elo difference with a 95% interval, LOS, draw ratio, SPRT.

Elo is logistic (``score = 1 / (1 + 10 ** (-elo / 400))``).  The interval uses the
trinomial per-game variance of the score, like cutechess-cli.  The SPRT is the
generalized SPRT of fishtest for a trinomial (win/draw/loss) distribution: the
log-likelihood ratio of the maximum-likelihood distributions whose expected score
is that of ``elo1`` versus ``elo0``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Optional, Sequence

Z95 = 1.959963984540054  # two-sided 95% quantile of the standard normal


def score_from_elo(elo: float) -> float:
    """Expected score of a player ``elo`` points stronger (logistic model)."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def elo_from_score(score: float) -> float:
    """Elo difference for an expected ``score`` in (0, 1); +-inf at the ends."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def los(wins: int, losses: int) -> float:
    """Likelihood of superiority: P(true strength of the first player is higher)."""
    if wins + losses == 0:
        return 0.5
    return 0.5 * (1.0 + math.erf((wins - losses) / math.sqrt(2.0 * (wins + losses))))


def elo_interval(wins: int, losses: int, draws: int, z: float = Z95) -> tuple[float, float, float]:
    """(elo, lower, upper) of the score, the bounds at +-z standard errors."""
    n = wins + losses + draws
    if n == 0:
        return 0.0, -math.inf, math.inf
    mu = (wins + 0.5 * draws) / n
    var = (wins * (1 - mu) ** 2 + losses * mu ** 2 + draws * (0.5 - mu) ** 2) / n
    stderr = math.sqrt(var / n)
    return elo_from_score(mu), elo_from_score(mu - z * stderr), elo_from_score(mu + z * stderr)


def _mle(pdf: Sequence[tuple[float, float]], s: float) -> list[float]:
    """Maximum-likelihood probabilities near ``pdf`` [(score, prob)] with mean ``s``.

    The solution is ``p_i = q_i / (1 + lam * (a_i - s))`` with ``lam`` chosen so the
    probabilities sum to one (found by bisection; the function is monotonic).
    """
    lo_a = min(a for a, _ in pdf)
    hi_a = max(a for a, _ in pdf)
    if not lo_a < s < hi_a:
        raise ValueError("expected score outside the range of the scores")
    eps = 1e-12
    lo, hi = -1.0 / (hi_a - s) + eps, -1.0 / (lo_a - s) - eps

    def f(lam: float) -> float:
        return sum(q * (a - s) / (1.0 + lam * (a - s)) for a, q in pdf)

    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
    lam = 0.5 * (lo + hi)
    return [q / (1.0 + lam * (a - s)) for a, q in pdf]


def llr(wins: int, losses: int, draws: int, elo0: float, elo1: float) -> float:
    """Generalized log-likelihood ratio of H1 (elo1) against H0 (elo0), trinomial.

    Zero counts are regularized to 1e-3 as fishtest does, so the LLR is defined from
    the first game on.
    """
    counts = [float(losses), float(draws), float(wins)]
    if sum(counts) == 0:
        return 0.0
    counts = [c if c > 0 else 1e-3 for c in counts]
    n = sum(counts)
    pdf = [(a, c / n) for a, c in zip((0.0, 0.5, 1.0), counts)]
    p0 = _mle(pdf, score_from_elo(elo0))
    p1 = _mle(pdf, score_from_elo(elo1))
    return n * sum(q * math.log(b / a) for (_, q), a, b in zip(pdf, p0, p1))


@dataclass(frozen=True)
class Sprt:
    """SPRT parameters: H0 elo0 against H1 elo1 with error rates alpha and beta."""

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    @property
    def lower(self) -> float:
        """LLR at or below which H0 is accepted."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        """LLR at or above which H1 is accepted."""
        return math.log((1.0 - self.beta) / self.alpha)

    def llr(self, wins: int, losses: int, draws: int) -> float:
        return llr(wins, losses, draws, self.elo0, self.elo1)

    def decide(self, wins: int, losses: int, draws: int) -> Optional[str]:
        """``"H1"``, ``"H0"`` or ``None`` (continue) for the results so far."""
        value = self.llr(wins, losses, draws)
        if value >= self.upper:
            return "H1"
        if value <= self.lower:
            return "H0"
        return None


@dataclass(frozen=True)
class Summary:
    """All the statistics of a W-L-D result, from the first player's side."""

    wins: int
    losses: int
    draws: int
    games: int
    score: float
    elo: float
    elo_lower: float
    elo_upper: float
    elo_error: float
    los: float
    draw_ratio: float

    def as_dict(self) -> dict:
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                for k, v in asdict(self).items()}

    def line(self) -> str:
        """A one-line human summary."""
        return (f"W-L-D {self.wins}-{self.losses}-{self.draws}  score {self.score:.3f}  "
                f"Elo {fmt_elo(self.elo)} +- {fmt_elo(self.elo_error, sign=False)} "
                f"[{fmt_elo(self.elo_lower)}, {fmt_elo(self.elo_upper)}]  "
                f"LOS {100 * self.los:.1f}%  draws {100 * self.draw_ratio:.1f}%")


def fmt_elo(value: float, sign: bool = True) -> str:
    """Format an Elo value, ``inf`` included."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return ("+inf" if value > 0 else "-inf") if sign else "inf"
    value = round(value, 1) + 0.0  # no "-0.0"
    return f"{value:+.1f}" if sign else f"{value:.1f}"


def summarize(wins: int, losses: int, draws: int) -> Summary:
    """Compute the :class:`Summary` of a W-L-D result."""
    games = wins + losses + draws
    elo, lower, upper = elo_interval(wins, losses, draws)
    error = (upper - lower) / 2 if math.isfinite(upper - lower) else math.inf
    return Summary(wins, losses, draws, games,
                   (wins + 0.5 * draws) / games if games else 0.0,
                   elo, lower, upper, error, los(wins, losses),
                   draws / games if games else 0.0)
