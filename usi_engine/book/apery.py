"""Apery's binary opening books (`.bin`): the position key, the move code, and a reader that
binary-searches the file on disk.

The file is a run of 16-byte little-endian records, sorted by key:

    key        uint64   Apery's Zobrist hash of the position (below)
    fromToPro  uint16   the move: bits 0-6 the to-square, bits 7-13 the from-square (a drop:
                        81 + the dropped piece's Apery type - 1), bit 14 promotion
    count      uint16   how often the move was played
    score      int32    its value for the side to move

A position has as many records as it has moves; they follow each other.

The key is Apery's own (not this engine's Zobrist hash): its numbers come from the 64-bit
Mersenne Twister (MT19937-64) with the default seed 5489, drawn in this order: one for each
piece code 0..30 (Apery's codes: black P L N S B R G K = 1..8, promoted +8, white +16) on
each square 0..80 (square = 9 * (file - 1) + rank - 1, so 1a = 0, 1b = 1, 9i = 80); then one
for each hand piece P L N S G B R (in that order) and count 0..18; then one for white to
move.  The key xors the number of each piece on its square, the numbers of the counts of
the seven hand pieces *of the side to move only* (the opponent's hand is not in the key,
so two positions that differ only there share a key), and white's number when white is
to move.  The ply is not in the key.

YaneuraOu reads these books (a BookFile named `book.bin`): every move gets depth 256 (so
BookDepthLimit never turns it down), no ponder move, value = score, and a move listed twice
for a key is merged, counts summed.  ``AperyBook.moves`` gives the same list.

>>> apery_key("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1") == \\
...     apery_key("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 7")
True
>>> decode_move(encode_move("8h2b+")), decode_move(encode_move("P*5e"))
('8h2b+', 'P*5e')
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .format import BookError, BookMove, merge_move, sort_moves
from .sfen import _board_ranks, _hand_counts, book_key, flip_key, flip_move, is_usi_move

RECORD = struct.Struct("<QHHi")  # key, fromToPro, count, score
RECORD_SIZE = RECORD.size  # 16
APERY_DEPTH = 256  # the depth YaneuraOu gives every Apery move
SORT_CHECK_RECORDS = 4096  # records checked for order at each end at open
MASK64 = (1 << 64) - 1

# Apery's piece codes (piece.hpp) and hand order
_PIECE_CODE = {"P": 1, "L": 2, "N": 3, "S": 4, "B": 5, "R": 6, "G": 7, "K": 8}
_HAND_INDEX = {"P": 0, "L": 1, "N": 2, "S": 3, "G": 4, "B": 5, "R": 6}
_DROP_LETTER = {code - 1: letter for letter, code in _PIECE_CODE.items() if letter != "K"}  # 0..6
_PIECE_CODES = 31  # 0 (empty) .. 30, as Apery's table
_SQUARES = 81
_HAND_COUNTS = 19  # 0..18 of a kind in hand
_PROMOTE = 1 << 14


# ------------------------------------------------------------------------------ MT19937-64
class MT19937_64:
    """The 64-bit Mersenne Twister (Matsumoto and Nishimura, 2004), as C++'s std::mt19937_64:
    the default seed is 5489."""

    N, M = 312, 156
    MATRIX_A = 0xB5026F5AA96619E9
    UPPER, LOWER = 0xFFFFFFFF80000000, 0x7FFFFFFF

    def __init__(self, seed: int = 5489) -> None:
        mt = [seed & MASK64]
        for i in range(1, self.N):
            prev = mt[-1]
            mt.append((6364136223846793005 * (prev ^ (prev >> 62)) + i) & MASK64)
        self.mt = mt
        self.index = self.N

    def _twist(self) -> None:
        mt, n, m = self.mt, self.N, self.M
        for i in range(n):
            x = (mt[i] & self.UPPER) | (mt[(i + 1) % n] & self.LOWER)
            mt[i] = mt[(i + m) % n] ^ (x >> 1) ^ (self.MATRIX_A if x & 1 else 0)
        self.index = 0

    def next(self) -> int:
        if self.index >= self.N:
            self._twist()
        y = self.mt[self.index]
        self.index += 1
        y ^= (y >> 29) & 0x5555555555555555
        y ^= (y << 17) & 0x71D67FFFEDA60000
        y ^= (y << 37) & 0xFFF7EEE000000000
        y ^= y >> 43
        return y & MASK64


@dataclass(frozen=True)
class ZobristTable:
    piece: tuple[tuple[int, ...], ...]  # [piece code 0..30][square 0..80]
    hand: tuple[tuple[int, ...], ...]  # [hand piece P L N S G B R][count 0..18]
    turn: int  # white to move


@lru_cache(maxsize=1)
def zobrist_table() -> ZobristTable:
    """Apery's book hash numbers, drawn in Apery's order (built once, on first use)."""
    rng = MT19937_64()
    piece = tuple(tuple(rng.next() for _ in range(_SQUARES)) for _ in range(_PIECE_CODES))
    hand = tuple(tuple(rng.next() for _ in range(_HAND_COUNTS)) for _ in range(len(_HAND_INDEX)))
    return ZobristTable(piece, hand, rng.next())


# ------------------------------------------------------------------------------ key
def _square(file: int, rank: int) -> int:
    """Apery's square index of a file 1..9 and a rank 1..9 (a..i)."""
    return 9 * (file - 1) + (rank - 1)


def _usi_square(index: int) -> str:
    return f"{index // 9 + 1}{chr(ord('a') + index % 9)}"


def _parse_usi_square(text: str) -> int:
    return _square(int(text[0]), ord(text[1]) - ord("a") + 1)


def apery_key(position) -> int:
    """Apery's book key of a position: a Position, or SFEN text (with or without the ply;
    `sfen ` in front is allowed).  ValueError for a malformed SFEN, or a hand holding more
    than 18 of a kind."""
    sfen = position if isinstance(position, str) else position.sfen()
    key_text, _ = book_key(sfen)
    board, side, hand = key_text.split(" ")
    table = zobrist_table()
    key = 0
    for rank, cells in enumerate(_board_ranks(board), start=1):
        file = 9
        for cell in cells:
            if cell.isdigit():
                file -= int(cell)
                continue
            letter = cell[-1]
            code = (
                _PIECE_CODE[letter.upper()] + (8 if cell[0] == "+" else 0) + (16 if letter.islower() else 0)
            )
            key ^= table.piece[code][_square(file, rank)]
            file -= 1
    counts = _hand_counts(hand)
    for letter, index in _HAND_INDEX.items():
        n = counts.get(letter if side == "b" else letter.lower(), 0)
        if n >= _HAND_COUNTS:
            raise ValueError(f"{n} of {letter} in hand: an Apery key counts at most {_HAND_COUNTS - 1}")
        key ^= table.hand[index][n]
    if side == "w":
        key ^= table.turn
    return key


# ------------------------------------------------------------------------------ moves
def decode_move(code: int) -> str:
    """A record's fromToPro as a USI move (7g7f, 8h2b+, P*5e).  Bit 15 is ignored, as
    YaneuraOu ignores it; ValueError for a code that is no move (a square past 9i, a
    dropped piece that is not P L N S B R G, a promoted drop, from = to)."""
    to = code & 0x7F
    source = (code >> 7) & 0x7F
    promote = bool(code & _PROMOTE)
    if to >= _SQUARES:
        raise ValueError(f"to-square {to} is past 9i")
    if source >= _SQUARES:
        letter = _DROP_LETTER.get(source - _SQUARES)
        if letter is None:
            raise ValueError(f"from-square {source} is neither a square nor a dropped piece")
        if promote:
            raise ValueError(f"a drop of {letter} with the promotion flag")
        return f"{letter}*{_usi_square(to)}"
    if source == to:
        raise ValueError(f"from and to are the same square {_usi_square(to)}")
    return _usi_square(source) + _usi_square(to) + ("+" if promote else "")


def encode_move(usi: str) -> int:
    """A USI move as Apery's fromToPro (the inverse of decode_move); ValueError if `usi` is
    not USI move syntax."""
    if not is_usi_move(usi):
        raise ValueError(f"not a USI move: {usi[:16]!r}")
    if usi[1] == "*":
        return ((_SQUARES - 1 + _PIECE_CODE[usi[0]]) << 7) | _parse_usi_square(usi[2:4])
    code = (_parse_usi_square(usi[0:2]) << 7) | _parse_usi_square(usi[2:4])
    return code | (_PROMOTE if usi.endswith("+") else 0)


def pack_record(key: int, move: str, count: int, score: int) -> bytes:
    """One 16-byte record."""
    return RECORD.pack(key & MASK64, encode_move(move), count, score)


# ------------------------------------------------------------------------------ reader
@dataclass(frozen=True)
class AperyError(BookError):
    """A problem of a .bin book: the file as a whole (record 0), or one record (1-based)."""

    def __str__(self) -> str:
        where = f"{self.path} record {self.line}" if self.line else self.path
        return f"{where}: {self.message}"


class NoPositionsError(TypeError, ValueError):
    """What an Apery book cannot do: count, list or write its positions (it is keyed by
    hash).  A ValueError too, so that a command that refuses a file that is no .db book
    (makebook) refuses this one the same way."""


def is_apery_path(path: str | Path) -> bool:
    """A BookFile read as an Apery book: its name ends in `.bin` (any case).  (YaneuraOu
    reads only a file named exactly `book.bin` so; this engine reads every `.bin`.)"""
    return Path(path).suffix.lower() == ".bin"


def _flip_entry(m: BookMove) -> BookMove:
    return BookMove(flip_move(m.move), None, m.value, m.depth, m.count)


class AperyBook:
    """An Apery `.bin` book left on disk: each lookup binary-searches the records (it is
    never read whole, so a book of any size opens at once).

    The same reading interface as ``Book``: ``moves(position)``, ``probe(position,
    settings)``, ``errors``, ``flipped`` (FlippedBook), ``close()``.  A file whose size is
    not a multiple of 16 (cut off, or damaged) keeps its whole records, and the rest is
    named in ``errors``; so is a file whose ends are not sorted by key, and a record whose
    move code is no move (when a lookup meets it).
    """

    ignore_ply = False  # the key has no ply

    def __init__(self, path: str | Path, flipped: bool = True) -> None:
        self.path = str(path)
        self.flipped = flipped
        self.errors: list[BookError] = []
        self._reported: set[int] = set()
        self._fh = open(path, "rb")
        size = os.fstat(self._fh.fileno()).st_size
        self.records = size // RECORD_SIZE
        extra = size % RECORD_SIZE
        if extra:
            self.errors.append(
                AperyError(
                    self.path,
                    0,
                    "",
                    f"size {size} bytes is not a multiple of {RECORD_SIZE} (a cut or "
                    f"damaged file): the last {extra} byte(s) are ignored, the {self.records} whole "
                    "record(s) before them are used",
                )
            )
        if self.records == 0:
            self.errors.append(AperyError(self.path, 0, "", "no record in the file"))
        self._check_order()

    # --- the file ----------------------------------------------------------------------
    def _keys(self, first: int, count: int) -> list[int]:
        self._fh.seek(first * RECORD_SIZE)
        data = self._fh.read(count * RECORD_SIZE)
        return [RECORD.unpack_from(data, i * RECORD_SIZE)[0] for i in range(len(data) // RECORD_SIZE)]

    def _key_at(self, index: int) -> int:
        self._fh.seek(index * RECORD_SIZE)
        return struct.unpack("<Q", self._fh.read(8))[0]

    def _check_order(self) -> None:
        """The first and last records must be sorted by key (a binary search needs it);
        checking the whole file would read it all."""
        n = self.records
        spans = [(0, min(n, SORT_CHECK_RECORDS))]
        if n > SORT_CHECK_RECORDS:
            spans.append((max(SORT_CHECK_RECORDS, n - SORT_CHECK_RECORDS), n))
        for start, end in spans:
            keys = self._keys(start, end - start)
            for i in range(1, len(keys)):
                if keys[i] < keys[i - 1]:
                    self.errors.append(
                        AperyError(
                            self.path,
                            start + i + 1,
                            "",
                            f"key {keys[i]:016x} is below the key before it: "
                            "the records are not sorted by key, so lookups may miss positions",
                        )
                    )
                    return

    def records_of(self, key: int) -> list[tuple[int, int, int, int]]:
        """The raw records (key, fromToPro, count, score) with this key, in file order."""
        lo, hi = 0, self.records
        while lo < hi:  # the first record whose key is >= key
            mid = (lo + hi) // 2
            if self._key_at(mid) < key:
                lo = mid + 1
            else:
                hi = mid
        found: list[tuple[int, tuple[int, int, int, int]]] = []
        index = lo
        while index < self.records:
            n = min(64, self.records - index)
            self._fh.seek(index * RECORD_SIZE)
            data = self._fh.read(n * RECORD_SIZE)
            for offset in range(0, len(data) - RECORD_SIZE + 1, RECORD_SIZE):
                record = RECORD.unpack_from(data, offset)
                if record[0] != key:
                    return self._check_moves(found)
                found.append((index, record))
                index += 1
            if len(data) < n * RECORD_SIZE:
                break
        return self._check_moves(found)

    def _check_moves(
        self, found: list[tuple[int, tuple[int, int, int, int]]]
    ) -> list[tuple[int, int, int, int]]:
        """The records whose move code is a move; the others named in ``errors`` (once)."""
        good = []
        for index, record in found:
            try:
                decode_move(record[1])
            except ValueError as exc:
                if index not in self._reported:
                    self._reported.add(index)
                    self.errors.append(
                        AperyError(
                            self.path,
                            index + 1,
                            "",
                            f"move code 0x{record[1]:04x} is no move ({exc}): skipped",
                        )
                    )
                continue
            good.append(record)
        return good

    def all_records(self):
        """Every record (key, fromToPro, count, score), in file order, read in chunks."""
        self._fh.seek(0)
        left = self.records
        while left > 0:
            n = min(left, 4096)
            data = self._fh.read(n * RECORD_SIZE)
            for offset in range(0, n * RECORD_SIZE, RECORD_SIZE):
                yield RECORD.unpack_from(data, offset)
            left -= n

    # --- lookup ------------------------------------------------------------------------
    def _lookup(self, key: int) -> list[BookMove]:
        moves: list[BookMove] = []
        for _, code, count, score in self.records_of(key):
            merge_move(moves, BookMove(decode_move(code), None, score, APERY_DEPTH, count))
        return moves

    def moves(self, position) -> list[BookMove]:
        """The book's moves for a position (a Position or SFEN text), most played first,
        then best value (as ``Book.moves``); each with no ponder move and depth 256, as
        YaneuraOu reads them.  With ``flipped`` a position missing from the book is looked
        up turned 180 degrees with the colours swapped, and the moves are turned back.
        Legality is not checked here (``probe`` does): a key shared with another position
        (see the module's note) may give moves that are illegal here."""
        sfen = position if isinstance(position, str) else position.sfen()
        key_text, _ = book_key(sfen)
        found = self._lookup(apery_key(key_text))
        if not found and self.flipped:
            found = [_flip_entry(m) for m in self._lookup(apery_key(flip_key(key_text)))]
        return sort_moves(found)

    def probe(self, position, settings=None, rng=None):
        """The move to play, chosen as YaneuraOu chooses (as ``Book.probe``)."""
        from .select import BookSettings, choose

        return choose(self, position, settings or BookSettings(), rng)

    def entries(self):
        raise NoPositionsError(
            f"{self.path}: an Apery book is keyed by hash: its positions cannot be listed (only looked up)"
        )

    def __len__(self) -> int:
        raise NoPositionsError(
            f"{self.path}: an Apery book is keyed by hash: its positions cannot be "
            f"counted ({self.records} records)"
        )

    def __bool__(self) -> bool:
        return True

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> "AperyBook":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
