"""Apery's binary books (usi_engine.book.apery): the key, the move code, the on-disk binary
search, bad files, YaneuraOu playing the same moves from the same file, and the engine over
USI."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from usi_engine.book import AperyBook, Book, BookMove, BookSettings, apery_key
from usi_engine.book.apery import (
    APERY_DEPTH,
    RECORD,
    MT19937_64,
    decode_move,
    encode_move,
    pack_record,
    zobrist_table,
)
from usi_engine.position import Position
from yaneuraou_books import require_yaneuraou, yaneuraou_book_moves

REPO = Path(__file__).resolve().parent.parent
START = Position().sfen()
START_KEY = 0xEEBE8EE7E1AD7E15  # YaneuraOu finds a book written with it (below)
OPEN = BookSettings(
    moves=1000, eval_diff=99999, eval_black_limit=-99999, eval_white_limit=-99999, depth_limit=0
)


def write_apery(path: Path, positions: dict[str, list[tuple[str, int, int]]]) -> int:
    """A test-only writer: {sfen: [(move, count, score), ...]} as a sorted .bin (records of a
    position in the order given); the number of records."""
    rows = [
        (apery_key(sfen), i, move, count, score)
        for sfen, moves in positions.items()
        for i, (move, count, score) in enumerate(moves)
    ]
    rows.sort()
    path.write_bytes(b"".join(pack_record(key, move, count, score) for key, _, move, count, score in rows))
    return len(rows)


def random_positions(seed: int, n: int, plies: tuple[int, int] = (0, 40)) -> list[Position]:
    """Positions of random games that prefer captures (so hands fill up)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        pos = Position()
        for _ in range(rng.randint(*plies)):
            legal = pos.legal_moves()
            if not legal:
                break
            captures = [m for m in legal if "*" in m or pos.piece_at(m[2:4]) is not None]
            pos.push(rng.choice(captures if captures and rng.random() < 0.7 else legal))
        if pos.legal_moves():
            out.append(pos)
    return out


# --------------------------------------------------------------------------------- key
def test_generator_and_table_match_published_values():
    rng = MT19937_64()
    first = rng.next()
    for _ in range(9998):
        rng.next()
    # the C++ standard's check of std::mt19937_64 (default seed): its 10000th number
    assert rng.next() == 9981545732273789042
    assert first == 0xC96D191CF6F6AEA6
    # ShogiHome's table of Apery's book numbers (apery_zobrist.ts): the first two piece
    # numbers, the last hand number (18 rooks) and the number of white to move
    table = zobrist_table()
    assert (table.piece[0][0], table.piece[0][1]) == (0xC96D191CF6F6AEA6, 0x401F7AC78BC80F1C)
    assert table.hand[6][18] == 0x0AEBF1EEABED4988
    assert table.turn == 0x3FA51FD0A8BB5298
    assert len(table.piece) == 31 and len(table.piece[30]) == 81 and len(table.hand) == 7


def test_key_of_the_start_position_is_stable_and_differs_by_side_and_hand():
    assert apery_key(START) == START_KEY
    assert apery_key(Position()) == START_KEY
    assert apery_key("sfen " + START[:-1] + "31") == START_KEY  # the ply is not in the key
    white = START.replace(" b ", " w ")
    assert apery_key(white) == START_KEY ^ zobrist_table().turn
    board = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL"
    keys = {
        apery_key(f"{board} {side} {hand} 1")
        for side, hand in (("b", "-"), ("b", "P"), ("b", "2P"), ("b", "R"), ("w", "-"), ("w", "p"))
    }
    assert len(keys) == 6
    # the hand's order in the SFEN does not matter
    assert apery_key(f"{board} b 2PR 1") == apery_key(f"{board} b R2P 1")
    # Apery keys only the hand of the side to move: the opponent's hand is not in the key
    assert apery_key(f"{board} b P 1") == apery_key(f"{board} b Pr 1")
    assert apery_key(f"{board} w p 1") == apery_key(f"{board} w Pp 1")
    # black to move with a bishop in hand: the bishop is in the key
    pos = Position.from_usi("startpos moves 7g7f 3c3d 8h2b+ 3a2b")
    assert pos.sfen().split()[1:3] == ["b", "Bb"]
    assert apery_key(pos) != apery_key(pos.sfen().replace(" Bb ", " b "))
    with pytest.raises(ValueError):
        apery_key("lnsgkgsnl/1r5b1 b - 1")


# --------------------------------------------------------------------------------- moves
def test_move_codes_round_trip():
    # to = 9 * (file - 1) + rank - 1; from the same, or 80 + the dropped piece (P L N S B R G
    # = 1..7); bit 14 promotes
    assert encode_move("7g7f") == (60 << 7) | 59
    assert encode_move("8h2b+") == (1 << 14) | (70 << 7) | 10
    assert encode_move("P*5e") == (81 << 7) | 40
    assert [encode_move(f"{p}*1a") >> 7 for p in "PLNSBRG"] == list(range(81, 88))
    assert decode_move(encode_move("1a9i")) == "1a9i" and encode_move("1a9i") == 80
    assert decode_move((1 << 15) | encode_move("7g7f")) == "7g7f"  # bit 15 ignored
    seen = {"normal": 0, "promotion": 0, "drop": 0}
    for pos in random_positions(3, 40):
        for move in pos.legal_moves():
            assert decode_move(encode_move(move)) == move
            seen["drop" if "*" in move else "promotion" if move.endswith("+") else "normal"] += 1
    assert min(seen.values()) > 20, seen
    for bad in (81, (88 << 7) | 3, (1 << 14) | (81 << 7) | 3, (5 << 7) | 5, (127 << 7) | 0):
        with pytest.raises(ValueError):
            decode_move(bad)
    for bad in ("K*5e", "7g7", "7g7f=", "x", "7z7f", "0a1a"):
        with pytest.raises(ValueError):
            encode_move(bad)


# --------------------------------------------------------------------------------- reading
def test_binary_search_equals_a_linear_scan(tmp_path):
    rng = random.Random(7)
    positions = random_positions(11, 60)
    book = {}
    for pos in positions:
        moves = rng.sample(pos.legal_moves(), min(4, len(pos.legal_moves())))
        book[pos.sfen()] = [(m, rng.randint(0, 50), rng.randint(-300, 300)) for m in moves]
    path = tmp_path / "book.bin"
    count = write_apery(path, book)
    # keys at both ends of the range, and runs of one key longer than a read chunk
    extra = [(0, "7g7f", 1, 0), ((1 << 64) - 1, "2g2f", 1, 0)] + [(12345, "P*5e", i, i) for i in range(150)]
    records = sorted(
        [RECORD.unpack(path.read_bytes()[i : i + 16]) for i in range(0, count * 16, 16)]
        + [(k, encode_move(m), c, s) for k, m, c, s in extra]
    )
    path.write_bytes(b"".join(RECORD.pack(*r) for r in records))
    with Book.open(path) as ap:
        assert isinstance(ap, AperyBook) and ap.errors == [] and ap.records == len(records)
        assert list(ap.all_records()) == records
        keys = sorted({r[0] for r in records})
        absent = [k + 1 for k in keys if k + 1 not in keys][:40] + [1, 12344, (1 << 64) - 2]
        for key in keys + absent:
            assert ap.records_of(key) == [r for r in records if r[0] == key]
        assert len(ap.records_of(12345)) == 150
        for sfen, moves in book.items():
            got = ap.moves(sfen)
            want = sorted(
                [BookMove(m, None, s, APERY_DEPTH, c) for m, c, s in moves],
                key=lambda b: (-b.count, -b.value),
            )
            assert [(b.move, b.count, b.value) for b in got] == [(b.move, b.count, b.value) for b in want]
            assert all(b.ponder is None and b.depth == 256 for b in got)


def test_a_move_listed_twice_is_merged_and_the_choice_follows_the_options(tmp_path):
    path = tmp_path / "x.bin"
    write_apery(path, {START: [("7g7f", 2, 10), ("2g2f", 3, 40), ("7g7f", 4, 30), ("5g5f", 1, -100)]})
    with Book.open(path) as ap:
        assert [(m.move, m.count, m.value) for m in ap.moves(START)] == [
            ("7g7f", 6, 30),
            ("2g2f", 3, 40),
            ("5g5f", 1, -100),
        ]
        # depth 256: the default BookDepthLimit (16) keeps the book, as in YaneuraOu
        # BookEvalDiff 0: the moves valued at least as the first (most played) one
        choice = ap.probe(START, BookSettings(eval_diff=0))
        assert choice.depth == 256 and choice.ponder is None
        assert [m.move for m in choice.candidates] == ["7g7f", "2g2f"]
        assert [
            m.move for m in ap.probe(START, BookSettings(eval_diff=200, eval_black_limit=-99999)).candidates
        ] == ["7g7f", "2g2f", "5g5f"]
        assert ap.probe(START, BookSettings(eval_diff=200, eval_black_limit=35)).move == "2g2f"
        assert ap.probe(START, BookSettings(depth_limit=257)) is None
        assert ap.probe(START.replace(" 1", " 17")) is None  # BookMoves 16
        # FlippedBook: white in the start position turned round finds black's moves, turned back
        mirror = START.replace(" b ", " w ")
        assert [m.move for m in ap.moves(mirror)] == ["3c3d", "8c8d", "5c5d"]
        ap.flipped = False
        assert ap.moves(mirror) == []


def test_cut_misaligned_unsorted_and_damaged_files_keep_every_good_record(tmp_path):
    after = Position.from_usi("startpos moves 2g2f 8c8d").sfen()
    good = tmp_path / "good.bin"
    write_apery(good, {START: [("2g2f", 3, 42)], after: [("2f2e", 1, 35)]})
    data = good.read_bytes()
    # a file cut in the middle of its last record
    cut = tmp_path / "cut.bin"
    cut.write_bytes(data[:-5])
    with Book.open(cut) as ap:
        assert ap.records == 1 and len(ap.errors) == 1
        assert str(ap.errors[0]) == (
            f"{cut}: size 27 bytes is not a multiple of 16 (a cut or damaged "
            "file): the last 11 byte(s) are ignored, the 1 whole record(s) "
            "before them are used"
        )
        first_key = RECORD.unpack(data[:16])[0]
        kept = START if first_key == apery_key(START) else after
        assert len(ap.moves(kept)) == 1
    # trailing bytes after whole records
    long = tmp_path / "long.bin"
    long.write_bytes(data + b"\0" * 7)
    with Book.open(long) as ap:
        assert ap.records == 2 and "size 39 bytes is not a multiple of 16" in str(ap.errors[0])
        assert ap.probe(START, OPEN).move == "2g2f" and ap.probe(after, OPEN).move == "2f2e"
    # nothing at all
    for name, content in (("empty.bin", b""), ("short.bin", b"\1" * 15)):
        (tmp_path / name).write_bytes(content)
        with Book.open(tmp_path / name) as ap:
            assert ap.records == 0 and ap.moves(START) == [] and ap.probe(START, OPEN) is None
            assert "no record in the file" in str(ap.errors[-1])
    # records out of order: named at open (the lookups may miss)
    unsorted = tmp_path / "unsorted.bin"
    unsorted.write_bytes(data[16:] + data[:16])
    with Book.open(unsorted) as ap:
        assert len(ap.errors) == 1 and str(ap.errors[0]).startswith(f"{unsorted} record 2: key ")
        assert "not sorted by key" in str(ap.errors[0])
    # a record whose move is no move: skipped and named once, the others kept
    bad = tmp_path / "bad.bin"
    key = apery_key(START)
    bad.write_bytes(RECORD.pack(key, (100 << 7) | 3, 9, 500) + RECORD.pack(key, encode_move("7g7f"), 1, 0))
    with Book.open(bad) as ap:
        assert ap.errors == []
        assert [m.move for m in ap.moves(START)] == ["7g7f"]
        ap.moves(START)
        assert [str(e) for e in ap.errors] == [
            f"{bad} record 1: move code 0x3203 is no move (from-square 100 is neither a square nor a "
            "dropped piece): skipped"
        ]
    # a move that is legal nowhere here (another position with the same key): dropped by probe
    clash = tmp_path / "clash.bin"
    write_apery(clash, {START: [("5e5d", 9, 90), ("2g2f", 1, 0)]})
    with Book.open(clash) as ap:
        notes: list[str] = []
        from usi_engine.book.select import choose

        assert choose(ap, Position(), OPEN, random.Random(1), notes).move == "2g2f"
        assert notes == [f"book: 5e5d is not legal in {START}, dropped"]


def test_makebook_refuses_an_apery_book_without_a_traceback(tmp_path, capsys):
    from usi_engine.book.makebook import main

    path = tmp_path / "book.bin"
    write_apery(path, {START: [("7g7f", 1, 0)]})
    assert main(["propagate", str(path), str(tmp_path / "out.db")]) == 2
    assert (
        capsys.readouterr()
        .err.strip()
        .endswith(f"{path}: an Apery book is keyed by hash: its positions cannot be counted (1 records)")
    )
    assert not (tmp_path / "out.db").exists()


# --------------------------------------------------------------------------------- YaneuraOu
def test_yaneuraou_plays_the_same_moves_from_an_apery_book(tmp_path):
    require_yaneuraou()
    # positions whose best book move is a drop, a promotion or a plain move, with hands on
    # the side to move (black and white), each with two worse moves and a distinct best value
    rng = random.Random(5)
    wanted = {
        ("drop", "b"): 2,
        ("drop", "w"): 2,
        ("promotion", "b"): 2,
        ("promotion", "w"): 1,
        ("normal", "b"): 1,
        ("normal", "w"): 1,
    }
    book: dict[str, list[tuple[str, int, int]]] = {}
    for pos in random_positions(21, 400, (6, 60)):
        legal = pos.legal_moves()
        side = pos.sfen().split()[1]
        kinds = {
            "drop": [m for m in legal if "*" in m],
            "promotion": [m for m in legal if m.endswith("+")],
            "normal": [m for m in legal if "*" not in m and not m.endswith("+")],
        }
        kind = next(
            (k for (k, s), n in wanted.items() if s == side and n and kinds[k] and len(legal) >= 3), None
        )
        if kind is None or pos.sfen() in book:
            continue
        wanted[kind, side] -= 1
        best = rng.choice(kinds[kind])
        others = rng.sample([m for m in legal if m != best], 2)
        values = sorted(rng.sample(range(-300, 300), 3), reverse=True)
        counts = sorted(rng.sample(range(1, 60), 3), reverse=True)  # the best is the most played
        moves = list(zip([best] + others, counts, values))
        rng.shuffle(moves)  # in any order in the file
        book[pos.sfen()] = moves
    assert not any(wanted.values()), wanted
    sfens = list(book)
    in_hand = {
        s.split()[1]
        for s in sfens
        if any(c.isupper() == (s.split()[1] == "b") for c in s.split()[2] if c.isalpha())
    }
    assert in_hand == {"b", "w"}  # the side to move has pieces in hand
    path = tmp_path / "book.bin"  # YaneuraOu reads an Apery book by this name only
    write_apery(path, book)
    ours = Book.open(path)
    settings = BookSettings(moves=1000, eval_diff=0, eval_black_limit=-99999, eval_white_limit=-99999)
    expected = [ours.probe(s, settings).move for s in sfens]
    assert expected == [max(book[s], key=lambda m: m[2])[0] for s in sfens]
    assert sum("*" in m for m in expected) == 4 and sum(m.endswith("+") for m in expected) == 3
    # BookDepthLimit stays at its default 16: YaneuraOu gives Apery moves depth 256
    assert yaneuraou_book_moves(path, sfens) == expected


# --------------------------------------------------------------------------------- over USI
def test_engine_plays_an_apery_book_move_over_usi(engine, tmp_path):
    after = Position.from_usi("startpos moves 2g2f 8c8d").sfen()
    path = tmp_path / "apery.bin"
    write_apery(
        path,
        {
            START: [("2g2f", 3, 42)],
            Position.from_usi("startpos moves 2g2f").sfen(): [("8c8d", 5, -40)],
            after: [("2f2e", 1, 35)],
        },
    )
    cut = tmp_path / "cut.bin"
    cut.write_bytes(path.read_bytes() + b"\1\2\3")
    try:
        engine.send(f"setoption name BookFile value {path}")
        engine.send("setoption name USI_Ponder value true")
        assert f"info string book: {path}: Apery book, 3 records, searched on disk" in engine.sync()
        engine.send("position startpos")
        engine.send("go btime 0 wtime 0 byoyomi 1000")
        lines = engine.read_until("bestmove", 10)[1]
        assert lines[0] == "info string book: 2g2f from 1 candidate(s): 2g2f (42 cp, depth 256, count 3)"
        assert lines[1].startswith("info depth 256 seldepth 256 score cp 42 nodes 0 nps 0 time ")
        assert lines[1].endswith(" hashfull 0 pv 2g2f 8c8d 2f2e")
        assert lines[2:] == ["bestmove 2g2f ponder 8c8d"]
        # a damaged file: named, and its whole records still played
        engine.send(f"setoption name BookFile value {cut}")
        engine.send("setoption name USI_Ponder value false")
        lines = engine.sync()
        assert f"info string book: {cut}: Apery book, 3 records, searched on disk" in lines
        assert (
            f"info string book: {cut}: size 51 bytes is not a multiple of 16 (a cut or damaged file): "
            "the last 3 byte(s) are ignored, the 3 whole record(s) before them are used"
        ) in lines
        engine.send("position startpos moves 2g2f 8c8d")
        engine.send("go btime 0 wtime 0 byoyomi 1000")
        assert engine.read_until("bestmove", 10)[1][-1] == "bestmove 2f2e"
    finally:
        for name, value in (("BookFile", "no_book"), ("USI_Ponder", "false")):
            engine.send(f"setoption name {name} value {value}")
        engine.sync()


def test_makebook_refuses_to_write_an_apery_book(tmp_path, capsys):
    from usi_engine.book.makebook import main

    out = tmp_path / "new.bin"
    assert main(["records", str(out), str(tmp_path)]) == 2
    assert (
        capsys.readouterr()
        .err.strip()
        .endswith(
            f"{out}: makebook writes YaneuraOu's .db text format; name the output *.db "
            f"(Apery .bin books are read, not written)"
        )
    )
    assert not out.exists()
