"""usi-engine move-quality: each engine's moves at equal nodes, judged by a deeper search."""

from __future__ import annotations

import json
import sys

import pytest
from processes import signal_once_engines_think, slow_engine

from usi_engine.commands import move_quality
from usi_engine.commands.move_quality import Choice, capped_cp, move_kind, positions_from_games
from usi_engine.record import csa_text, parse_record

ENGINE = f"cmd={sys.executable} -m usi_engine"
START = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1"
MIDDLE_GAME = "ln4k1l/1r4g2/p3sgspn/2ppppp1p/1p7/2PPP1P2/PPSG1P1PP/2G2S1R1/LNK4NL b Bb 41"
MATE_IN_ONE = "4k4/9/4P4/9/9/9/9/9/4K4 b G 1"  # G*5b: the judge calls it decided


def test_a_moves_loss_is_the_judges_difference_capped_and_a_mate_counts_3000():
    assert capped_cp("cp 35") == 35 and capped_cp("mate 3") == 3000 and capped_cp("mate -1") == -3000
    assert capped_cp("cp -9999") == -3000 and capped_cp(None) == 0
    same = Choice("g:1", "board move", "7g7f", 80, "7g7f", 50, 50)
    assert same.found and same.loss == 0 and same.bias == 30
    worse = Choice("g:2", "board move", "2g2f", -20, "7g7f", 50, -1200)
    assert not worse.found and worse.loss == move_quality.LOSS_CAP and worse.bias == -70
    # the judge's search of the move alone may come out above its own best: no gain counts
    assert Choice("g:3", "board move", "2g2f", 0, "7g7f", 50, 60).loss == 0


def test_the_kind_of_a_move_says_where_an_engine_misses():
    opened = f"sfen {START} moves 7g7f 3c3d"
    assert move_kind(opened, "8h2b+") == "capture"  # a capture first, though it promotes
    assert move_kind(opened, "2g2f") == "board move"
    assert move_kind(f"sfen {MATE_IN_ONE}", "G*5b") == "check"
    assert move_kind(f"sfen {MATE_IN_ONE}", "G*1a") == "drop"
    assert move_kind(f"sfen {MATE_IN_ONE} moves G*4b", "5a4b") == "evasion"  # takes the checker


def test_positions_from_games_take_every_nth_ply_with_the_moves_before(tmp_path):
    games = tmp_path / "games"
    games.mkdir()
    record = parse_record("position startpos moves 7g7f 3c3d 2g2f 8c8d 2f2e 8d8e")
    (games / "game_001.csa").write_text(csa_text(record))
    probes = positions_from_games(str(tmp_path), every=2, from_ply=2)
    assert [p.label for p in probes] == ["game_001.csa:2", "game_001.csa:4", "game_001.csa:6"]
    assert probes[0].position == f"sfen {START} moves 7g7f"  # the position before ply 2
    assert probes[2].position == f"sfen {START} moves 7g7f 3c3d 2g2f 8c8d 2f2e"


def test_a_folder_without_games_is_refused_by_name(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        move_quality.main(["--games", str(tmp_path), "--engine", ENGINE, "--judge", ENGINE])
    assert exc.value.code == 2
    assert f"no games/*.csa in {tmp_path}" in capsys.readouterr().err


def test_limits_below_one_are_refused(tmp_path, capsys):
    with pytest.raises(SystemExit):
        move_quality.main(["--positions", str(tmp_path / "p.txt"), "--every", "0"])
    assert "must be at least 1" in capsys.readouterr().err


def test_two_engines_judged_and_the_judges_answers_kept(tmp_path, capsys):
    positions = tmp_path / "p.txt"
    positions.write_text(f"{START}  # start\n{MIDDLE_GAME}  # middle game\n{MATE_IN_ONE}  # mate\n")
    cache, out = tmp_path / "judge.json", tmp_path / "choices.jsonl"
    argv = ["--positions", str(positions), "--nodes", "300", "--judge", ENGINE, "--judge-nodes", "3000"]
    argv += ["--engine", ENGINE, "name=first", "--engine", ENGINE, "name=second", "option.LMR=false"]
    argv += ["--cache", str(cache), "--out", str(out)]
    assert move_quality.main(argv) == 0
    printed = capsys.readouterr().out
    assert "# 3 positions" in printed and "2 not decided by the judge" in printed
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["engine"] for r in rows] == ["first", "first", "second", "second"]
    for r in rows:
        assert r["loss"] == (
            0 if r["move"] == r["judge_move"] else min(max(r["judge_best"] - r["judge_of_move"], 0), 1000)
        )
    firsts = [line for line in printed.splitlines() if line.startswith("first ")]
    assert len(firsts) == 1 and firsts[0].split()[1] == "2"
    assert "second: " in printed and " cp a move, judge's move " in printed
    kinds = printed.split("mean loss by the kind of the judge's move: first, second")[1].split("against")[0]
    assert sum(int(line.split()[-4]) for line in kinds.strip().splitlines()) == 2  # the live positions
    # the judge searched each position once and each other move once; a second run asks nothing
    asked = int(printed.split("# the judge searched ")[1].split()[0])
    assert asked == 3 + len({(r["label"], r["move"]) for r in rows if r["move"] != r["judge_move"]})
    assert move_quality.main(argv) == 0
    assert "# the judge searched 0 times in this run" in capsys.readouterr().out


def test_a_kill_ends_every_engine_of_every_thread(tmp_path):
    """SIGTERM to move-quality alone while two judges think (their engines run in sessions of
    their own, which no signal to the command reaches): it kills them, ends its threads,
    and keeps the judge's file readable."""
    positions = tmp_path / "p.txt"
    positions.write_text(f"{START}  # start\n{MIDDLE_GAME}  # middle game\n")
    pids = tmp_path / "pids"
    slow = slow_engine(tmp_path, pids)
    cache = tmp_path / "judge.json"
    cmd = [sys.executable, "-m", "usi_engine", "move-quality", "--positions", str(positions)]
    cmd += ["--judge", f"cmd={slow}", "--engine", ENGINE, "--concurrency", "2", "--cache", str(cache)]
    done = signal_once_engines_think(cmd, pids, 2)
    assert done.returncode == 143, done.stderr
    assert "move-quality: stopped (SIGTERM); the judge's answers so far are kept" in done.stderr
    assert all(answers == {} for answers in json.loads(cache.read_text()).values())
