"""Opening books (usi_engine.book): the .db format, YaneuraOu's lookup and choice, and the
engine playing from a book over USI."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from usi_engine.book import Book, BookMove, BookSettings, book_key, flip_key, flip_move, normalize_hand
from usi_engine.book.format import HEADER
from usi_engine.position import Position

START = Position().sfen()
# no filter at all: every legal book move is a candidate
OPEN = BookSettings(
    moves=1000, eval_diff=99999, eval_black_limit=-99999, eval_white_limit=-99999, depth_limit=0
)


def random_game_book(seed: int, games: int = 12, plies: int = 24) -> Book:
    """A book of random games (captures and drops give hands of every kind), values and
    counts drawn at random; the same board is met again at other plies now and then."""
    rng = random.Random(seed)
    book = Book()
    for _ in range(games):
        pos = Position()
        for _ in range(plies):
            legal = pos.legal_moves()
            if not legal:
                break
            captures = [m for m in legal if "*" in m or pos.piece_at(m[2:4]) is not None]
            move = rng.choice(captures if captures and rng.random() < 0.6 else legal)
            after = pos.copy()
            after.push(move)
            replies = after.legal_moves()
            ponder = rng.choice(replies) if replies and rng.random() < 0.7 else None
            book.add(
                pos.sfen(),
                BookMove(move, ponder, rng.randint(-500, 500), rng.randint(0, 40), rng.randint(0, 9)),
            )
            pos = after
    return book


def as_set(book: Book) -> set:
    return {(k, p, tuple(sorted(m, key=lambda x: x.move))) for k, p, m in book.entries()}


# --------------------------------------------------------------------------------- format
def test_round_trip(tmp_path):
    book = random_game_book(1)
    path = tmp_path / "a.db"
    written = book.write(path)
    again = Book.open(path)
    assert again.errors == []
    assert written == len(book) == len(again) > 100
    assert as_set(again) == as_set(book)
    assert path.read_text().splitlines()[0] == HEADER


def test_positions_sorted_by_sfen_bytes_and_moves_by_count_then_value(tmp_path):
    book = random_game_book(2)
    path = tmp_path / "b.db"
    book.write(path)
    lines = path.read_text().splitlines()
    sfens = [line[5:] for line in lines if line.startswith("sfen ")]
    assert [s.encode() for s in sfens] == sorted(s.encode() for s in sfens)
    # the same order without the ply: the board, side and hand decide
    keys = [book_key(s)[0].encode() for s in sfens]
    assert keys == sorted(keys)
    block: list[BookMove] = []
    for line in lines[1:] + ["sfen end"]:
        if line.startswith("sfen "):
            assert [(-m.count, -m.value) for m in block] == sorted((-m.count, -m.value) for m in block)
            block = []
        else:
            f = line.split()
            block.append(BookMove(f[0], None, int(f[2]), int(f[3]), int(f[4])))


def test_hand_normalised_to_yaneuraou_order(tmp_path):
    assert normalize_hand("pP2PrBgG") == "BG3Prgp"
    assert normalize_hand("-") == "-"
    # a book written by a tool with another hand order still finds the position
    board = "lnsgkg1nl/7s1/p1pppp2p/6pR1/9/1rP6/P2PPPP1P/9/LNSGKGSNL b"
    path = tmp_path / "hand.db"
    path.write_text(f"{HEADER}\nsfen {board} pPbBp1P 15\n2d2c+ none 12 20 1\n")
    pos = Position.from_usi(
        "startpos moves 7g7f 3c3d 8h2b+ 3a2b 2g2f 8c8d 2f2e 8d8e 2e2d 2c2d 2h2d 8e8f 8g8f 8b8f"
    )
    assert pos.sfen() == f"{board} B2Pb2p 15"
    book = Book.open(path)
    assert book.errors == []
    assert [m.move for m in book.moves(pos)] == ["2d2c+"]
    book.write(tmp_path / "out.db")
    assert f"sfen {board} B2Pb2p 15" in (tmp_path / "out.db").read_text()


def test_missing_fields_default_to_0_0_1_and_ponder_none(tmp_path):
    path = tmp_path / "short.db"
    path.write_text(f"{HEADER}\nsfen {START}\n7g7f none\n2g2f 8c8d 35\n5g5f 5c5d 10 4\n")
    moves = {m.move: m for m in Book.open(path).moves(Position())}
    assert moves["7g7f"] == BookMove("7g7f", None, 0, 0, 1)
    assert moves["2g2f"] == BookMove("2g2f", "8c8d", 35, 0, 1)
    assert moves["5g5f"] == BookMove("5g5f", "5c5d", 10, 4, 1)


# --------------------------------------------------------------------------------- bad input
def test_malformed_lines_reported_good_entries_kept(tmp_path):
    path = tmp_path / "bad.db"
    path.write_text(
        "\n".join(
            [
                HEADER,
                "7g7f none 1 1 1",  # 2: before any sfen line
                f"sfen {START}",
                "7g7f 3c3d 50 20 3",
                "7g7x 3c3d 50 20 3",  # 5: not a move
                "2g2f 8c8d forty 20 3",  # 6: value not a number
                "2g2f 8c8d 40 20 2",
                "sfen lnsgkgsnl/1r5b1/ppppppppp/9/9 b - 1",  # 8: five ranks
                "1g1f none 0 0 1",  # 9: under the bad sfen line
                "sfen lnsgkgsnl/1r5b1/ppppppppp/9/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL w - 2",
                "3c3d 2g2f -40 20 1",
            ]
        )
        + "\n"
    )
    book = Book.open(path)
    messages = [str(e) for e in book.errors]
    assert [e.line for e in book.errors] == [2, 5, 6, 8]
    assert messages[0] == f"{path} line 2: move line before any sfen line: '7g7f none 1 1 1'"
    assert "line 5: not a USI move: '7g7x'" in messages[1]
    assert "line 6: value is not an integer: 'forty'" in messages[2]
    assert (
        "line 8: bad sfen line (board needs 9 ranks separated by '/', got 5); "
        "its 1 move line(s) skipped" in messages[3]
    )
    assert [(m.move, m.count) for m in book.moves(Position())] == [("7g7f", 3), ("2g2f", 2)]
    after = Position()
    after.push("7g7f")
    assert [m.move for m in book.moves(after)] == ["3c3d"]


def test_truncated_file_keeps_what_came_before(tmp_path):
    full = tmp_path / "full.db"
    random_game_book(3).write(full)
    data = full.read_bytes()
    cut = data.rindex(b"\nsfen ") + 30  # in the middle of the last sfen line
    path = tmp_path / "cut.db"
    path.write_bytes(data[:cut])
    book = Book.open(path)
    assert len(book.errors) == 1
    assert "bad sfen line" in str(book.errors[0]) and str(path) in str(book.errors[0])
    assert book.errors[0].line == data[:cut].count(b"\n") + 1
    complete = Book.open(full)
    assert len(book) == len(complete) - 1
    assert as_set(book) <= as_set(complete)


def test_not_a_book_is_never_a_silent_empty_book(tmp_path):
    empty = tmp_path / "empty.db"
    empty.write_text("")
    book = Book.open(empty)
    assert len(book) == 0
    assert [str(e) for e in book.errors] == [
        f"{empty} line 1: missing the '{HEADER}' header (read on anyway): ''"
    ]
    other = tmp_path / "other.db"
    other.write_text("hello\nworld\n")
    errors = [str(e) for e in Book.open(other).errors]
    assert "missing the" in errors[0] and "move line before any sfen line: 'world'" in errors[-1]
    with pytest.raises(OSError):
        Book.open(tmp_path / "missing.db")


# --------------------------------------------------------------------------------- lookup
def test_on_the_fly_equals_loaded_on_every_position(tmp_path):
    book = random_game_book(4, games=20, plies=30)
    path = tmp_path / "fly.db"
    book.write(path)
    loaded = Book.open(path)
    fly = Book.open(path, on_the_fly=True)
    sfens = [f"{k} {p}" for k, p, _ in loaded.entries()]
    assert len(sfens) > 300
    for sfen in sfens:
        assert fly.moves(sfen) == loaded.moves(sfen) != []
    # and misses agree: positions one move past the book, and the book's boards at another ply
    for sfen in sfens[:50]:
        key, ply = book_key(sfen)
        assert fly.moves(f"{key} {ply + 200}") == loaded.moves(f"{key} {ply + 200}")
    for ignore in (True, False):
        a = Book.open(path, ignore_ply=ignore)
        b = Book.open(path, on_the_fly=True, ignore_ply=ignore)
        for sfen in sfens[:80]:
            key, ply = book_key(sfen)
            assert a.moves(f"{key} 150") == b.moves(f"{key} 150")
    assert fly.errors == []
    fly.close()
    # a copy with Windows line ends (and a BOM) reads the same, whole and on the fly
    crlf = tmp_path / "crlf.db"
    crlf.write_bytes(b"\xef\xbb\xbf" + path.read_bytes().replace(b"\n", b"\r\n"))
    whole, fly = Book.open(crlf), Book.open(crlf, on_the_fly=True)
    for sfen in sfens[::7]:
        assert whole.moves(sfen) == fly.moves(sfen) == loaded.moves(sfen)
    assert whole.errors == fly.errors == []


def test_on_the_fly_reports_bad_lines_when_a_lookup_meets_them(tmp_path):
    good = tmp_path / "good.db"
    random_game_book(5).write(good)
    lines = good.read_text().splitlines()
    at = max(i for i, line in enumerate(lines) if line.startswith("sfen "))
    lines.insert(at + 1, "2g2f 8c8d 12 x 1")  # a bad depth under the last position
    path = tmp_path / "bad.db"
    path.write_text("\n".join(lines) + "\n")
    sfen = lines[at][5:]
    fly = Book.open(path, on_the_fly=True)
    assert fly.errors == []  # not read yet
    assert fly.moves(sfen) == Book.open(good).moves(sfen) != []
    assert [str(e) for e in fly.errors] == [
        f"{path} line {at + 2}: depth is not an integer: 'x': '2g2f 8c8d 12 x 1'"
    ]
    fly.moves(sfen)
    assert len(fly.errors) == 1  # reported once
    assert [e.line for e in Book.open(path).errors] == [at + 2]


def test_ply_must_match_unless_ignore_book_ply(tmp_path):
    path = tmp_path / "ply.db"
    path.write_text(f"{HEADER}\nsfen {START}\n7g7f none 10 20 1\n")
    later = START[:-1] + "31"  # the same board at ply 31
    assert Book.open(path).moves(later) == []
    assert [m.move for m in Book.open(path, ignore_ply=True).moves(later)] == ["7g7f"]


def test_flipped_lookup(tmp_path):
    # black's book position after 7g7f 3c3d; white meets its mirror image after 3c3d 7g7f
    pos = Position()
    pos.push("7g7f")
    pos.push("3c3d")
    book = Book()
    book.add(pos.sfen(), BookMove("8h2b+", "3a2b", 60, 20, 1))
    path = tmp_path / "flip.db"
    book.write(path)
    mirror = Position("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1")
    mirror.push("3c3d")
    mirror.push("7g7f")
    assert flip_key(book_key(mirror.sfen())[0]) == book_key(pos.sfen())[0]
    flipped = Book.open(path)
    assert flipped.moves(mirror) == [BookMove("2b8h+", "7i8h", 60, 20, 1)]
    assert flipped.probe(mirror, OPEN).move in mirror.legal_moves()
    assert Book.open(path, flipped=False).moves(mirror) == []
    assert flip_move(flip_move("N*1c")) == "N*1c" and flip_move("2c2b+") == "8g8h+"


# --------------------------------------------------------------------------------- choice
def one_position_book(tmp_path, lines: list[str], sfen: str = START, name: str = "p.db") -> Book:
    path = tmp_path / name
    path.write_text(f"{HEADER}\nsfen {sfen}\n" + "\n".join(lines) + "\n")
    return Book.open(path)


def chosen(book, settings, position=None, draws=300, seed=7) -> Counter:
    rng = random.Random(seed)
    out = Counter()
    for _ in range(draws):
        choice = book.probe(position or Position(), settings, rng)
        out[choice.move if choice else None] += 1
    return out


def test_illegal_moves_dropped_with_a_note(tmp_path):
    book = one_position_book(tmp_path, ["7g7e none 90 20 1", "2g2f none 10 20 1"])
    notes: list[str] = []
    from usi_engine.book.select import choose

    choice = choose(book, Position(), OPEN, random.Random(1), notes)
    assert choice.move == "2g2f"
    assert notes == [f"book: 7g7e is not legal in {START}, dropped"]


def test_book_moves_limit(tmp_path):
    book = one_position_book(tmp_path, ["7g7f none 0 20 1"], sfen=START[:-1] + "17")
    pos = Position(START[:-1] + "17")
    assert book.probe(pos, BookSettings(moves=17, depth_limit=0)).move == "7g7f"
    assert book.probe(pos, BookSettings(moves=16, depth_limit=0)) is None


def test_book_ignore_rate(tmp_path):
    book = one_position_book(tmp_path, ["7g7f none 0 20 1"])
    assert chosen(book, BookSettings(ignore_rate=100, depth_limit=0)) == Counter({None: 300})
    assert chosen(book, BookSettings(ignore_rate=0, depth_limit=0)) == Counter({"7g7f": 300})
    half = chosen(book, BookSettings(ignore_rate=50, depth_limit=0))
    assert 100 < half[None] < 200 and half[None] + half["7g7f"] == 300


def test_book_eval_diff_and_side_limits(tmp_path):
    lines = ["7g7f none 50 20 1", "2g2f none 25 20 1", "5g5f none 10 20 1", "1g1f none -300 20 1"]
    book = one_position_book(tmp_path, lines)
    base = BookSettings(depth_limit=0, eval_black_limit=-99999)
    assert set(chosen(book, base)) == {"7g7f", "2g2f"}  # 50 - 30 = 20
    assert set(chosen(book, BookSettings(depth_limit=0, eval_diff=0, eval_black_limit=-99999))) == {"7g7f"}
    wide = BookSettings(depth_limit=0, eval_diff=1000, eval_black_limit=0)
    assert set(chosen(book, wide)) == {"7g7f", "2g2f", "5g5f"}  # floor 0 for black
    assert chosen(book, BookSettings(depth_limit=0, eval_black_limit=60)) == Counter({None: 300})
    # white's floor is BookEvalWhiteLimit (default -140)
    white = START.replace(" b ", " w ")
    wbook = one_position_book(
        tmp_path,
        ["3c3d none -100 20 1", "8c8d none -130 20 1", "5c5d none -150 20 1"],
        sfen=white,
        name="w.db",
    )
    wpos = Position(white)
    assert set(chosen(wbook, BookSettings(depth_limit=0, eval_diff=1000), wpos)) == {"3c3d", "8c8d"}
    assert set(chosen(wbook, BookSettings(depth_limit=0, eval_diff=1000, eval_white_limit=-110), wpos)) == {
        "3c3d"
    }


def test_book_depth_limit_judges_the_first_move(tmp_path):
    book = one_position_book(tmp_path, ["7g7f none 50 10 5", "2g2f none 50 30 1"])
    assert book.probe(Position(), BookSettings(depth_limit=16)) is None  # 7g7f (count 5) is first
    assert book.probe(Position(), BookSettings(depth_limit=10, eval_diff=0)).move in ("7g7f", "2g2f")
    assert book.probe(Position(), BookSettings(depth_limit=0, eval_diff=0)) is not None


def test_consider_book_move_count(tmp_path):
    book = one_position_book(tmp_path, ["7g7f none 0 20 9", "2g2f none 0 20 1", "5g5f none 0 20 0"])
    settings = dict(depth_limit=0, eval_diff=0)
    weighted = chosen(book, BookSettings(consider_count=True, **settings), draws=1000)
    uniform = chosen(book, BookSettings(consider_count=False, **settings), draws=1000)
    assert weighted["5g5f"] == 0 and weighted["7g7f"] > 800
    assert all(250 < uniform[m] < 420 for m in ("7g7f", "2g2f", "5g5f"))
    zeros = one_position_book(tmp_path, ["7g7f none 0 20 0", "2g2f none 0 20 0"], name="z.db")
    assert set(chosen(zeros, BookSettings(consider_count=True, **settings))) == {"7g7f", "2g2f"}


def test_pv_follows_the_book_up_to_book_pv_moves(tmp_path):
    book = Book()
    pos = Position()
    line = ["7g7f", "3c3d", "2g2f", "4c4d", "2f2e", "2b3c"]
    for i, move in enumerate(line):
        ponder = line[i + 1] if i + 1 < len(line) else None
        book.add(pos.sfen(), BookMove(move, ponder, 30, 20, 1))
        pos.push(move)
    path = tmp_path / "line.db"
    book.write(path)
    book = Book.open(path)
    for n in (1, 2, 4, 6, 8):
        choice = book.probe(Position(), BookSettings(pv_moves=n, depth_limit=0))
        assert choice.pv == line[: min(n, len(line))]
        assert choice.ponder == (line[1] if n > 1 else None)
    assert (choice.value, choice.depth) == (30, 20)


# --------------------------------------------------------------------------------- over USI
def usi_book(tmp_path: Path) -> Path:
    """startpos: 2g2f (ponder 8c8d), then 2f2e: a line the engine plays from."""
    book = Book()
    pos = Position()
    book.add(pos.sfen(), BookMove("2g2f", "8c8d", 42, 20, 1))
    pos.push("2g2f")
    pos.push("8c8d")
    book.add(pos.sfen(), BookMove("2f2e", "8d8e", 35, 20, 1))
    path = tmp_path / "book" / "user_book1.db"
    path.parent.mkdir()
    book.write(path)
    return path


def reset_book_options(engine) -> None:
    for name, value in (
        ("BookFile", "no_book"),
        ("BookDir", "book"),
        ("USI_Ponder", "false"),
        ("MultiPV", "1"),
        ("ConsiderationMode", "false"),
    ):
        engine.send(f"setoption name {name} value {value}")
    engine.sync()


def test_engine_plays_the_book_move_at_once(engine, tmp_path):
    path = usi_book(tmp_path)
    try:
        engine.send(f"setoption name BookDir value {path.parent}")
        engine.send("setoption name BookFile value user_book1.db")
        engine.send("setoption name USI_Ponder value true")
        assert f"info string book: read {path}: 2 positions" in engine.sync()
        engine.send("position startpos")
        sent = engine.send("go btime 0 wtime 0 byoyomi 1000")
        stamp, lines = engine.read_until("bestmove", 10)
        assert stamp - sent < 0.5
        assert lines[0] == "info string book: 2g2f from 1 candidate(s): 2g2f (42 cp, depth 20, count 1)"
        assert lines[1].startswith("info depth 20 seldepth 20 score cp 42 nodes 0 nps 0 time ")
        assert lines[1].endswith(" hashfull 0 pv 2g2f 8c8d 2f2e 8d8e")
        assert lines[2:] == ["bestmove 2g2f ponder 8c8d"]
        # the book's second position, and then out of the book: a search
        engine.send("position startpos moves 2g2f 8c8d")
        engine.send("go btime 0 wtime 0 byoyomi 1000")
        assert engine.read_until("bestmove", 10)[1][-1] == "bestmove 2f2e ponder 8d8e"
        engine.send("position startpos moves 7g7f")
        engine.send("go depth 3")
        lines = engine.read_until("bestmove", 60)[1]
        assert not any("book" in line for line in lines)
        assert " nodes 0 " not in lines[-2]
    finally:
        reset_book_options(engine)


def test_analysis_searches_instead_of_using_the_book(engine, tmp_path):
    path = usi_book(tmp_path)
    try:
        engine.send(f"setoption name BookFile value {path}")  # an absolute path
        engine.sync()
        engine.send("setoption name MultiPV value 2")
        engine.send("position startpos")
        engine.send("go depth 3")
        lines = engine.read_until("bestmove", 60)[1]
        assert any(" multipv 2 " in line for line in lines)
        assert not any("book" in line for line in lines)
        engine.send("setoption name MultiPV value 1")
        engine.send("setoption name ConsiderationMode value true")
        engine.send("go depth 3")
        lines = engine.read_until("bestmove", 60)[1]
        assert not any("book" in line for line in lines)
        engine.send("setoption name ConsiderationMode value false")
        engine.send("go ponder btime 0 wtime 0 byoyomi 1000")
        pondering = engine.no_output(0.3)
        assert not any(line.startswith("bestmove") for line in pondering)
        engine.send("stop")
        lines = pondering + engine.read_until("bestmove", 10)[1]
        assert not any("book" in line for line in lines)
        assert " nodes 0 " not in lines[-2]
        engine.send("go mate 1000")
        assert engine.read_until("checkmate", 10)[1][-1].startswith("checkmate ")
        # and a plain go plays from the book again
        engine.send("go btime 0 wtime 0 byoyomi 1000")
        assert engine.read_until("bestmove", 10)[1][-1] == "bestmove 2g2f"
    finally:
        reset_book_options(engine)


def test_engine_reports_bad_book_lines_and_missing_files(engine, tmp_path):
    path = tmp_path / "bad.db"
    path.write_text(
        f"{HEADER}\nsfen {START}\n2g2f 8c8d 42 20 1\n7g7e none 99 20 5\nsfen lnsgkgsnl/1r5b1 b - 1\n"
    )
    try:
        engine.send(f"setoption name BookFile value {path}")
        lines = engine.sync()
        assert f"info string book: read {path}: 1 positions" in lines
        assert (
            f"info string book: {path} line 5: bad sfen line (board needs 9 ranks separated by '/', "
            "got 2): 'sfen lnsgkgsnl/1r5b1 b - 1'"
        ) in lines
        engine.send("position startpos")
        engine.send("go btime 0 wtime 0 byoyomi 1000")
        lines = engine.read_until("bestmove", 10)[1]
        assert f"info string book: 7g7e is not legal in {START}, dropped" in lines
        assert lines[-1] == "bestmove 2g2f"
        missing = tmp_path / "nowhere.db"
        engine.send(f"setoption name BookFile value {missing}")
        assert (
            f"info string book: cannot read {missing}: No such file or directory; playing without a book"
        ) in engine.sync()
        engine.send("go depth 2")
        lines = engine.read_until("bestmove", 60)[1]
        assert lines[-1].startswith("bestmove ") and " nodes 0 " not in lines[-2]
    finally:
        reset_book_options(engine)


def test_engine_book_on_the_fly_ignore_ply_and_flipped(engine, tmp_path):
    path = usi_book(tmp_path)
    mirror = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1"
    try:
        engine.send(f"setoption name BookFile value {path}")
        engine.send("setoption name BookOnTheFly value true")
        assert f"info string book: {path} opened, searched on the fly" in engine.sync()
        engine.send(f"position sfen {mirror}")  # startpos turned round: white to move
        engine.send("go btime 0 wtime 0 byoyomi 1000")
        assert engine.read_until("bestmove", 10)[1][-1] == "bestmove 8c8d"
        engine.send("position sfen " + START[:-1] + "3")  # the start position at ply 3
        engine.send("go depth 2")
        assert " nodes 0 " not in engine.read_until("bestmove", 60)[1][-2]
        engine.send("setoption name IgnoreBookPly value true")
        engine.sync()
        engine.send("go btime 0 wtime 0 byoyomi 1000")
        assert engine.read_until("bestmove", 10)[1][-1] == "bestmove 2g2f"
        engine.send("setoption name FlippedBook value false")
        engine.send(f"position sfen {mirror}")
        engine.send("go depth 2")
        lines = engine.read_until("bestmove", 60)[1]
        assert not any("book" in line for line in lines) and " nodes 0 " not in lines[-2]
    finally:
        for name, value in (("BookOnTheFly", "false"), ("IgnoreBookPly", "false"), ("FlippedBook", "true")):
            engine.send(f"setoption name {name} value {value}")
        reset_book_options(engine)
