"""YaneuraOu's text book format (`.db`), read and written.

    #YANEURAOU-DB2016 1.00
    sfen lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1
    7g7f 3c3d 50 32 120
    2g2f none 40 32 80

A `sfen <board> <side> <hand> <ply>` line opens a position; each line under it is one move:
`move ponder value depth count` (`ponder` may be `none`; value, depth and count may be
left out and are then 0, 0 and 1; fields after count, such as newer versions' win and
draw counts, are ignored).  `value` is from the side to move's view, in centipawns.
Lines starting with `#` or `//` and empty lines are skipped.  Positions are sorted by the
byte order of their SFEN text, so that a reader can binary-search the file (BookOnTheFly).

A malformed line is reported as a BookError (file, line number, text, reason) and skipped;
everything else is kept.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from .sfen import book_key, is_usi_move

HEADER = "#YANEURAOU-DB2016 1.00"


@dataclass(frozen=True)
class BookMove:
    """One move of a book position: the reply expected after it (`ponder`, None if the
    book has none), the value for the side to move (cp), the search depth and how often
    it was played (`count`)."""

    move: str
    ponder: str | None = None
    value: int = 0
    depth: int = 0
    count: int = 1

    def line(self) -> str:
        """The move line of the .db format."""
        return f"{self.move} {self.ponder or 'none'} {self.value} {self.depth} {self.count}"


@dataclass(frozen=True)
class BookError:
    """A line that could not be read: where, what it said, and why."""

    path: str
    line: int
    text: str
    message: str

    def __str__(self) -> str:
        text = self.text if len(self.text) <= 60 else self.text[:60] + "..."
        return f"{self.path} line {self.line}: {self.message}: '{text}'"


def sort_moves(moves: Iterable[BookMove]) -> list[BookMove]:
    """YaneuraOu's order of a position's moves: most played first, then the best value
    (stable: the file's order breaks remaining ties)."""
    return sorted(moves, key=lambda m: (-m.count, -m.value))


def merge_move(moves: list[BookMove], new: BookMove) -> None:
    """Add `new` to a position's moves; a move already there takes the new values and
    the summed count (as YaneuraOu merges duplicate entries)."""
    for i, old in enumerate(moves):
        if old.move == new.move:
            moves[i] = BookMove(new.move, new.ponder, new.value, new.depth, old.count + new.count)
            return
    moves.append(new)


def parse_move_line(text: str) -> BookMove:
    """A move line; ValueError says what is wrong."""
    fields = text.split()
    if len(fields) < 2:
        raise ValueError("a move line needs at least a move and a ponder move")
    move, ponder = fields[0], fields[1]
    if not is_usi_move(move):
        raise ValueError(f"not a USI move: {move[:16]!r}")
    if ponder in ("none", "resign"):
        ponder = None
    elif not is_usi_move(ponder):
        raise ValueError(f"ponder is not a USI move or 'none': {ponder[:16]!r}")
    numbers = []
    for name, raw in zip(("value", "depth", "count"), fields[2:5]):
        try:
            numbers.append(int(raw))
        except ValueError:
            raise ValueError(f"{name} is not an integer: {raw[:16]!r}") from None
    value, depth, count = numbers + [0, 0, 1][len(numbers) :]
    if count < 0:
        raise ValueError(f"count is negative: {count}")
    return BookMove(move, ponder, value, depth, count)


@dataclass
class Section:
    """A position of the file: its key (SFEN without ply), ply, and moves, with the
    line number of its `sfen` line."""

    key: str
    ply: int | None
    line: int
    moves: list[BookMove]


def read_sections(
    lines: Iterable[bytes | str], path: str, errors: list[BookError], first_line: int = 1
) -> Iterator[Section]:
    """The positions of a book text, in file order; bad lines go to `errors`.  Move lines
    under a rejected `sfen` line are skipped with it (reported once, with their count)."""
    current: Section | None = None
    rejected: BookError | None = None
    skipped = 0

    def flush_rejected():
        nonlocal rejected, skipped
        if rejected is not None:
            note = f"; its {skipped} move line(s) skipped" if skipped else ""
            errors.append(BookError(rejected.path, rejected.line, rejected.text, rejected.message + note))
        rejected, skipped = None, 0

    for number, raw in enumerate(lines, first_line):
        text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
        text = text.strip().lstrip("\ufeff")  # a BOM before the header
        if not text or text.startswith("#") or text.startswith("//"):
            continue
        if text.startswith("sfen ") or text == "sfen":
            if current is not None:
                yield current
                current = None
            flush_rejected()
            try:
                key, ply = book_key(text[5:])
            except ValueError as exc:
                rejected = BookError(path, number, text, f"bad sfen line ({exc})")
                continue
            current = Section(key, ply, number, [])
            continue
        if rejected is not None:
            skipped += 1
            continue
        if current is None:
            errors.append(BookError(path, number, text, "move line before any sfen line"))
            continue
        try:
            merge_move(current.moves, parse_move_line(text))
        except ValueError as exc:
            errors.append(BookError(path, number, text, str(exc)))
    if current is not None:
        yield current
    flush_rejected()


def sfen_line(key: str, ply: int | None) -> str:
    return f"sfen {key}" + ("" if ply is None else f" {ply}")


def sort_order(key: str, ply: int | None) -> tuple[bytes, bytes]:
    """The writer's order: the byte order of the SFEN text (key, then the ply as text,
    which is the order of the whole `sfen` line)."""
    return key.encode("ascii"), b"" if ply is None else str(ply).encode("ascii")


def write_book(path: str | Path, positions: Iterable[tuple[str, int | None, list[BookMove]]]) -> int:
    """Write (key, ply, moves) positions as a sorted .db file (atomically: a temporary file
    renamed over `path`, so an interrupted write leaves the old file).  Positions without
    moves are left out.  Returns the number of positions written."""
    rows = sorted(((k, p, m) for k, p, m in positions if m), key=lambda r: sort_order(r[0], r[1]))
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="ascii", newline="\n") as fh:
        fh.write(HEADER + "\n")
        for key, ply, moves in rows:
            fh.write(sfen_line(key, ply) + "\n")
            for m in sort_moves(moves):
                fh.write(m.line() + "\n")
    os.replace(tmp, path)
    return len(rows)
