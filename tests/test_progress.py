"""Progress on stderr (usi_engine/progress.py): the tqdm bar of training and analysis, and
the status line that match.py and tune.py redraw on a terminal and log elsewhere."""

from __future__ import annotations

import io
import sys
from types import SimpleNamespace

from usi_engine.match import cli, tunecli
from usi_engine.match.config import EngineSpec, MatchConfig
from usi_engine.match.records import GameRecord
from usi_engine.match.referee import BLACK, Outcome, Reason
from usi_engine.match.results import MatchResult
from usi_engine.progress import NoBar, StatusLine, progress_bar


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def on_terminal(monkeypatch) -> Terminal:
    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    return term


# -- the bar -------------------------------------------------------------------------


def test_no_bar_when_not_shown_or_without_tqdm(monkeypatch):
    assert isinstance(progress_bar(10, show=False), NoBar)
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm raises ImportError
    bar = progress_bar(10)
    assert isinstance(bar, NoBar)
    bar.update(3)
    bar.close()


def test_bar_counts_positions_scaled_unless_told_otherwise():
    out = io.StringIO()
    bar = progress_bar(2000, file=out, mininterval=0)  # gensfen, rescore, the trainer
    bar.update(1500)
    bar.close()
    assert "1.50k/2.00k" in out.getvalue() and "pos/s" in out.getvalue()
    out = io.StringIO()
    bar = progress_bar(20, file=out, mininterval=0, unit_scale=False, desc="analysing")  # analysis
    bar.update(15)
    bar.close()
    assert "analysing:" in out.getvalue() and "15/20" in out.getvalue()


# -- the status line -------------------------------------------------------------------


def test_status_line_writes_lines_when_not_on_a_terminal(capsys):
    status = StatusLine()
    status.show("one")
    status.show("two", "two, with what a log wants")
    status.show("three", log=False)
    status.done()
    assert capsys.readouterr().err == "one\ntwo, with what a log wants\n"


def test_status_line_redraws_on_a_terminal(monkeypatch):
    term = on_terminal(monkeypatch)
    status = StatusLine()
    status.show("one", "not on a terminal")
    status.show("two", log=False)
    status.done()
    assert term.getvalue() == "\r\033[Kone\r\033[Ktwo\n"


def test_quiet_status_line_writes_nothing(monkeypatch):
    term = on_terminal(monkeypatch)
    status = StatusLine(quiet=True)
    status.show("one")
    status.done()
    assert term.getvalue() == ""


# -- match.py and tune.py ---------------------------------------------------------------


def one_game_result() -> tuple[MatchResult, GameRecord]:
    engines = [EngineSpec(["a"], "alpha"), EngineSpec(["b"], "beta")]
    result = MatchResult(MatchConfig(engines), planned=2)
    game = GameRecord(1, "alpha", "beta", "", black_engine=0, white_engine=1, pair=1)
    game.outcome = Outcome(BLACK, Reason.CHECKMATE)
    result.add(game)
    return result, game


def test_match_progress_names_the_game_in_a_log(capsys):
    result, game = one_game_result()
    progress = cli.Progress(False)
    progress(result, game)
    progress.done()
    line = result.progress_line()
    assert line.startswith("games 1/2  alpha: W-L-D 1-0-0")
    assert capsys.readouterr().err == f"{line}  (game 1: alpha vs beta 1-0 checkmate)\n"
    cli.Progress(True)(result, game)
    assert capsys.readouterr().err == ""


def test_match_progress_redraws_on_a_terminal(monkeypatch):
    term = on_terminal(monkeypatch)
    result, game = one_game_result()
    progress = cli.Progress(False)
    progress(result, game)
    progress.done()
    assert term.getvalue() == "\r\033[K" + result.progress_line() + "\n"


def fake_tuner(done: int, iterations: int) -> SimpleNamespace:
    spsa = SimpleNamespace(done=done, iterations=iterations, finished=done >= iterations)
    return SimpleNamespace(spsa=spsa, progress_line=lambda: f"pair {spsa.done}/{spsa.iterations}")


def test_tune_progress_logs_about_200_lines_and_the_last(capsys):
    progress = tunecli.Progress(False, 1003)  # a line every 5 pairs
    for done in range(1, 1004):
        progress(fake_tuner(done, 1003))
    progress.done()
    lines = capsys.readouterr().err.splitlines()
    assert lines[:2] == ["pair 5/1003", "pair 10/1003"] and lines[-2:] == ["pair 1000/1003", "pair 1003/1003"]
    assert len(lines) == 201


def test_tune_progress_redraws_every_pair_on_a_terminal(monkeypatch):
    term = on_terminal(monkeypatch)
    progress = tunecli.Progress(False, 1000)
    for done in (1, 2):
        progress(fake_tuner(done, 1000))
    progress.done()
    assert term.getvalue() == "\r\033[Kpair 1/1000\r\033[Kpair 2/1000\n"
