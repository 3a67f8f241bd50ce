"""SPSA arithmetic (fishtest form) on a synthetic objective: no engines."""

import math
import random

import pytest

from usi_engine.match.spsa import Spsa, SpsaParam
from usi_engine.match.stats import score_from_elo

OPTIMUM = (60.0, 30.0)


def elo(values) -> float:
    """A smooth strength landscape: 10 Elo lost 10 units away from the optimum."""
    return -sum(10.0 * ((v - o) / 10.0) ** 2 for v, o in zip(values, OPTIMUM))


def pair_result(plus, minus, rng: random.Random, draw: float = 0.3) -> int:
    """Wins - losses of the + side in two games (noisy: win, draw or loss)."""
    p = score_from_elo(elo(plus) - elo(minus))
    result = 0
    for _ in range(2):
        r = rng.random()
        if r >= draw:  # a decisive game: won with probability p (draws keep the mean)
            result += 1 if rng.random() < p else -1
    return result


def params(r_end: float = 0.02):
    return [SpsaParam("X", 20, 0, 100, 5, r_end), SpsaParam("Y", 80, 0, 100, 5, r_end)]


def test_schedules_are_fishtests():
    spsa = Spsa(params(), iterations=1000)
    assert spsa.big_a == 100
    # c_k = c_end (N/(k+1))^gamma: c_end at the last iteration
    assert spsa.c_k(0, 999) == pytest.approx(5)
    assert spsa.c_k(0, 0) == pytest.approx(5 * 1000**0.101)
    # a_k = r_end c_end^2 ((A+N)/(A+k+1))^alpha: a_end at the last iteration
    assert spsa.a_k(0, 999) == pytest.approx(0.02 * 25)
    assert spsa.a_k(0, 0) == pytest.approx(0.5 * (1100 / 101) ** 0.602)


def test_probe_and_update_by_hand():
    spsa = Spsa(params(), iterations=100, seed=3)
    probe = spsa.probe()
    assert probe.k == 0 and spsa.handed_out == 1
    for i in range(2):
        c = spsa.c_k(i, 0)
        assert probe.plus[i] == pytest.approx(spsa.theta[i] + c * probe.flips[i])
        assert probe.minus[i] == pytest.approx(spsa.theta[i] - c * probe.flips[i])
        assert probe.gain[i] == pytest.approx(spsa.a_k(i, 0) / c)
    before = list(spsa.theta)
    spsa.update(probe, 2)  # + side won both games: theta moves towards the + side
    for i in range(2):
        assert spsa.theta[i] == pytest.approx(before[i] + probe.gain[i] * 2 * probe.flips[i])
        assert (spsa.theta[i] - before[i]) * (probe.plus[i] - before[i]) > 0
    assert spsa.done == 1 and spsa.history == [before, spsa.theta] and spsa.results == [2]


def test_bounds_clamp_probes_and_theta():
    spsa = Spsa([SpsaParam("Z", 1, 0, 10, 5, 1.0)], iterations=10, seed=1)
    for _ in range(10):
        probe = spsa.probe()
        assert 0 <= probe.minus[0] <= 10 and 0 <= probe.plus[0] <= 10
        spsa.update(probe, 2)
        assert 0 <= spsa.theta[0] <= 10
    with pytest.raises(ValueError, match="outside"):
        SpsaParam("Bad", 20, 0, 10, 1)


@pytest.mark.parametrize("seed,in_flight", [(1, 1), (2, 8)])
def test_converges_on_a_noisy_quadratic(seed, in_flight):
    """From (20, 80) to the optimum (60, 30), with pairs played 1 or 8 at a time."""
    rng = random.Random(seed)
    spsa = Spsa(params(), iterations=4000, seed=seed)
    pending = [spsa.probe() for _ in range(in_flight)]
    while pending:
        probe = pending.pop(0)  # the oldest pair reports (late, like a worker)
        spsa.update(probe, pair_result(probe.plus, probe.minus, rng))
        if spsa.handed_out < spsa.iterations:
            pending.append(spsa.probe())
    assert spsa.finished
    final = spsa.theta
    assert math.dist(final, OPTIMUM) < 6, final
    start_distance = math.dist(spsa.history[0], OPTIMUM)
    assert math.dist(spsa.history[len(spsa.history) // 2], OPTIMUM) < start_distance / 2


def test_checkpoint_resumes_the_same_run(tmp_path):
    """Stopping after 300 pairs and resuming gives exactly the uninterrupted run."""

    def play(spsa: Spsa, until: int, rng: random.Random) -> None:
        while spsa.done < until:
            probe = spsa.probe()
            spsa.update(probe, pair_result(probe.plus, probe.minus, rng))

    straight = Spsa(params(), iterations=600, seed=5)
    rng = random.Random(9)
    play(straight, 300, rng)
    rng_state = rng.getstate()
    play(straight, 600, rng)

    first = Spsa(params(), iterations=600, seed=5)
    rng = random.Random(9)
    play(first, 300, rng)
    path = str(tmp_path / "spsa.json")
    first.save(path)
    resumed = Spsa.load(path)
    assert resumed.theta == first.theta and resumed.done == 300 and len(resumed.history) == 301
    rng.setstate(rng_state)
    play(resumed, 600, rng)
    assert resumed.theta == straight.theta and resumed.history == straight.history
    assert resumed.rounded() == {p.name: round(t) for p, t in zip(params(), straight.theta)}
