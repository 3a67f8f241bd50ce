"""Unit tests of usi_engine.server.timeman: go parsing, budgets for each time control, clock decisions."""

import random

import pytest

from usi_engine.server.timeman import (
    BARE_GO_MS,
    HICCUP_RESERVE_MS,
    MAX_SHARE,
    PONDERHIT_RELAY_MS,
    Budget,
    Clock,
    StabilityTracker,
    TimeSettings,
    compute_budget,
    main_time_reserve,
    parse_go,
    round_up_to_second,
    whole_seconds,
)

S = TimeSettings(network_delay=60, network_delay2=120, minimum_thinking_time=100, slow_mover=100)


def go(text):
    params, errors = parse_go(text.split())
    assert errors == []
    return params


def test_parse_go_all_fields():
    p = go("ponder btime 1000 wtime 2000 byoyomi 300 binc 5 winc 6 movetime 7 depth 8 nodes 9")
    assert (p.ponder, p.btime, p.wtime, p.byoyomi, p.binc, p.winc, p.movetime, p.depth, p.nodes) == (
        True,
        1000,
        2000,
        300,
        5,
        6,
        7,
        8,
        9,
    )
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
    assert b.minimum == 880  # the byoyomi itself is always used
    assert b.optimum > 880 + 60000 // 80  # plus a share of the main time
    assert b.optimum < b.maximum <= 60000 + 1000 - 120
    assert not b.use_fully


def test_sudden_death_budget():
    b = compute_budget(go("btime 60500 wtime 30500"), 1, 0, S)  # white: 30.5 s
    assert b.round_margin is None  # not a whole-second clock
    assert 30500 / 80 < b.optimum < 30500 / 40
    assert b.maximum <= 30500 * MAX_SHARE
    assert b.minimum == 100
    late = compute_budget(go("btime 60500 wtime 30500"), 1, 140, S)
    assert late.optimum > 2 * b.optimum  # fewer moves to go, more per move


def test_sudden_death_never_past_the_flag():
    for left in (1, 10, 50, 100, 500, 2000, 2001):
        b = compute_budget(go(f"btime {left} wtime {left}"), 0, 100, S)
        assert 1 <= b.minimum <= b.optimum <= b.maximum
        assert b.maximum <= max(1, left - min(60, left // 2))
    zero = compute_budget(go("btime 0 wtime 0"), 0, 100, S)
    assert zero.maximum == 1


def test_fischer_spends_the_increment_and_a_share():
    b = compute_budget(go("btime 10500 wtime 10500 binc 2000 winc 2000"), 0, 0, S)
    assert b.optimum > 2000  # the whole increment, and more
    assert b.maximum <= 10500 * MAX_SHARE + 2000
    low = compute_budget(go("btime 500 wtime 500 binc 3000 winc 3000"), 0, 0, S)
    assert low.maximum <= 500 - 60  # the increment arrives only after the move


def test_slow_mover_and_minimum_thinking_time():
    line = "btime 60500 wtime 60500"
    slow = TimeSettings(60, 120, 100, 200)
    assert (
        abs(compute_budget(go(line), 0, 0, slow).optimum - 2 * compute_budget(go(line), 0, 0, S).optimum) <= 1
    )
    patient = TimeSettings(60, 120, 3000, 100)
    b = compute_budget(go("btime 120500 wtime 120500"), 0, 0, patient)
    assert b.minimum == b.optimum == 3000 < b.maximum
    short = compute_budget(go("btime 10500 wtime 10500"), 0, 0, patient)
    assert short.minimum < 1000  # never more than a move's share of a short clock
    capped = compute_budget(go("btime 0 wtime 0 byoyomi 100"), 0, 0, patient)
    assert capped.maximum == 50  # never past the byoyomi


# ---------------------------------------------------------------------- whole seconds
def test_whole_second_clock_is_recognised():
    assert whole_seconds(go("btime 60000 wtime 59000 byoyomi 10000"))
    assert whole_seconds(go("btime 60000 wtime 60000 binc 1000 winc 1000"))
    assert not whole_seconds(go("btime 60000 wtime 59400"))
    assert not whole_seconds(go("btime 0 wtime 0 byoyomi 100"))
    assert compute_budget(go("btime 60000 wtime 60000"), 0, 0, S).round_margin == 60
    off = TimeSettings(60, 120, 100, 100, round_up=False)
    assert compute_budget(go("btime 60000 wtime 60000"), 0, 0, off).round_margin is None


def test_round_up_to_second():
    assert round_up_to_second(300, 60, 10000) == 940  # the rest of the first second is free
    assert round_up_to_second(1500, 60, 10000) == 1940
    assert round_up_to_second(1950, 60, 10000) == 2940  # 1950 + delay is charged 2 s anyway
    assert round_up_to_second(2000, 60, 10000) == 2940
    assert round_up_to_second(1500, 60, 1700) == 1700  # never past the hard limit


def test_clock_stops_at_the_end_of_the_whole_second():
    budget = compute_budget(go("btime 60000 wtime 60000"), 0, 40, S)
    clock = Clock(budget)
    assert clock.stop_time(1234) == 1940
    assert clock.stop_time(budget.maximum) == budget.maximum
    assert Clock(Budget(100, 1000, 3000)).stop_time(1234) == 1234  # ms clock: stop when decided


def test_clock_scales_with_stability():
    clock = Clock(Budget(minimum=100, optimum=1000, maximum=3000))
    assert clock.soft_limit(1.0) == 500  # stable best move: half
    assert clock.soft_limit(0.5) == 1000
    assert clock.soft_limit(0.0) == 1500  # unstable: 1.5x
    assert not clock.should_stop(400, 1.0) and clock.should_stop(500, 1.0)
    assert Clock(Budget(100, 1000, 1200)).soft_limit(0.0) == 1200  # never past the maximum
    assert Clock(Budget(900, 1000, 3000)).soft_limit(1.0) == 900  # never below the minimum
    full = Clock(Budget(880, 880, 880, use_fully=True))
    assert full.soft_limit(1.0) == full.soft_limit(0.0) == 880


def test_clock_does_not_start_an_iteration_it_cannot_finish():
    clock = Clock(Budget(minimum=100, optimum=1000, maximum=3000))
    assert clock.start_next_iteration(50, 0.5)  # below the minimum: go on
    assert clock.start_next_iteration(500, 0.5)
    assert not clock.start_next_iteration(600, 0.5)
    full = Clock(Budget(880, 880, 880, use_fully=True))
    assert full.start_next_iteration(800, 1.0)


def test_stability_tracker():
    t = StabilityTracker()
    assert t.stability() == 0.5  # too early to tell
    for depth in range(1, 9):
        t.update(depth, "7g7f")
    assert t.stability() > 0.99
    u = StabilityTracker()
    for depth in range(1, 9):
        u.update(depth, "7g7f" if depth % 2 else "2g2f")
    assert u.stability() < 0.6


@pytest.mark.parametrize(
    "line",
    [
        "btime 1000 wtime 1000 byoyomi 100",
        "btime 0 wtime 0 byoyomi 100",
        "btime 300000 wtime 300000 byoyomi 10000",
        "btime 100 wtime 100 binc 100 winc 100",
        "movetime 100",
    ],
)
def test_every_budget_is_ordered_and_positive(line):
    for ply in (0, 50, 150, 400):
        for side in (0, 1):
            b = compute_budget(go(line), side, ply, S)
            assert 1 <= b.minimum <= b.optimum <= b.maximum


def test_a_ponder_search_keeps_the_relay_of_ponderhit_in_reserve():
    """The GUI's clock ran while it passed the move on: a pondered answer comes earlier by
    PONDERHIT_RELAY_MS, a plain `go` keeps its margin."""
    for clock in ("btime 0 wtime 0 byoyomi 1000", "btime 0 wtime 0 byoyomi 999"):
        plain = compute_budget(go(clock), 0, 40, S)
        pondered = compute_budget(go("ponder " + clock), 0, 40, S)
        assert plain.maximum == plain.minimum == int(clock.split()[-1]) - 120
        assert pondered.maximum == pondered.minimum == plain.maximum - PONDERHIT_RELAY_MS
    plain = compute_budget(go("btime 60000 wtime 60000 binc 1000 winc 1000"), 0, 40, S)
    pondered = compute_budget(go("ponder btime 60000 wtime 60000 binc 1000 winc 1000"), 0, 40, S)
    assert pondered.round_margin == plain.round_margin + PONDERHIT_RELAY_MS == 60 + 150
    after_miss = compute_budget(go("btime 0 wtime 0 byoyomi 1000"), 0, 40, S, relayed=True)
    assert after_miss.maximum == 1000 - 120 - PONDERHIT_RELAY_MS
    tight = compute_budget(go("ponder btime 300 wtime 300"), 0, 40, S)
    assert tight.maximum <= 300 - min(60 + PONDERHIT_RELAY_MS, 150)  # at most half kept


def test_ponder_credit_shortens_the_soft_limit_but_not_the_minimum():
    budget = Budget(minimum=100, optimum=1000, maximum=3000)
    plain, pondered = Clock(budget), Clock(budget, credit_ms=800)  # 800 ms of pondering
    assert pondered.credit == 400  # half of it counts
    assert not plain.should_stop(600, 0.5) and pondered.should_stop(600, 0.5)
    assert not pondered.should_stop(99, 0.5)  # the minimum is real time
    assert plain.start_next_iteration(300, 0.5) and not pondered.start_next_iteration(300, 0.5)
    assert pondered.should_stop(3000, 0.0)  # the hard maximum holds
    # byoyomi left unused is lost: no credit when the budget is to be used fully
    full = Clock(Budget(880, 880, 880, use_fully=True), credit_ms=5000)
    assert full.credit == 0 and not full.should_stop(500, 1.0)


# ---------------------------------------------------------------------- a simulated game
class SimulatedSearch:
    """A search that deepens by iterations growing ~1.9x (as the engine's do), with the
    engine's stop rules: the monitor's soft and hard limits, the end-of-iteration check,
    and the stop moved to the end of the whole second (job.py)."""

    def __init__(self, rng):
        self.rng = rng

    def think(self, budget: Budget, stability: float) -> float:
        clock = Clock(budget)
        deadline = None
        base = self.rng.uniform(0.2, 0.8)
        depth, t_iter, t = 1, base, 0.0
        while True:
            t += 5.0  # the monitor's period
            while t_iter <= t:  # iterations that ended during this tick
                if deadline is None and not clock.start_next_iteration(t_iter, stability):
                    deadline = clock.stop_time(t_iter)
                if deadline is not None and t_iter >= deadline:
                    return t_iter
                depth += 1
                t_iter += base * 1.9**depth * self.rng.uniform(0.5, 1.5)
            if deadline is None and clock.should_stop(t, stability):
                deadline = clock.stop_time(t)
            if deadline is not None and t >= deadline:
                return t


def play_clock(main_ms, inc_ms=0, byoyomi_ms=0, plies=240, whole_seconds_server=False, seed=1, delay_ms=20):
    """Our clock over a game (we move on even plies; the opponent's time is not ours).

    Returns {ply: share of the main time spent} and checks every move: the thinking never
    passes the budget's maximum, and the clock never falls. A server (whole_seconds_server)
    charges whole seconds rounded down and sends whole seconds; otherwise milliseconds are
    charged, as scripts/match.py does."""
    rng = random.Random(seed)
    search = SimulatedSearch(rng)
    left = float(main_ms)
    spent = {}
    for ply in range(0, plies, 2):
        line = f"btime {int(left)} wtime {int(left)}"
        line += f" binc {inc_ms} winc {inc_ms}" if inc_ms else ""
        line += f" byoyomi {byoyomi_ms}" if byoyomi_ms else ""
        budget = compute_budget(go(line), 0, ply, S)
        thought = search.think(budget, rng.uniform(0.5, 1.0)) + 2  # +2 ms to print bestmove
        assert thought <= budget.maximum + 5 + 2, (ply, thought, budget)
        seen = thought + delay_ms  # what the GUI or server measures
        charged = (seen // 1000) * 1000 if whole_seconds_server else seen
        assert charged <= left + byoyomi_ms, f"lost on time at ply {ply}: {charged:.0f} ms, {left:.0f} left"
        left = max(0.0, left - charged) + inc_ms  # main time first, then the byoyomi
        spent[ply + 2] = (main_ms - left) / main_ms
    return spent


def mean_spent(ply, **kw):
    runs = [play_clock(seed=seed, **kw) for seed in range(6)]
    return sum(r[ply] for r in runs) / len(runs)


@pytest.mark.parametrize(
    "name,kw",
    [
        ("60 s sudden death", dict(main_ms=60000)),
        ("60 s + 1 s Fischer", dict(main_ms=60000, inc_ms=1000)),
        ("10 min sudden death", dict(main_ms=600000)),
        ("60 s sudden death, whole-second server", dict(main_ms=60000, whole_seconds_server=True)),
        (
            "60 s + 1 s Fischer, whole-second server",
            dict(main_ms=60000, inc_ms=1000, whole_seconds_server=True),
        ),
    ],
)
def test_main_time_spending_curve(name, kw):
    """70-90% of the main time is spent by ply 120 (increments all used), evenly: not
    front-loaded, and no flag falls in 240 plies."""
    by60, by120 = mean_spent(60, **kw), mean_spent(120, **kw)
    print(f"{name}: {by60:.0%} of the main time spent by ply 60, {by120:.0%} by ply 120")
    assert 0.70 <= by120 <= 0.90
    assert 0.25 <= by60 <= 0.60


def test_main_time_reserve():
    """NetworkDelay for 20 moves unless an increment pays it, plus the hiccup cushion,
    never more than half of the time left."""
    assert main_time_reserve(60000, 0, S) == 20 * S.network_delay + HICCUP_RESERVE_MS
    assert main_time_reserve(60000, 1000, S) == HICCUP_RESERVE_MS  # paid by the increment
    assert main_time_reserve(60000, 40, S) == 20 * (S.network_delay - 40) + HICCUP_RESERVE_MS
    assert main_time_reserve(400, 100, S) == 200  # at most half


def test_short_fischer_spends_the_main_time_and_keeps_the_cushion():
    """2 s + 0.1 s: the increment pays the network delay, so the main time is spent (the
    reserve for 20 NetworkDelays used to keep half of it), and no flag falls in 240 plies.
    Real games spend less than this simulation at such short budgets (docs/protocol.md)."""
    by120 = mean_spent(120, main_ms=2000, inc_ms=100)
    print(f"2 s + 0.1 s Fischer: {by120:.0%} of the main time spent by ply 120")
    assert by120 >= 0.70
    for left in (2000, 1000, 500, 200):
        b = compute_budget(go(f"btime {left} wtime {left} binc 100 winc 100"), 0, 100, S)
        # even a move that runs to its hard limit leaves the cushion (the increment aside)
        assert left - b.maximum >= min(left // 2, HICCUP_RESERVE_MS) - 100


def test_byoyomi_with_main_time_uses_the_main_time_too():
    """With byoyomi behind it the main time may run out (the byoyomi remains), but not early."""
    by60, by120 = (
        mean_spent(60, main_ms=60000, byoyomi_ms=1000),
        mean_spent(120, main_ms=60000, byoyomi_ms=1000),
    )
    print(f"60 s + 1 s byoyomi: {by60:.0%} of the main time spent by ply 60, {by120:.0%} by ply 120")
    assert 0.25 <= by60 <= 0.7 and by120 >= 0.7


def test_parse_go_searchmoves():
    p = go("btime 1000 wtime 1000 byoyomi 100 searchmoves 7g7f 2g2f")
    assert p.searchmoves == ["7g7f", "2g2f"] and p.byoyomi == 100
    p = go("searchmoves 7g7f P*5e depth 3")  # the moves end at the next keyword
    assert p.searchmoves == ["7g7f", "P*5e"] and p.depth == 3
    p, errors = parse_go(["searchmoves"])
    assert p.searchmoves is None and errors == ["go: searchmoves without moves, ignored"]
