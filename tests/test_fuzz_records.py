"""The KIF, KI2, CSA and SFEN readers on damaged records: a ``Record`` whose moves are legal
and whose problems are listed in ``errors`` (each with its line number), or a ValueError
naming what is wrong, never another exception.

The records are real: games of seeded random legal moves (drops, promotions, captures,
recaptures written 同), from the start position and from a set-up one, written by the
project's own KIF and CSA writers and by cshogi's KI2 notation, with names and a result;
Hypothesis then drops, doubles, swaps, cuts and garbles their lines.
"""

from __future__ import annotations

import random

import cshogi
import cshogi.KI2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzing import CASES, byte_mutation, fuzz_settings, text_mutation
from usi_engine.position import Position
from usi_engine.record import Record, csa_text, decode, kif_text, parse_record


def random_game(seed: int, start: str | None = None, plies: int = 60) -> Record:
    """A record of `plies` random legal moves (fewer if the game ends)."""
    rng = random.Random(seed)
    pos = Position(start) if start else Position()
    for _ in range(plies):
        moves = pos.legal_moves()
        if not moves:
            break
        pos.push(rng.choice(moves))
    rec = pos.record()
    rec.names = ["Sente Player", "後手の人"]
    rec.result = "%TORYO"
    return rec


def ki2_text(rec: Record) -> str:
    board = cshogi.Board(rec.start_sfen)
    words = []
    for m in rec.moves:
        cm = board.move_from_usi(m.usi())
        words.append(cshogi.KI2.move_to_ki2(cm, board))
        board.push(cm)
    head = "手合割：平手\n" if rec.start_sfen == Position().sfen() else ""
    return head + "\n".join("    ".join(words[i : i + 2]) for i in range(0, len(words), 2)) + "\n"


def _originals() -> dict[str, list[str]]:
    setup = random_game(4, plies=30).position().sfen()  # a set-up start (a board diagram)
    games = [random_game(1), random_game(2, plies=120), random_game(3, setup, 40)]
    return {
        "kif": [kif_text(g) for g in games],
        "ki2": [ki2_text(g) for g in games[:2]],
        "csa": [csa_text(g) for g in games],
        "usi": [g.usi() for g in games] + [g.start_sfen + "\n" + " ".join(g.moves) for g in games],
    }


ORIGINALS = _originals()


def check_reading(text: str, fmt: str | None) -> None:
    """The property: a Record whose moves replay and whose errors name lines, or ValueError."""
    CASES[f"record {fmt or 'detected'}"] += 1
    try:
        rec = parse_record(text, fmt)
    except ValueError as exc:
        assert str(exc), "a ValueError must say what is wrong"
        return
    assert isinstance(rec, Record)
    n_lines = text.replace("\r\n", "\n").replace("\r", "\n").count("\n") + 1
    for err in rec.errors:
        assert 1 <= err.line <= n_lines and err.message, err
        str(err)
    pos = rec.position()  # every move kept is legal from the start
    assert pos.ply() == len(rec.moves) == len(rec.move_lines)
    assert all(1 <= line <= n_lines for line in rec.move_lines)
    rec.usi()
    kif_text(rec)  # what was read can be written back
    csa_text(rec)


def test_the_originals_read_back_whole():
    """The unmutated records read without an error (else the fuzzing starts from nothing)."""
    for fmt, texts in ORIGINALS.items():
        for text in texts:
            rec = parse_record(text, fmt)
            assert rec.errors == [] and len(rec.moves) >= 40, (fmt, rec.errors)


@pytest.mark.parametrize("fmt", ["kif", "ki2", "csa", "usi"])
@fuzz_settings()
@given(data=st.data())
def test_mutated_records(fmt, data):
    original = data.draw(st.sampled_from(ORIGINALS[fmt]))
    text = text_mutation(original, data.draw)
    check_reading(text, fmt)
    check_reading(text, None)  # the format guessed from the text


@fuzz_settings(0.5)
@given(raw=st.binary(max_size=2000), fmt=st.sampled_from(["kif", "ki2", "csa", "usi", None]))
def test_random_bytes(raw, fmt):
    check_reading(decode(raw), fmt)


@fuzz_settings(0.5)
@given(data=st.data())
def test_damaged_record_files(data):
    """Bytes of a Shift-JIS or UTF-8 file, damaged, read as read_record does."""
    fmt = data.draw(st.sampled_from(["kif", "ki2", "csa"]))
    text = data.draw(st.sampled_from(ORIGINALS[fmt]))
    raw = text.encode(data.draw(st.sampled_from(["utf-8", "cp932"])))
    check_reading(decode(byte_mutation(raw, data.draw)), fmt)


# --- faults the fuzzing found, kept as regressions -------------------------------------------
def test_kif_recapture_without_a_previous_move():
    """A KIF whose first move is written 同 (its header line swapped away) raised TypeError
    inside python-shogi: now an error on that line, the position unchanged."""
    text = "手合割：平手\n  31 同　歩成(14)\n  32 ８三銀(72)\n"
    rec = parse_record(text, "kif")
    assert rec.moves == [] and len(rec.errors) == 1
    assert rec.errors[0].line == 2 and "同" in rec.errors[0].message


def test_csa_bare_p_line():
    """A CSA position line cut to its first letter ('P') raised IndexError."""
    rec = parse_record("V2.2\nP\n+\n+7776FU\n", "csa")
    assert rec.moves == [] and rec.errors[0].line == 3
    assert "cannot read the start position" in rec.errors[0].message
