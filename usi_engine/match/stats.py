"""Match statistics: Elo with a 95% interval, LOS, draw ratio, SPRT; pentanomial first.

Elo is logistic (``score = 1 / (1 + 10 ** (-elo / 400))``).  Games are played in
pairs, one opening twice with colours swapped, so the two games of a pair are not
independent (an opening that favours one side gives 1-1 more often).  The primary
model is therefore the *pentanomial* one of fishtest and cutechess-cli: each finished
pair scores 0, 0.5, 1, 1.5 or 2 points for the first engine, and the variance of the
score is that of the pair scores.  The *trinomial* (win/draw/loss per game) figures
are kept beside it; they overstate the confidence when pairs are correlated.

The SPRT is fishtest's generalized SPRT: the log-likelihood ratio of the maximum-
likelihood distributions, near the observed one, whose expected score is that of
``elo1`` versus ``elo0`` (Michel Van den Bergh, "Comments on the SPRT"; fishtest
``LLRcalc``).  Zero counts are regularized to 1e-3 as fishtest does.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Optional, Sequence

Z95 = 1.959963984540054  # two-sided 95% quantile of the standard normal

TRINOMIAL_SCORES = (0.0, 0.5, 1.0)  # loss, draw, win
PENTANOMIAL_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)  # pair points 0..2, per game
REGULARIZE = 1e-3  # fishtest's stand-in for a zero count


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


def pair_index(points: float) -> int:
    """Pentanomial slot (0..4) of a pair scoring ``points`` (0, 0.5, 1, 1.5 or 2)."""
    index = round(2 * points)
    if not 0 <= index <= 4 or abs(index - 2 * points) > 1e-9:
        raise ValueError(f"a pair of games scores 0, 0.5, 1, 1.5 or 2 points, not {points}")
    return index


# -- intervals -----------------------------------------------------------------


def _mean_var(scores: Sequence[float], counts: Sequence[float]) -> tuple[float, float, float]:
    """(n, mean, variance) of the distribution ``counts`` over ``scores``."""
    n = float(sum(counts))
    mu = sum(a * c for a, c in zip(scores, counts)) / n
    var = sum(c * (a - mu) ** 2 for a, c in zip(scores, counts)) / n
    return n, mu, var


def _interval(scores: Sequence[float], counts: Sequence[float], z: float) -> tuple[float, float, float]:
    if sum(counts) == 0:
        return 0.0, -math.inf, math.inf
    n, mu, var = _mean_var(scores, counts)
    stderr = math.sqrt(var / n)
    return elo_from_score(mu), elo_from_score(mu - z * stderr), elo_from_score(mu + z * stderr)


def elo_interval(wins: int, losses: int, draws: int, z: float = Z95) -> tuple[float, float, float]:
    """Trinomial (elo, lower, upper): per-game variance, bounds at +-z standard errors."""
    return _interval(TRINOMIAL_SCORES, (losses, draws, wins), z)


def elo_interval_pentanomial(penta: Sequence[int], z: float = Z95) -> tuple[float, float, float]:
    """Pentanomial (elo, lower, upper) of pair counts ``[0, 0.5, 1, 1.5, 2 points]``.

    The mean is the per-game score of the pairs, the standard error that of the mean
    of the pair scores (``sqrt(var / pairs)``).
    """
    _check_penta(penta)
    return _interval(PENTANOMIAL_SCORES, penta, z)


def _check_penta(penta: Sequence[int]) -> None:
    if len(penta) != 5 or any(c < 0 for c in penta):
        raise ValueError(f"pentanomial counts are 5 non-negative numbers, not {list(penta)}")


def parse_pentanomial(text: str) -> tuple[int, ...]:
    """Pair counts written as a progress line prints them, ``"267-24-622-37-300"``."""
    try:
        penta = tuple(int(c) for c in text.strip().split("-"))
    except ValueError:
        raise ValueError(
            f"pair counts are written N-N-N-N-N (pairs scoring 0, 0.5, 1, 1.5, 2 points), not {text!r}"
        ) from None
    _check_penta(penta)
    return penta


# -- SPRT ----------------------------------------------------------------------


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


def _llr(scores: Sequence[float], counts: Sequence[float], elo0: float, elo1: float) -> float:
    if sum(counts) == 0:
        return 0.0
    counts = [c if c > 0 else REGULARIZE for c in counts]
    n = sum(counts)
    pdf = [(a, c / n) for a, c in zip(scores, counts)]
    p0 = _mle(pdf, score_from_elo(elo0))
    p1 = _mle(pdf, score_from_elo(elo1))
    return n * sum(q * math.log(b / a) for (_, q), a, b in zip(pdf, p0, p1))


def llr(wins: int, losses: int, draws: int, elo0: float, elo1: float) -> float:
    """Trinomial generalized log-likelihood ratio of H1 (elo1) against H0 (elo0)."""
    return _llr(TRINOMIAL_SCORES, (losses, draws, wins), elo0, elo1)


def llr_pentanomial(penta: Sequence[int], elo0: float, elo1: float) -> float:
    """Pentanomial generalized log-likelihood ratio of H1 (elo1) against H0 (elo0).

    ``penta`` counts the pairs scoring 0, 0.5, 1, 1.5 and 2 points (fishtest's LL,
    LD+DL, LW+DD+WL, DW+WD, WW); the sample size is the number of pairs.
    """
    _check_penta(penta)
    return _llr(PENTANOMIAL_SCORES, penta, elo0, elo1)


@dataclass
class Results:
    """Results of the first player: W-L-D of all games, pentanomial of finished pairs."""

    wins: int = 0
    losses: int = 0
    draws: int = 0
    penta: list[int] = field(default_factory=lambda: [0] * 5)

    @property
    def games(self) -> int:
        return self.wins + self.losses + self.draws

    @property
    def pairs(self) -> int:
        return sum(self.penta)

    def add_game(self, score: float) -> None:
        """Count one game scoring 1, 0.5 or 0."""
        if score == 1.0:
            self.wins += 1
        elif score == 0.5:
            self.draws += 1
        elif score == 0.0:
            self.losses += 1
        else:
            raise ValueError(f"a game scores 0, 0.5 or 1, not {score}")

    def add_pair(self, points: float) -> None:
        """Count one finished pair (its games must be counted with :meth:`add_game`)."""
        self.penta[pair_index(points)] += 1

    def __iadd__(self, other: "Results") -> "Results":
        self.wins += other.wins
        self.losses += other.losses
        self.draws += other.draws
        self.penta = [a + b for a, b in zip(self.penta, other.penta)]
        return self


@dataclass(frozen=True)
class Sprt:
    """SPRT parameters: H0 elo0 against H1 elo1 with error rates alpha and beta.

    ``prior`` holds the pentanomial counts of earlier runs of the same test (same engines,
    same conditions): they are added to every count the test is given, so a test stopped
    at ``--games`` or by the end of a session goes on where it was.
    """

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    prior: tuple[int, ...] = (0, 0, 0, 0, 0)

    def __post_init__(self) -> None:
        _check_penta(self.prior)

    @property
    def lower(self) -> float:
        """LLR at or below which H0 is accepted."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        """LLR at or above which H1 is accepted."""
        return math.log((1.0 - self.beta) / self.alpha)

    def total(self, penta: Sequence[int]) -> list[int]:
        """The pairs ``penta`` of this run with the earlier runs' pairs added."""
        return [a + b for a, b in zip(penta, self.prior)]

    def llr(self, penta: Sequence[int]) -> float:
        """Pentanomial LLR of the finished pairs ``penta`` and the earlier runs' pairs."""
        return llr_pentanomial(self.total(penta), self.elo0, self.elo1)

    def llr_trinomial(self, wins: int, losses: int, draws: int) -> float:
        """Trinomial LLR of this run alone (secondary figure: ignores the pairing)."""
        return llr(wins, losses, draws, self.elo0, self.elo1)

    def decide_llr(self, value: float) -> Optional[str]:
        """``"H1"``, ``"H0"`` or ``None`` (continue) for an LLR."""
        if value >= self.upper:
            return "H1"
        if value <= self.lower:
            return "H0"
        return None

    def decide(self, penta: Sequence[int]) -> Optional[str]:
        """``"H1"``, ``"H0"`` or ``None`` (continue) for the finished pairs so far."""
        return self.decide_llr(self.llr(penta))


@dataclass(frozen=True)
class Summary:
    """All the statistics of a result, from the first player's side.

    ``elo*`` are pentanomial (finished pairs); ``elo_trinomial*`` count every game.
    """

    wins: int
    losses: int
    draws: int
    games: int
    score: float
    pentanomial: list[int]
    pairs: int
    elo: float
    elo_lower: float
    elo_upper: float
    elo_error: float
    elo_trinomial: float
    elo_trinomial_lower: float
    elo_trinomial_upper: float
    elo_trinomial_error: float
    los: float
    draw_ratio: float

    def as_dict(self) -> dict:
        return {
            k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in asdict(self).items()
        }

    def line(self) -> str:
        """A one-line human summary."""
        return (
            f"W-L-D {self.wins}-{self.losses}-{self.draws}  score {self.score:.3f}  "
            f"pairs {'-'.join(map(str, self.pentanomial))}  "
            f"Elo {fmt_elo(self.elo)} +- {fmt_elo(self.elo_error, sign=False)} "
            f"[{fmt_elo(self.elo_lower)}, {fmt_elo(self.elo_upper)}]  "
            f"(trinomial {fmt_elo(self.elo_trinomial)} "
            f"+- {fmt_elo(self.elo_trinomial_error, sign=False)})  "
            f"LOS {100 * self.los:.1f}%  draws {100 * self.draw_ratio:.1f}%"
        )


def fmt_elo(value: float, sign: bool = True) -> str:
    """Format an Elo value, ``inf`` included."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return ("+inf" if value > 0 else "-inf") if sign else "inf"
    value = round(value, 1) + 0.0  # no "-0.0"
    return f"{value:+.1f}" if sign else f"{value:.1f}"


def _half_width(lower: float, upper: float) -> float:
    return (upper - lower) / 2 if math.isfinite(upper - lower) else math.inf


def summarize(wins: int, losses: int, draws: int, penta: Optional[Sequence[int]] = None) -> Summary:
    """Compute the :class:`Summary` of a W-L-D result and its finished pairs."""
    penta = list(penta) if penta is not None else [0] * 5
    games = wins + losses + draws
    elo, lower, upper = elo_interval_pentanomial(penta)
    t_elo, t_lower, t_upper = elo_interval(wins, losses, draws)
    return Summary(
        wins,
        losses,
        draws,
        games,
        (wins + 0.5 * draws) / games if games else 0.0,
        penta,
        sum(penta),
        elo,
        lower,
        upper,
        _half_width(lower, upper),
        t_elo,
        t_lower,
        t_upper,
        _half_width(t_lower, t_upper),
        los(wins, losses),
        draws / games if games else 0.0,
    )


def summarize_results(results: Results) -> Summary:
    """:func:`summarize` of a :class:`Results`."""
    return summarize(results.wins, results.losses, results.draws, results.penta)
