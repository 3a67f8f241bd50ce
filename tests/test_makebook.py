"""Building books: `usi-engine makebook` from records, from our own search, and the min-max
propagation of values (loops included); YaneuraOu plays the same moves from our files."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path


from usi_engine.book import Book, BookMove, BookSettings, book_key
from usi_engine.book.graph import propagate_book
from usi_engine.book.propagate import minimax
from usi_engine.book.records import book_from_games, read_games, RecordStats
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
