"""Matches on a local Ray cluster bound to 127.0.0.1: the same games as a local run,
a dead worker's game rescheduled and counted once, dispatch stopped by the SPRT."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import ray

from usi_engine.match.raycluster import RayMatch
from usi_engine.match.referee import Reason
from usi_engine.match.runner import (EngineSpec, MatchConfig, TimeControl, random_openings,
                                     run_match)
from usi_engine.match.stats import Sprt

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def local_ray():
    ray.init(address="local", num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1",
             log_to_driver=False, configure_logging=False,
             runtime_env={"env_vars": {"PYTHONPATH": REPO}})
    yield
    ray.shutdown()


def fixture_spec(name: str, *args: str) -> EngineSpec:
    return EngineSpec([sys.executable, os.path.join(FIXTURES, "random_engine.py"), *args], name,
                      tc=TimeControl(byoyomi_ms=1000))


def _config(engines, out_dir, **kw) -> MatchConfig:
    kw.setdefault("games", 4)
    kw.setdefault("concurrency", 2)
    kw.setdefault("max_moves", 40)
    kw.setdefault("hang_timeout_ms", 2000)
    kw.setdefault("ready_timeout_s", 120)
    return MatchConfig(engines, out_dir=str(out_dir), **kw)


def _games(summary: dict) -> list[tuple]:
    return [(r["index"], r["pair"], r["black"], r["white"], r["result"], r["reason"], r["plies"],
             r["opening"]) for r in summary["results"]]


def _moves(out_dir: str, summary: dict) -> dict[int, list[str]]:
    """The moves of each game read back from its CSA record (times left out)."""
    moves = {}
    for r in summary["results"]:
        with open(os.path.join(out_dir, r["record"] + ".csa"), encoding="utf-8") as f:
            moves[r["index"]] = [line.split(",")[0] for line in f
                                 if line[:1] in "+-" and len(line.strip()) > 1 and line[1:2].isdigit()]
    return moves


def _statistics(summary: dict) -> dict:
    keep = ("wins", "losses", "draws", "games", "pentanomial", "pairs", "elo", "elo_trinomial")
    return {k: summary["first_engine"][k] for k in keep}


@pytest.fixture(scope="module")
def warm_engine_cache():
    run = subprocess.run([sys.executable, "-m", "usi_engine", "--warmup"], cwd=REPO,
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]


def test_ray_match_equals_local_match(tmp_path, local_ray, warm_engine_cache):
    engines = [EngineSpec([sys.executable, "-m", "usi_engine"], name, cwd=REPO,
                          tc=TimeControl(nodes=nodes)) for name, nodes in (("n300", 300), ("n150", 150))]
    openings = random_openings(2, 8, seed=11)
    local = _config(engines, tmp_path / "local", openings=openings)
    remote = _config(engines, tmp_path / "ray", openings=openings, ray_address="auto")
    local_result = run_match(local)
    ray_result = run_match(remote)      # ray is already initialized: joins that cluster
    assert len(local_result.games) == len(ray_result.games) == 4
    summaries = [json.load(open(os.path.join(c.out_dir, "summary.json"))) for c in (local, remote)]
    assert _games(summaries[0]) == _games(summaries[1])
    assert _statistics(summaries[0]) == _statistics(summaries[1])
    assert summaries[0]["points"] == summaries[1]["points"]
    assert _moves(local.out_dir, summaries[0]) == _moves(remote.out_dir, summaries[1])
    assert all(len(m) > 8 for m in _moves(remote.out_dir, summaries[1]).values())
    for name in ("n300", "n150"):   # the workers' USI logs came back to --out
        log = open(os.path.join(remote.out_dir, "logs", f"{name}.log")).read()
        assert log.count("< bestmove") == log.count("> go ") > 0
        assert " r1#1 " in log and " r2#1 " in log


def test_dead_worker_game_is_rescheduled_and_counted_once(tmp_path, local_ray):
    once = tmp_path / "killed"
    engines = [fixture_spec("Killer", "--kill-parent-at", "3", "--once-file", str(once)),
               fixture_spec("B")]
    match = RayMatch(_config(engines, tmp_path / "out", games=6))
    result = match.run()
    assert once.exists() and match.rescheduled == 1
    assert sorted(g.index for g in result.games) == list(range(1, 7))
    summary = json.load(open(tmp_path / "out" / "summary.json"))
    assert summary["games"] == 6 and len({r["index"] for r in summary["results"]}) == 6
    assert sum(summary["points"].values()) == 6
    assert not {g.outcome.reason for g in result.games} & {Reason.CRASH, Reason.TIMEOUT}


def test_sprt_stops_dispatch_on_ray(tmp_path, local_ray):
    engines = [fixture_spec("Good"), fixture_spec("Crasher")]
    engines[1].cmd = [sys.executable, os.path.join(FIXTURES, "crash_engine.py")]
    result = run_match(_config(engines, tmp_path / "out", games=40, sprt=Sprt(0, 200),
                               ray_address="auto"))
    assert result.sprt_result == "H1" and 16 <= len(result.games) < 40
    summary = json.load(open(tmp_path / "out" / "summary.json"))
    assert summary["sprt"]["result"] == "H1" and summary["games"] == len(result.games)
    assert len({r["index"] for r in summary["results"]}) == len(result.games)


def test_ray_is_not_imported_without_ray(tmp_path):
    code = ("import sys; from usi_engine.match import cli; "
            f"rc = cli.main(['--engine', 'cmd={sys.executable} {FIXTURES}/random_engine.py', "
            f"'--engine', 'cmd={sys.executable} {FIXTURES}/random_engine.py', '--games', '2', "
            f"'--max-moves', '10', '--quiet', '--out', '{tmp_path}/out']); "
            "assert 'ray' not in sys.modules, 'ray imported'; sys.exit(rc)")
    run = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                         timeout=120, env={**os.environ, "PYTHONPATH": REPO})
    assert run.returncode == 0, run.stdout + run.stderr
    assert json.load(open(tmp_path / "out" / "summary.json"))["games"] == 2


def test_cli_ray_flag(tmp_path, local_ray, capsys):
    from usi_engine.match import cli
    engine = f"cmd={sys.executable} {FIXTURES}/random_engine.py"
    rc = cli.main(["--engine", engine, "name=a", "--engine", engine, "name=b", "--games", "2",
                   "--max-moves", "10", "--quiet", "--ray", "auto", "--out", str(tmp_path / "out")])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "concurrency cluster CPUs, on Ray at auto" in printed and "Finished 2 of 2 games" in printed
    assert json.load(open(tmp_path / "out" / "summary.json"))["games"] == 2


def test_spsa_pairs_on_ray(tmp_path, local_ray, capsys):
    from usi_engine.match import tunecli
    from usi_engine.match.spsa import Spsa
    rc = tunecli.main(["--engine", f"cmd={sys.executable} {FIXTURES}/tunable_engine.py",
                       "--param", "Alpha", "20", "0", "100", "8", "0.15",
                       "--param", "Beta", "80", "0", "100", "8", "0.15", "--pairs", "30",
                       "--byoyomi", "2000", "--seed", "4", "--quiet", "--no-plot", "--ray", "auto",
                       "--out", str(tmp_path / "tune")])
    assert rc == 0
    assert "pairs Ray at auto" in capsys.readouterr().out
    spsa = Spsa.load(str(tmp_path / "tune" / "spsa.json"))
    assert spsa.done == 30 and len(spsa.results) == 30 and all(-2 <= r <= 2 for r in spsa.results)
    assert spsa.theta != [20.0, 80.0]
