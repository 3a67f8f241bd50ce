"""Building books: `usi-engine makebook` from records, from our own search (in process, in
worker processes, on a local Ray cluster: the same book), and the min-max propagation of
values (loops included); YaneuraOu plays the same moves from our files."""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from usi_engine.book import Book, BookMove, BookSettings, book_key
from usi_engine.book.expand import ExpandSettings, expand
from usi_engine.book.graph import propagate_book
from usi_engine.book.propagate import minimax
from usi_engine.book.records import book_from_games, read_games, RecordStats
from usi_engine.book.searchers import ProcessPool, SearchFailed, SearchLimits, Workers
from usi_engine.position import Position
from yaneuraou_books import require_yaneuraou, yaneuraou_book_moves

REPO = Path(__file__).resolve().parent.parent


def makebook(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "usi_engine", "makebook", *map(str, args)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


# --------------------------------------------------------------------------------- min-max
def test_minimax_known_answer_with_a_repetition_loop():
    # R (black): to A, to B, or a leaf worth 10.  A (white): a leaf -30, or to C (black), whose
    # best leaf is 50.  B and D form a loop whose exits (-100 for B, -40 for D) are worse for
    # the side leaving than the repetition (a draw): both stay, both are 0.
    graph = {
        "R": [("A", None), ("B", None), (None, 10)],
        "A": [(None, -30), ("C", None)],
        "C": [(None, 50), (None, 20)],
        "B": [("D", None), (None, -100)],
        "D": [("B", None), (None, -40)],
    }
    result = minimax(graph)
    assert result.converged
    assert result.values == {"R": 30, "A": -30, "C": 50, "B": 0, "D": 0}
    assert result.move_values["R"] == [30, 0, 10]
    assert result.move_values["A"] == [-30, -50]
    # D gets a good exit (+40): it takes it, and B, which cannot stay in the loop alone,
    # gets -40 by going there rather than -100
    graph["D"] = [("B", None), (None, 40)]
    result = minimax(graph)
    assert result.values["D"] == 40 and result.values["B"] == -40 and result.values["R"] == 40
    # the order of the nodes does not matter (each sweep reads the previous one's values)
    assert minimax(dict(reversed(list(graph.items())))).values == result.values


def loop_book() -> tuple[Book, list[str]]:
    """startpos -> 2h3h -> 8b7b -> 3h2h -> 7b8b is startpos again (a four-ply loop); each
    position has one leaf move too.  Black's exit at the third position is worth +25."""
    book = Book()
    pos = Position()
    loop = ["2h3h", "8b7b", "3h2h", "7b8b"]
    leaves = [("7g7f", -20), ("3c3d", -50), ("7g7f", 25), ("3c3d", -60)]
    sfens = []
    for move, (leaf, value) in zip(loop, leaves):
        sfens.append(pos.sfen())
        book.add(pos.sfen(), BookMove(move, None, 0, 12, 1))
        book.add(pos.sfen(), BookMove(leaf, None, value, 12, 1))
        pos.push(move)
    assert book_key(pos.sfen())[0] == book_key(sfens[0])[0]
    return book, sfens


def test_propagate_command_on_a_book_with_a_loop(tmp_path):
    book, sfens = loop_book()
    src, out = tmp_path / "loop.db", tmp_path / "petashock.db"
    book.write(src)
    proc = makebook("propagate", src, out)
    assert proc.stdout.strip().startswith(f"{out}: 4 positions, values settled after ")
    result = Book.open(out)
    assert result.errors == []
    got = [[(m.move, m.value, m.ponder) for m in result.moves(s)] for s in sfens]
    assert got == [
        [("2h3h", 25, "8b7b"), ("7g7f", -20, None)],
        [("8b7b", -25, "7g7f"), ("3c3d", -50, None)],
        [("7g7f", 25, None), ("3h2h", 25, "7b8b")],  # round the loop, black exits here anyway
        [("7b8b", -25, "2h3h"), ("3c3d", -60, None)],
    ]
    # an illegal move and an impossible position (two pawns on a file) are dropped and named
    nifu = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5RP/LNSGKGSN1 b - 1"
    with open(src, "a") as fh:
        fh.write(f"sfen {nifu}\n7g7f none 0 0 1\n")
    src.write_text(src.read_text().replace("7g7f none -20", "7g7e none -20"))
    proc = makebook("propagate", src, out)
    assert f"dropped: {book_key(sfens[0])[0]} 1: illegal move 7g7e" in proc.stderr
    assert f"dropped: {nifu}: not a legal position (two unpromoted pawns" in proc.stderr
    assert [m.move for m in Book.open(out).moves(sfens[0])] == ["2h3h"]
    # with every exit worse than the repetition for the side leaving, the whole loop is a draw
    book.add(sfens[2], BookMove("7g7f", None, -10, 12, 0))
    drawn, result, illegal = propagate_book(book)
    assert result.converged and illegal == []
    assert [drawn.moves(s)[0].value for s in sfens] == [0, 0, 0, 0]
    assert [drawn.moves(s)[0].move for s in sfens] == ["2h3h", "8b7b", "3h2h", "7b8b"]


# --------------------------------------------------------------------------------- records
def test_records_counts_moves_with_min_count_and_winners(tmp_path):
    from usi_engine.match.records import GameRecord, MoveRecord, to_csa
    from usi_engine.match.referee import BLACK, WHITE, Outcome, Reason

    sfen_list = tmp_path / "games.sfen"
    sfen_list.write_text(
        "startpos moves 7g7f 3c3d 2g2f\n"
        "position startpos moves 7g7f 3c3d 6i7h\n"
        "startpos moves 7g7f 8c8d\n"
        "startpos moves 7g7f 9z9z\n"
    )  # a bad line: reported
    runner = tmp_path / "match"
    runner.mkdir()
    for i, (moves, winner) in enumerate([(["2g2f", "8c8d"], WHITE), (["2g2f", "3c3d", "7g7f"], BLACK)]):
        game = GameRecord(
            i, "a", "b", Position().sfen(), [MoveRecord(m) for m in moves], Outcome(winner, Reason.RESIGN)
        )
        (runner / f"game{i}.csa").write_text(to_csa(game))
        (runner / f"game{i}.kif").write_text("the same game as KIF: counted once")
    stats = RecordStats()
    games = list(read_games([sfen_list, runner], stats))
    assert len(games) == 5 and [g.winner for g in games[3:]] == [1, 0]
    assert len(stats.skipped) == 1 and "line 4" in stats.skipped[0] and "9z9z" in stats.skipped[0]
    book = book_from_games(games, stats=stats)
    start = Position().sfen()
    assert [(m.move, m.count, m.ponder) for m in book.moves(start)] == [
        ("7g7f", 3, "3c3d"),
        ("2g2f", 2, "8c8d"),
    ]
    assert all((m.value, m.depth) == (0, 0) for m in book.moves(start))
    after = Position.from_usi("startpos moves 7g7f").sfen()
    assert {m.move: m.count for m in book.moves(after)} == {"3c3d": 2, "8c8d": 1}
    twice = book_from_games(games, min_count=2)
    assert [m.move for m in twice.moves(after)] == ["3c3d"]
    short = book_from_games(games, max_ply=1)
    assert len(short) == 1
    winners = book_from_games(games[3:], winner_only=True)
    assert [(m.move, m.count) for m in winners.moves(start)] == [("2g2f", 1)]  # black won game 1
    after_2g2f = Position.from_usi("startpos moves 2g2f").sfen()
    assert [(m.move, m.count) for m in winners.moves(after_2g2f)] == [("8c8d", 1)]  # white won game 0
    black_line = Position.from_usi("startpos moves 2g2f 3c3d").sfen()
    assert [(m.move, m.count) for m in winners.moves(black_line)] == [("7g7f", 1)]
    out = tmp_path / "rec.db"
    proc = makebook("records", out, sfen_list, runner, "--min-count", "2")
    assert proc.stdout.strip() == f"{out}: 2 positions from 5 games"
    assert "9z9z" in proc.stderr
    assert Book.open(out).errors == []


# --------------------------------------------------------------------------------- search
def check_propagated(book: Book) -> None:
    """Every move into the book is worth minus the best value where it leads."""
    for key, ply, moves in book.entries():
        pos = Position(f"{key} {ply}")
        for m in moves:
            after = pos.copy()
            after.push(m.move)
            there = book.moves(book_key(after.sfen())[0] + " 1")
            if there:
                assert m.value == -max(x.value for x in there), (key, m)


def test_search_grows_the_book_and_resumes(tmp_path):
    out = tmp_path / "grown.db"
    args = (
        "search",
        out,
        "--depth",
        "2",
        "--multipv",
        "2",
        "--max-ply",
        "3",
        "--batch",
        "2",
        "--expand-diff",
        "1000",
        "--quiet",
    )
    first = makebook(*args, "--positions", "3")
    assert first.stdout == ""
    book = Book.open(out, ignore_ply=True)
    assert book.errors == [] and len(book) == 3
    assert [len(m) for _, _, m in book.entries()] == [2, 2, 2]
    check_propagated(book)
    second = makebook(*args[:-1], "--positions", "4")
    assert second.stdout.startswith(f"continuing from {out}: 3 positions\n")
    grown = Book.open(out, ignore_ply=True)
    assert len(grown) == 7
    assert {k for k, _, _ in book.entries()} < {k for k, _, _ in grown.entries()}
    check_propagated(grown)
    # the frontier within ply 3 is 1 + 2 + 4 positions: a third run finds nothing to add
    third = makebook(*args[:-1], "--positions", "5")
    assert "7 positions, 0 searched in 1 rounds (no frontier left)" in third.stdout


# --------------------------------------------------------------------------------- workers
# a frontier that follows the values (--expand-diff 30), so the order results are added in
# and the rounds' propagation both shape the book.  How many positions it reaches before
# --positions 9 depends on the shipped network's values (a move within 30 cp of the best
# joins the frontier), so the tests compare the runs with one another, not with a count.
SEARCH = ("--depth", "2", "--multipv", "2", "--max-ply", "4", "--expand-diff", "30", "--positions", "9")


def searched_count(stdout: str, path) -> int:
    """N of makebook's `PATH: N positions, N searched in R rounds` (a book grown from none)."""
    m = re.match(rf"{re.escape(str(path))}: (\d+) positions, (\d+) searched in ", stdout)
    assert m and m[1] == m[2], stdout
    return int(m[1])


def test_two_workers_write_the_same_book_as_one(tmp_path):
    one, two, raised = tmp_path / "one.db", tmp_path / "two.db", tmp_path / "raised.db"
    count = searched_count(makebook("search", one, *SEARCH, "--batch", "2").stdout, one)
    assert 5 <= count <= 9  # a few rounds of values shaped it
    proc = makebook("search", two, *SEARCH, "--batch", "2", "--workers", "2")
    assert searched_count(proc.stdout, two) == count
    assert two.read_bytes() == one.read_bytes()
    # two workers raise --batch 1 to two positions a round: the book of --batch 2
    makebook("search", raised, *SEARCH, "--batch", "1", "--workers", "2", "--quiet")
    assert raised.read_bytes() == one.read_bytes()
    book = Book.open(one, ignore_ply=True)
    assert book.errors == [] and len(book) == count
    check_propagated(book)


def test_ctrl_c_with_workers_saves_the_book_and_a_rerun_goes_on(tmp_path):
    out = tmp_path / "grown.db"
    args = ["search", out, "--depth", "3", "--multipv", "2", "--max-ply", "30", "--expand-diff", "1000"]
    cmd = [sys.executable, "-m", "usi_engine", "makebook", *map(str, args), "--workers", "2", "--quiet"]
    # a process group of its own: Ctrl-C at a terminal reaches the driver and its workers alike
    proc = subprocess.Popen(
        [*cmd, "--positions", "100000"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=os.setpgrp,
    )
    deadline = time.monotonic() + 240
    while not out.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    assert "interrupted: the book so far is saved; run again to continue" in stderr
    stopped = Book.open(out, ignore_ply=True)
    assert stopped.errors == [] and len(stopped) >= 8  # saved every 8 positions, and at the end
    check_propagated(stopped)
    rerun = makebook(*args, "--workers", "2", "--positions", "3")
    assert rerun.stdout.startswith(f"continuing from {out}: {len(stopped)} positions\n")
    assert len(Book.open(out, ignore_ply=True)) == len(stopped) + 3


def test_a_failing_worker_is_an_error_not_a_hang():
    sfens = [Position.from_usi(f"startpos moves {m}").sfen() for m in ("7g7f", "2g2f")]
    with ProcessPool({}, SearchLimits(depth=1, nodes=None, multipv=1), workers=2) as pool:
        found = list(pool.search(sfens, lambda: False))
        assert [s for s, _ in found] == sfens and all(len(moves) == 1 for _, moves in found)
        with pytest.raises(SearchFailed, match="worker 0 could not search no position: ValueError"):
            list(pool.search(["no position"], lambda: False))
        os.kill(pool._procs[1].pid, signal.SIGKILL)
        with pytest.raises(SearchFailed, match=r"worker process 1 ended \(exit code -9\) while searching"):
            list(pool.search(sfens, lambda: False))
    # a bad option stops the run before it starts, as with one engine in process
    with pytest.raises(ValueError, match="unknown option 'Nope'"):
        ProcessPool({"Nope": "1"}, SearchLimits(depth=1, nodes=None, multipv=1), workers=2)


class ReversedWorkers(Workers):
    """Workers that finish the positions handed out last first; no engine: a position's
    moves are its first two legal moves."""

    def __init__(self, workers: int) -> None:
        super().__init__()
        self.workers = workers
        self.handed: list[str] = []  # every position handed out
        self._out: list[tuple[int, str]] = []

    def _send(self, worker: int, sfen: str) -> None:
        self.handed.append(sfen)
        self._out.append((worker, sfen))

    def _receive(self, timeout: float) -> list[tuple[int, list[BookMove]]]:
        done, self._out = self._out[::-1], []
        return [
            (w, [BookMove(m, None, 10 - i, 1, 1) for i, m in enumerate(Position(s).legal_moves()[:2])])
            for w, s in done
        ]

    def close(self) -> None:
        pass


class FailingAfterOne:
    """A searcher whose worker fails after the first position."""

    workers = 1

    def search(self, sfens, stopped):
        yield sfens[0], [BookMove("7g7f", None, 0, 1, 1)]
        raise SearchFailed("worker 0 could not search X: ValueError: bad")

    def close(self) -> None:
        pass


def test_results_come_in_frontier_order_and_stop_after_the_started_ones():
    sfens = [Position.from_usi(f"startpos moves {m}").sfen() for m in ("7g7f", "2g2f", "5g5f", "1g1f")]
    workers = ReversedWorkers(3)
    assert [s for s, _ in workers.search(sfens, lambda: False)] == sfens
    # stopped once a position is handed out: that one is finished and given, no other starts
    before = len(workers.handed)
    assert [s for s, _ in workers.search(sfens, lambda: len(workers.handed) > before)] == sfens[:1]
    # a round takes a position for each of the 3 workers although --batch is 1:
    # 1 root, then its 2 children, then 2 of the 4 grandchildren
    saved: list[int] = []
    settings = ExpandSettings(positions=5, batch=1, max_ply=3, expand_diff=1000)
    book, report = expand(
        Book(ignore_ply=True), ["startpos"], workers, settings, lambda b: saved.append(len(b))
    )
    assert (report.searched, report.rounds, report.failed) == (5, 3, None)
    assert saved[-1] == len(book) == 5
    # a failure ends the run with the book so far saved
    book, report = expand(
        Book(ignore_ply=True), ["startpos"], FailingAfterOne(), settings, lambda b: saved.append(len(b))
    )
    assert report.failed == "worker 0 could not search X: ValueError: bad"
    assert saved[-1] == len(book) == 1


def test_bad_workers_are_refused_naming_the_option(capsys):
    from usi_engine.book import makebook as cli

    for value in ("-1", "two"):
        with pytest.raises(SystemExit) as exit_:
            cli.main(["search", "never.db", "--workers", value])
        assert exit_.value.code == 2
        assert "argument --workers:" in capsys.readouterr().err
    assert not Path("never.db").exists()


def test_ray_local_cluster_writes_the_same_book(tmp_path):
    """`--ray local` with two actors: a cluster on 127.0.0.1 only, and the book of one engine."""
    from usi_engine import cluster
    from usi_engine.book.expand import save_to
    from usi_engine.book.searchers import RayActors

    one, ray_book = tmp_path / "one.db", tmp_path / "ray.db"
    makebook("search", one, *SEARCH, "--batch", "2", "--quiet")
    settings = ExpandSettings(depth=2, multipv=2, max_ply=4, expand_diff=30, positions=9, batch=2)
    with RayActors({}, settings.limits(), 2, cluster.LOCAL) as actors:
        assert cluster.exposed_sockets() == []
        book, report = expand(
            Book(ignore_ply=True, flipped=False), [Position().sfen()], actors, settings, save_to(ray_book)
        )
    assert (report.searched, report.failed) == (len(Book.open(one, ignore_ply=True)), None)
    assert ray_book.read_bytes() == one.read_bytes()


# --------------------------------------------------------------------------------- YaneuraOu
def test_yaneuraou_plays_the_same_moves_from_our_book(tmp_path):
    require_yaneuraou()
    # a book with a distinct best value in every position, and hands in its positions
    rng = random.Random(5)
    book = Book()
    sfens = []
    for _ in range(6):
        pos = Position()
        for _ in range(rng.randint(0, 24)):
            legal = pos.legal_moves()
            captures = [m for m in legal if "*" in m or pos.piece_at(m[2:4]) is not None]
            pos.push(rng.choice(captures or legal))
        moves = rng.sample(pos.legal_moves(), 3)
        values = rng.sample(range(-300, 300), 3)
        for move, value in zip(moves, values):
            book.add(pos.sfen(), BookMove(move, None, value, 20, 1))
        sfens.append(pos.sfen())
    assert sum(s.split()[2] != "-" for s in sfens) >= 3  # pieces in hand
    path = tmp_path / "user_book1.db"
    book.write(path)
    ours = Book.open(path)
    settings = BookSettings(
        moves=1000, eval_diff=0, eval_black_limit=-99999, eval_white_limit=-99999, depth_limit=0
    )
    expected = [ours.probe(s, settings).move for s in sfens]
    assert expected == [max(ours.moves(s), key=lambda m: m.value).move for s in sfens]
    assert yaneuraou_book_moves(path, sfens, BookDepthLimit=0) == expected
