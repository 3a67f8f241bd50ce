"""scripts/move_times.py: relay, engine and server time of each move from a match's logs."""

from __future__ import annotations

import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(REPO, "scripts", "move_times.py")

# Worker 1: a plays a go move, b answers after a ponder hit, then b misses a ponder
# (stop, then go); a's ponder hit comes 70 ms after b's move, as through a slow GUI.
A_LOG = """\
     0.010 w1#1 > usinewgame
     1.000 w1#1 > go btime 0 wtime 0 byoyomi 1000
     1.880 w1#1 < bestmove 7g7f ponder 3c3d
     1.881 w1#1 > go ponder btime 0 wtime 0 byoyomi 1000
     3.440 w1#1 > ponderhit
     4.170 w1#1 < bestmove 2g2f ponder 8c8d
"""
B_LOG = """\
     0.011 w1#1 > usinewgame
     1.500 w1#1 > go ponder btime 0 wtime 0 byoyomi 1000
     1.885 w1#1 > ponderhit
     2.640 w1#1 < bestmove 3c3d ponder 2g2f
     2.641 w1#1 > go ponder btime 0 wtime 0 byoyomi 1000
     3.370 w1#1 < bestmove 8c8d
     4.171 w1#1 > stop
     4.180 w1#1 < bestmove 8d8e
     4.185 w1#1 > go btime 0 wtime 0 byoyomi 1000
     5.075 w1#1 < bestmove 4a3b
"""


def run(folder) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, SCRIPT, str(folder)], capture_output=True, text=True, timeout=60)


def test_relay_engine_and_server_times(tmp_path):
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "a.log").write_text(A_LOG)
    (tmp_path / "logs" / "b.log").write_text(B_LOG)
    out = run(tmp_path)
    assert out.returncode == 0, out.stderr
    rows = {tuple(line.split()[:2]): line.split()[2:] for line in out.stdout.splitlines()[1:]}
    # a's ponderhit: 70 ms relay after b's 3.370 bestmove, 730 ms of thinking, 800 on the server
    assert rows[("a", "ponderhit")] == ["1", "70/70", "730/730", "800/800", "0"]
    # b's ponderhit 5 ms after a's move; its go after the ponder miss 15 ms after a's 4.170
    # move (the stopped search's answer is not a move): 905 ms on the server, over 900
    assert rows[("b", "ponderhit")] == ["1", "5/5", "755/755", "760/760", "0"]
    assert rows[("b", "go")] == ["1", "15/15", "890/890", "905/905", "1"]
    assert ("a", "go") not in rows  # a's first go follows no move of b


def test_a_folder_without_logs_is_refused(tmp_path):
    out = run(tmp_path)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.strip() == (
        f"move_times: {tmp_path}: no logs/ folder (not a scripts/match.py --out folder)"
    )
