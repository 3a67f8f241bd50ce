"""`Book`: a YaneuraOu `.db` opening book, loaded whole or searched on the fly.

>>> book = Book.open("user_book1.db")                      # doctest: +SKIP
>>> book.moves(Position())                                  # doctest: +SKIP
[BookMove(move='7g7f', ponder='3c3d', value=50, depth=32, count=120), ...]
>>> book.probe(Position()).move                             # doctest: +SKIP
'7g7f'

`Book.open` reads a path ending in `.bin` as an Apery binary book (apery.py: an
`AperyBook`, searched on disk, with the same `moves` and `probe`).

Lookups follow YaneuraOu: the key is the position's SFEN with the hand in YaneuraOu's
order; the ply must match too unless `ignore_ply` (IgnoreBookPly); with `flipped`
(FlippedBook) a position missing from the book is looked up turned 180 degrees with the
colours swapped, and the moves found are turned back.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from .format import BookError, BookMove, HEADER, Section, merge_move, read_sections, sort_moves, write_book
from .sfen import book_key, flip_key, flip_move

if TYPE_CHECKING:
    from ..position import Position
    from .apery import AperyBook
    from .select import BookChoice, BookSettings

PROBE_HEADER_BYTES = 1 << 16  # BookOnTheFly: how much of the file is checked at open


def _sfen_of(position) -> str:
    return position if isinstance(position, str) else position.sfen()


def _flip_entry(m: BookMove) -> BookMove:
    return BookMove(flip_move(m.move), flip_move(m.ponder) if m.ponder else None, m.value, m.depth, m.count)


class Book:
    """An opening book held in memory: key (SFEN without ply) -> {ply: moves}.

    ``errors`` lists the lines that could not be read (every other entry is kept).
    """

    def __init__(
        self, path: str | Path | None = None, ignore_ply: bool = False, flipped: bool = True
    ) -> None:
        self.path = str(path) if path is not None else "<memory>"
        self.ignore_ply = ignore_ply
        self.flipped = flipped
        self.errors: list[BookError] = []
        self._positions: dict[str, dict[int | None, list[BookMove]]] = {}

    # --- opening -----------------------------------------------------------------------
    @classmethod
    def open(
        cls, path: str | Path, on_the_fly: bool = False, ignore_ply: bool = False, flipped: bool = True
    ) -> "Book | AperyBook":
        """Read a .db book (OSError if it cannot be read).  `on_the_fly`: keep it on disk and
        binary-search the sorted file at each lookup (for books too large to load).  A path
        ending in `.bin` is an Apery book (apery.py), always searched on disk; its key has
        no ply, so `on_the_fly` and `ignore_ply` change nothing there."""
        from .apery import AperyBook, is_apery_path

        if is_apery_path(path):
            return AperyBook(path, flipped=flipped)
        if on_the_fly:
            return OnTheFlyBook(path, ignore_ply=ignore_ply, flipped=flipped)
        book = cls(path, ignore_ply=ignore_ply, flipped=flipped)
        with open(path, "rb") as fh:
            book._check_header(fh.readline())
            fh.seek(0)
            for section in read_sections(fh, book.path, book.errors):
                book._add_section(section)
        if not book._positions and not book.errors:
            book.errors.append(BookError(book.path, 1, "", "no position in the file"))
        return book

    def _check_header(self, first: bytes) -> None:
        text = first.decode("utf-8-sig", errors="replace").strip()  # a BOM is no error
        if not text.startswith("#YANEURAOU-DB2016"):
            self.errors.append(
                BookError(self.path, 1, text, f"missing the '{HEADER}' header (read on anyway)")
            )

    def _add_section(self, section: Section) -> None:
        plies = self._positions.setdefault(section.key, {})
        moves = plies.setdefault(section.ply, [])
        for m in section.moves:
            merge_move(moves, m)

    # --- building ----------------------------------------------------------------------
    def add(self, sfen: str, move: BookMove) -> None:
        """Add a move to a position (same move: new values, counts summed)."""
        key, ply = book_key(sfen)
        merge_move(self._positions.setdefault(key, {}).setdefault(ply, []), move)

    def set_moves(self, sfen: str, moves: list[BookMove]) -> None:
        """Replace the moves of a position."""
        key, ply = book_key(sfen)
        self._positions.setdefault(key, {})[ply] = list(moves)

    def write(self, path: str | Path) -> int:
        """Write the book as a sorted .db file; the number of positions written."""
        return write_book(path, self.entries())

    def entries(self) -> Iterator[tuple[str, int | None, list[BookMove]]]:
        """Every (key, ply, moves) of the book."""
        for key, plies in self._positions.items():
            for ply, moves in plies.items():
                yield key, ply, moves

    def __len__(self) -> int:
        return sum(len(plies) for plies in self._positions.values())

    # --- lookup ------------------------------------------------------------------------
    def _plies(self, key: str) -> dict[int | None, list[BookMove]] | None:
        return self._positions.get(key)

    def _lookup(self, key: str, ply: int | None) -> list[BookMove]:
        plies = self._plies(key)
        if not plies:
            return []
        if not self.ignore_ply:
            return list(plies.get(ply) or plies.get(None) or [])
        merged: list[BookMove] = []
        # the lowest ply's entry first (YaneuraOu keeps only that one when it writes)
        for p in sorted(plies, key=lambda p: -1 if p is None else p):
            for m in plies[p]:
                if all(m.move != old.move for old in merged):
                    merged.append(m)
        return merged

    def moves(self, position: "Position | str") -> list[BookMove]:
        """The book's moves for a position (a Position or SFEN text), most played first,
        then best value; [] when the book does not have it.  Legality is not checked
        here (``probe`` does)."""
        key, ply = book_key(_sfen_of(position))
        found = self._lookup(key, ply)
        if not found and self.flipped:
            found = [_flip_entry(m) for m in self._lookup(flip_key(key), ply)]
        return sort_moves(found)

    def probe(
        self, position: "Position | str", settings: "BookSettings | None" = None, rng=None
    ) -> "BookChoice | None":
        """The move to play from the book, chosen as YaneuraOu chooses (select.py), with
        its value, depth, ponder move and PV; None when the book has no usable move."""
        from .select import BookSettings, choose

        return choose(self, position, settings or BookSettings(), rng)

    def close(self) -> None:
        pass


class OnTheFlyBook(Book):
    """A book left on disk: each lookup binary-searches the sorted file (YaneuraOu's
    BookOnTheFly).  Lines are checked as they are read, so a malformed line is reported
    when a lookup meets it; at open only the header and the first position are checked."""

    def __init__(self, path: str | Path, ignore_ply: bool = False, flipped: bool = True) -> None:
        super().__init__(path, ignore_ply=ignore_ply, flipped=flipped)
        self._fh = open(path, "rb")
        self._size = os.fstat(self._fh.fileno()).st_size
        self._reported: set[int] = set()
        self._check_header(self._fh.readline())
        head = self._fh.read(PROBE_HEADER_BYTES)
        if b"\nsfen " not in b"\n" + head:
            self.errors.append(
                BookError(
                    self.path,
                    1,
                    "",
                    f"no sfen line in the first {PROBE_HEADER_BYTES // 1024} KiB: not a book",
                )
            )

    def close(self) -> None:
        self._fh.close()

    def __len__(self) -> int:
        raise TypeError("an on-the-fly book does not count its positions")

    def __bool__(self) -> bool:
        return True

    def entries(self):
        self._fh.seek(0)
        for section in read_sections(self._fh, self.path, []):
            yield section.key, section.ply, section.moves

    def _sfen_at_or_after(self, offset: int) -> tuple[int, str | None, int] | None:
        """The first `sfen` line starting at or after byte `offset`: (its start, its key or
        None if unreadable, the offset after it); None at the end of the file."""
        fh = self._fh
        if offset <= 0:
            fh.seek(0)
        else:
            fh.seek(offset - 1)
            fh.readline()  # the rest of the line holding byte offset-1
        while True:
            start = fh.tell()
            line = fh.readline()
            if not line:
                return None
            if line.startswith(b"sfen "):
                try:
                    key, _ = book_key(line[5:].decode("utf-8", errors="replace"))
                except ValueError:
                    key = None
                return start, key, fh.tell()

    def _plies(self, key: str) -> dict[int | None, list[BookMove]] | None:
        lo, hi = 0, self._size
        target = key.encode("ascii")
        while lo < hi:
            mid = (lo + hi) // 2
            found = self._sfen_at_or_after(mid)
            if found is None or (found[1] is not None and found[1].encode("ascii") >= target):
                hi = mid
            else:
                lo = found[0] + 1
        found = self._sfen_at_or_after(lo)
        if found is None or found[1] != key:
            return None
        self._fh.seek(found[0])
        plies: dict[int | None, list[BookMove]] = {}
        errors: list[BookError] = []
        for section in read_sections(self._lines_while(key), self.path, errors):
            moves = plies.setdefault(section.ply, [])
            for m in section.moves:
                merge_move(moves, m)
        if errors:  # numbered from the sfen line: count the lines before it (rare, slow)
            base = self._line_number(found[0]) - 1
            for err in errors:
                if base + err.line not in self._reported:
                    self._reported.add(base + err.line)
                    self.errors.append(BookError(err.path, base + err.line, err.text, err.message))
        return plies

    def _lines_while(self, key: str) -> Iterator[bytes]:
        """Lines from the current offset while the positions have `key`."""
        first = True
        for line in iter(self._fh.readline, b""):
            if line.startswith(b"sfen ") and not first:
                try:
                    other, _ = book_key(line[5:].decode("utf-8", errors="replace"))
                except ValueError:
                    other = None
                if other != key:
                    return
            first = False
            yield line

    def _line_number(self, offset: int) -> int:
        """The 1-based line number of the line starting at `offset`, by counting newlines
        (only for the message of a bad line)."""
        here = self._fh.tell()
        self._fh.seek(0)
        count, left = 0, offset
        while left > 0:
            chunk = self._fh.read(min(left, 1 << 20))
            if not chunk:
                break
            count += chunk.count(b"\n")
            left -= len(chunk)
        self._fh.seek(here)
        return count + 1
