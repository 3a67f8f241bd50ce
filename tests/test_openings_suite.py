"""Opening suites (usi_engine/match/openings.py, scripts/make_openings.py): the same suite
for a seed, unbalanced lines rejected, and another USI engine as the judge."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import pytest

from usi_engine.match.openings import MAX_ATTEMPTS, SuiteSettings, make_suite
from usi_engine.match.config import load_openings
from usi_engine.position import Position

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _score(moves, salt: str) -> int:
    """A made-up but fixed score of a line: -400..399 cp."""
    digest = hashlib.sha256((salt + " ".join(moves)).encode()).digest()
    return int.from_bytes(digest[:2], "big") % 800 - 400


class ScriptedJudge:
    """Rates legal moves by a hash of the line: deterministic, no engine."""

    def __init__(self) -> None:
        self.searches = 0
        self.deep = []

    def lines(self, moves, multipv, deep):
        self.searches += 1
        pos = Position()
        for move in moves:
            pos.push(move)
        rated = sorted(
            ((m, _score([*moves, m], "move")) for m in pos.legal_moves()), key=lambda mc: (-mc[1], mc[0])
        )
        if deep:
            self.deep.append(_score(moves, "deep"))
            return [(rated[0][0], self.deep[-1])]
        return rated[:multipv]


def test_same_seed_same_suite_and_a_longer_one_begins_with_it():
    settings = SuiteSettings(count=5, plies=6, multipv=4, spread=60, balance=150, seed=7)
    first = [k.moves for k in make_suite(ScriptedJudge(), settings)]
    again = [k.moves for k in make_suite(ScriptedJudge(), settings)]
    longer = [
        k.moves
        for k in make_suite(
            ScriptedJudge(), SuiteSettings(count=8, plies=6, multipv=4, spread=60, balance=150, seed=7)
        )
    ]
    other = [
        k.moves
        for k in make_suite(
            ScriptedJudge(), SuiteSettings(count=5, plies=6, multipv=4, spread=60, balance=150, seed=8)
        )
    ]
    assert first == again and longer[:5] == first and other != first
    assert len(set(first)) == 5 and all(len(m) == 6 for m in first)


def test_every_move_is_near_the_best_and_unbalanced_lines_are_rejected():
    judge = ScriptedJudge()
    settings = SuiteSettings(count=6, plies=4, multipv=3, spread=50, balance=100, seed=3)
    kept = list(make_suite(judge, settings))
    assert len(kept) == 6 and all(abs(k.score) <= 100 for k in kept)
    # each attempt is judged deep unless it repeats a line kept already
    assert sum(k.attempts for k in kept) >= len(judge.deep) > 6  # some were rejected
    assert sorted(abs(s) > 100 for s in judge.deep).count(True) == len(judge.deep) - 6
    for k in kept:
        for ply in range(len(k.moves)):
            near = ScriptedJudge().lines(k.moves[:ply], 3, deep=False)
            best = near[0][1]
            assert k.moves[ply] in [m for m, cp in near if cp >= best - 50]


def test_a_balance_no_line_meets_is_an_error():
    with pytest.raises(RuntimeError, match=f"{MAX_ATTEMPTS} lines in a row were out of balance"):
        list(make_suite(ScriptedJudge(), SuiteSettings(count=1, plies=2, balance=-1, seed=1)))


def test_another_usi_engine_judges_through_the_script(tmp_path):
    """This engine run as an outside USI engine: the file loads as match openings, and the
    same command writes the same file."""
    out = [tmp_path / "a.txt", tmp_path / "b.txt"]
    for path in out:
        run = subprocess.run(
            [
                sys.executable,
                os.path.join(REPO, "scripts", "make_openings.py"),
                "--engine",
                f"{sys.executable} -m usi_engine",
                "--engine-option",
                "USI_Hash=16",
                "--count",
                "2",
                "--plies",
                "4",
                "--depth",
                "2",
                "--check-depth",
                "3",
                "--balance",
                "400",
                "--seed",
                "5",
                "--out",
                str(path),
            ],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert run.returncode == 0, run.stderr[-2000:]
    text = out[0].read_text()
    assert text == out[1].read_text() and not os.path.exists(str(out[0]) + ".tmp")
    assert "--engine-option USI_Hash=16 --count 2 --plies 4" in text.splitlines()[1]
    openings = load_openings(str(out[0]))
    assert len(openings) == 2 and all(len(o.moves) == 4 for o in openings)


def test_an_engine_that_names_it_usi_multipv_gets_its_lines():
    """Fairy-Stockfish's USI mode declares USI_MultiPV, not MultiPV: the client uses it."""
    from usi_engine.match.openings import UsiJudge

    judge = UsiJudge([sys.executable, os.path.join(REPO, "tests", "fixtures", "usi_multipv_engine.py")], 1, 1)
    try:
        lines = judge.lines(["7g7f"], 3, deep=False)
    finally:
        judge.close()
    pos = Position()
    pos.push("7g7f")
    assert lines == [(m, -k) for k, m in enumerate(sorted(pos.legal_moves())[:3], 1)]
