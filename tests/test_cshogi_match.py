"""`usi-engine cshogi-match`: a match refereed by cshogi's match client, kept pair by pair."""

import json
import os
import signal
import sys

import pytest
from processes import (
    RANDOM_ENGINE,
    alive,
    pid_recording_engine,
    processes_with,
    recorded_pids,
    signal_once_engines_think,
    slow_engine,
)

from usi_engine.commands import cshogi_match

RANDOM = str(RANDOM_ENGINE)  # the client starts an engine by its path alone
OPENINGS = [
    "startpos moves 7g7f 3c3d",
    "startpos moves 2g2f 8c8d",
    "startpos moves 7g7f 8c8d 2g2f",
]


@pytest.fixture
def openings(tmp_path, monkeypatch):
    # the client starts an engine by its path: its shebang's python3 must be this one
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    path = tmp_path / "openings.txt"
    path.write_text("# three short openings\n" + "\n".join(OPENINGS) + "\n", encoding="utf-8")
    return path


def argv(openings, out, games=4, *extra):
    return [
        "--engine1", RANDOM, "--name1", "first", "--engine2", RANDOM, "--name2", "second",
        "--games", str(games), "--byoyomi", "100", "--max-moves", "60",
        "--openings", str(openings), "--concurrency", "2", "--out", str(out), *extra,
    ]  # fmt: skip


def test_pairs_are_played_kept_and_not_played_again(tmp_path, openings, capsys):
    out = tmp_path / "run"
    assert cshogi_match.main(argv(openings, out)) == 0
    text = capsys.readouterr().out
    pairs = [json.loads(line) for line in (out / "pairs.jsonl").read_text().splitlines()]
    assert sorted(p["pair"] for p in pairs) == [1, 2] and sorted(p["opening"] for p in pairs) == [1, 2]
    scores = [g["score"] for p in pairs for g in p["games"]]
    wins, losses = scores.count(1.0), scores.count(0.0)
    assert len(scores) == 4 and wins + losses + scores.count(0.5) == 4
    assert f"first vs second (cshogi's client): W-L-D {wins}-{losses}-{4 - wins - losses}" in text
    assert "Endings: " in text
    assert all(g["ending"] in dict(cshogi_match.ENDINGS).values() for p in pairs for g in p["games"])
    # the client's openings file holds only the openings played, line i for pair i
    assert (out / "openings.txt").read_text().splitlines() == OPENINGS[:2]
    # each pair's two CSA records start from its opening
    for pair, first_move in ((1, "+7776FU"), (2, "+2726FU")):
        records = list((out / "csa" / f"pair-{pair:04d}").glob("*.csa"))
        assert len(records) == 2 and all(first_move in r.read_text() for r in records)

    # a line cut by a kill is passed over, and the next record does not join it
    with open(out / "pairs.jsonl", "a") as fh:
        fh.write('{"pair": 2, "ope')
    # the same command again plays nothing; two games more play only the third pair
    assert cshogi_match.main(argv(openings, out)) == 0
    assert "2 played before, 0 to play" in capsys.readouterr().out
    assert cshogi_match.main(argv(openings, out, 6)) == 0
    assert "2 played before, 1 to play" in capsys.readouterr().out
    lines = (out / "pairs.jsonl").read_text().splitlines()
    assert lines[2] == '{"pair": 2, "ope'  # the cut line, left as it was
    assert sorted(json.loads(line)["pair"] for line in lines[:2] + lines[3:]) == [1, 2, 3]


def test_a_folder_of_another_run_is_refused(tmp_path, openings):
    out = tmp_path / "run"
    assert cshogi_match.main(argv(openings, out, 2)) == 0
    before = (out / "pairs.jsonl").read_text()
    with pytest.raises(SystemExit, match=r"holds a run with other settings \(byoyomi\)"):
        cshogi_match.main([*argv(openings, out, 2)[:-2], "--byoyomi", "200", "--out", str(out)])
    assert (out / "pairs.jsonl").read_text() == before


@pytest.mark.parametrize("resign_at, counted", [(1, 2), (2, 0)], ids=["at-once", "after-a-move"])
def test_a_loss_before_the_first_move_is_reported_apart(tmp_path, openings, capsys, resign_at, counted):
    """An engine resigning at its first turn after the opening, in both colours, is named
    under the endings; one that resigns after a move of its own is not."""
    (tmp_path / "a").mkdir()
    resigning = pid_recording_engine(
        tmp_path / "a", f'"{sys.executable}" "{RANDOM_ENGINE}" --resign-at {resign_at}', tmp_path / "pids"
    )
    out = tmp_path / "run"
    args = argv(openings, out, 2)
    args[args.index("--engine1") + 1] = str(resigning)
    assert cshogi_match.main(args) == 0
    text = capsys.readouterr().out
    assert "W-L-D 0-2-0" in text and "Endings: checkmate or resignation 2" in text
    (pair,) = [json.loads(line) for line in (out / "pairs.jsonl").read_text().splitlines()]
    # opening 1 is two plies; black (engine 1 first) resigns at once, or after one move each
    assert pair["opening_plies"] == 2
    assert [g["plies"] for g in pair["games"]] == ([2, 3] if resign_at == 1 else [4, 5])
    if counted:
        assert f"Lost before its first move: first {counted} (resigned or mated" in text
    else:
        assert "Lost before its first move" not in text


def test_bad_openings_and_games_are_refused(tmp_path, openings):
    with pytest.raises(SystemExit, match="3 openings, not enough for 4 pairs from opening 1"):
        cshogi_match.main(argv(openings, tmp_path / "a", 8))
    with pytest.raises(SystemExit, match="--games is an even number of at least 2, not 3"):
        cshogi_match.main(argv(openings, tmp_path / "b", 3))
    sfen = tmp_path / "sfen.txt"
    sfen.write_text("sfen lnsgkgsnl/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="opening 1 does not start from the initial position"):
        cshogi_match.main(argv(sfen, tmp_path / "c", 2))
    assert not (tmp_path / "a").exists() and not (tmp_path / "c").exists()


def test_a_client_that_fails_names_its_log(tmp_path, openings, capsys):
    out = tmp_path / "run"
    args = argv(openings, out, 2)
    args[args.index("--engine2") + 1] = str(tmp_path / "no_such_engine")
    assert cshogi_match.main(args) == 1
    text = capsys.readouterr().out
    assert "pair 1: the client exited with 1; its output is in" in text
    assert "pair-0001.log" in text and not (out / "pairs.jsonl").read_text()


def test_a_pair_whose_engine_died_is_killed_at_its_time_limit(tmp_path, openings, capsys):
    """cshogi's client waits for ever on an engine that died: the pair is killed, with the
    engine still running, at --pair-timeout, and the run stops naming its log."""
    pids = tmp_path / "pids"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    crashing = pid_recording_engine(
        tmp_path / "a", f'"{sys.executable}" "{RANDOM_ENGINE}" --crash-at 3', pids
    )
    healthy = pid_recording_engine(tmp_path / "b", f'"{sys.executable}" "{RANDOM_ENGINE}"', pids)
    out = tmp_path / "run"
    args = argv(openings, out, 2, "--pair-timeout", "5")
    args[args.index("--engine1") + 1] = str(crashing)
    args[args.index("--engine2") + 1] = str(healthy)
    assert cshogi_match.main(args) == 1
    text = capsys.readouterr().out
    assert "pair 1: the client did not finish in 5 s (an engine that died or hung?) and was killed" in text
    assert "its output is in" in text and not (out / "pairs.jsonl").read_text()
    assert len(recorded_pids(pids)) == 2 and not any(alive(pid) for pid in recorded_pids(pids))
    assert not processes_with(str(out))  # nor the client
    with pytest.raises(SystemExit, match="--pair-timeout is a number of seconds above 0, not -1"):
        cshogi_match.main(argv(openings, tmp_path / "b", 2, "--pair-timeout", "-1"))


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_kill_of_the_run_ends_its_clients_and_their_engines(tmp_path, openings, signum):
    """A signal to the run alone, while both pairs' clients have their engines thinking:
    SIGTERM stops the run, which ends them; after SIGKILL each client's orphan guard does."""
    pids = tmp_path / "pids"
    slow = slow_engine(tmp_path, pids)
    out = tmp_path / "run"
    args = argv(openings, out, 4)
    args[args.index("--engine1") + 1] = args[args.index("--engine2") + 1] = str(slow)
    command = [sys.executable, "-m", "usi_engine", "cshogi-match", *args]
    done = signal_once_engines_think(command, pids, 4, signum)  # every engine ended, or it fails
    if signum == signal.SIGKILL:
        assert done.returncode == -signal.SIGKILL
    else:
        assert done.returncode == 143
        assert "cshogi-match: stopped (SIGTERM); the same command goes on" in done.stdout
    assert (out / "pairs.jsonl").read_text() == ""  # nothing kept of the unfinished pairs
