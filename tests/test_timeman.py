"""Unit tests of usi_engine.timeman: go parsing, budgets for each time control, clock decisions."""

import pytest

from usi_engine.timeman import (BARE_GO_MS, Budget, Clock, StabilityTracker, TimeSettings,
                                compute_budget, parse_go)

S = TimeSettings(network_delay=60, network_delay2=120, minimum_thinking_time=100, slow_mover=100)


def go(text):
    params, errors = parse_go(text.split())
    assert errors == []
    return params


def test_parse_go_all_fields():
    p = go("ponder btime 1000 wtime 2000 byoyomi 300 binc 5 winc 6 movetime 7 depth 8 nodes 9")
    assert (p.ponder, p.btime, p.wtime, p.byoyomi, p.binc, p.winc, p.movetime, p.depth, p.nodes) == \
        (True, 1000, 2000, 300, 5, 6, 7, 8, 9)
    assert go("infinite").infinite
    assert go("mate 1000").mate == 1000 and go("mate 1000").is_mate
    assert go("mate infinite").mate_infinite
    assert go("mate").mate_infinite


def test_parse_go_errors_name_the_problem():
    p, errors = parse_go("btime abc wtime 1000 foo".split())
    assert p.btime is None and p.wtime == 1000
    assert errors == ["go: btime needs an integer, got 'abc'", "go: unknown parameter 'foo' ignored"]
    _, errors = parse_go(["byoyomi"])
    assert errors == ["go: missing value after byoyomi"]
    _, errors = parse_go(["depth", "-3"])
    assert errors == ["go: depth must not be negative, got -3"]
    p, errors = parse_go(["btime", "-5"])  # a flagged clock: think minimally, no error
    assert p.btime == 0 and errors == []


def test_infinite_and_depth_only_have_no_budget():
    assert compute_budget(go("infinite"), 0, 0, S) is None
    assert compute_budget(go("depth 5"), 0, 0, S) is None
    assert compute_budget(go("nodes 10000"), 1, 30, S) is None


def test_bare_go_thinks_a_fixed_time():
    b = compute_budget(go(""), 0, 0, S)
    assert b.maximum == BARE_GO_MS and b.use_fully


def test_movetime_keeps_network_delay():
    b = compute_budget(go("movetime 1000"), 0, 0, S)
    assert b == Budget(940, 940, 940, use_fully=True)
    tiny = compute_budget(go("movetime 50"), 0, 0, S)
    assert tiny.maximum == 25  # the margin never eats more than half


def test_byoyomi_only_is_used_fully_minus_networkdelay2():
    b = compute_budget(go("btime 0 wtime 0 byoyomi 1000"), 0, 40, S)
    assert b == Budget(880, 880, 880, use_fully=True)
    fast = compute_budget(go("btime 0 wtime 0 byoyomi 100"), 1, 40, S)
    assert fast.maximum == 50 and fast.use_fully  # margin capped at half of 100 ms


def test_byoyomi_plus_main_time_adds_a_share():
    b = compute_budget(go("btime 60000 wtime 60000 byoyomi 1000"), 0, 0, S)
    assert b.minimum == 880                    # the byoyomi itself is always used
    assert b.optimum == 880 + 60000 // 60      # plus a share of the main time
    assert b.optimum < b.maximum <= 60000 + 1000 - 120
    assert not b.use_fully


def test_sudden_death_budget():
    b = compute_budget(go("btime 60000 wtime 30000"), 1, 0, S)  # white: 30 s
    assert b.optimum == 30000 // 60
    assert b.maximum == 2000                  # 4 x the share
    assert b.minimum == 100
    late = compute_budget(go("btime 60000 wtime 30000"), 1, 200, S)
    assert late.optimum == 30000 // 20          # fewer moves to go, more per move


def test_sudden_death_never_past_the_flag():
    for left in (1, 10, 50, 100, 500, 2000):
        b = compute_budget(go(f"btime {left} wtime {left}"), 0, 100, S)
        assert 1 <= b.minimum <= b.optimum <= b.maximum
        assert b.maximum <= max(1, left - min(60, left // 2))
    zero = compute_budget(go("btime 0 wtime 0"), 0, 100, S)
    assert zero.maximum == 1


def test_fischer_increment():
    b = compute_budget(go("btime 10000 wtime 10000 binc 2000 winc 2000"), 0, 0, S)
    assert b.optimum == int(10000 / 60 + 2000 * 0.8)
    assert b.maximum == min(int((10000 / 60 + 1600) * 4), 10000 // 4 + 2000)
    low = compute_budget(go("btime 500 wtime 500 binc 3000 winc 3000"), 0, 0, S)
    assert low.maximum <= 500 - 60           # the increment arrives only after the move


def test_slow_mover_and_minimum_thinking_time():
    slow = TimeSettings(60, 120, 100, 200)
    assert compute_budget(go("btime 60000 wtime 60000"), 0, 0, slow).optimum == 2000
    patient = TimeSettings(60, 120, 3000, 100)
    b = compute_budget(go("btime 60000 wtime 60000"), 0, 0, patient)
    assert (b.minimum, b.optimum, b.maximum) == (3000, 3000, 4000)
    capped = compute_budget(go("btime 0 wtime 0 byoyomi 100"), 0, 0, patient)
    assert capped.maximum == 50              # never past the byoyomi


def test_clock_scales_with_stability():
    clock = Clock(Budget(minimum=100, optimum=1000, maximum=3000))
    assert clock.soft_limit(1.0) == 500      # stable best move: half
    assert clock.soft_limit(0.5) == 1000
    assert clock.soft_limit(0.0) == 1500     # unstable: 1.5x
    assert not clock.should_stop(400, 1.0) and clock.should_stop(500, 1.0)
    assert Clock(Budget(100, 1000, 1200)).soft_limit(0.0) == 1200   # never past the maximum
    assert Clock(Budget(900, 1000, 3000)).soft_limit(1.0) == 900     # never below the minimum
    full = Clock(Budget(880, 880, 880, use_fully=True))
    assert full.soft_limit(1.0) == full.soft_limit(0.0) == 880


def test_clock_does_not_start_an_iteration_it_cannot_finish():
    clock = Clock(Budget(minimum=100, optimum=1000, maximum=3000))
    assert clock.start_next_iteration(50, 0.5)      # below the minimum: go on
    assert clock.start_next_iteration(500, 0.5)
    assert not clock.start_next_iteration(600, 0.5)
    full = Clock(Budget(880, 880, 880, use_fully=True))
    assert full.start_next_iteration(800, 1.0)


def test_stability_tracker():
    t = StabilityTracker()
    assert t.stability() == 0.5               # too early to tell
    for depth in range(1, 9):
        t.update(depth, "7g7f")
    assert t.stability() > 0.99
    u = StabilityTracker()
    for depth in range(1, 9):
        u.update(depth, "7g7f" if depth % 2 else "2g2f")
    assert u.stability() < 0.6


@pytest.mark.parametrize("line", [
    "btime 1000 wtime 1000 byoyomi 100",
    "btime 0 wtime 0 byoyomi 100",
    "btime 300000 wtime 300000 byoyomi 10000",
    "btime 100 wtime 100 binc 100 winc 100",
    "movetime 100",
])
def test_every_budget_is_ordered_and_positive(line):
    for ply in (0, 50, 150, 400):
        for side in (0, 1):
            b = compute_budget(go(line), side, ply, S)
            assert 1 <= b.minimum <= b.optimum <= b.maximum


def test_ponder_credit_shortens_the_soft_limit_but_not_the_minimum():
    budget = Budget(minimum=100, optimum=1000, maximum=3000)
    plain, pondered = Clock(budget), Clock(budget, credit_ms=800)   # 800 ms of pondering
    assert pondered.credit == 400                  # half of it counts
    assert not plain.should_stop(600, 0.5) and pondered.should_stop(600, 0.5)
    assert not pondered.should_stop(99, 0.5)        # the minimum is real time
    assert plain.start_next_iteration(300, 0.5) and not pondered.start_next_iteration(300, 0.5)
    assert pondered.should_stop(3000, 0.0)            # the hard maximum holds
    # byoyomi left unused is lost: no credit when the budget is to be used fully
    full = Clock(Budget(880, 880, 880, use_fully=True), credit_ms=5000)
    assert full.credit == 0 and not full.should_stop(500, 1.0)
