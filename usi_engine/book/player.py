"""The engine's side of the book: load it at `isready`, answer `go` from it.  A BookFile
ending in `.bin` is an Apery book (apery.py), anything else a YaneuraOu `.db` book.

Kept out of engine.py so that the engine calls into the book at two places only
(`Engine.ensure_ready` and before the search starts).  Every problem is an `info string`:
a missing file or a bad line never stops the engine, which then searches.
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

from ..server.options import ascii_clean
from .apery import AperyBook
from .book import Book
from .select import BookChoice, BookSettings, choose

NO_BOOK = "no_book"
MAX_REPORTED = 10  # bad lines printed one by one; the rest are counted
REPO_ROOT = Path(__file__).resolve().parents[2]  # the folder of engine.cfg


def book_path(options) -> Path | None:
    """BookFile as a path: absolute, or under BookDir (relative to the working folder, else
    to the engine's folder, where GUIs that start the engine elsewhere still find it);
    None for `no_book` or an empty name."""
    name = str(options["BookFile"]).strip()
    if not name or Path(name).name == NO_BOOK:
        return None
    path = Path(name).expanduser()
    if path.is_absolute():
        return path
    path = Path(str(options["BookDir"]).strip() or ".").expanduser() / path
    if not path.is_absolute() and not path.exists() and (REPO_ROOT / path).exists():
        return REPO_ROOT / path
    return path


class BookPlayer:
    def __init__(self, rng: random.Random | None = None) -> None:
        self.book: Book | AperyBook | None = None
        self._loaded: tuple | None = None  # what the book was read with
        self._reported = 0  # errors of the book already printed
        self.rng = rng or random.Random()

    # ------------------------------------------------------------------ isready
    def load(self, options, out) -> None:
        """Read the book the options name, if it is not the one read already."""
        path = book_path(options)
        on_the_fly, ignore_ply = bool(options["BookOnTheFly"]), bool(options["IgnoreBookPly"])
        try:
            stamp = os.stat(path).st_mtime_ns if path is not None else None
        except OSError:
            stamp = None
        key = (str(path) if path else None, stamp, on_the_fly, ignore_ply)
        if key == self._loaded:
            return
        self.close()
        self._loaded = key
        if path is None:
            return
        try:
            self.book = Book.open(path, on_the_fly=on_the_fly, ignore_ply=ignore_ply)
        except OSError as exc:
            self.book = None
            out.info(
                f"book: cannot read {ascii_clean(str(path), 200)}: "
                f"{ascii_clean(exc.strerror or exc)}; playing without a book"
            )
            return
        if isinstance(self.book, AperyBook):
            out.info(
                f"book: {ascii_clean(str(path), 200)}: Apery book, {self.book.records} records, "
                "searched on disk"
            )
        elif on_the_fly:
            out.info(f"book: {ascii_clean(str(path), 200)} opened, searched on the fly")
        else:
            out.info(f"book: read {ascii_clean(str(path), 200)}: {len(self.book)} positions")
        self.report_errors(out)

    def close(self) -> None:
        if self.book is not None:
            self.book.close()
        self.book = None
        self._loaded = None
        self._reported = 0

    def report_errors(self, out) -> None:
        """Print the book's bad lines not printed yet (the first MAX_REPORTED of them)."""
        errors = self.book.errors if self.book is not None else []
        new = errors[self._reported :]
        room = max(0, MAX_REPORTED - self._reported)
        for err in new[:room]:
            out.info("book: " + ascii_clean(str(err), 300))
        if len(new) > room:
            unit = "record(s)" if isinstance(self.book, AperyBook) else "line(s)"
            out.info(
                f"book: {len(new) - room} more bad {unit} in {ascii_clean(errors[0].path, 200)} "
                "not shown; every good entry is kept"
            )
        self._reported = len(errors)

    # ------------------------------------------------------------------ go
    def answer(self, job, options, out) -> list[str] | None:
        """The final info line and bestmove of a book move for this `go`, or None to search.
        Analysis searches: `go ponder`, `go infinite`, `go mate`, ConsiderationMode, MultiPV > 1."""
        book = self.book
        params = job.params
        if (
            book is None
            or job.pos is None
            or params.ponder
            or params.infinite
            or params.is_mate
            or options["ConsiderationMode"]
            or int(options["MultiPV"]) > 1
        ):
            return None
        book.flipped = bool(options["FlippedBook"])
        notes: list[str] = []
        try:
            choice = choose(book, job.pos, BookSettings.from_options(options), self.rng, notes)
        except Exception as exc:  # a broken book must cost the book move, not the answer
            notes.append(f"book: lookup failed ({ascii_clean(repr(exc), 160)}); searching")
            choice = None
        for note in notes:
            out.info(ascii_clean(note, 300))
        self.report_errors(out)
        if choice is None:
            return None
        if params.searchmoves and choice.move not in job.root_moves:
            out.info(f"book: {choice.move} is not among go searchmoves; searching")
            return None
        return self._lines(job, choice, options)

    def _lines(self, job, choice: BookChoice, options) -> list[str]:
        ms = int(max(0.0, time.monotonic() - job.clock_start) * 1000) if job.clock_start else 0
        listed = ", ".join(
            f"{m.move} ({m.value} cp, depth {m.depth}, count {m.count})" for m in choice.candidates[:8]
        )
        more = f" and {len(choice.candidates) - 8} more" if len(choice.candidates) > 8 else ""
        lines = [
            f"info string book: {choice.move} from {len(choice.candidates)} candidate(s): {listed}{more}",
            f"info depth {choice.depth} seldepth {choice.depth} score cp {choice.value} nodes 0 nps 0 "
            f"time {ms} hashfull 0 pv {' '.join(choice.pv)}",
        ]
        if options["USI_Ponder"] and choice.ponder:
            lines.append(f"bestmove {choice.move} ponder {choice.ponder}")
        else:
            lines.append(f"bestmove {choice.move}")
        return lines
