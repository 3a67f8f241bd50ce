"""Game analysis: records in every format (and broken ones), the judgement of moves, and
what is written: the PNG graph, the annotated KIF/CSA (read back by python-shogi and
cshogi), JSON, and the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cshogi
import cshogi.KI2
import cshogi.KIF
import numpy as np
import pytest
import shogi.CSA
import shogi.KIF

from usi_engine import Engine, Limit, Position, Score, __version__, parse_record, read_record
from usi_engine.analysis import (
    BLUNDER_CP,
    analyse_game,
    annotated_csa,
    annotated_kif,
    plot,
    to_json,
    write_kif,
)
from usi_engine.analysis.cli import main as cli_main
from usi_engine.analysis.game import CLIP_CP, PositionEval
from usi_engine.analysis.graph import HEIGHT_PX, WIDTH_PX

REPO = Path(__file__).resolve().parent.parent
RANDOM_ENGINE = f"{sys.executable} {REPO / 'tests' / 'fixtures' / 'random_engine.py'}"
# Black's rook walks to 4d (move 9), where the 4c pawn takes it (move 10).
ROOK_HANG = "2g2f 3c3d 2f2e 8c8d 2h2f 8d8e 2f4f 4a3b 4f4d 4c4d 7g7f 3a4b".split()
SHORT = "7g7f 3c3d 2g2f 8c8d 2f2e".split()


def make_engine():
    return Engine({"USI_Hash": 4})


@pytest.fixture(scope="module")
def rook_hang():
    record = parse_record("startpos moves " + " ".join(ROOK_HANG))
    return analyse_game(record, Limit(depth=5), make_engine)


def kif_of(moves: list[str]) -> str:
    return Position.from_usi("startpos moves " + " ".join(moves)).kif()


def ki2_of(moves: list[str]) -> str:
    board = cshogi.Board()
    words = []
    for m in moves:
        cm = board.move_from_usi(m)
        words.append(cshogi.KI2.move_to_ki2(cm, board))
        board.push(cm)
    return "手合割：平手\n" + "\n".join("    ".join(words[i : i + 2]) for i in range(0, len(words), 2)) + "\n"


# --- judging moves ---------------------------------------------------------------------------


def test_hanging_a_rook_is_a_blunder(rook_hang):
    hang = rook_hang.moves[8]
    assert (hang.ply, hang.move, hang.side) == (9, "4f4d", 0)
    assert hang.label == "blunder" and hang.loss >= BLUNDER_CP
    assert hang.best != "4f4d" and hang.eval_before > -500 and hang.eval_after < -1500
    taking = rook_hang.moves[9]
    assert taking.move == "4c4d" and taking.label is None  # taking it is fine
    summary = rook_hang.summary()
    assert summary["black"]["blunder"] >= 1 and summary["white"]["blunder"] == 0
    assert summary["black"]["moves"] == 6 and summary["white"]["moves"] == 6
    assert summary["black"]["average_loss"] > summary["white"]["average_loss"]
    assert len(rook_hang.positions) == len(ROOK_HANG) + 1 and not rook_hang.errors


def test_evaluations_are_from_blacks_view(rook_hang):
    for p in rook_hang.positions:
        side_cp = p.score.to_cp()  # the side to move's view
        assert abs(p.black_cp) == min(abs(side_cp), CLIP_CP)
        assert p.black_cp == 0 or (p.black_cp > 0) == ((side_cp > 0) == (p.turn == 0))
    assert rook_hang.positions[-1].black_cp < -1500  # black is a rook down
    # clipped scores keep the sign of black's view
    for turn, score, black_cp in [
        (0, Score(cp=5000), CLIP_CP),
        (1, Score(cp=5000), -CLIP_CP),
        (0, Score(cp=-4000), -CLIP_CP),
        (1, Score(cp=-4000), CLIP_CP),
        (0, Score(mate=3), CLIP_CP),
        (1, Score(mate=3), -CLIP_CP),
        (1, Score(mate=-2), CLIP_CP),
        (1, Score(cp=120), -120),
    ]:
        assert PositionEval(0, Position.START_SFEN, turn, score).black_cp == black_cp, (turn, score)


def test_checkmate_ends_the_game_without_an_engine_call():
    record = parse_record("sfen 4k4/9/4P4/9/9/9/9/9/4K4 b G 1 moves G*5b")
    analysis = analyse_game(record, Limit(depth=3), make_engine)
    assert analysis.positions[1].checkmate and analysis.positions[1].black_cp == 3000
    assert analysis.positions[0].score.mate == 1
    assert analysis.moves[0].loss == 0 and analysis.moves[0].label is None


def test_two_jobs_give_every_position(rook_hang):
    record = parse_record("startpos moves " + " ".join(ROOK_HANG))
    analysis = analyse_game(record, Limit(depth=5), make_engine, jobs=2)
    assert [p.depth for p in analysis.positions] == [5] * len(analysis.positions)
    assert analysis.moves[8].label == "blunder"


# --- outputs ---------------------------------------------------------------------------------


def test_png_is_a_valid_image_of_the_expected_size(rook_hang, tmp_path):
    from PIL import Image

    path = tmp_path / "graph.png"
    plot(rook_hang, path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with Image.open(path) as img:
        img.verify()
    with Image.open(path) as img:
        assert img.size == (WIDTH_PX, HEIGHT_PX) and img.format == "PNG"
        # the blunder marker (red) is drawn
        rgb = np.asarray(img.convert("RGB")).astype(int)
        assert ((rgb[..., 0] > 200) & (rgb[..., 1] < 80) & (rgb[..., 2] < 80)).any()


def test_annotated_kif_parses_back_with_the_same_moves(rook_hang, tmp_path):
    path = tmp_path / "game.kif"
    write_kif(rook_hang, path)
    text = path.read_bytes().decode("cp932")  # Shift-JIS
    assert shogi.KIF.Parser.parse_file(str(path))[0]["moves"] == ROOK_HANG
    parsed = cshogi.KIF.Parser.parse_file(str(path))
    assert [cshogi.move_to_usi(m) for m in parsed.moves] == ROOK_HANG
    # a comment after each move; the blunder says so and names the engine's move
    assert text.count("#評価値=") == len(ROOK_HANG) + 1
    assert "【悪手】" in parsed.comments[8] and "blunder" in parsed.comments[8]
    assert read_record(path).moves == ROOK_HANG


def test_annotated_csa_parses_back_with_the_same_moves(rook_hang):
    csa = annotated_csa(rook_hang)
    assert shogi.CSA.Parser.parse_str(csa)[0]["moves"] == ROOK_HANG
    assert parse_record(csa).moves == ROOK_HANG and "'*#評価値=" in csa


def test_json_has_every_move(rook_hang):
    data = json.loads(json.dumps(to_json(rook_hang)))
    assert [m["move"] for m in data["moves"]] == ROOK_HANG
    assert data["moves"][8]["class"] == "blunder" and data["thresholds_cp"]["blunder"] == BLUNDER_CP
    assert data["summary"]["black"]["blunder"] >= 1 and data["errors"] == []


# --- reading records -------------------------------------------------------------------------


def test_every_format_reads_the_same_game(tmp_path):
    kif = kif_of(SHORT)
    texts = {
        "kif": kif,
        "ki2": ki2_of(SHORT),
        "csa": Position.from_usi("startpos moves " + " ".join(SHORT)).csa(),
        "usi": "position startpos moves " + " ".join(SHORT),
    }
    for fmt, text in texts.items():
        rec = parse_record(text)
        assert (rec.format, rec.moves, rec.errors) == (fmt, SHORT, []), fmt
    (tmp_path / "a.kif").write_bytes(kif.encode("cp932"))
    (tmp_path / "b.kif").write_bytes(kif.encode("utf-8"))
    (tmp_path / "c.kifu").write_bytes(b"\xef\xbb\xbf" + kif.encode("utf-8"))  # with a BOM
    for name in ("a.kif", "b.kif", "c.kifu"):
        assert read_record(tmp_path / name).moves == SHORT, name
    sfen = parse_record("lnsgkgsnl/1r5b1/ppppppppp/9/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL w - 2\n3c3d\n2g2f")
    assert sfen.moves == ["3c3d", "2g2f"] and sfen.start_sfen.endswith(" w - 2")


def test_illegal_move_names_its_line_and_the_rest_is_analysed():
    text = kif_of(SHORT).replace("２六歩(27)", "２四歩(27)")  # move 3, line 5
    record = parse_record(text)
    assert record.moves == SHORT[:2]
    assert len(record.errors) == 1 and record.errors[0].line == 5
    assert "illegal move 2g2d at move 3" in str(record.errors[0])
    analysis = analyse_game(record, Limit(depth=2), make_engine)
    assert [m.move for m in analysis.moves] == SHORT[:2] and all(p.score for p in analysis.positions)
    assert analysis.errors == [str(record.errors[0])] and "line 5" in to_json(analysis)["errors"][0]
    assert shogi.KIF.Parser.parse_str(annotated_kif(analysis))[0]["moves"] == SHORT[:2]


@pytest.mark.parametrize(
    "fmt,text,line,why",
    [
        ("kif", kif_of(SHORT).replace("２六歩(27)", "２六ほげ(27)"), 5, "cannot read move 3"),
        ("kif", kif_of(SHORT).replace("   3 ", "   7 "), 5, "move number 7, expected 3"),
        ("ki2", ki2_of(SHORT).replace("▲２六歩", "▲２四歩"), 3, "cannot read move 3"),
        (
            "csa",
            Position.from_usi("startpos moves " + " ".join(SHORT)).csa().replace("+2726FU", "+2726XX"),
            14,
            "cannot read move 3",
        ),
        (
            "csa",
            Position.from_usi("startpos moves " + " ".join(SHORT)).csa().replace("+2726FU", "-2726FU"),
            14,
            "move 3 is not for the side to move",
        ),
        ("usi", "startpos moves 7g7f 3c3d\n2g2f 8c8d\n2f2e 2e2d", 3, "illegal move 2e2d at move 6"),
    ],
)
def test_broken_line_names_the_line_and_keeps_the_moves_before(fmt, text, line, why):
    record = parse_record(text, fmt)
    assert record.errors and record.errors[0].line == line and why in str(record.errors[0])
    assert record.moves == SHORT[: len(record.moves)] and len(record.moves) >= 2


def test_a_stray_line_after_the_moves_is_reported_and_skipped():
    lines = kif_of(SHORT).splitlines()
    lines.insert(5, "this is not a move")  # after move 2
    record = parse_record("\n".join(lines), "kif")
    assert record.moves == SHORT and record.errors[0].line == 6
    assert "not a move line, ignored" in str(record.errors[0])


def test_unknown_format_and_bad_start_position():
    with pytest.raises(ValueError, match="unknown record format 'pgn'"):
        parse_record("1. e4", "pgn")
    record = parse_record("sfen lnsgkgsnl/9/9/9/9/9/9/9/LNSGKGSNL x - 1 moves 7g7f", "usi")
    assert record.moves == [] and "bad start position" in record.errors[0].message


# --- the command line ------------------------------------------------------------------------


def test_command_line_writes_every_output(tmp_path, capsys):
    game = tmp_path / "game.kif"
    game.write_bytes(kif_of(ROOK_HANG).encode("cp932"))
    assert cli_main([str(game), "--depth", "3", "--jobs", "1"]) == 0
    out = capsys.readouterr()
    assert f"12 moves analysed by usi_engine {__version__} (depth 3 per position)" in out.out
    assert "move   9 black 4f4d   blunder" in out.out
    for ext in ("png", "kif", "csa", "json"):
        assert (tmp_path / f"game.analysis.{ext}").stat().st_size > 100, ext
    data = json.loads((tmp_path / "game.analysis.json").read_text(encoding="utf-8"))
    assert data["moves"][8]["class"] == "blunder"


def test_command_line_with_another_engine_and_a_broken_record(tmp_path, capsys):
    game = tmp_path / "game.csa"
    game.write_text(
        Position.from_usi("startpos moves " + " ".join(SHORT)).csa().replace("+2726FU", "+2726XX")
    )
    code = cli_main(
        [
            str(game),
            "--engine",
            RANDOM_ENGINE,
            "--option",
            "Seed=3",
            "--time",
            "0.2",
            "--jobs",
            "2",
            "--quiet",
            "--no-png",
            "--out",
            str(tmp_path / "out" / "g"),
        ]
    )
    assert code == 1
    assert "line 14: cannot read move 3" in capsys.readouterr().err
    data = json.loads((tmp_path / "out" / "g.analysis.json").read_text(encoding="utf-8"))
    assert data["engine"] == "RandomMover" and len(data["moves"]) == 2
    assert all(p["score"] for p in data["positions"]) and not (tmp_path / "out" / "g.analysis.png").exists()


def test_an_engine_that_dies_costs_only_its_positions(tmp_path):
    from usi_engine.usi import Client

    record = parse_record("startpos moves " + " ".join(SHORT))
    analysis = analyse_game(record, Limit(time=0.2), lambda: Client.popen(RANDOM_ENGINE + " --crash-at 3"))
    assert [p.score is not None for p in analysis.positions] == [True, True, False, False, False, False]
    assert "EngineCrashed" in analysis.errors[0] and len(analysis.moves) == len(SHORT)
    assert analysis.moves[0].loss is not None and analysis.moves[2].loss is None


def test_command_line_missing_file(tmp_path, capsys):
    assert cli_main([str(tmp_path / "nope.kif"), "--quiet"]) == 2
    assert "No such file" in capsys.readouterr().err


# --- files that are not games: refused in one line, nothing written ---------------------------


@pytest.mark.parametrize(
    "name,content,problem",
    [
        (
            "random.kif",
            bytes(np.random.default_rng(7).integers(0, 256, 4000, dtype=np.uint8)),
            "not a game record (binary data, no moves found)",
        ),
        (
            "random.bin",
            bytes(np.random.default_rng(8).integers(0, 256, 300, dtype=np.uint8)),
            "not a game record (binary data, no moves found)",
        ),
        ("empty.kif", b"", "empty file, no game to analyse"),
        ("blank.csa", b"\n  \r\n", "empty file, no game to analyse"),
        (
            "notes.kif",
            "Ideas for Saturday's club meeting\n- castle early\n".encode(),
            "not a game record: no moves found",
        ),
        ("notes.txt", b"hello world\n", "not a game record: line 1: illegal move hello at move 1"),
        ("notes.csa", b"hello world\n", "not a game record: line 1: not a CSA statement"),
        ("missing.kif", None, "cannot read it: No such file or directory"),
    ],
)
def test_a_file_that_is_not_a_game_is_refused_and_nothing_is_written(
    tmp_path, capsys, name, content, problem
):
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    before = sorted(tmp_path.iterdir())
    code = cli_main([str(path), "--depth", "1", "--jobs", "1"])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.splitlines()) == 1 and err.endswith("\n")  # one line
    assert err.startswith(f"usi-engine-analyse: {path}: {problem}")
    assert sorted(tmp_path.iterdir()) == before  # no output, not even empty


def test_a_refused_file_writes_nothing_under_out_either(tmp_path, capsys):
    (tmp_path / "empty.kif").write_bytes(b"")
    assert cli_main([str(tmp_path / "empty.kif"), "--out", str(tmp_path / "reports" / "g")]) == 2
    assert not (tmp_path / "reports").exists()
    assert capsys.readouterr().err.count("\n") == 1


def test_the_usi_engine_analyse_command_refuses_random_bytes(tmp_path):
    path = tmp_path / "game.kif"
    path.write_bytes(bytes(np.random.default_rng(9).integers(0, 256, 2000, dtype=np.uint8)))
    run = subprocess.run(
        [sys.executable, "-m", "usi_engine", "analyse", str(path), "--depth", "1"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr == f"usi-engine-analyse: {path}: not a game record (binary data, no moves found)\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["game.kif"]
