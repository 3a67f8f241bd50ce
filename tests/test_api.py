"""The public Python API: lazy package exports, Move, Engine (in process) and usi.Client
(any USI engine), and the code blocks of docs/api.md, which are run here."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import shogi

import usi_engine
from usi_engine import Engine, Info, Limit, Move, Position, Score
from usi_engine.usi import Client, go_command, parse_info_line

REPO = Path(__file__).resolve().parent.parent
RANDOM_ENGINE = [sys.executable, str(REPO / "tests" / "fixtures" / "random_engine.py")]
MATE_IN_1 = "4k4/9/4P4/9/9/9/9/9/4K4 b G 1"  # G*5b mates
MATED = "4k4/4G4/4P4/9/9/9/9/9/4K4 w - 1"  # white to move, checkmated


@pytest.fixture(scope="module")
def engine():
    with Engine({"USI_Hash": 8}) as eng:
        yield eng


def legal_line(sfen: str, pv: list[Move]) -> bool:
    board = shogi.Board(sfen)
    for m in pv:
        if shogi.Move.from_usi(m.usi()) not in board.legal_moves:
            return False
        board.push_usi(m.usi())
    return True


# --- the package ----------------------------------------------------------------------------


def test_import_is_lazy_and_names_resolve():
    code = (
        "import sys, usi_engine; assert 'numba' not in sys.modules, 'numba imported'; "
        "assert 'usi_engine.position' not in sys.modules; "
        "from usi_engine import Engine, Limit, Client, Position, Move; "
        "assert 'usi_engine.search.searcher' not in sys.modules, 'Engine import loaded the search'; "
        "print(Limit(depth=3), Position().sfen())"
    )
    run = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "Limit(time=None, depth=3, nodes=None)" in run.stdout
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        usi_engine.Nope
    assert {"Engine", "Limit", "Client", "Position", "Move"} <= set(dir(usi_engine))


# --- Move, Limit, Score ---------------------------------------------------------------------


def test_move_value_type():
    m = Move("7g7f")
    assert m == "7g7f" and hash(m) == hash("7g7f") and str(m) == "7g7f" and repr(m) == "Move('7g7f')"
    assert (m.from_square, m.to_square, m.promotion, m.drop, m.is_drop) == (60, 59, False, None, False)
    d = Move.drop_at("p", 40)
    assert d == "P*5e" and d.is_drop and d.drop == "P" and d.from_square is None and d.to_square == 40
    assert Move.make("8h", "2b", promotion=True) == "8h2b+" and Move.make(70, 10, True).promotion
    assert Move("resign").is_special and Move("resign").to_square is None
    for bad, why in (
        ("7g7", "unparseable"),
        ("K*5e", "bad drop piece"),
        ("7g7g", "does not move"),
        ("0a1b", "squares are a file 1-9"),
        ("p*5e", "bad drop piece"),
    ):
        with pytest.raises(ValueError, match=why):
            Move(bad)
    with pytest.raises(ValueError, match="out of range"):
        Move.make(81, 3)


def test_limit_and_score():
    with pytest.raises(ValueError, match="time=0"):
        Limit(time=0)
    with pytest.raises(ValueError, match="depth"):
        Limit(depth=2.5)
    assert Limit().infinite and not Limit(nodes=5).infinite
    assert Score.parse("cp -35") == Score(cp=-35) and Score.parse("mate -3") == Score(mate=-3)
    assert Score.parse("mate +") == Score(mate=1)
    assert -Score(mate=3) == Score(mate=-3) and Score(mate=3).to_cp() == 29997
    with pytest.raises(ValueError, match="bad USI score"):
        Score.parse("cp x")
    with pytest.raises(ValueError, match="either cp or mate"):
        Score()
    assert go_command(Limit(time=1.5)) == ("go btime 0 wtime 0 byoyomi 1500", None)
    assert go_command(Limit(depth=5, time=2)) == ("go depth 5", 2)
    assert go_command(Limit()) == ("go infinite", None)


def test_parse_info_line():
    info = parse_info_line(
        "info depth 7 seldepth 9 multipv 2 score mate -3 nodes 1200 nps 5000 time 240 pv 5a4b G*4c", turn=1
    )
    assert (info.depth, info.seldepth, info.multipv, info.nodes, info.time) == (7, 9, 2, 1200, 0.24)
    assert info.score == Score(mate=-3) and info.black_score == Score(mate=3)
    assert info.pv == ["5a4b", "G*4c"] and info.move == "5a4b"
    assert parse_info_line("info string hello") is None
    assert parse_info_line("info depth 3 score cp 10 pv 7g7f xx 3c3d").pv == ["7g7f"]  # stops at junk


# --- Engine (in process) --------------------------------------------------------------------


def test_engine_analyse_multipv(engine):
    infos = engine.analyse(Position(), Limit(depth=4), multipv=3)
    assert [i.multipv for i in infos] == [1, 2, 3]
    assert all(isinstance(i, Info) and i.depth == 4 and i.bound is None for i in infos)
    assert len({i.move for i in infos}) == 3  # three different first moves
    assert all(legal_line(Position().sfen(), i.pv) for i in infos)
    assert infos[0].score.to_cp() >= infos[1].score.to_cp() >= infos[2].score.to_cp()
    assert infos[0].nodes > 0 and infos[0].turn == 0


def test_engine_play_and_inputs(engine):
    pos = Position.from_usi("startpos moves 7g7f 3c3d")
    move = engine.play(pos, Limit(nodes=3000))
    assert isinstance(move, Move) and move in pos.legal_moves()
    # the same position given as text; the position object is not changed
    assert engine.play("startpos moves 7g7f 3c3d", Limit(depth=3)) in pos.legal_moves()
    assert engine.play(pos.sfen(), Limit(depth=3)) in pos.legal_moves()
    assert pos.ply() == 2
    with pytest.raises(ValueError, match="SFEN"):
        engine.play("not a position", Limit(depth=1))
    with pytest.raises(TypeError, match="Limit"):
        engine.play(pos, 5)


def test_engine_mate_and_no_move(engine):
    info = engine.analyse(MATE_IN_1, Limit(depth=3))[0]
    assert info.score == Score(mate=1) and info.move == "G*5b"
    assert engine.analyse(MATED, Limit(depth=3)) == []
    assert engine.play(MATED, Limit(depth=3)) == "resign"


def test_engine_time_limit_and_stop_from_another_thread(engine):
    t0 = time.monotonic()
    infos = engine.analyse(Position(), Limit(time=0.3))
    assert 0.25 <= time.monotonic() - t0 < 2.0 and infos[0].pv
    seen: list[Info] = []
    result: list = []
    worker = threading.Thread(
        target=lambda: result.append(engine.analyse(Position(), Limit(), on_info=seen.append))
    )
    worker.start()
    time.sleep(0.4)
    assert worker.is_alive()  # Limit(): runs until stopped
    engine.stop()
    worker.join(5)
    assert not worker.is_alive() and result[0][0].pv and seen


def test_engine_options_and_close():
    with pytest.raises(ValueError, match="unknown option 'Hashh'"):
        Engine({"Hashh": 1})
    eng = Engine({"USI_Hash": 4, "LMR": False, "MultiPV": 2, "MaxMovesToDraw": 300})
    assert eng.options["LMR"] is False and eng.options["MultiPV"] == 2
    searcher = eng._searcher  # the search options reach the searcher
    assert searcher.switches["LMR"] == 0 and searcher.max_game_ply == 300
    assert len(eng.analyse(Position(), Limit(depth=2))) == 2  # MultiPV is the default
    with pytest.raises(ValueError, match="option Threads: 0 out of range"):
        eng.configure({"USI_Hash": 2, "Threads": 0})
    assert eng.options["USI_Hash"] == 4  # nothing applied
    eng.close()
    with pytest.raises(RuntimeError, match="closed"):
        eng.play(Position(), Limit(depth=1))


def test_engine_cuts_hash_and_threads_to_the_machine(monkeypatch):
    """As the USI server does: a table larger than the memory, or more threads than cores,
    is cut to what fits, with a warning saying so; the option keeps what was asked."""
    from usi_engine.server import limits

    monkeypatch.setattr(limits, "memory_mb", lambda: 64)
    monkeypatch.setattr(limits, "cores", lambda: 1)
    with pytest.warns(RuntimeWarning) as caught:
        eng = Engine({"USI_Hash": 4096, "Threads": 8})
    said = [str(w.message) for w in caught]
    assert any(m.startswith("USI_Hash 4096 MB does not fit in this machine's memory (64 MB)") for m in said)
    assert "Threads 8 is more than the 1 cores here: using 1" in said
    try:
        assert eng._searcher.threads == 1
        assert eng._searcher.tt.nbytes <= 64 << 20  # the table fits the memory
        assert eng.options["USI_Hash"] == 4096 and eng.options["Threads"] == 8
        assert eng.play(Position(), Limit(depth=2)) in Position().legal_moves()
    finally:
        eng.close()


def test_engine_evaluation_follows_evaldir(tmp_path):
    """EvalDir: the shipped network by default, a network's folder, 'handmade'; a bad one
    raises naming the file and leaves the evaluation and the options as they were."""
    from usi_engine.nnue import read_network
    from usi_engine.core.network import shipped_network_path

    kp = REPO / "tests" / "data" / "nnue" / "kp_256x2-32-32"
    pos = Position.from_usi("startpos moves 7g7f 3c3d 8h2b+")
    eng = Engine({"USI_Hash": 2})
    assert eng.evaluate(pos) == pos.evaluate(read_network(shipped_network_path())) != pos.evaluate()
    eng.configure({"EvalDir": str(kp)})
    assert eng.evaluate(pos) == pos.evaluate(read_network(kp / "nn.bin")) != pos.evaluate()
    assert eng.play(pos, Limit(depth=3)) in pos.legal_moves()
    (tmp_path / "nn.bin").write_bytes(b"junk")
    with pytest.raises(ValueError, match=f"{tmp_path / 'nn.bin'}"):
        eng.configure({"EvalDir": str(tmp_path), "USI_Hash": 4})
    assert eng.evaluate(pos) == pos.evaluate(read_network(kp / "nn.bin"))
    assert eng.options["USI_Hash"] == 2 and eng.options["EvalDir"] == str(kp)
    eng.configure({"EvalDir": "handmade"})
    assert eng.evaluate(pos) == pos.evaluate()
    eng.close()


# --- usi.Client (any USI engine) -------------------------------------------------------------


def test_client_with_our_engine():
    with Client.popen([sys.executable, "-m", "usi_engine"], {"USI_Hash": 8}, cwd=str(REPO)) as client:
        assert client.name.startswith("usi_engine") and "MultiPV" in client.engine_options
        infos = client.analyse(Position.from_usi("startpos moves 7g7f"), Limit(depth=4), multipv=2)
        assert [i.multipv for i in infos] == [1, 2] and infos[0].depth == 4 and infos[0].turn == 1
        assert all(legal_line(Position.from_usi("startpos moves 7g7f").sfen(), i.pv) for i in infos)
        assert client.analyse(MATE_IN_1, Limit(depth=3))[0].score == Score(mate=1)
        t0 = time.monotonic()
        move = client.play(Position(), Limit(time=0.5))
        assert move in Position().legal_moves() and time.monotonic() - t0 < 3
        result: list = []
        worker = threading.Thread(target=lambda: result.append(client.analyse(Position(), Limit())))
        worker.start()
        time.sleep(0.5)
        client.stop()
        worker.join(5)
        assert not worker.is_alive() and result[0] and result[0][0].pv
        with pytest.raises(ValueError, match="declares no option 'Nope'"):
            client.configure({"Nope": 1})


def test_client_with_another_engine():
    with Client.popen(RANDOM_ENGINE + ["--resign-at", "2"], {"Seed": 7}) as client:
        assert client.name == "RandomMover"
        move = client.play("startpos moves 7g7f", Limit(time=1))
        assert move in Position.from_usi("startpos moves 7g7f").legal_moves()
        assert client.play(Position(), Limit(time=1)) == "resign"
        assert client.analyse(Position(), Limit(depth=1))[0].depth == 1


# --- the examples of docs/api.md run as written ----------------------------------------------


def test_docs_api_examples_run(capsys):
    text = (REPO / "docs" / "api.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 4
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "docs/api.md", "exec"), namespace)
        out = capsys.readouterr().out
        # a documented output: print(...)  # what it prints
        for expected in re.findall(r"^print\(.*\)\s+#\s*(.+?)\s*$", block, re.M):
            expected = re.sub(r"\s+\(.*\)$", "", expected)  # drop a trailing remark
            assert expected.strip() in out, f"docs/api.md promises {expected!r}, got:\n{out}"


@pytest.mark.parametrize("module", ["move", "piece", "position", "record", "api", "usi"])
def test_module_examples_run(module):
    import doctest
    import importlib

    mod = importlib.import_module(f"usi_engine.{module}")
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0, f"{module}: {result}"
