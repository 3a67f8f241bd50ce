"""Self-play data generation: PackedSfenValue records against cshogi, the game rules of
self-play, determinism for a fixed seed (across worker counts), resuming, the teacher."""

import json
import os
import random
import sys
from dataclasses import replace

import cshogi
import numpy as np
import pytest

from usi_engine.position import Position, START_SFEN
from usi_engine.training.data import psv
from usi_engine.training.data.gensfen import (
    GenConfig,
    TEACHER_FAILED_GAMES,
    TEACHER_RETRIES,
    format_summary,
    generate_shard,
    run,
    shard_path,
)
from usi_engine.training.data.labeler import Line, parse_info_line
from usi_engine.training.data.selfplay import PlayConfig, play_game
from usi_engine.usiproc import EngineTimeout

TINY = PlayConfig(
    random_moves=2,
    random_max_ply=6,
    multipv=3,
    multipv_plies=8,
    multipv_margin=100,
    opening_limit=600,
    write_min_ply=8,
    max_ply=120,
)


def random_positions(count, seed):
    """(sfen, legal move) pairs from random playouts, with drops and promotions."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        board = cshogi.Board()
        for _ in range(rng.randrange(10, 120)):
            moves = list(board.legal_moves)
            if not moves or board.is_draw() != cshogi.NOT_REPETITION:
                break
            board.push(rng.choice(moves))
        moves = list(board.legal_moves)
        if moves:
            out.append((board.sfen(), cshogi.move_to_usi(rng.choice(moves)), board.move_number))
    return out


# --- PackedSfenValue ----------------------------------------------------------------------


def test_record_round_trip_against_cshogi(tmp_path):
    cases = random_positions(300, 5)
    recs = np.array(
        [psv.make_record(s, (i * 37) % 4000 - 2000, m, n, (i % 3) - 1) for i, (s, m, n) in enumerate(cases)],
        psv.PSV_DTYPE,
    )
    path = str(tmp_path / "r.bin")
    psv.write_records(path, recs)
    assert os.path.getsize(path) == 40 * len(cases)
    back = psv.read_records(path)
    raw = np.fromfile(path, cshogi.PackedSfenValue)  # cshogi reads our file
    board = cshogi.Board()
    for i, (sfen, move, ply) in enumerate(cases):
        board.set_psfen(raw[i]["sfen"])
        assert board.sfen().split()[:3] == sfen.split()[:3]
        want = cshogi.Board(sfen)
        assert raw[i]["move"] == cshogi.move16(want.move_from_usi(move))
        assert psv.record_move(back[i]) == move
        assert psv.record_sfen(back[i]) == " ".join(sfen.split()[:3] + [str(ply)])
        assert back[i]["score"] == (i * 37) % 4000 - 2000
        assert back[i]["game_result"] == (i % 3) - 1
        assert back[i]["gamePly"] == ply
        ours = np.zeros(32, np.uint8)
        want.to_psfen(ours)
        assert bytes(ours) == bytes(back[i]["sfen"])


def test_record_rejects_bad_input(tmp_path):
    with pytest.raises(ValueError, match="illegal move '5e5d'"):
        psv.make_record(START_SFEN, 0, "5e5d", 1, psv.WIN)
    with pytest.raises(ValueError, match="result must be 1, 0 or -1"):
        psv.make_record(START_SFEN, 0, "7g7f", 1, 2)
    path = tmp_path / "cut.bin"
    path.write_bytes(bytes(psv.make_record(START_SFEN, 0, "7g7f", 1, psv.WIN).tobytes()) + b"\0" * 7)
    with pytest.raises(ValueError, match="47 bytes is not a multiple of the 40-byte"):
        psv.read_records(str(path))
    assert psv.make_record(START_SFEN, 99999, "7g7f", 1, psv.WIN)["score"] == psv.SCORE_LIMIT


# --- one game -------------------------------------------------------------------------------


class Scripted:
    """A labeler that answers from a function of the game: for rule tests."""

    def __init__(self, answer):
        self.answer = answer
        self.games = 0

    def new_game(self):
        self.games += 1

    def search(self, game, multipv, opening=False):
        return self.answer(game)


NO_OPENING = PlayConfig(
    random_moves=0,
    random_max_ply=0,
    multipv=1,
    multipv_plies=0,
    opening_limit=10**6,
    write_min_ply=0,
    max_ply=400,
)


def test_game_ends_by_sennichite_and_keeps_records_as_draws():
    cycle = ["5i4h", "5a4b", "4h5i", "4b5a"]
    labeler = Scripted(lambda g: [Line(cycle[len(g.moves) % 4], 10, None)])
    out = play_game(random.Random(1), labeler, NO_OPENING, "4k4/9/9/9/9/9/9/9/4K4 b - 1")
    assert out.reason == "sennichite" and out.result_black == psv.DRAW
    assert out.plies == 12  # the start position occurs a fourth time
    assert len(out.records) == 12
    assert all(int(r["game_result"]) == 0 for r in out.records)


def test_game_adjudicated_by_score_gives_results_by_side():
    # black is up a rook: the labeler reports +800 for black, -800 for white, then 3500
    def answer(g):
        if len(g.moves) == 4:
            return [Line("5i4h", 3500, None)]
        black = g.pos.side_to_move() == 0
        move = ["5i4h", "5a4b", "4h5i", "4b5a"][len(g.moves) % 4]
        return [Line(move, 800 if black else -800, None)]

    out = play_game(random.Random(1), Scripted(answer), NO_OPENING, "4k4/9/9/9/9/9/9/9/R3K4 b - 1")
    assert out.reason == "eval limit" and out.result_black == psv.WIN
    assert [int(r["game_result"]) for r in out.records] == [1, -1, 1, -1]
    assert [int(r["score"]) for r in out.records] == [800, -800, 800, -800]
    assert [int(r["gamePly"]) for r in out.records] == [1, 2, 3, 4]


def test_the_opening_plies_are_searched_as_the_opening():
    """The labeler is told which searches play the opening (MultiPV, not written): a teacher
    may search those shallower.  The balance check at the opening's end is a full search."""
    asked = []

    def answer(g):
        move = ["5i4h", "5a4b", "4h5i", "4b5a"][len(g.moves) % 4]
        return [Line(move, 0, None)]

    class Recording(Scripted):
        def search(self, game, multipv, opening=False):
            asked.append((len(game.moves), multipv, opening))
            return self.answer(game)

    cfg = replace(NO_OPENING, multipv=2, multipv_plies=4, max_ply=8)
    out = play_game(random.Random(1), Recording(answer), cfg, "4k4/9/9/9/9/9/9/9/4K4 b - 1")
    assert out.reason == "max plies"
    assert asked == [(ply, 2 if ply < 4 else 1, ply < 4) for ply in range(8)]


def test_game_skips_checks_captures_and_mate_scores():
    # black captures with check, white steps aside in check, black checks quietly (kept),
    # white steps aside in check again, then the labeler reports a mate
    sfen = "4k4/9/4p4/9/9/9/9/4R4/4K4 b - 1"
    script = [
        Line("5h5c+", 900, None),
        Line("5a4a", -900, None),
        Line("5c5b", 950, None),
        Line("4a3a", -950, None),
        Line("5b4b", None, 3),
    ]
    out = play_game(random.Random(1), Scripted(lambda g: [script[len(g.moves)]]), NO_OPENING, sfen)
    assert out.skipped == {"capture": 1, "in check": 2}
    assert out.reason == "mate score" and out.result_black == psv.WIN
    assert [psv.record_move(r) for r in out.records] == ["5c5b"]


def mate_in_one_labeler():
    """Answers as an engine would, from the position itself: a move that leaves the other
    side no legal move when there is one, else the first legal move, at 0 cp; no line
    only when the side to move has no legal move."""

    def answer(g):
        moves = [m.usi() for m in g.pos.legal_moves()]
        for move in moves:
            after = g.pos.copy()
            after.push(move)
            if not after.legal_moves():
                return [Line(move, 0, None)]
        return [Line(moves[0], 0, None)] if moves else []

    return Scripted(answer)


@pytest.mark.parametrize(
    "sfen, mating_move, result_black",
    [
        ("4k4/9/4P4/9/9/9/9/9/4K4 b G 1", "G*5b", psv.WIN),  # black mates white
        ("4k4/9/9/9/9/9/4p4/9/4K4 w g 1", "G*5h", psv.LOSS),  # white mates black
    ],
)
def test_game_ends_on_checkmate_with_a_loss_for_the_mated_side(sfen, mating_move, result_black):
    out = play_game(random.Random(1), mate_in_one_labeler(), NO_OPENING, sfen)
    assert out.reason == "no legal move" and out.plies == 1
    mated = Position(sfen)
    mated.push(mating_move)
    assert mated.is_check() and not mated.legal_moves()  # a real checkmate
    assert out.result_black == result_black
    # the mating move's record is the mater's win
    assert [psv.record_move(r) for r in out.records] == [mating_move]
    assert [int(r["game_result"]) for r in out.records] == [psv.WIN]
    # the same labeler does not end a game from the start position
    assert (
        play_game(random.Random(1), mate_in_one_labeler(), replace(NO_OPENING, max_ply=12), START_SFEN).reason
        == "max plies"
    )


def test_unbalanced_opening_is_dropped():
    labeler = Scripted(lambda g: [Line(g.pos.legal_moves()[0], 700, None)])
    cfg = PlayConfig(
        random_moves=0, random_max_ply=0, multipv=1, multipv_plies=2, opening_limit=300, write_min_ply=0
    )
    out = play_game(random.Random(1), labeler, cfg)
    assert out.reason == "unbalanced opening" and out.records == [] and out.plies == 2


class Hanging(Scripted):
    """A teacher that never answers at the calls numbered in `hang_at` (counted from 1)."""

    def __init__(self, answer, hang_at):
        super().__init__(answer)
        self.hang_at, self.calls, self.restarts = set(hang_at), 0, 0

    def search(self, game, multipv, opening=False):
        self.calls += 1
        if self.calls in self.hang_at:
            raise EngineTimeout("no answer in time")
        return super().search(game, multipv)

    def restart(self):
        self.restarts += 1


def king_shuffle(g):
    return [Line(["5i4h", "5a4b", "4h5i", "4b5a"][len(g.moves) % 4], 10 + len(g.moves), None)]


def test_a_teacher_that_hangs_is_restarted_and_the_game_replayed(tmp_path):
    cfg = gen_config(
        tmp_path, positions=30, shard_size=30, play=NO_OPENING, openings=("4k4/9/9/9/9/9/9/9/4K4 b - 1",)
    )
    want, want_stats = generate_shard(cfg, 0, Scripted(king_shuffle))
    hanging = Hanging(king_shuffle, hang_at={5, 20})
    got, stats = generate_shard(cfg, 0, hanging)
    assert hanging.restarts == 2
    assert got.tobytes() == want.tobytes() and len(got) == 30
    assert stats["games"] == want_stats["games"] == 3


def test_a_teacher_that_keeps_hanging_ends_the_run(tmp_path):
    cfg = gen_config(
        tmp_path, positions=30, shard_size=30, play=NO_OPENING, openings=("4k4/9/9/9/9/9/9/9/4K4 b - 1",)
    )
    hanging = Hanging(king_shuffle, hang_at=set(range(1, 100)))
    with pytest.raises(EngineTimeout, match="no answer in time"):
        generate_shard(cfg, 0, hanging)
    # each game played TEACHER_RETRIES + 1 times, each failure followed by a fresh teacher
    assert hanging.restarts == TEACHER_FAILED_GAMES * (TEACHER_RETRIES + 1)


class HangsOnOneOpening(Scripted):
    """A teacher that never answers at the fifth ply of games from `bad_start`, however
    often they are replayed: a build that hangs for good in one position."""

    def __init__(self, answer, bad_start):
        super().__init__(answer)
        self.bad_start, self.restarts = bad_start, 0

    def search(self, game, multipv, opening=False):
        if game.start_sfen == self.bad_start and len(game.moves) == 5:
            raise EngineTimeout("no answer in time")
        return super().search(game, multipv)

    def restart(self):
        self.restarts += 1


def test_a_game_the_teacher_always_fails_on_is_left_out(tmp_path, capsys):
    good, bad = "4k4/9/9/9/9/9/9/9/4K4 b - 1", "4k4/9/9/9/9/9/9/9/4K4 b P 1"
    cfg = gen_config(tmp_path, positions=60, shard_size=60, seed=3, play=NO_OPENING, openings=(good, bad))
    teacher = HangsOnOneOpening(king_shuffle, bad)
    data, stats = generate_shard(cfg, 0, teacher)
    starts = {
        seed: random.Random(seed).choice(cfg.openings) for seed in (f"3/0/{g}" for g in range(stats["games"]))
    }
    assert stats["teacher_failed_games"] == [seed for seed, start in starts.items() if start == bad]
    assert stats["teacher_failed_games"], "the seed should draw the bad opening at least once"
    assert teacher.restarts == len(stats["teacher_failed_games"]) * (TEACHER_RETRIES + 1)
    # the shard is full, from the other games only: the same records as a teacher that
    # never fails gives for those games
    assert len(data) == 60
    kept = [seed for seed, start in starts.items() if start == good]
    want = []
    for seed in kept:
        rng = random.Random(seed)
        want += play_game(rng, Scripted(king_shuffle), cfg.play, rng.choice(cfg.openings)).records
    assert data.tobytes() == np.array(want[:60], data.dtype).tobytes()
    assert "leaving the game out" in capsys.readouterr().err


def test_parse_info_line():
    line = "info depth 8 seldepth 10 multipv 2 score cp -35 nodes 100 pv 7g7f 3c3d".split()
    assert parse_info_line(line) == (2, Line("7g7f", -35, None))
    assert parse_info_line("info depth 3 score mate -4 pv 5a4b".split()) == (1, Line("5a4b", None, -4))
    assert parse_info_line("info depth 3 score mate + pv G*5b".split()) == (1, Line("G*5b", None, 1))
    assert parse_info_line("info depth 5 score cp 20 lowerbound pv 2g2f".split()) is None
    assert parse_info_line("info string hello pv".split()) is None
    assert parse_info_line("info depth 5 nodes 100".split()) is None


# --- whole runs -----------------------------------------------------------------------------


def gen_config(out, **kw):
    base = dict(out=str(out), positions=80, shard_size=40, seed=7, depth=3, hash_mb=1, play=TINY)
    base.update(kw)
    return GenConfig(**base)


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """One tiny run (2 shards of 40 positions) made in this process."""
    out = tmp_path_factory.mktemp("gen") / "run"
    summary = run(gen_config(out), show_progress=False)
    return out, summary


def shard_bytes(out):
    return [open(shard_path(str(out), i), "rb").read() for i in range(2)]


def test_run_writes_full_shards_of_sound_records(generated):
    out, summary = generated
    assert summary["shards"] == 2 and summary["positions"] == 80
    assert sum(summary["winners"].values()) + summary["unbalanced_openings"] <= summary["games"]
    assert "2/2 shards, 80 positions" in format_summary(summary)
    for i in range(2):
        recs = psv.read_records(shard_path(str(out), i))
        assert len(recs) == 40
        for rec in recs:
            sfen = psv.record_sfen(rec)
            pos = Position(sfen)
            move = psv.record_move(rec)
            assert move in pos.legal_moves()
            assert not pos.is_check()
            assert "*" in move or pos.arrays.board[(int(move[2]) - 1) * 9 + "abcdefghi".index(move[3])] == 0
            assert abs(int(rec["score"])) < TINY.eval_limit
            assert int(rec["game_result"]) in (-1, 0, 1)
            assert int(rec["gamePly"]) > TINY.write_min_ply
        stats = json.load(open(shard_path(str(out), i, "json")))
        assert stats["positions"] == 40


def test_same_seed_same_bytes_with_two_worker_processes(generated, tmp_path):
    out, _ = generated
    other = tmp_path / "two"
    summary = run(gen_config(other, workers=2), show_progress=False)
    assert summary["this_run"]["shards_made"] == 2
    assert shard_bytes(other) == shard_bytes(out)


def test_other_seed_other_data(generated, tmp_path):
    out, _ = generated
    run(gen_config(tmp_path / "s8", seed=8, positions=40), show_progress=False)
    assert open(shard_path(str(tmp_path / "s8"), 0), "rb").read() != shard_bytes(out)[0]


def test_resume_makes_only_missing_shards_and_checks_settings(generated, tmp_path):
    out, _ = generated
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in os.listdir(out):
        (copy / name).write_bytes((out / name).read_bytes())
    os.remove(shard_path(str(copy), 1))
    (copy / "shard_00001.bin.tmp123").write_bytes(b"\0" * 17)  # a crashed writer's leftover
    summary = run(gen_config(copy), show_progress=False)
    assert summary["this_run"]["shards_made"] == 1
    assert shard_bytes(copy) == shard_bytes(out)
    with pytest.raises(ValueError, match=r"other settings \(depth: 3 there, 4 now\)"):
        run(gen_config(copy, depth=4), show_progress=False)
    assert shard_bytes(copy) == shard_bytes(out)


def test_teacher_engine_labels_through_usi(tmp_path):
    """Our own engine as an external USI teacher: the records are sound and labelled."""
    cmd = f"{sys.executable} -m usi_engine"
    cfg = gen_config(
        tmp_path / "t",
        positions=20,
        shard_size=20,
        teacher=cmd,
        teacher_go="depth 3",
        teacher_options=(("USI_Hash", "16"),),
    )
    summary = run(cfg, show_progress=False)
    assert summary["positions"] == 20
    for rec in psv.read_records(shard_path(cfg.out, 0)):
        assert psv.record_move(rec) in Position(psv.record_sfen(rec)).legal_moves()


def test_a_teacher_searches_the_opening_with_its_opening_limit():
    from usi_engine.training.data.labeler import Game, UsiTeacher

    fixture = os.path.join(os.path.dirname(__file__), "fixtures", "usi_multipv_engine.py")
    cmd = f"{sys.executable} {fixture}"
    for opening_go, expected in (("depth 1", "go depth 1"), (None, "go depth 5")):
        teacher = UsiTeacher(cmd, "depth 5", timeout=30, opening_go=opening_go)
        sent = []
        send = teacher.proc.send

        def recording_send(line):
            sent.append(line)
            send(line)

        teacher.proc.send = recording_send
        try:
            game = Game(START_SFEN, [], Position())
            # (the fixture's MultiPV option is USI_MultiPV, which the teacher leaves alone: one line)
            assert [line.move for line in teacher.search(game, 2, opening=True)] == ["1g1f"]
            assert [line.move for line in teacher.search(game, 1)] == ["1g1f"]
        finally:
            teacher.close()
        assert [line for line in sent if line.startswith("go")] == [expected, "go depth 5"]


def test_cli_teacher_opening_go(tmp_path):
    from usi_engine.commands import gensfen as cli

    args = ["--out", str(tmp_path / "x"), "--positions", "10"]
    with pytest.raises(SystemExit, match="--teacher-opening-go is the limit of a --teacher"):
        cli.config_from_args(cli.parse_args(args + ["--teacher-opening-go", "depth 4"]))
    plain = cli.config_from_args(cli.parse_args(args + ["--teacher", "engine"]))
    assert plain.teacher_opening_go is None
    assert "teacher_opening_go" not in plain.identity()  # folders made before it still resume
    shallow = cli.config_from_args(
        cli.parse_args(args + ["--teacher", "engine", "--teacher-opening-go", "depth 4"])
    )
    assert shallow.identity()["teacher_opening_go"] == "depth 4"
    assert not (tmp_path / "x").exists()


def test_ray_local_cluster_makes_the_same_shards(generated, tmp_path):
    """A local Ray on 127.0.0.1 with two CPUs: the shards equal the in-process run's."""
    import ray

    out, _ = generated
    try:
        summary = run(gen_config(tmp_path / "ray", workers=2, ray_address="local"), show_progress=False)
    finally:
        ray.shutdown()
    assert summary["this_run"]["shards_made"] == 2
    assert shard_bytes(tmp_path / "ray") == shard_bytes(out)


@pytest.fixture(scope="module")
def network_dir(tmp_path_factory):
    """A folder holding a small random HalfKP network (it plays no shogi, but differently)."""
    from usi_engine.nnue import random_network, write_network

    folder = tmp_path_factory.mktemp("net")
    write_network(random_network("HalfKP(Friend)", seed=5, half=32), folder / "nn.bin")
    return folder


def test_own_search_evaluates_with_the_network_of_evaldir(network_dir):
    """OwnSearch(evaldir=...) scores as the engine does with that EvalDir, not hand-made."""
    from usi_engine.core.network import load_eval_dir, network_arrays
    from usi_engine.search.searcher import Searcher
    from usi_engine.training.data.labeler import Game, OwnSearch

    sfen = "lnsgkgsnl/1r5b1/ppppppppp/9/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL w - 2"
    game = Game(sfen, [], Position(sfen))
    by_net = OwnSearch(3, None, 1, str(network_dir)).search(game, 1)[0]
    by_hand = OwnSearch(3, None, 1).search(game, 1)[0]
    engine = Searcher()
    engine.configure(hash_mb=1, threads=1)
    engine.set_network(network_arrays(load_eval_dir(str(network_dir))))
    result = engine.think(
        Position(sfen),
        depth=3,
        nodes=None,
        multipv=1,
        stop=np.zeros(1, np.int32),
        on_iteration=lambda info: None,
    )
    assert (by_net.move, by_net.cp) == (result.best, result.info.score_cp)
    assert by_net.cp != by_hand.cp


def test_evaldir_run_is_recorded_and_checked_on_resume(generated, network_dir, tmp_path):
    out, _ = generated
    cfg = gen_config(tmp_path / "nn", positions=40, evaldir=str(network_dir))
    assert run(cfg, show_progress=False)["positions"] == 40
    assert open(shard_path(cfg.out, 0), "rb").read() != shard_bytes(out)[0]
    assert json.load(open(os.path.join(cfg.out, "gensfen.json")))["evaldir"] == str(network_dir)
    with pytest.raises(ValueError, match=r"other settings \(evaldir: .* there, None now\)"):
        run(gen_config(cfg.out, positions=40), show_progress=False)
    # a folder made without the option has no evaldir key, and still resumes without it
    assert "evaldir" not in json.load(open(os.path.join(out, "gensfen.json")))


def test_cli_refuses_evaldir_with_a_teacher(tmp_path, capsys):
    from usi_engine.commands import gensfen as cli

    with pytest.raises(SystemExit, match="--teacher-option EvalDir=DIR"):
        cli.config_from_args(
            cli.parse_args(
                [
                    "--out",
                    str(tmp_path / "x"),
                    "--positions",
                    "10",
                    "--evaldir",
                    "nets/a",
                    "--teacher",
                    "engine",
                ]
            )
        )
    assert not (tmp_path / "x").exists()


def test_cli_refuses_a_bad_teacher_option(tmp_path):
    from usi_engine.commands import gensfen as cli

    args = ["--out", str(tmp_path / "x"), "--positions", "10", "--teacher", "engine"]
    cfg = cli.config_from_args(
        cli.parse_args(args + ["--teacher-option", "Thread=1", "--teacher-option", "Path=a=b"])
    )
    assert cfg.teacher_options == (("Thread", "1"), ("Path", "a=b"))
    for bad in ("Thread", "=1"):
        with pytest.raises(SystemExit, match=f"--teacher-option needs NAME=VALUE, got '{bad}'"):
            cli.config_from_args(cli.parse_args(args + ["--teacher-option", bad]))
    assert not (tmp_path / "x").exists()


def test_a_teacher_named_by_a_relative_path_is_recorded_absolute(tmp_path, monkeypatch):
    """The run's identity records the teacher: the same engine, resumed from another
    folder, must compare equal."""
    from usi_engine.commands import gensfen as cli

    engine = tmp_path / "engines" / "teacher"
    engine.parent.mkdir()
    engine.write_text("#!/bin/sh\n")
    monkeypatch.chdir(tmp_path)
    args = ["--out", str(tmp_path / "x"), "--positions", "10"]
    cfg = cli.config_from_args(cli.parse_args(args + ["--teacher", "engines/teacher --fast"]))
    assert cfg.teacher == f"{engine} --fast"
    for kept in ("python -m usi_engine", "gpsusi", "engines/missing"):  # on PATH, or no such file
        assert cli.config_from_args(cli.parse_args(args + ["--teacher", kept])).teacher == kept


def test_a_teacher_option_naming_a_relative_path_is_made_absolute(tmp_path, monkeypatch):
    """YaneuraOu reads a relative EvalDir from its own program's folder, so
    `EvalDir=runs/net` from the run's folder failed with `FileNotFound`; an option value
    that names an existing file or folder here is passed on absolute."""
    from usi_engine.commands import gensfen as cli

    (tmp_path / "runs" / "net").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    args = ["--out", str(tmp_path / "x"), "--positions", "10", "--teacher", "engine"]
    options = ["EvalDir=runs/net", "BookFile=no_book", "Threads=1", "EvalDir2=runs/missing", "Abs=/tmp"]
    cfg = cli.config_from_args(cli.parse_args(args + [w for o in options for w in ("--teacher-option", o)]))
    assert cfg.teacher_options == (
        ("EvalDir", str(tmp_path / "runs" / "net")),
        ("BookFile", "no_book"),
        ("Threads", "1"),
        ("EvalDir2", "runs/missing"),
        ("Abs", "/tmp"),
    )
