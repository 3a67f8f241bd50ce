"""Growing a book with our own search: MultiPV at a fixed depth or node count on the
positions where the book's good lines end, then min-max propagation (graph.py), again and
again.  The book is saved as it grows, so an interrupted run continues from its output.

One round: propagate the values; walk from the roots along every move within `expand_diff`
of the best move of its position; the positions reached that the book lacks (up to
`max_ply`) are the frontier; search up to `batch` of them, shallowest first, and add each
searched position with its MultiPV moves (value, depth, the PV's reply as ponder, count 1).

The positions of a round are searched at once by the searcher's workers (searchers.py)
and added in frontier order, each searched from a fresh start, so the book depends only
on the settings, not on the number of workers or which finished first.
"""

from __future__ import annotations

import signal
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .book import Book
from .graph import propagate_book
from .searchers import PositionSearcher, SearchFailed, SearchLimits
from .sfen import book_key


@dataclass
class ExpandSettings:
    depth: int | None = 8
    nodes: int | None = None
    multipv: int = 4
    max_ply: int = 24  # the SFEN ply (1 at the start) of the deepest position searched
    expand_diff: int = 40  # follow moves this close to their position's best (cp)
    positions: int = 100  # positions to search in this run
    batch: int = 8  # positions searched between two propagations (at least one per worker)
    save_every: int = 8

    def limits(self) -> SearchLimits:
        """How each position is searched."""
        return SearchLimits(self.depth, self.nodes, self.multipv)


@dataclass
class ExpandReport:
    searched: int = 0
    rounds: int = 0
    complete: bool = False  # no frontier left within max_ply and expand_diff
    notes: list[str] = field(default_factory=list)
    failed: str | None = None  # why a search failed and ended the run (SearchFailed)


def frontier(book: Book, roots: list[str], settings: ExpandSettings, skip: set[str]) -> list[str]:
    """Positions (SFEN with ply) that the good lines of `book` reach and the book lacks,
    shallowest first; `skip` holds keys not to return (already searched, no legal move)."""
    from ..position import Position

    out: list[str] = []
    seen: set[str] = set()
    queue = deque(Position(r) for r in roots)
    while queue:
        pos = queue.popleft()
        key, ply = book_key(pos.sfen())
        if key in seen:
            continue
        seen.add(key)
        moves = book.moves(pos.sfen()) if ply is not None else []
        if not moves:
            if key not in skip and (ply or 1) <= settings.max_ply:
                out.append(pos.sfen())
            continue
        best = max(m.value for m in moves)
        legal = set(pos.legal_moves())
        for m in moves:
            if m.value >= best - settings.expand_diff and m.move in legal:
                child = pos.copy()
                child.push(m.move)
                queue.append(child)
    return out


def expand(
    book: Book,
    roots: list[str],
    searcher: PositionSearcher,
    settings: ExpandSettings,
    save: Callable[[Book], None],
    progress=None,
) -> tuple[Book, ExpandReport]:
    """Grow `book` (see the module's docstring) with `searcher` (searchers.py);
    `save(book)` is called every `save_every` positions and at the end (also after Ctrl-C,
    which ends the run once the positions being searched are done, and after a
    SearchFailed, which `report.failed` then describes)."""
    report = ExpandReport()
    interrupted: list[bool] = []
    old_handler = signal.getsignal(signal.SIGINT)
    try:
        signal.signal(signal.SIGINT, lambda *_: interrupted.append(True))
    except ValueError:  # not the main thread: Ctrl-C stays as it was
        old_handler = None
    try:
        book = _rounds(book, roots, searcher, settings, save, progress, report, interrupted)
        book, result, _ = propagate_book(book)
        save(book)
        if interrupted:
            report.notes.append("interrupted: the book so far is saved; run again to continue")
    finally:
        if old_handler is not None:
            signal.signal(signal.SIGINT, old_handler)
    return book, report


def _rounds(
    book: Book,
    roots: list[str],
    searcher: PositionSearcher,
    settings: ExpandSettings,
    save: Callable[[Book], None],
    progress: Any,
    report: ExpandReport,
    interrupted: list[bool],
) -> Book:
    """The rounds of expand(), until `settings.positions` are searched, the frontier is
    empty, Ctrl-C or a SearchFailed; the book as it stands, with every position searched
    (`report` is filled in as they go)."""
    # every worker gets a position each round, else the extra workers would only wait
    batch = max(settings.batch, searcher.workers)
    skip: set[str] = set()
    since_save = 0
    while report.searched < settings.positions and not interrupted:
        book, result, illegal = propagate_book(book)
        report.rounds += 1
        if not result.converged:
            report.notes.append(
                f"round {report.rounds}: values still changing after "
                f"{result.iterations} sweeps (a repetition loop)"
            )
        todo = frontier(book, roots, settings, skip)
        if not todo:
            report.complete = True
            break
        todo = todo[: min(batch, settings.positions - report.searched)]
        try:
            # in frontier order, whichever worker finished first: the book does not depend on them
            for sfen, moves in searcher.search(todo, lambda: bool(interrupted)):
                skip.add(book_key(sfen)[0])
                if moves:
                    book.set_moves(sfen, moves)
                report.searched += 1
                since_save += 1
                if progress is not None:
                    progress.update(1)
                if since_save >= settings.save_every:
                    save(book)
                    since_save = 0
        except SearchFailed as exc:  # the positions added so far are good: keep them
            report.failed = str(exc)
            break
    return book


def save_to(path: str | Path) -> Callable[[Book], None]:
    return lambda book: book.write(path)
