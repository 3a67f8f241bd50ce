"""Rescoring PackedSfenValue records with another USI engine: what is kept, what is dropped,
the sample, resuming, and a real engine through USI."""

import random
import sys

import cshogi
import numpy as np
import pytest

from usi_engine.position import Position
from usi_engine.training.data import psv
from usi_engine.training.data.labeler import Line
from usi_engine.training.data.rescore import (
    RescoreConfig,
    compare,
    format_comparison,
    output_path,
    rescore_file,
    run,
    sample,
)

SENTINEL = 12345  # the input's score: no teacher says exactly this


def quiet_records(count, seed):
    """Records of random positions not in check, each with a legal move, ply and result."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        board = cshogi.Board()
        for _ in range(rng.randrange(10, 80)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
        moves = list(board.legal_moves)
        if moves and not board.is_check():
            result = rng.choice((psv.WIN, psv.DRAW, psv.LOSS))
            out.append(
                psv.make_record(
                    board.sfen(), SENTINEL, cshogi.move_to_usi(moves[0]), board.move_number, result
                )
            )
    return np.array(out, psv.PSV_DTYPE)


class ScriptedTeacher:
    """Answers each position with what `answer(sfen)` says; counts the calls."""

    def __init__(self, answer):
        self.answer, self.asked, self.games = answer, [], 0

    def new_game(self):
        self.games += 1

    def search(self, game, multipv, opening=False):
        self.asked.append(game.usi_position())
        return self.answer(game.start_sfen)


def first_quiet_move(sfen):
    board = cshogi.Board(sfen)
    for m in board.legal_moves:
        if board.piece(cshogi.move_to(m)) == 0:
            return cshogi.move_to_usi(m)
    return None


def first_capture(sfen):
    board = cshogi.Board(sfen)
    for m in board.legal_moves:
        if board.piece(cshogi.move_to(m)) != 0 and not cshogi.move_is_drop(m):
            return cshogi.move_to_usi(m)
    return None


@pytest.fixture
def one_file(tmp_path):
    path = tmp_path / "in" / "gen_00000.bin"
    path.parent.mkdir()
    records = quiet_records(30, seed=4)
    psv.write_records(str(path), records)
    return str(path), records


def test_kept_records_take_the_teachers_score_and_move(one_file, tmp_path):
    path, records = one_file
    teacher = ScriptedTeacher(lambda sfen: [Line(first_quiet_move(sfen), 77, None)])
    cfg = RescoreConfig((path,), str(tmp_path / "out"), teacher="scripted")
    (tmp_path / "out").mkdir()
    stats = rescore_file(cfg, 0, teacher)
    out = psv.read_records(output_path(cfg, 0))
    assert stats["asked"] == 30 and teacher.games == 1 and len(teacher.asked) == 30
    assert stats["kept"] == len(out) == 30
    for old, new in zip(records, out):
        assert psv.record_sfen(new) == psv.record_sfen(old)
        assert int(new["score"]) == 77
        assert psv.record_move(new) == first_quiet_move(psv.record_sfen(old))
        assert int(new["gamePly"]) == int(old["gamePly"])
        assert int(new["game_result"]) == int(old["game_result"])


def test_mates_big_scores_captures_and_silence_are_dropped(one_file, tmp_path):
    path, records = one_file
    sfens = [psv.record_sfen(r) for r in records]
    with_capture = [s for s in sfens if first_capture(s)]
    assert with_capture, "the fixture should hold a position with a capture"

    def answer(sfen):
        k = sfens.index(sfen)
        if k == 0:
            return [Line(first_quiet_move(sfen), None, 5)]  # a mate
        if k == 1:
            return [Line(first_quiet_move(sfen), 3001, None)]  # beyond the limit
        if k == 2:
            return []  # no move
        if sfen == with_capture[-1]:
            return [Line(first_capture(sfen), 10, None)]  # a capture
        return [Line(first_quiet_move(sfen), -20, None)]

    cfg = RescoreConfig((path,), str(tmp_path / "out"), teacher="scripted", eval_limit=3000)
    (tmp_path / "out").mkdir()
    stats = rescore_file(cfg, 0, ScriptedTeacher(answer))
    assert stats["reasons"] == {"mate": 1, "beyond eval limit": 1, "no move": 1, "capture": 1, "kept": 26}
    kept = {psv.record_sfen(r) for r in psv.read_records(output_path(cfg, 0))}
    assert kept == set(sfens[3:]) - {with_capture[-1]}


def test_compare_fits_both_scales_to_the_game_results(tmp_path):
    """A teacher whose centipawns are twice ours: correlation 1, factor 1/2."""
    rng = random.Random(7)
    records = quiet_records(300, seed=6)
    for rec in records:
        score = rng.randrange(-900, 901)
        rec["score"] = score
        rec["game_result"] = psv.WIN if rng.random() < 1 / (1 + np.exp(-score / 300)) else psv.LOSS
    path = tmp_path / "in" / "gen_00000.bin"
    path.parent.mkdir()
    psv.write_records(str(path), records)
    ours = {psv.record_sfen(r): int(r["score"]) for r in records}
    teacher = ScriptedTeacher(lambda sfen: [Line(first_quiet_move(sfen), 2 * ours[sfen], None)])
    cfg = RescoreConfig((str(path),), str(tmp_path / "out"), teacher="scripted", every=2)
    (tmp_path / "out").mkdir()
    rescore_file(cfg, 0, teacher)
    c = compare(cfg)
    assert c["positions"] == len(teacher.asked)
    assert c["correlation"] == pytest.approx(1.0)
    assert c["median_abs"][1] == pytest.approx(2 * c["median_abs"][0], abs=1)
    assert 100 < c["result_scale"][0] < 1000  # an inner fit, not a grid end
    assert c["factor"] == pytest.approx(0.5, rel=0.03)
    assert c["result_loss"][0] == pytest.approx(c["result_loss"][1], abs=1e-3)
    assert f"--score-factor {c['factor']:.2f} puts the teacher's centipawns in ours" in format_comparison(c)
    with pytest.raises(ValueError, match="fewer than two rescored positions"):
        compare(RescoreConfig((str(path),), str(tmp_path / "none"), teacher="scripted"))


def test_sample_is_seeded_and_about_one_in_every():
    records = quiet_records(1, seed=1).repeat(2000)
    records["score"] = np.arange(2000) % 30000
    a = sample(records, 10, random.Random("s:0"))
    b = sample(records, 10, random.Random("s:0"))
    c = sample(records, 10, random.Random("s:1"))
    assert np.array_equal(a["score"], b["score"])
    assert not np.array_equal(a["score"], c["score"])
    assert 150 < len(a) < 250
    assert list(a["score"]) == sorted(a["score"])  # file order kept
    assert len(sample(records, 1, random.Random(0))) == 2000


def test_a_real_engine_rescores_through_usi_and_a_rerun_keeps_the_files(tmp_path):
    """Our own engine as the teacher, two worker processes, two files; then a resumed run."""
    inputs = []
    for i in range(2):
        path = tmp_path / "in" / f"gen_{i:05d}.bin"
        path.parent.mkdir(exist_ok=True)
        psv.write_records(str(path), quiet_records(8, seed=10 + i))
        inputs.append(str(path))
    cfg = RescoreConfig(
        tuple(inputs),
        str(tmp_path / "out"),
        f"{sys.executable} -m usi_engine",
        "depth 3",
        (("USI_Hash", "16"),),
        every=2,
        seed=3,
        workers=2,
    )
    summary = run(cfg, log=lambda text: None, show_progress=False)
    assert summary["files"] == 2 and 0 < summary["kept"] <= summary["asked"] < 16
    written = []
    for i in range(2):
        for rec in psv.read_records(output_path(cfg, i)):
            sfen = psv.record_sfen(rec)
            move = psv.record_move(rec)
            assert move in Position(sfen).legal_moves()
            assert cshogi.Board(sfen).piece(cshogi.move_to(cshogi.Board(sfen).move_from_usi(move))) == 0
            assert int(rec["score"]) != SENTINEL and abs(int(rec["score"])) <= cfg.eval_limit
            written.append(bytes(rec.tobytes()))
    again = run(cfg, log=lambda text: None, show_progress=False)
    assert again["kept"] == summary["kept"] and again["asked"] == 0
    assert [bytes(r.tobytes()) for i in range(2) for r in psv.read_records(output_path(cfg, i))] == written


def test_every_below_one_is_refused(one_file, tmp_path):
    path, _ = one_file
    with pytest.raises(ValueError, match="every must be at least 1, got 0"):
        run(RescoreConfig((path,), str(tmp_path / "o"), "x", every=0), show_progress=False)
    assert not (tmp_path / "o").exists()


def test_cli_refuses_a_bad_teacher_option(tmp_path, capsys):
    from usi_engine.commands import rescore as cli

    with pytest.raises(SystemExit):
        cli.main(
            [str(tmp_path), "--out", str(tmp_path / "o"), "--teacher", "x", "--teacher-option", "Thread"]
        )
    assert "--teacher-option needs NAME=VALUE, got 'Thread'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main([str(tmp_path), "--out", str(tmp_path / "o")])
    assert "--teacher is needed (only --compare asks no engine)" in capsys.readouterr().err
