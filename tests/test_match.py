"""Tests of the match runner (usi_engine.match, scripts/match.py) with fixture engines."""

from __future__ import annotations

import gc
import json
import os
import random
import re
import sys
import time
from collections import Counter, defaultdict

import pytest
import shogi
import shogi.CSA
import shogi.KIF

from usi_engine.match import cli
from usi_engine.match.records import GameRecord, MoveRecord, to_csa, to_kif
from usi_engine.match.referee import BLACK, RESIGNED_UNSEARCHED, WHITE, Reason, Referee, check_declaration
from usi_engine.match.config import (
    EngineSpec,
    MatchConfig,
    Opening,
    TimeControl,
    load_openings,
    material_balance,
    parse_opening_line,
    random_openings,
)
from usi_engine.match.game import GameClock, go_command
from usi_engine.match.results import MatchResult
from usi_engine.match.schedule import schedule
from usi_engine.match.play import run_match
from usi_engine.match.stats import Sprt

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fixture_cmd(script: str, *args: str) -> list[str]:
    return [sys.executable, os.path.join(FIXTURES, script), *args]


def spec(name: str, script: str = "random_engine.py", *args: str, byoyomi: int = 1000) -> EngineSpec:
    # The fixture engines answer at once; a generous byoyomi keeps a loaded machine
    # from turning a slow answer into a time loss.
    return EngineSpec(fixture_cmd(script, *args), name, tc=TimeControl(byoyomi_ms=byoyomi))


def config(engines: list[EngineSpec], tmp_path, **kw) -> MatchConfig:
    kw.setdefault("games", 2)
    kw.setdefault("concurrency", 2)
    kw.setdefault("max_moves", 80)
    kw.setdefault("hang_timeout_ms", 300)
    kw.setdefault("ready_timeout_s", 10)
    return MatchConfig(engines, out_dir=str(tmp_path / "out"), **kw)


# -- referee: constructed situations ------------------------------------------------


def test_illegal_move_loses():
    ref = Referee()
    out = ref.play("5i5a")
    assert out is not None and out.winner == WHITE and out.reason == Reason.ILLEGAL_MOVE
    assert ref.ply == 0
    assert Referee().play("garbage").reason == Reason.ILLEGAL_MOVE
    assert Referee().play("7g7f+").reason == Reason.ILLEGAL_MOVE  # no promotion outside the camp
    assert Referee().play("P*5e").reason == Reason.ILLEGAL_MOVE  # nothing in hand


def test_uchifuzume_is_illegal():
    # P*5b would mate: the king on 5a is boxed in by its knights, 4b/6b/5b are covered
    # by the silver on 5c.  A gold drop there is a legal mate.
    assert Referee("3nkn3/9/4S4/9/9/9/9/9/4K4 b G 1").play("G*5b").reason == Reason.CHECKMATE
    ref = Referee("3nkn3/9/4S4/9/9/9/9/9/4K4 b P 1")
    out = ref.play("P*5b")
    assert out is not None and out.reason == Reason.ILLEGAL_MOVE and out.winner == WHITE


def test_checkmate_wins():
    ref = Referee("4k4/9/4P4/9/9/9/9/9/4K4 b G 1")
    out = ref.play("G*5b")
    assert out is not None and out.winner == BLACK and out.reason == Reason.CHECKMATE


def test_sennichite_is_a_draw():
    ref = Referee()
    shuffle = ["5i4h", "5a4b", "4h5i", "4b5a"]
    for usi in (shuffle * 3)[:-1]:
        assert ref.play(usi) is None
    out = ref.play("4b5a")  # start position for the fourth time
    assert out is not None and out.is_draw and out.reason == Reason.SENNICHITE


def test_perpetual_check_loses_for_checker():
    ref = Referee("4k4/9/9/9/R8/9/9/9/4K4 b - 1")
    assert ref.play("9e9a") is None
    cycle = ["5a5b", "9a9b", "5b5a", "9b9a"]
    moves = cycle * 3
    for usi in moves[:-1]:
        assert ref.play(usi) is None
    out = ref.play(moves[-1])
    assert out is not None and out.reason == Reason.PERPETUAL_CHECK
    assert out.winner == WHITE


def test_repetition_with_checks_by_one_side_only_sometimes_is_draw():
    ref = Referee("4k4/9/9/9/R8/9/9/9/4K4 b - 1")
    # the rook alternates a checking and a quiet square: not perpetual check
    cycle = ["9e9a", "5a5b", "9a9e", "5b5a"]
    moves = cycle * 3
    for usi in moves[:-1]:
        assert ref.play(usi) is None
    out = ref.play(moves[-1])
    assert out is not None and out.reason == Reason.SENNICHITE and out.is_draw


BLACK_DECL = "LNSG1GSNL/R3K3B/9/9/9/9/9/9/4k4 b {hand} 1"
WHITE_DECL = "4K4/9/9/9/9/9/9/b3k3r/lnsg1gsnl w {hand} 1"


def test_entering_king_declaration_valid_and_false():
    out = Referee(BLACK_DECL.format(hand="10P")).declare_win()
    assert out.winner == BLACK and out.reason == Reason.ENTERING_KING  # 28 points
    out = Referee(BLACK_DECL.format(hand="9P")).declare_win()
    assert out.winner == WHITE and out.reason == Reason.FALSE_DECLARATION  # 27 < 28
    out = Referee(WHITE_DECL.format(hand="9p")).declare_win()
    assert out.winner == WHITE and out.reason == Reason.ENTERING_KING  # 27 for white
    out = Referee(WHITE_DECL.format(hand="8p")).declare_win()
    assert out.winner == BLACK and out.reason == Reason.FALSE_DECLARATION
    assert Referee().declare_win().reason == Reason.FALSE_DECLARATION


def test_declaration_conditions():
    # nine pieces in camp (lance missing), plenty of points: false
    ok, why = check_declaration(shogi.Board("1NSG1GSNL/R3K3B/9/9/9/9/9/9/4k4 b R10P 1"))
    assert not ok and "9 pieces" in why
    # king in check by a white rook on 5i: false
    ok, why = check_declaration(shogi.Board("LNSG1GSNL/R3K3B/9/9/9/9/9/9/k3r4 b 10P 1"))
    assert not ok and "check" in why
    # king outside the camp: false
    ok, why = check_declaration(shogi.Board("LNSG1GSNL/R7B/9/4K4/9/9/9/9/4k4 b 10P 1"))
    assert not ok and "camp" in why


def test_max_moves_draw_and_mate_on_last_ply_wins():
    ref = Referee(max_moves=4)
    for usi in ["7g7f", "3c3d", "2g2f"]:
        assert ref.play(usi) is None
    out = ref.play("8c8d")
    assert out is not None and out.is_draw and out.reason == Reason.MAX_MOVES
    ref = Referee("4k4/9/4P4/9/9/9/9/9/4K4 b G 1", max_moves=1)
    assert ref.play("G*5b").reason == Reason.CHECKMATE


def test_resign_and_forfeit():
    ref = Referee()
    ref.play("7g7f")
    assert ref.resign().winner == BLACK
    assert ref.forfeit(Reason.TIME_LOSS).winner == BLACK
    assert ref.forfeit(Reason.CRASH, loser=BLACK).winner == WHITE


def test_opening_with_illegal_move_is_rejected():
    opening = ["7g7f", "7g7f"]
    with pytest.raises(ValueError, match=r"illegal opening move '7g7f' in 'lnsgkgsnl/.* b - 1'"):
        Referee(moves=opening)
    assert opening == ["7g7f", "7g7f"]  # the caller's list is left alone
    # a move the referee refuses during the game leaves the game as it was
    ref = Referee(moves=["7g7f"])
    before = (ref.board.sfen(), list(ref.moves), ref.position_command())
    out = ref.play("7g7f")  # white to move: no piece there
    assert out.reason == Reason.ILLEGAL_MOVE and out.winner == BLACK and "'7g7f'" in out.detail
    assert (ref.board.sfen(), list(ref.moves), ref.position_command()) == before


def test_position_command():
    assert Referee(moves=["7g7f"]).position_command() == "position startpos moves 7g7f"
    sfen = "4k4/9/4P4/9/9/9/9/9/4K4 b G 1"
    assert Referee(sfen).position_command() == f"position sfen {sfen}"


# -- openings, schedule, records -----------------------------------------------------


def test_opening_file_forms():
    openings = load_openings(os.path.join(FIXTURES, "openings.sfen"))
    assert len(openings) == 6
    assert openings[0] == Opening()
    assert openings[1].moves == ("7g7f", "3c3d")
    assert openings[2].moves == ("2g2f", "8c8d")
    assert openings[3].sfen.endswith("w - 2") and openings[3].moves == ("3c3d",)
    assert openings[4].sfen == openings[5].sfen.replace(" 1", " 3")
    with pytest.raises(ValueError, match="illegal opening move '7g7f'"):
        parse_opening_line("startpos moves 7g7f 7g7f")
    with pytest.raises(ValueError, match="bad opening line: 'sfen 9/9 b'"):
        parse_opening_line("sfen 9/9 b")


def test_random_openings_are_balanced_and_reproducible():
    a = random_openings(5, 10, seed=3)
    assert a == random_openings(5, 10, seed=3)
    for o in a:
        ref = Referee(o.sfen, o.moves)
        assert len(o.moves) == 10 and abs(material_balance(ref.board)) <= 2


def test_opening_file_errors_name_the_file_and_the_line(tmp_path):
    path = tmp_path / "openings.txt"
    path.write_text("# two good lines, then a bad one\nstartpos\nstartpos moves 7g7f\nsfen 9/9 b\n")
    with pytest.raises(ValueError) as bad:
        load_openings(str(path))
    assert str(bad.value) == f"{path}: line 4: bad opening line: 'sfen 9/9 b'"
    path.write_text("startpos moves 7g7f 7g7f\n")
    with pytest.raises(ValueError, match="illegal opening move '7g7f'") as illegal:
        load_openings(str(path))
    assert str(illegal.value).startswith(f"{path}: line 1: ")
    path.write_text("# nothing but a comment\n\n")
    with pytest.raises(ValueError) as empty:
        load_openings(str(path))
    assert str(empty.value) == f"{path}: no openings in the file"
    path.write_bytes(b"\xff\xfe startpos\n")
    with pytest.raises(ValueError) as binary:
        load_openings(str(path))
    assert str(binary.value) == f"{path}: not a text file of openings (not UTF-8)"
    missing = tmp_path / "missing.txt"
    with pytest.raises(ValueError) as gone:
        load_openings(str(missing))
    assert str(gone.value).startswith(f"{missing}: ")


def test_schedule_plays_pairs_with_colours_swapped():
    plan = schedule(2, 4, [Opening(), Opening(moves=("7g7f",))])
    assert [(g.black, g.white, g.opening_index, g.pair) for g in plan] == [
        (0, 1, 0, 1),
        (1, 0, 0, 1),
        (0, 1, 1, 2),
        (1, 0, 1, 2),
    ]
    assert [(g.black, g.white, g.pair) for g in schedule(2, 3, [Opening()])] == [
        (0, 1, 1),
        (1, 0, 1),
        (0, 1, 2),
    ]  # an odd last game is alone
    rr = schedule(3, 2, [Opening()])
    assert len(rr) == 6 and [g.index for g in rr] == list(range(1, 7))
    for first, second in zip(rr[::2], rr[1::2]):  # a pair's games are neighbours
        assert (first.pair, first.black, first.white) == (second.pair, second.white, second.black)
    assert len(schedule(3, 2, [Opening()], gauntlet=True)) == 4
    three = [Opening(), Opening(moves=("7g7f",)), Opening(moves=("2g2f",))]
    plan = schedule(2, 6, three, opening_start=2)  # from the third, wrapping
    assert [g.opening_index for g in plan] == [2, 2, 0, 0, 1, 1]
    assert [g.opening for g in plan[::2]] == [three[2], three[0], three[1]]


def _random_game(sfen: str, plies: int) -> tuple[GameRecord, Referee]:
    rng = random.Random(7)
    ref = Referee(sfen)
    game = GameRecord(1, "Sente Engine", "Gote Engine", sfen)
    for _ in range(plies):
        usi = rng.choice(list(ref.board.legal_moves)).usi()
        assert ref.play(usi) is None
        game.moves.append(MoveRecord(usi, 1500, "cp 42", ["7g7f"], 3))
    game.outcome = ref.resign()
    return game, ref


@pytest.mark.parametrize(
    "sfen", [shogi.STARTING_SFEN, "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w Pb 1"]
)
def test_records_parse_back(sfen):
    game, ref = _random_game(sfen, 40)
    game.moves[3].elapsed_ms = -0.2  # clock jitter must not break the KIF time field
    for parsed in (shogi.CSA.Parser.parse_str(to_csa(game))[0], shogi.KIF.Parser.parse_str(to_kif(game))[0]):
        assert parsed["moves"] == ref.moves
        assert parsed["names"] == ["Sente Engine", "Gote Engine"]
        assert parsed["win"] == ("b" if game.outcome.winner == BLACK else "w")
        assert shogi.Board(parsed["sfen"]).sfen() == shogi.Board(sfen).sfen()
    assert "'** score cp 42 depth 3 pv 7g7f" in to_csa(game)
    assert "*score cp 42 depth 3 pv 7g7f" in to_kif(game)


@pytest.mark.parametrize(
    "sfen", [shogi.STARTING_SFEN, "lnsgkg1nl/1r5s1/pppppp1pp/6p2/9/2P6/PP1PPPPPP/7R1/LNSGKGSNL w Bb 1"]
)
def test_records_read_back_with_the_public_reader(sfen):
    """The match runner's records are written by the writer of usi_engine.record, and read
    back by its reader: the moves, the names, how the game ended, no error."""
    from usi_engine.record import parse_record

    game, ref = _random_game(sfen, 60)
    for text in (to_kif(game), to_csa(game)):
        rec = parse_record(text)
        assert rec.errors == [] and rec.moves == ref.moves and rec.result == "%TORYO"
        assert rec.names == ["Sente Engine", "Gote Engine"]
        assert shogi.Board(rec.start_sfen).sfen() == shogi.Board(sfen).sfen()


def test_writing_records_loads_no_numba():
    """The match runner (Ray workers included) writes its records without numba, and so
    without usi_engine.position, which is numba-backed."""
    import subprocess

    code = (
        "import sys; from usi_engine.match import runner; "
        "from usi_engine.match.records import GameRecord, MoveRecord, to_csa, to_kif; "
        "g = GameRecord(1, 'a', 'b', 'lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1', "
        "[MoveRecord(m) for m in ('7g7f', '3c3d', '8h2b+', '3a2b')]); "
        "assert '同　銀(31)' in to_kif(g) and '-3122GI,T0' in to_csa(g); "
        "bad = [m for m in ('numba', 'usi_engine.position') if m in sys.modules]; "
        "assert not bad, bad"
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


def test_clocks_and_go_commands():
    byo = (
        GameClock(TimeControl(time_ms=2000, byoyomi_ms=1000)),
        GameClock(TimeControl(time_ms=2000, byoyomi_ms=1000)),
    )
    assert go_command(byo, BLACK) == "go btime 2000 wtime 2000 byoyomi 1000"
    assert byo[BLACK].allowed_ms() == 3000
    byo[BLACK].consume(2500)  # main time gone, into byoyomi
    assert byo[BLACK].remaining_ms == 0 and byo[BLACK].allowed_ms() == 1000
    fischer = (
        GameClock(TimeControl(time_ms=10000, inc_ms=500)),
        GameClock(TimeControl(time_ms=8000, inc_ms=500)),
    )
    assert go_command(fischer, WHITE) == "go btime 10000 wtime 8000 binc 500 winc 500"
    assert fischer[WHITE].allowed_ms() == 8500  # the increment is usable for this move
    fischer[WHITE].consume(1500)
    assert fischer[WHITE].remaining_ms == 7000
    nodes = (GameClock(TimeControl(nodes=5000)), GameClock(TimeControl(depth=3)))
    assert go_command(nodes, BLACK) == "go nodes 5000" and go_command(nodes, WHITE) == "go depth 3"
    assert nodes[BLACK].allowed_ms() is None
    mixed = (GameClock(TimeControl(byoyomi_ms=1000, nodes=100)), GameClock(TimeControl(byoyomi_ms=1000)))
    assert go_command(mixed, BLACK) == "go btime 0 wtime 0 byoyomi 1000 nodes 100"


# -- matches with fixture engines ----------------------------------------------------


def _check_records(out_dir: str, summary: dict) -> None:
    for res in summary["results"]:
        base = os.path.join(out_dir, res["record"])
        csa = shogi.CSA.Parser.parse_file(base + ".csa")[0]
        kif = shogi.KIF.Parser.parse_file(base + ".kif")[0]
        assert len(csa["moves"]) == len(kif["moves"]) == res["plies"]
        assert csa["moves"] == kif["moves"]
        assert csa["names"] == [res["black"], res["white"]]


def test_random_vs_random_match(tmp_path):
    cfg = config(
        [spec("A", "random_engine.py", "--seed", "1"), spec("B", "random_engine.py", "--seed", "2")],
        tmp_path,
        games=4,
        openings=load_openings(os.path.join(FIXTURES, "openings.sfen")),
    )
    result = run_match(cfg)
    out = cfg.out_dir
    summary = json.load(open(os.path.join(out, "summary.json")))
    pair = summary["pairs"][0]
    assert pair["wins"] + pair["losses"] + pair["draws"] == 4 == summary["games"] == len(result.games)
    assert len(summary["results"]) == 4
    points = summary["points"]
    assert points["A"] + points["B"] == 4
    assert points["A"] == pytest.approx(pair["wins"] + 0.5 * pair["draws"])
    _check_records(out, summary)
    assert "score cp" in open(os.path.join(out, summary["results"][0]["record"] + ".csa")).read()
    log = open(os.path.join(out, "logs", "A.log")).read()
    assert "> usinewgame" in log and "< bestmove" in log and "> gameover" in log
    # each worker reuses its process: at most one start per worker and engine
    assert log.count("* start") <= 2


@pytest.mark.parametrize("gauntlet,games", [(False, 6), (True, 4)])
def test_round_robin_and_gauntlet(tmp_path, gauntlet, games):
    engines = [spec("A"), spec("B"), spec("C")]
    result = run_match(config(engines, tmp_path, games=2, max_moves=30, gauntlet=gauntlet))
    assert len(result.games) == games
    assert sum(result.points().values()) == games
    summary = json.load(open(os.path.join(tmp_path, "out", "summary.json")))
    assert len(summary["pairs"]) == (3 if not gauntlet else 2)
    assert sum(p["games"] for p in summary["pairs"]) == games


def test_finished_games_are_out_of_the_collectors_scans_during_the_match(tmp_path):
    # A full collection holds the GIL, and with it the threads that time the engines. The
    # records of finished games (every move with its score and PV) are frozen as they come
    # in, so that the collections of a long match do not grow with it; afterwards the
    # collector has them back.
    gc.unfreeze()  # nothing of this process frozen before the match
    seen = []

    def on_game(result, game):
        scanned = {id(o) for o in gc.get_objects()}
        moves = [m for g in result.games for m in g.moves]
        seen.append(
            (len(moves), sum(id(m) in scanned for m in moves), sum(id(g) in scanned for g in result.games))
        )

    result = run_match(config([spec("A"), spec("B")], tmp_path, games=4, max_moves=30), on_game)
    assert len(seen) == 4
    for moves, scanned_moves, scanned_games in seen:
        assert moves > 0 and scanned_moves == 0 and scanned_games == 0
    scanned = {id(o) for o in gc.get_objects()}
    assert gc.get_freeze_count() == 0
    assert all(id(g) in scanned and all(id(m) in scanned for m in g.moves) for g in result.games)


def _only_losses_for(result, loser: str, reason: Reason) -> None:
    assert len(result.games) == result.planned
    for g in result.games:
        loser_side = BLACK if g.black == loser else WHITE
        assert g.outcome.winner == 1 - loser_side, g.outcome
        assert g.outcome.reason == reason


def test_crashing_engine_loses_and_is_restarted(tmp_path):
    cfg = config([spec("Good"), spec("Crasher", "crash_engine.py")], tmp_path, games=4)
    result = run_match(cfg)
    _only_losses_for(result, "Crasher", Reason.CRASH)
    log = open(os.path.join(cfg.out_dir, "logs", "Crasher.log")).read()
    assert "crashing on purpose" in log  # stderr kept
    assert log.count("* start") == 4  # restarted for every game
    _check_records(cfg.out_dir, json.load(open(os.path.join(cfg.out_dir, "summary.json"))))


def test_hanging_engine_loses_and_is_killed(tmp_path):
    cfg = config([spec("Good"), spec("Hanger", "hang_engine.py")], tmp_path, games=2)
    result = run_match(cfg)
    _only_losses_for(result, "Hanger", Reason.TIMEOUT)
    log = open(os.path.join(cfg.out_dir, "logs", "Hanger.log")).read()
    assert "hanging on purpose" in log and "killed" in log


def test_slow_engine_loses_on_time_but_keeps_its_process(tmp_path):
    cfg = config(
        [spec("Good"), spec("Slow", "random_engine.py", "--sleep-ms", "400", byoyomi=100)],
        tmp_path,
        games=2,
        concurrency=1,
        margin_ms=50,
    )
    result = run_match(cfg)
    _only_losses_for(result, "Slow", Reason.TIME_LOSS)
    for g in result.games:  # the runner's measure, then the engine's own clock beside it
        assert re.fullmatch(r"\d+ ms > 100 ms \+ 50 ms margin; its last info said time 400", g.outcome.detail)
    log = open(os.path.join(cfg.out_dir, "logs", "Slow.log")).read()
    assert log.count("* start") == 1


def test_a_new_game_waits_for_readyok_before_usinewgame():
    """UsiProcess.new_game, which the fixed-node tools (move-quality, node-rate, the labeller)
    send before each position: isready, readyok back, then usinewgame, as a GUI does."""
    from usi_engine.usiproc import EngineLog, UsiProcess

    log = EngineLog(None, memory=True)
    engine = UsiProcess([sys.executable, os.path.join(FIXTURES, "random_engine.py")], log, "random")
    engine.open({}, ready_timeout=30)
    try:
        log.drain()
        engine.new_game(timeout=30)
        result = engine.go("position startpos", "go btime 0 wtime 0 byoyomi 100", timeout=30)
        assert result.bestmove not in ("", None)
    finally:
        engine.quit()
    traffic = [line.split(None, 2)[2] for line in log.drain()]
    talk = [t for t in traffic if t.startswith(("> ", "< "))][:4]
    assert talk == ["> isready", "< readyok", "> usinewgame", "> position startpos"]


def test_a_slow_log_disk_costs_no_game_on_time(tmp_path, monkeypatch):
    """Each log write stalls 150 ms, twice the margin: the engines answer at once, so no
    game may be lost on time, and the log still gets every line."""
    from usi_engine import usiproc

    class SlowFile:
        def __init__(self, file):
            self._file = file

        def writelines(self, lines):
            time.sleep(0.15)
            self._file.writelines(lines)

        def __getattr__(self, name):
            return getattr(self._file, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self._file.close()

    monkeypatch.setattr(usiproc, "open", lambda *a, **kw: SlowFile(open(*a, **kw)), raising=False)
    engines = [spec(name, "random_engine.py", "--first-move", byoyomi=100) for name in ("Good", "Other")]
    cfg = config(engines, tmp_path, games=2, concurrency=1, margin_ms=75, max_moves=16)
    result = run_match(cfg)
    assert [g.outcome.reason for g in result.games] == [Reason.MAX_MOVES] * 2
    log = open(os.path.join(cfg.out_dir, "logs", "Good.log")).read()
    assert log.count("< bestmove") == sum(len(g.moves) for g in result.games) // 2


@pytest.mark.parametrize(
    "flag,reason",
    [
        ("--illegal-at", Reason.ILLEGAL_MOVE),
        ("--resign-at", Reason.RESIGN),
        ("--declare-at", Reason.FALSE_DECLARATION),
    ],
)
def test_engine_answers_adjudicated(tmp_path, flag, reason):
    cfg = config([spec("Good"), spec("Bad", "random_engine.py", flag, "2")], tmp_path, games=2, concurrency=1)
    result = run_match(cfg)
    # the second go of the process: move 2 of game 1, and game 2 is a normal game
    first = min(result.games, key=lambda g: g.index)
    assert first.outcome.reason == reason and first.outcome.winner == BLACK


def test_a_resignation_without_a_search_is_reported_apart(tmp_path):
    # Each answers its first go of the match with resign: Silent without an info line,
    # as an engine that could not search does, Searched after its usual one.
    engines = [
        spec("Silent", "random_engine.py", "--resign-at", "1", "--no-info"),
        spec("Searched", "random_engine.py", "--resign-at", "1"),
    ]
    result = run_match(config(engines, tmp_path, games=2, concurrency=1))
    first = min(result.games, key=lambda g: g.index)
    assert first.black == "Silent" and first.outcome.winner == WHITE
    assert first.outcome.reason == Reason.RESIGN and first.outcome.detail == RESIGNED_UNSEARCHED
    second = max(result.games, key=lambda g: g.index)
    assert second.black == "Searched" and second.outcome.reason == Reason.RESIGN
    assert second.outcome.detail == ""
    assert result.resigned_unsearched() == {"Silent": 1}
    report = result.report()
    assert "Endings: resign 2" in report
    assert "Resigned without a search: Silent 1 (no info line before bestmove resign" in report


def _stopped_before_any_game(result: MatchResult, out_dir: str, reason: str) -> None:
    assert result.games == [] and result.not_started == reason
    assert f"Stopped: {reason} (its log is in logs/)" in result.report()
    summary = json.load(open(os.path.join(out_dir, "summary.json")))
    assert summary["games"] == 0 and summary["not_started"] == reason


def test_an_engine_that_never_starts_stops_the_match(tmp_path):
    """A wrong command or option (YaneuraOu's missing nn.bin) is a setup error: the match
    stops with the engine's own words instead of counting forfeits."""
    broken = spec("Broken", "random_engine.py", "--fail-isready")
    cfg = config([spec("Good"), broken], tmp_path, games=8)
    result = run_match(cfg)
    _stopped_before_any_game(
        result,
        cfg.out_dir,
        "Broken could not start: engine exited (exit code 1), its last line: "
        "'Error! : failed to read nn.bin : FileNotFound'",
    )
    log = open(os.path.join(cfg.out_dir, "logs", "Broken.log")).read()
    assert log.count("* start") <= 2  # one try a table, not one a game


def test_a_missing_engine_stops_the_match(tmp_path):
    missing = os.path.join(FIXTURES, "no-such-engine")
    bad = EngineSpec([missing], "Missing", tc=TimeControl(byoyomi_ms=100))
    cfg = config([spec("Good"), bad], tmp_path, games=2)
    result = run_match(cfg)
    _stopped_before_any_game(
        result,
        cfg.out_dir,
        f"Missing could not start: cannot start {[missing]!r}: "
        f"[Errno 2] No such file or directory: {missing!r}",
    )


def test_an_engine_that_started_once_loses_when_a_restart_fails(tmp_path):
    """After one good start, a failed restart is that engine's loss and the match goes on."""
    flaky = spec(
        "Flaky",
        "random_engine.py",
        "--crash-at",
        "3",
        "--fail-isready",
        "--ready-once",
        str(tmp_path / "once"),
    )
    cfg = config([spec("Good"), flaky], tmp_path, games=4, concurrency=1)
    result = run_match(cfg)
    assert result.not_started is None and len(result.games) == 4
    _only_losses_for(result, "Flaky", Reason.CRASH)
    details = [g.outcome.detail for g in sorted(result.games, key=lambda g: g.index)]
    assert "failed to read nn.bin" not in details[0]  # the crash at its third go
    assert all("failed to read nn.bin" in d for d in details[1:])


def test_the_cli_exits_1_when_an_engine_never_starts(tmp_path, capsys):
    fail = " ".join(fixture_cmd("random_engine.py", "--fail-isready"))
    good = " ".join(fixture_cmd("random_engine.py"))
    engines = ["--engine", f"cmd={good}", "name=Good", "--engine", f"cmd={fail}", "name=Broken"]
    code = cli.main(engines + "--games 4 --byoyomi 1000 --quiet --out".split() + [str(tmp_path / "out")])
    assert code == 1
    assert "Stopped: Broken could not start: engine exited (exit code 1)" in capsys.readouterr().out


def test_sprt_stops_match_early(tmp_path):
    cfg = config([spec("Good"), spec("Crasher", "crash_engine.py")], tmp_path, games=40, sprt=Sprt(0, 200))
    result = run_match(cfg)
    assert result.sprt_result == "H1"
    assert 8 <= len(result.games) < 40
    summary = json.load(open(os.path.join(cfg.out_dir, "summary.json")))
    assert summary["sprt"]["result"] == "H1" and summary["games"] == len(result.games)


def test_sprt_prior_counts_earlier_runs(tmp_path):
    # The earlier runs already prove H1: the match stops at its first game and says why.
    prior = (5, 0, 60, 0, 300)
    cfg = config([spec("A"), spec("B")], tmp_path, games=40, sprt=Sprt(0, 10, prior=prior))
    result = run_match(cfg)
    assert result.sprt_result == "H1" and len(result.games) <= cfg.concurrency
    summary = json.load(open(os.path.join(cfg.out_dir, "summary.json")))
    this_run = result.first_engine().results.penta
    assert summary["sprt"]["prior_pentanomial"] == list(prior)
    assert summary["sprt"]["total_pentanomial"] == [a + b for a, b in zip(prior, this_run)]
    assert "earlier runs' pairs 5-0-60-0-300" in result.report()
    assert "(all runs)" in result.progress_line()
    # every pair so far won: an infinite Elo, reported as such (not as nan)
    cfg = config([spec("A"), spec("B")], tmp_path / "wins", sprt=Sprt(0, 10, prior=(0, 0, 0, 0, 50)))
    assert "pairs 0-0-0-0-50, Elo +inf +- inf" in MatchResult(cfg, planned=2).report()


def test_cli_opening_start(tmp_path, capsys):
    base = ["--engine", "cmd=a", "--engine", "cmd=b", "--out", str(tmp_path)]
    config_, _ = cli.build_config(cli.build_parser().parse_args(base + ["--opening-start", "101"]))
    assert config_.opening_start == 100
    assert cli.build_config(cli.build_parser().parse_args(base))[0].opening_start == 0
    with pytest.raises(SystemExit):
        cli.main(base + ["--opening-start", "0"])
    assert "--opening-start counts from 1, got 0" in capsys.readouterr().err


def test_cli_sprt_prior(tmp_path, capsys):
    base = ["--engine", "cmd=a", "--engine", "cmd=b", "--out", str(tmp_path)]
    config_, _ = cli.build_config(
        cli.build_parser().parse_args(base + ["--sprt", "0", "10", "--sprt-prior", "1-2-3-4-5"])
    )
    assert config_.sprt == Sprt(0, 10, prior=(1, 2, 3, 4, 5))
    assert cli.make_sprt([0, 10], [1, 2, 3, 4, 5]) == config_.sprt  # from a JSON config
    for extra, message in (
        (["--sprt-prior", "1-2-3-4-5"], "--sprt-prior needs --sprt"),
        (["--sprt", "0", "10", "--sprt-prior", "12-5"], "5 non-negative numbers, not [12, 5]"),
    ):
        with pytest.raises(SystemExit):
            cli.main(base + extra)
        assert message in capsys.readouterr().err


def test_interrupt_keeps_finished_games(tmp_path):
    cfg = config([spec("A"), spec("B")], tmp_path, games=20, concurrency=1, max_moves=20)

    def interrupt(result, game):
        if len(result.games) == 2:
            raise KeyboardInterrupt

    result = run_match(cfg, interrupt)
    assert result.interrupted and 2 <= len(result.games) < 20
    summary = json.load(open(os.path.join(cfg.out_dir, "summary.json")))
    assert summary["interrupted"] and summary["games"] == len(result.games)
    _check_records(cfg.out_dir, summary)


# -- ponder ------------------------------------------------------------------------


def _ponder_protocol(log_path: str) -> Counter:
    """Replay every process's USI traffic in the log and check the ponder protocol as a
    GUI drives it: ``go ponder`` only when idle, then exactly one of ``ponderhit`` or
    ``stop``, one ``bestmove`` per ``go``, nothing else sent while an answer is pending,
    stderr silent.  Returns counts of go, ponder, hit, miss, bestmove."""
    streams: dict[str, list[tuple[str, str]]] = defaultdict(list)
    with open(log_path, encoding="utf-8") as f:
        for line in f:
            parts = line.split(maxsplit=3)
            streams[parts[1]].append((parts[2], parts[3].strip() if len(parts) > 3 else ""))
    counts: Counter = Counter()
    for tag, events in streams.items():
        state = "idle"
        for direction, text in events:
            assert direction != "!", f"{tag} wrote on stderr: {text}"
            word = text.split()[0] if text.split() else ""
            if direction == ">" and text.startswith("go ponder"):
                assert state == "idle", (tag, text, state)
                state, counts["ponder"], counts["go"] = "pondering", counts["ponder"] + 1, counts["go"] + 1
            elif direction == ">" and word == "go":
                assert state == "idle", (tag, text, state)
                state, counts["go"] = "searching", counts["go"] + 1
            elif direction == ">" and word == "ponderhit":
                assert state == "pondering", (tag, state)
                state, counts["hit"] = "searching", counts["hit"] + 1
            elif direction == ">" and word == "stop" and state == "pondering":
                state, counts["miss"] = "stopping", counts["miss"] + 1
            elif direction == ">" and word in ("position", "usinewgame", "isready", "gameover", "setoption"):
                assert state == "idle", (tag, text, state)
            elif direction == "<" and word == "bestmove":
                assert state in ("searching", "stopping"), (tag, text, state)
                state, counts["bestmove"] = "idle", counts["bestmove"] + 1
    return counts


def _pondering(engine: EngineSpec) -> EngineSpec:
    engine.ponder = True
    return engine


def test_ponder_hits_charge_the_clock_from_ponderhit(tmp_path):
    # Two engines that play and predict the first legal move: every ponder is a hit.
    # Each thinks 400 ms after ponderhit, so it ponders >= 400 ms (the opponent's move)
    # before it: charged from ponderhit a move costs ~400 ms, from go ponder >= 800 ms.
    engines = [
        _pondering(spec(n, "random_engine.py", "--ponder", "--first-move", "--sleep-ms", "400", byoyomi=2000))
        for n in ("A", "B")
    ]
    cfg = config(engines, tmp_path, games=2, max_moves=16)
    result = run_match(cfg)
    assert len(result.games) == 2
    assert {g.outcome.reason for g in result.games} == {Reason.MAX_MOVES}
    for name in ("A", "B"):
        log = os.path.join(cfg.out_dir, "logs", f"{name}.log")
        assert "setoption name USI_Ponder value true" in open(log).read()
        counts = _ponder_protocol(log)
        assert counts["bestmove"] == counts["go"] > 0
        # every ponder hits, but for a stop when the game ends on the opponent's move
        assert counts["hit"] + counts["miss"] == counts["ponder"] and counts["miss"] <= 2
        assert counts["hit"] >= 12
    moves = [m for g in result.games for m in g.moves if not m.book]
    assert len(moves) == 32 and all(380 <= m.elapsed_ms < 750 for m in moves)
    summary = json.load(open(os.path.join(cfg.out_dir, "summary.json")))
    assert all(e["ponder"] for e in summary["engines"])


def test_ponder_misses_are_stopped_and_answered_afresh(tmp_path):
    engines = [
        _pondering(spec("A", "random_engine.py", "--ponder", "--seed", "1")),
        _pondering(spec("B", "random_engine.py", "--ponder", "--seed", "2")),
    ]
    cfg = config(engines, tmp_path, games=2, max_moves=40)
    result = run_match(cfg)
    assert not {g.outcome.reason for g in result.games} & {
        Reason.ILLEGAL_MOVE,
        Reason.TIME_LOSS,
        Reason.CRASH,
        Reason.TIMEOUT,
    }
    total: Counter = Counter()
    for name in ("A", "B"):
        counts = _ponder_protocol(os.path.join(cfg.out_dir, "logs", f"{name}.log"))
        assert counts["bestmove"] == counts["go"]
        assert counts["hit"] + counts["miss"] == counts["ponder"]
        total += counts
    assert total["miss"] > 10  # random movers rarely play the predicted move


def test_no_ponder_on_an_illegal_ponder_move_or_without_the_flag(tmp_path):
    engines = [_pondering(spec("A", "random_engine.py", "--ponder", "--ponder-move", "5i5a")), spec("B")]
    cfg = config(engines, tmp_path, games=2, max_moves=20)
    result = run_match(cfg)
    assert {g.outcome.reason for g in result.games} == {Reason.MAX_MOVES}
    for name in ("A", "B"):
        log = os.path.join(cfg.out_dir, "logs", f"{name}.log")
        counts = _ponder_protocol(log)
        assert counts["ponder"] == 0 and counts["bestmove"] == counts["go"] > 0
    assert "USI_Ponder" not in open(os.path.join(cfg.out_dir, "logs", "B.log")).read()


def test_ponder_flag_and_engine_key():
    args = ["--engine", "cmd=x", "--engine", "cmd=y", "ponder=false", "--ponder"]
    config_, _ = cli.build_config(cli.build_parser().parse_args(args))
    assert [e.ponder for e in config_.engines] == [True, False]
    assert config_.engines[0].usi_options() == {"USI_Ponder": "true"}
    with pytest.raises(ValueError, match="not a boolean"):
        cli.build_config(
            cli.build_parser().parse_args(["--engine", "cmd=x", "ponder=maybe", "--engine", "cmd=y"])
        )


# -- command line -------------------------------------------------------------------


def test_engine_tokens_and_names():
    fields = cli.parse_engine_tokens(["cmd=python -m usi_engine", "option.USI_Hash=64", "byoyomi=500"])
    engine = cli.engine_from_fields(fields, {"byoyomi": 1000, "nodes": 7})
    assert engine.cmd == ["python", "-m", "usi_engine"] and engine.name == "usi_engine"
    assert engine.options == {"USI_Hash": "64"}
    assert (engine.tc.byoyomi_ms, engine.tc.nodes) == (500, 7)
    with pytest.raises(ValueError, match="engine argument 'python' is not KEY=VALUE"):
        cli.parse_engine_tokens(["python"])


def test_config_files(tmp_path):
    ini = tmp_path / "m.ini"
    ini.write_text(
        "[match]\ngames = 6\nsprt = 0 5\n\n[engine new]\ncmd = python a.py --x 1\n"
        "option.USI_Hash = 64\n\n[engine old]\ncmd = python b.py\nnodes = 100\n"
    )
    settings, engines = cli.load_config(str(ini))
    assert settings["games"] == 6 and settings["sprt"] == [0.0, 5.0]
    assert [e["name"] for e in engines] == ["new", "old"] and engines[0]["option.USI_Hash"] == "64"
    js = tmp_path / "m.json"
    js.write_text(json.dumps({"games": 4, "engines": [{"cmd": ["x"], "options": {"Hash": 16}}]}))
    settings, engines = cli.load_config(str(js))
    assert settings["games"] == 4 and cli.engine_from_fields(engines[0], {}).options == {"Hash": "16"}


def test_cli_end_to_end(tmp_path, capsys):
    engine = f"cmd={sys.executable} {os.path.join(FIXTURES, 'random_engine.py')}"
    out = tmp_path / "cli"
    code = cli.main(
        [
            "--engine",
            engine,
            "name=R1",
            "--engine",
            engine,
            "name=R2",
            "--games",
            "2",
            "--byoyomi",
            "100",
            "--random-openings",
            "6",
            "--seed",
            "1",
            "--max-moves",
            "60",
            "--out",
            str(out),
            "--concurrency",
            "2",
            "--quiet",
            "--sprt",
            "0",
            "10",
        ]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert "R1 vs R2: W-L-D" in text and "SPRT" in text and "LOS" in text
    summary = json.load(open(out / "summary.json"))
    assert summary["games"] == 2 and summary["sprt"]["elo1"] == 10


def test_script_help():
    import subprocess

    proc = subprocess.run(
        [sys.executable, os.path.join(REPO, "scripts", "match.py"), "--help"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0
    for flag in (
        "--engine",
        "--games",
        "--concurrency",
        "--byoyomi",
        "--time",
        "--inc",
        "--nodes",
        "--depth",
        "--openings",
        "--random-openings",
        "--max-moves",
        "--sprt",
        "--out",
        "--seed",
        "--gauntlet",
        "--margin",
        "--config",
        "--sprt-prior",
    ):
        assert flag in proc.stdout


# -- the real engine -------------------------------------------------------------------


@pytest.fixture(scope="module")
def warm_engine_cache():
    """Compile (or load) the engine's numba code once, so that no match game waits for it."""
    import subprocess

    run = subprocess.run(
        [sys.executable, "-m", "usi_engine", "--warmup"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]


def _our_engine(name: str, nodes: int) -> EngineSpec:
    return EngineSpec(
        [sys.executable, "-m", "usi_engine"], name, tc=TimeControl(byoyomi_ms=5000, nodes=nodes)
    )


def test_our_engine_against_itself_and_a_random_mover(tmp_path, warm_engine_cache):
    engines = [
        _our_engine("usi_engine", 1000),
        spec("random", "random_engine.py", "--seed", "5", byoyomi=5000),
    ]
    # 120 plies: at 1,000 nodes a move the network wins on material and king safety, and its
    # mates of a random mover came after ply 60 (r7: mate in 5 found at ply 59, +2,626 at 60)
    cfg = config(engines, tmp_path, games=2, max_moves=120, ready_timeout_s=120, hang_timeout_ms=3000)
    result = run_match(cfg)
    summary = json.load(open(os.path.join(cfg.out_dir, "summary.json")))
    assert summary["games"] == len(result.games) == 2
    assert sum(summary["points"].values()) == 2
    reasons = {g.outcome.reason for g in result.games}
    assert not reasons & {Reason.ILLEGAL_MOVE, Reason.TIME_LOSS, Reason.CRASH, Reason.TIMEOUT}
    assert summary["points"]["usi_engine"] >= 1.5  # a searcher does not lose to random moves
    _check_records(cfg.out_dir, summary)

    pair = [_our_engine("a", 200), _our_engine("b", 400)]
    cfg = config(pair, tmp_path / "self", games=2, max_moves=40, ready_timeout_s=120, hang_timeout_ms=3000)
    result = run_match(cfg)
    summary = json.load(open(os.path.join(cfg.out_dir, "summary.json")))
    assert summary["games"] == 2 and sum(summary["points"].values()) == 2
    assert not {g.outcome.reason for g in result.games} & {
        Reason.ILLEGAL_MOVE,
        Reason.TIME_LOSS,
        Reason.CRASH,
        Reason.TIMEOUT,
    }
    _check_records(cfg.out_dir, summary)


def test_our_engine_ponders(tmp_path, warm_engine_cache):
    """The real engine at a tiny clock with --ponder: hits and misses, clean protocol."""
    engines = [
        _pondering(EngineSpec([sys.executable, "-m", "usi_engine"], n, tc=TimeControl(byoyomi_ms=100)))
        for n in ("a", "b")
    ]
    cfg = config(
        engines, tmp_path, games=2, max_moves=30, ready_timeout_s=120, hang_timeout_ms=3000, margin_ms=1000
    )
    result = run_match(cfg)
    assert len(result.games) == 2
    assert not {g.outcome.reason for g in result.games} & {
        Reason.ILLEGAL_MOVE,
        Reason.TIME_LOSS,
        Reason.CRASH,
        Reason.TIMEOUT,
    }
    total: Counter = Counter()
    for name in ("a", "b"):
        counts = _ponder_protocol(os.path.join(cfg.out_dir, "logs", f"{name}.log"))
        assert counts["bestmove"] == counts["go"]
        assert counts["hit"] + counts["miss"] == counts["ponder"]
        total += counts
    assert total["ponder"] >= 20 and total["hit"] > 0
