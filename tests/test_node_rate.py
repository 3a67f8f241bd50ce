"""usi-engine node-rate: two USI engines on the same positions, their own figures side by side."""

from __future__ import annotations

import sys

from processes import signal_once_engines_think, slow_engine

from usi_engine.commands import node_rate


def test_info_lines_give_depth_nodes_and_time():
    out = node_rate.Searched()
    node_rate.read_info(
        "info depth 12 seldepth 20 score cp 31 nodes 5000 nps 9 time 250 pv 7g7f".split(), out
    )
    node_rate.read_info("info depth 13 seldepth 22 score cp 30 upperbound nodes 9000 time 400".split(), out)
    # a bound without a PV moves the node count on, not the depth finished
    assert (out.depth, out.seldepth, out.nodes, out.time_ms, out.nps) == (12, 20, 9000, 400, 22500)
    node_rate.read_info("info string nodes 1 time 1".split(), out)
    assert out.nodes == 9000


def test_engine_arguments_keep_the_fair_options_unless_overridden():
    engine = node_rate.parse_engine(["cmd=./yo --x", "option.USI_Hash=64"])
    assert engine.cmd == ["./yo", "--x"] and engine.name == "yo"
    assert engine.options == {**node_rate.FAIR_OPTIONS, "USI_Hash": "64"}


def test_two_engines_side_by_side(tmp_path, capsys):
    positions = tmp_path / "p.txt"
    positions.write_text(
        "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1  # middle game: start\n"
        "ln1g3nl/1r1sk1g2/p1pppp1pp/1p4p2/9/2P4P1/PPSPPPP1P/2G2S1R1/LN2KG1NL b Bb 1  # opening\n"
    )
    cmd = f"cmd={sys.executable} -m usi_engine"
    rc = node_rate.main(
        ["--positions", str(positions), "--byoyomi", "300"]
        + ["--engine", cmd, "name=first", "--engine", cmd, "name=second", "option.USI_Hash=16"]
    )
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "# 1 positions" in out  # only the middle game is taken when one is marked
    rows = [line.split() for line in out.splitlines() if line.startswith("  1 |")]
    assert len(rows) == 1
    figures = [int(x) for x in rows[0] if x != "|"][1:]
    assert len(figures) == 8 and all(f > 0 for f in figures)  # depth, seldepth, nodes, nps each
    assert "first: median nodes/s" in out and "second: median nodes/s" in out
    assert "node rate first / second:" in out


def test_fixed_depth_reports_nodes_per_depth(tmp_path, capsys):
    positions = tmp_path / "p.txt"
    positions.write_text("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1  # the start\n")
    cmd = f"cmd={sys.executable} -m usi_engine"
    rc = node_rate.main(
        ["--positions", str(positions), "--depth", "6"]
        + ["--engine", cmd, "name=first", "--engine", cmd, "name=second", "option.USI_Hash=16"]
    )
    out = capsys.readouterr().out
    assert rc == 0, out
    lines = {line.split(":")[0]: line for line in out.splitlines() if line.startswith(("first:", "second:"))}
    # one search per engine reported every iteration; nodes grow with depth; the same engine
    # at a fixed depth searches the same tree whatever its hash size here
    per_depth = [int(cell.split(":")[1]) for cell in lines["first"].split(";")[0].split()[1:]]
    assert len(per_depth) == 5 and per_depth == sorted(per_depth) and per_depth[0] > 0
    assert "nodes to depth 6 first / second: 1.00" in out


def test_a_matchs_logs_give_each_engines_node_rate(tmp_path, capsys):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "alpha.log").write_text(
        "     0.100 w1#1 > position startpos\n"
        "     0.101 w1#1 > go btime 0 wtime 0 byoyomi 1000\n"
        "     0.200 w2#1 > go btime 0 wtime 0 byoyomi 1000\n"  # another game's process
        "     0.900 w1#1 < info depth 9 seldepth 12 score cp 3 nodes 400000 nps 1 time 800 pv 7g7f\n"
        "     0.950 w2#1 < info depth 7 seldepth 9 score cp 3 nodes 50000 time 500 pv 2g2f\n"
        "     0.990 w1#1 < bestmove 7g7f\n"
        "     1.000 w2#1 < bestmove 2g2f\n"
        "     1.100 w1#1 > go btime 0 wtime 0 byoyomi 1000\n"
        "     1.130 w1#1 < info depth 3 nodes 900 time 20 pv 3c3d\n"  # too short to count
        "     1.131 w1#1 < bestmove 3c3d\n"
    )
    (logs / "beta.log").write_text("     0.100 w1#2 > usi\n")
    assert node_rate.main(["--match-logs", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "alpha: median nodes/s 300000, median depth 8 over 2 moves",  # 500,000 and 100,000
        f"beta: no move of {node_rate.MIN_MOVE_MS} ms or more with nodes and time",
    ]
    assert node_rate.main(["--match-logs", str(tmp_path / "nothing")]) == 1


def test_a_kill_ends_the_engines(tmp_path):
    """SIGTERM to node-rate alone: its engines run in sessions of their own, which no signal
    to the command reaches, so it ends them itself."""
    positions = tmp_path / "p.txt"
    positions.write_text("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1  # the start\n")
    pids = tmp_path / "pids"
    slow = slow_engine(tmp_path, pids)
    cmd = [
        sys.executable,
        "-m",
        "usi_engine",
        "node-rate",
        "--positions",
        str(positions),
        "--byoyomi",
        "1000",
    ]
    engines = ["--engine", f"cmd={slow}", "name=first", "--engine", f"cmd={slow}", "name=second"]
    done = signal_once_engines_think(cmd + engines, pids, 2)
    assert done.returncode == 143 and "node-rate: stopped (SIGTERM)" in done.stderr
