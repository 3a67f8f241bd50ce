"""Match statistics: pentanomial and trinomial Elo intervals, LLR, SPRT, pair counting."""

import math
import random

import pytest

from usi_engine.match import stats
from usi_engine.match.records import GameRecord
from usi_engine.match.referee import BLACK, WHITE, Outcome, Reason
from usi_engine.match.results import PairResult
from usi_engine.match.stats import Results, Sprt


def test_elo_of_known_scores():
    assert stats.elo_from_score(0.75) == pytest.approx(190.85, abs=0.01)
    assert stats.elo_from_score(0.5) == 0
    assert stats.score_from_elo(stats.elo_from_score(0.6)) == pytest.approx(0.6)
    assert stats.elo_from_score(1.0) == math.inf


def test_los_and_draw_ratio():
    assert stats.los(5, 5) == 0.5
    assert stats.los(10, 0) == pytest.approx(0.5 * (1 + math.erf(10 / math.sqrt(20))))
    assert stats.los(0, 0) == 0.5
    s = stats.summarize(6, 2, 2)
    assert (s.games, s.score, s.draw_ratio) == (10, 0.7, 0.2)
    assert s.elo_trinomial_lower < s.elo_trinomial < s.elo_trinomial_upper


def test_trinomial_interval_by_hand():
    # 30-10-10: mu = 0.7, per-game variance = (30*.09 + 10*.49 + 10*.04)/50 = 0.16
    elo, lo, hi = stats.elo_interval(30, 10, 10)
    stderr = math.sqrt(0.16 / 50)
    assert elo == pytest.approx(stats.elo_from_score(0.7))
    assert lo == pytest.approx(stats.elo_from_score(0.7 - stats.Z95 * stderr))
    assert hi == pytest.approx(stats.elo_from_score(0.7 + stats.Z95 * stderr))


def test_pentanomial_interval_by_hand():
    # pairs 1-2-3-2-2 (0, 0.5, 1, 1.5, 2 points): per-game scores 0, .25, .5, .75, 1
    # mu = (0 + 2*.25 + 3*.5 + 2*.75 + 2*1) / 10 = 0.55
    # var = (.55^2 + 2*.3^2 + 3*.05^2 + 2*.2^2 + 2*.45^2) / 10 = 0.975 / 10 = 0.0975
    elo, lo, hi = stats.elo_interval_pentanomial([1, 2, 3, 2, 2])
    stderr = math.sqrt(0.0975 / 10)
    assert elo == pytest.approx(34.86, abs=0.01)
    assert lo == pytest.approx(stats.elo_from_score(0.55 - stats.Z95 * stderr))
    assert hi == pytest.approx(stats.elo_from_score(0.55 + stats.Z95 * stderr))
    assert stats.elo_interval_pentanomial([0] * 5) == (0.0, -math.inf, math.inf)


def test_pentanomial_of_independent_games_equals_trinomial():
    # Games independent with P(L, D, W) = (1, 1, 2)/4: the pairs' distribution is the
    # convolution (1, 2, 5, 4, 4)/16, and the pair variance is half the game variance,
    # so 16 pairs give the interval of 32 games 16-8-8 exactly.
    assert stats.elo_interval_pentanomial([1, 2, 5, 4, 4]) == pytest.approx(stats.elo_interval(16, 8, 8))


def test_correlated_pairs_narrow_or_widen_the_interval():
    # Every pair 1-1 (opening decides): the trinomial sees 50 wins and 50 losses and a
    # wide interval, the pentanomial sees no variance at all.
    _, lo, hi = stats.elo_interval_pentanomial([0, 0, 50, 0, 0])
    assert lo == hi == 0
    _, lo, hi = stats.elo_interval(50, 50, 0)
    assert hi - lo > 100


def test_pentanomial_llr_matches_the_normal_approximation():
    penta = [70, 210, 400, 230, 90]
    n = sum(penta)
    a = stats.PENTANOMIAL_SCORES
    mu = sum(x * c for x, c in zip(a, penta)) / n
    var = sum(c * (x - mu) ** 2 for x, c in zip(a, penta)) / n
    s0, s1 = stats.score_from_elo(0), stats.score_from_elo(10)
    approx = n * (s1 - s0) * (2 * mu - s0 - s1) / (2 * var)
    assert stats.llr_pentanomial(penta, 0, 10) == pytest.approx(approx, rel=0.01)
    assert stats.llr_pentanomial([0] * 5, 0, 10) == 0


def test_pentanomial_llr_symmetries_and_exact_case():
    penta = [3, 10, 20, 12, 5]
    value = stats.llr_pentanomial(penta, -2, 8)
    assert stats.llr_pentanomial(penta, 8, -2) == pytest.approx(-value)
    assert stats.llr_pentanomial(penta[::-1], 2, -8) == pytest.approx(value)  # mirror
    # Observed mean exactly at elo1: the H1 fit is the observed pdf itself, so the LLR is
    # N * KL(observed || H0 fit), the H0 fit solving p_i = q_i / (1 + lam (a_i - s0)).
    s0 = stats.score_from_elo(0)
    q = [0.1, 0.2, 0.3, 0.2, 0.2]  # mean 0.55
    elo1 = stats.elo_from_score(0.55)
    pdf = list(zip(stats.PENTANOMIAL_SCORES, q))
    p0 = stats._mle(pdf, s0)
    assert sum(p0) == pytest.approx(1) and sum(a * p for (a, _), p in zip(pdf, p0)) == pytest.approx(s0)
    kl = sum(qi * math.log(qi / pi) for qi, pi in zip(q, p0))
    assert stats.llr_pentanomial([10, 20, 30, 20, 20], 0, elo1) == pytest.approx(100 * kl)


def test_trinomial_llr_matches_the_normal_approximation():
    w, losses, d = 600, 500, 900
    n = w + losses + d
    mu = (w + d / 2) / n
    var = (w * (1 - mu) ** 2 + losses * mu**2 + d * (0.5 - mu) ** 2) / n
    s0, s1 = stats.score_from_elo(0), stats.score_from_elo(10)
    approx = n * (s1 - s0) * (2 * mu - s0 - s1) / (2 * var)
    assert stats.llr(w, losses, d, 0, 10) == pytest.approx(approx, rel=0.01)
    assert stats.llr(0, 0, 0, 0, 10) == 0


def test_bad_counts_are_refused():
    with pytest.raises(ValueError, match="5 non-negative"):
        stats.llr_pentanomial([1, 2, 3], 0, 5)
    with pytest.raises(ValueError, match="0, 0.5, 1, 1.5 or 2"):
        stats.pair_index(2.5)
    with pytest.raises(ValueError, match="0, 0.5 or 1"):
        Results().add_game(0.25)


def test_sprt_decisions_on_pairs():
    sprt = Sprt(0, 10)
    assert sprt.lower == pytest.approx(math.log(0.05 / 0.95))
    assert sprt.upper == pytest.approx(math.log(0.95 / 0.05))
    rng = random.Random(1)
    results = Results()
    decision = None
    while decision is None:  # games scoring ~70%, paired: H1 accepted
        pair = 0.0
        for _ in range(2):
            r = rng.random()
            score = 1.0 if r < 0.6 else 0.0 if r < 0.8 else 0.5
            results.add_game(score)
            pair += score
        results.add_pair(pair)
        decision = sprt.decide(results.penta)
    assert decision == "H1" and results.games < 2000
    assert results.games == 2 * results.pairs
    assert sprt.decide([100, 200, 200, 100, 50]) == "H0"
    assert sprt.decide([1, 1, 2, 1, 1]) is None


def test_sprt_prior_continues_an_earlier_test():
    earlier = (267, 24, 622, 37, 300)  # a test stopped at --games, undecided
    sprt = Sprt(0, 10, prior=earlier)
    now = [30, 2, 70, 5, 40]
    both = [a + b for a, b in zip(earlier, now)]
    assert sprt.total(now) == both
    assert sprt.llr(now) == pytest.approx(stats.llr_pentanomial(both, 0, 10))
    assert sprt.decide([0] * 5) is None  # undecided before, undecided with nothing new
    assert sprt.llr(now) > Sprt(0, 10).llr(earlier) > Sprt(0, 10).llr(now)
    assert Sprt(0, 10, prior=(10, 0, 100, 0, 400)).decide([0] * 5) == "H1"
    assert stats.parse_pentanomial(" 267-24-622-37-300\n") == earlier


def test_sprt_prior_bad_counts():
    with pytest.raises(ValueError, match=r"written N-N-N-N-N .* not '1-2-x-4-5'"):
        stats.parse_pentanomial("1-2-x-4-5")
    with pytest.raises(ValueError, match=r"5 non-negative numbers, not \[1, 2, 3\]"):
        stats.parse_pentanomial("1-2-3")
    with pytest.raises(ValueError, match="5 non-negative numbers"):
        Sprt(0, 10, prior=(1, 2, -3, 4, 5))


def _game(index: int, pair: int, black: int, winner) -> GameRecord:
    game = GameRecord(
        index, f"e{black}", f"e{1 - black}", "", black_engine=black, white_engine=1 - black, pair=pair
    )
    game.outcome = Outcome(winner, Reason.CHECKMATE if winner is not None else Reason.MAX_MOVES)
    return game


def test_pair_result_counts_finished_pairs():
    pr = PairResult(0, 1)
    pr.add(_game(1, 1, 0, BLACK))  # engine 0 wins as black
    assert pr.results.penta == [0] * 5 and pr.pending == {1: 1.0}
    pr.add(_game(3, 2, 0, None))  # pair 2 starts with a draw (games arrive out of order)
    pr.add(_game(2, 1, 1, BLACK))  # engine 0 loses as white: pair 1 = 1 point
    pr.add(_game(4, 2, 1, WHITE))  # engine 0 wins as white: pair 2 = 1.5 points
    pr.add(_game(5, 3, 0, WHITE))  # an unfinished pair counts in W-L-D only
    assert pr.results.penta == [0, 0, 1, 1, 0]
    assert (pr.wins, pr.losses, pr.draws) == (2, 2, 1)
    s = pr.summary()
    assert s.pairs == 2 and s.games == 5
    assert s.elo == pytest.approx(stats.elo_interval_pentanomial([0, 0, 1, 1, 0])[0])
    assert s.elo_trinomial == pytest.approx(0.0)
