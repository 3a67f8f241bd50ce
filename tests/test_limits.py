"""Options and games at and beyond the machine's limits: a hash larger than the memory,
more threads than cores, more MultiPV lines than moves, a 1,000-move game and a `position`
of 10,000 moves.  Each is answered by an `info string` and the engine goes on searching.

The engine runs under an address-space limit (``ulimit -v``) of 2 GB, which it reads as its
memory: the table it takes for ``USI_Hash 65536`` is then a few hundred MB, so the test does
not itself push the machine into swap.
"""

from __future__ import annotations

import random
import re
import shlex

import pytest
import shogi

from conftest import ISREADY_TIMEOUT, UsiProcess, engine_command
from usi_engine.server import limits
from usi_engine.position import Position

ADDRESS_SPACE_KB = 2 << 20


@pytest.fixture(scope="module")
def limited_engine():
    cmd = ["/bin/sh", "-c", f"ulimit -v {ADDRESS_SPACE_KB} && exec {shlex.join(engine_command())}"]
    eng = UsiProcess(cmd=cmd)
    eng.send("usi")
    eng.read_until("usiok", 30)
    eng.sync(ISREADY_TIMEOUT)
    yield eng
    eng.quit()
    eng.kill()
    assert eng.stderr_text() == "", eng.stderr_text()[:2000]


def infos(lines: list[str]) -> list[str]:
    return [line[len("info string ") :] for line in lines if line.startswith("info string ")]


def best_after(eng: UsiProcess, args: str, go: str = "go nodes 3000") -> tuple[str, list[str]]:
    eng.send("position " + args)
    eng.send(go)
    _, lines = eng.read_until("bestmove", 120)
    return lines[-1].split()[1], lines


def assert_legal(args: str, move: str) -> None:
    tokens = args.split()
    board = shogi.Board() if tokens[0] == "startpos" else shogi.Board(" ".join(tokens[1:5]))
    for m in tokens[tokens.index("moves") + 1 :] if "moves" in tokens else []:
        board.push_usi(m)
    assert shogi.Move.from_usi(move) in board.legal_moves, (move, board.sfen())


def long_game(plies: int, seed: int) -> list[str]:
    """A legal game of `plies` moves that never ends: no move leaves the other side without
    a legal move (so no mate), found by random choice with our Position."""
    rng = random.Random(seed)
    pos = Position()
    moves: list[str] = []
    while len(moves) < plies:
        choices = pos.legal_moves()
        rng.shuffle(choices)
        for m in choices:
            pos.push(m)
            if pos.legal_moves():
                moves.append(str(m))
                break
            pos.pop()
    return moves


def test_hash_beyond_the_memory_is_cut_to_fit(limited_engine):
    eng = limited_engine
    eng.send("setoption name USI_Hash value 65536")
    notes = infos(eng.sync(120))
    cut = [n for n in notes if n.startswith("USI_Hash 65536 MB does not fit")]
    assert len(cut) == 1, notes
    memory, used = (int(x) for x in re.search(r"memory \((\d+) MB\): using (\d+) MB", cut[0]).groups())
    assert memory < ADDRESS_SPACE_KB // 1024 and 1 <= used <= memory // 2
    print(f"USI_Hash 65536 under ulimit -v {ADDRESS_SPACE_KB} KB: {memory} MB left, {used} MB used")
    best, _ = best_after(eng, "startpos moves 7g7f")
    assert_legal("startpos moves 7g7f", best)
    eng.send("setoption name USI_Hash value 16")
    assert infos(eng.sync(60)) == []  # a hash that fits: nothing to say


def test_threads_beyond_the_cores_are_cut(limited_engine):
    eng = limited_engine
    eng.send("setoption name Threads value 256")
    cores = limits.cores()
    want = [f"Threads 256 is more than the {cores} cores here: using {cores}"] if cores < 256 else []
    assert infos(eng.sync(60)) == want
    best, _ = best_after(eng, "startpos", "go btime 0 wtime 0 byoyomi 300")
    assert_legal("startpos", best)
    eng.send("setoption name Threads value 1")
    assert infos(eng.sync(60)) == []


def test_multipv_beyond_the_legal_moves(limited_engine):
    eng = limited_engine
    eng.send("setoption name MultiPV value 500")
    args = "sfen 4k4/9/9/9/9/9/9/9/4K4 w - 1"  # white's king alone: 5 legal moves
    best, lines = best_after(eng, args, "go depth 3")
    assert "MultiPV 500: showing 5, one line per move to choose from" in infos(lines)
    shown = {int(m) for m in re.findall(r" multipv (\d+) ", " ".join(lines))}
    assert shown == {1, 2, 3, 4, 5}
    assert_legal(args, best)
    eng.send("setoption name MultiPV value 1")
    assert infos(eng.sync(60)) == []


def test_a_thousand_move_game(limited_engine):
    eng = limited_engine
    moves = long_game(1000, seed=3)
    args = "startpos moves " + " ".join(moves)
    best, lines = best_after(eng, args)
    assert not any(n.startswith("position") for n in infos(lines))
    assert_legal(args, best)
    # the GUI resends the game with two more moves, as it does every move
    args2 = args + " " + best + " " + long_game_reply(moves + [best])
    best2, _ = best_after(eng, args2)
    assert_legal(args2, best2)


def long_game_reply(moves: list[str]) -> str:
    pos = Position.from_usi("startpos moves " + " ".join(moves))
    return str(pos.legal_moves()[0])


def test_a_position_of_ten_thousand_moves(limited_engine):
    """Longer than the history the engine keeps (docs/reliability.md): refused by an info
    string, `go` answers without searching a position the GUI does not have, and the
    engine goes on with the next `position`."""
    eng = limited_engine
    shuffle = ["5i4h", "5a4b", "4h5i", "4b5a"]  # kings step out and back: legal forever
    args = "startpos moves " + " ".join(shuffle * 2500)
    eng.send("position " + args)
    refused = infos(eng.sync(60))
    assert len(refused) == 1 and refused[0].startswith("position: move ")
    assert "game too long for the history buffer" in refused[0] and refused[0].endswith(
        "(position unchanged)"
    )
    eng.send("go nodes 1000")
    _, lines = eng.read_until("bestmove", 60)
    assert lines[-1] == "bestmove resign" and infos(lines)[0].startswith(
        "go: no search, the last position was rejected"
    )
    best, _ = best_after(eng, "startpos moves 7g7f")
    assert_legal("startpos moves 7g7f", best)


def test_the_machine_limits_are_read():
    """Without a container or ulimit the limit is the physical memory; a GUI's 64 GB hash
    is cut to half of it on any machine with less than 128 GB."""
    memory = limits.memory_mb()
    assert memory is not None and memory > 0
    fitted, mate, notes = limits.fit_tables(65536, 64, memory)
    assert fitted + mate <= max(2, memory // 2)
    assert (fitted < 65536) == bool(notes) == (memory < 2 * (65536 + 64))
    assert limits.fit_threads(1, limits.cores()) == (1, [])
