"""Hostile USI input against a live engine process: random tokens, huge lines, non-ASCII
text, control bytes and commands out of order, between a good `position` and a `go`.

Every example checks the rules of docs/protocol.md: the engine keeps running, every `go` is
answered exactly once, the answer to the last `go` is a legal move of the last good position,
every byte written is ASCII, and stderr stays empty (checked when the process quits).
"""

from __future__ import annotations

import random

import pytest
import shogi
from hypothesis import given
from hypothesis import strategies as st

from conftest import start_ready_engine
from fuzzing import CASES, fuzz_settings
from usi_engine.server.protocol import decode_line

COMMANDS = [
    "usi",
    "isready",
    "setoption",
    "usinewgame",
    "go",
    "stop",
    "ponderhit",
    "gameover",
    "eval",
    "e",
    "usi_tunables",
    "name",
    "value",
    "moves",
    "sfen",
    "startpos",
    "btime",
    "wtime",
    "byoyomi",
    "binc",
    "winc",
    "depth",
    "nodes",
    "infinite",
    "ponder",
    "searchmoves",
    "movetime",
    "MultiPV",
    "USI_Ponder",
    "NetworkDelay",
    "NoSuchOption",
    "7g7f",
    "P*5e",
    "8h2b+",
    "0",
    "-1",
    "1",
    "99999999999999999999",
    "true",
    "<empty>",
]
# `go` lines with a limit, and the two that wait for `stop`: the answers are counted
GO_LINES = [
    "go depth 1",
    "go nodes 300",
    "go btime 50 wtime 50 byoyomi 20",
    "go infinite",
    "go ponder btime 0 wtime 0 byoyomi 100",
    "go depth",
    "go nodes -5",
    "go depth x y z",
    "go searchmoves 1a1b depth 1",
    "go movetime 20 depth 2",
]
# commands that would end the session or replace the position are the test's, not the fuzz's
NOT_FUZZED = {"quit", "position"}


def hostile_line():
    tokens = st.lists(st.one_of(st.sampled_from(COMMANDS), st.text(max_size=12)), max_size=10)
    return st.one_of(
        tokens.map(lambda t: " ".join(t).encode("utf-8", "surrogatepass")),
        st.binary(max_size=300),  # control bytes, bad UTF-8
        st.text(max_size=300).map(lambda t: t.encode("utf-8", "surrogatepass")),
        st.integers(1_000, 300_000).map(lambda n: b"go " + b"x" * n),  # huge lines
        st.integers(1_000, 300_000).map(lambda n: b"setoption name " + b"A" * n + b" value 1"),
        st.sampled_from(
            GO_LINES
            + [
                "stop",
                "ponderhit",
                "gameover win",
                "gameover",
                "usinewgame",
                "setoption name MultiPV value 3",
                "setoption name MultiPV value 1",
                "setoption name",
                "isready",
            ]
        ).map(str.encode),
    )


def playable(raw: bytes) -> list[bytes]:
    """The lines of `raw` the fuzz may send (as the engine splits and reads them)."""
    out = []
    for part in raw.split(b"\n"):
        words = decode_line(part).split()
        if not words or words[0] not in NOT_FUZZED:
            out.append(part)
    return out


def legal_game(seed: int, plies: int) -> tuple[str, shogi.Board]:
    """`position` arguments of a random legal game that is not over, and its board."""
    rng = random.Random(seed)
    board = shogi.Board()
    moves = []
    for _ in range(plies):
        legal = [m for m in board.legal_moves]
        if len(legal) < 2:
            break
        move = rng.choice(legal)
        board.push(move)
        moves.append(move.usi())
    if not any(True for _ in board.legal_moves):
        board.pop()
        moves.pop()
    return "startpos" + (" moves " + " ".join(moves) if moves else ""), board


@pytest.fixture(scope="module")
def engine_under_fire():
    """An engine of its own: the fuzz changes options the shared one must keep."""
    eng = start_ready_engine()
    yield eng
    eng.quit()
    eng.kill()
    assert eng.stderr_text() == "", eng.stderr_text()[:2000]


def answers(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith(("bestmove", "checkmate"))]


def expected_answers(sent: list[bytes]) -> int:
    return sum(1 for raw in sent if decode_line(raw).split()[:1] == ["go"])


@fuzz_settings(0.5)
@given(
    seed=st.integers(0, 10**6),
    plies=st.integers(0, 60),
    junk=st.lists(hostile_line(), min_size=1, max_size=6),
)
def test_hostile_lines_keep_the_last_good_position(engine_under_fire, seed, plies, junk):
    CASES["usi lines"] += len(junk)
    eng = engine_under_fire
    args, board = legal_game(seed, plies)
    sent = [part for raw in junk for part in playable(raw)]
    eng.send("position " + args)
    for raw in sent:
        eng.send(raw)
    eng.send("stop")  # ends a `go infinite` or `go ponder` of the fuzz
    eng.send("go nodes 2000")
    want = expected_answers(sent) + 1
    seen: list[str] = []
    while len(answers(seen)) < want:
        seen.append(eng.readline(60)[1])  # each line is checked to be ASCII
    rest = eng.sync(60)
    assert answers(rest) == [], f"more answers than `go` lines: {rest}"
    last = answers(seen)[-1].split()
    assert last[0] == "bestmove" and shogi.Move.from_usi(last[1]) in board.legal_moves, (args, last)
    eng.send("setoption name MultiPV value 1")


@fuzz_settings(0.25)
@given(seed=st.integers(0, 10**6), plies=st.integers(1, 40), junk=st.lists(hostile_line(), max_size=3))
def test_a_bad_position_is_refused_and_a_good_one_searched(engine_under_fire, seed, plies, junk):
    """A malformed `position` is refused by an info string; the next `go` does not search the
    previous position (the GUI believes another one is on the board): it resigns, as
    docs/protocol.md says; the next good `position` is searched again."""
    CASES["usi position"] += 1
    eng = engine_under_fire
    args, board = legal_game(seed, plies)
    bad = b"position " + b" ".join(junk) if junk else b"position startpos moves 5e5d"
    if not decode_line(bad).split()[1:] or any(b"\n" in j for j in junk):
        bad = b"position sfen nonsense"
    eng.send("position " + args)
    eng.send(bad)
    refused = [line for line in eng.sync(60) if line.startswith("info string position")]
    if refused:  # the junk may make a legal position by chance
        assert refused[-1].endswith("(position unchanged)")
        eng.send("go nodes 500")
        _, lines = eng.read_until("bestmove", 60)
        assert lines[-1] == "bestmove resign"
    eng.send("position " + args)
    eng.send("go nodes 500")
    _, lines = eng.read_until("bestmove", 60)
    assert shogi.Move.from_usi(lines[-1].split()[1]) in board.legal_moves
    assert answers(eng.sync(60)) == []
