"""Matches on Ray: a local cluster that stays on loopback (checked on its sockets), the
same games as a local run, a dead worker's game rescheduled and counted once, dispatch
stopped by the SPRT, and a cluster named by address joined with its token."""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time

import pytest
import ray

from usi_engine import cluster
from usi_engine.match.raycluster import RayMatch, connect
from usi_engine.match.referee import Reason
from usi_engine.match.play import run_match
from usi_engine.match.config import EngineSpec, MatchConfig, TimeControl, random_openings
from usi_engine.match.stats import Sprt

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def local_ray():
    assert connect(cluster.LOCAL, num_cpus=2)  # the path `--ray local` takes
    yield
    ray.shutdown()


def test_local_cluster_listens_and_talks_on_loopback_only(local_ray):
    @ray.remote
    def square(x: int) -> int:
        return x * x

    assert ray.get([square.remote(i) for i in range(4)]) == [0, 1, 4, 9]  # workers running
    pids = [os.getpid(), *cluster.descendants(os.getpid())]
    sockets = cluster.tcp_sockets(pids)
    listening = [s for s in sockets if s.state == "listen"]
    talking = [s for s in sockets if s.state == "established"]
    assert len(listening) >= 3 and len(talking) >= 3, sockets  # GCS, raylet, workers seen
    assert {s.pid for s in sockets} - {os.getpid()}, "no Ray process found"
    assert cluster.exposed_sockets() == []
    assert all(cluster.is_loopback(s.local[0]) for s in listening)
    assert all(cluster.is_loopback(s.remote[0]) for s in talking)


def test_socket_check_sees_what_is_exposed():
    with socket.socket() as server:  # a real listener, on loopback
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        mine = [s for s in cluster.tcp_sockets([os.getpid()]) if s.local[1] == port]
        assert [(s.state, s.local) for s in mine] == [("listen", ("127.0.0.1", port))]
        assert not cluster.exposed(mine[0])

    def listen(host: str) -> cluster.Socket:
        return cluster.Socket(1, "listen", (host, 6379), ("0.0.0.0", 0))

    def talk(local: str, remote: str) -> cluster.Socket:
        return cluster.Socket(1, "established", (local, 40000), (remote, 6379))

    for host in ("0.0.0.0", "::", "192.0.2.2", "::ffff:192.0.2.2"):
        assert cluster.exposed(listen(host)), host
    for host in ("127.0.0.1", "127.3.2.1", "::1", "::ffff:127.0.0.1"):
        assert not cluster.exposed(listen(host)), host
    assert cluster.exposed(talk("127.0.0.1", "192.0.2.2"))
    assert cluster.exposed(talk("::ffff:192.0.2.2", "::ffff:192.0.2.2"))
    assert not cluster.exposed(talk("::ffff:127.0.0.1", "127.0.0.1"))
    # /proc/net/tcp{,6} spell hosts in host byte order
    assert cluster._decode_address("0100007F:18EB", v6=False) == ("127.0.0.1", 6379)
    assert cluster._decode_address("0000000000000000FFFF00000100007F:18EB", v6=True) == (
        "::ffff:127.0.0.1",
        6379,
    )


def fixture_spec(name: str, *args: str) -> EngineSpec:
    return EngineSpec(
        [sys.executable, os.path.join(FIXTURES, "random_engine.py"), *args],
        name,
        tc=TimeControl(byoyomi_ms=1000),
    )


def _config(engines, out_dir, **kw) -> MatchConfig:
    kw.setdefault("games", 4)
    kw.setdefault("concurrency", 2)
    kw.setdefault("max_moves", 40)
    kw.setdefault("hang_timeout_ms", 2000)
    kw.setdefault("ready_timeout_s", 120)
    return MatchConfig(engines, out_dir=str(out_dir), **kw)


def _games(summary: dict) -> list[tuple]:
    return [
        (r["index"], r["pair"], r["black"], r["white"], r["result"], r["reason"], r["plies"], r["opening"])
        for r in summary["results"]
    ]


def _moves(out_dir: str, summary: dict) -> dict[int, list[str]]:
    """The moves of each game read back from its CSA record (times left out)."""
    moves = {}
    for r in summary["results"]:
        with open(os.path.join(out_dir, r["record"] + ".csa"), encoding="utf-8") as f:
            moves[r["index"]] = [
                line.split(",")[0]
                for line in f
                if line[:1] in "+-" and len(line.strip()) > 1 and line[1:2].isdigit()
            ]
    return moves


def _statistics(summary: dict) -> dict:
    keep = ("wins", "losses", "draws", "games", "pentanomial", "pairs", "elo", "elo_trinomial")
    return {k: summary["first_engine"][k] for k in keep}


@pytest.fixture(scope="module")
def warm_engine_cache():
    run = subprocess.run(
        [sys.executable, "-m", "usi_engine", "--warmup"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]


def test_ray_match_equals_local_match(tmp_path, local_ray, warm_engine_cache):
    engines = [
        EngineSpec([sys.executable, "-m", "usi_engine"], name, cwd=REPO, tc=TimeControl(nodes=nodes))
        for name, nodes in (("n300", 300), ("n150", 150))
    ]
    openings = random_openings(2, 8, seed=11)
    local = _config(engines, tmp_path / "local", openings=openings)
    remote = _config(engines, tmp_path / "ray", openings=openings, ray_address="auto")
    local_result = run_match(local)
    ray_result = run_match(remote)  # ray is already initialized: joins that cluster
    assert len(local_result.games) == len(ray_result.games) == 4
    summaries = [json.load(open(os.path.join(c.out_dir, "summary.json"))) for c in (local, remote)]
    assert _games(summaries[0]) == _games(summaries[1])
    assert _statistics(summaries[0]) == _statistics(summaries[1])
    assert summaries[0]["points"] == summaries[1]["points"]
    assert _moves(local.out_dir, summaries[0]) == _moves(remote.out_dir, summaries[1])
    assert all(len(m) > 8 for m in _moves(remote.out_dir, summaries[1]).values())
    for name in ("n300", "n150"):  # the workers' USI logs came back to --out
        log = open(os.path.join(remote.out_dir, "logs", f"{name}.log")).read()
        assert log.count("< bestmove") == log.count("> go ") > 0
        assert " r1#1 " in log and " r2#1 " in log


def test_dead_worker_game_is_rescheduled_and_counted_once(tmp_path, local_ray):
    once = tmp_path / "killed"
    engines = [fixture_spec("Killer", "--kill-parent-at", "3", "--once-file", str(once)), fixture_spec("B")]
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
    result = run_match(_config(engines, tmp_path / "out", games=40, sprt=Sprt(0, 200), ray_address="auto"))
    assert result.sprt_result == "H1" and 16 <= len(result.games) < 40
    summary = json.load(open(tmp_path / "out" / "summary.json"))
    assert summary["sprt"]["result"] == "H1" and summary["games"] == len(result.games)
    assert len({r["index"] for r in summary["results"]}) == len(result.games)


def test_ray_is_not_imported_without_ray(tmp_path):
    code = (
        "import sys; from usi_engine.match import cli; "
        f"rc = cli.main(['--engine', 'cmd={sys.executable} {FIXTURES}/random_engine.py', "
        f"'--engine', 'cmd={sys.executable} {FIXTURES}/random_engine.py', '--games', '2', "
        f"'--max-moves', '10', '--quiet', '--out', '{tmp_path}/out']); "
        "assert 'ray' not in sys.modules, 'ray imported'; sys.exit(rc)"
    )
    run = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": REPO},
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert json.load(open(tmp_path / "out" / "summary.json"))["games"] == 2


def test_cli_ray_flag(tmp_path, local_ray, capsys):
    from usi_engine.match import cli

    engine = f"cmd={sys.executable} {FIXTURES}/random_engine.py"
    rc = cli.main(
        [
            "--engine",
            engine,
            "name=a",
            "--engine",
            engine,
            "name=b",
            "--games",
            "2",
            "--max-moves",
            "10",
            "--quiet",
            "--ray",
            "auto",
            "--out",
            str(tmp_path / "out"),
        ]
    )
    assert rc == 0
    printed = capsys.readouterr().out
    assert "concurrency cluster CPUs, on Ray at auto" in printed and "Finished 2 of 2 games" in printed
    assert json.load(open(tmp_path / "out" / "summary.json"))["games"] == 2


def test_spsa_pairs_on_ray(tmp_path, local_ray, capsys):
    from usi_engine.match import tunecli
    from usi_engine.match.spsa import Spsa

    rc = tunecli.main(
        [
            "--engine",
            f"cmd={sys.executable} {FIXTURES}/tunable_engine.py",
            "--param",
            "Alpha",
            "20",
            "0",
            "100",
            "8",
            "0.15",
            "--param",
            "Beta",
            "80",
            "0",
            "100",
            "8",
            "0.15",
            "--pairs",
            "30",
            "--byoyomi",
            "2000",
            "--seed",
            "4",
            "--quiet",
            "--no-plot",
            "--ray",
            "auto",
            "--out",
            str(tmp_path / "tune"),
        ]
    )
    assert rc == 0
    assert "pairs Ray at auto" in capsys.readouterr().out
    spsa = Spsa.load(str(tmp_path / "tune" / "spsa.json"))
    assert spsa.done == 30 and len(spsa.results) == 30 and all(-2 <= r <= 2 for r in spsa.results)
    assert spsa.theta != [20.0, 80.0]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(home: str, **extra: str) -> dict[str, str]:
    """This environment without any Ray setting of the caller's, a home of its own (no
    token file), loopback-only clusters, and `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env.update(HOME=home, PYTHONPATH=REPO, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0", **extra)
    return env


@pytest.fixture
def token_head():
    """A head node on loopback that requires a token, as `ray start` makes one; yields
    (address, token) and stops every process it started."""
    work = tempfile.mkdtemp(prefix="rayhead")  # short: Ray's socket paths live here
    token, port = secrets.token_hex(32), _free_port()
    head = subprocess.Popen(
        [
            os.path.join(os.path.dirname(sys.executable), "ray"),
            "start",
            "--head",
            "--port",
            str(port),
            "--node-ip-address",
            "127.0.0.1",
            "--num-cpus",
            "2",
            "--include-dashboard=false",
            "--temp-dir",
            os.path.join(work, "t"),
            "--block",
        ],
        env=_env(work, RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=token),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.5)
        assert head.poll() is None, "ray start --head ended"
        yield f"127.0.0.1:{port}", token
        assert cluster.exposed_sockets([head.pid, *cluster.descendants(head.pid)]) == []
    finally:
        processes = [head.pid, *cluster.descendants(head.pid)]
        os.killpg(head.pid, signal.SIGTERM)
        try:
            head.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass  # Ray's own shutdown waits for its workers: no need
        for pid in processes:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        head.wait(timeout=30)


def _match_on(address: str, out: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    engine = f"cmd={sys.executable} {FIXTURES}/random_engine.py"
    return subprocess.run(
        [
            sys.executable,
            os.path.join(REPO, "scripts", "match.py"),
            "--engine",
            engine,
            "name=a",
            "--engine",
            engine,
            "name=b",
            "--games",
            "2",
            "--max-moves",
            "10",
            "--quiet",
            "--ready-timeout",
            "120",
            "--ray",
            address,
            "--out",
            out,
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_cluster_by_address_needs_its_token(tmp_path, token_head):
    address, token = token_head
    home = str(tmp_path / "home")
    os.makedirs(home)
    joined = _match_on(address, str(tmp_path / "with"), _env(home, RAY_AUTH_TOKEN=token))
    assert joined.returncode == 0, joined.stdout[-2000:] + joined.stderr[-2000:]
    assert json.load(open(tmp_path / "with" / "summary.json"))["games"] == 2
    refused = _match_on(address, str(tmp_path / "without"), _env(home))
    assert refused.returncode == 2, refused.stdout[-2000:] + refused.stderr[-2000:]
    message = [line for line in refused.stderr.splitlines() if line.startswith("match: ")]
    assert message == [
        f"match: could not join the Ray cluster at {address}: it asks for an "
        "authentication token and this machine has none ($RAY_AUTH_TOKEN, "
        "$RAY_AUTH_TOKEN_PATH or ~/.ray/auth_token). On the head node run `ray "
        "get-auth-token` and here `export RAY_AUTH_TOKEN=<that token>` (see "
        "docs/scaling.md#authentication-tokens)"
    ]
    assert not os.path.exists(tmp_path / "without" / "summary.json")


def test_nothing_at_the_address_is_said_at_once(tmp_path):
    address = f"127.0.0.1:{_free_port()}"
    started = time.monotonic()
    run = _match_on(address, str(tmp_path / "out"), _env(str(tmp_path)))
    assert run.returncode == 2 and time.monotonic() - started < 60
    assert f"match: nothing answers at {address}: is `ray start --head` running there" in run.stderr
