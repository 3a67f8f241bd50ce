"""Growing a book with our own search: MultiPV at a fixed depth or node count on the
positions where the book's good lines end, then min-max propagation (graph.py), again and
again.  The book is saved as it grows, so an interrupted run continues from its output.

One round: propagate the values; walk from the roots along every move within `expand_diff`
of the best move of its position; the positions reached that the book lacks (up to
`max_ply`) are the frontier; search up to `batch` of them, shallowest first, and add each
searched position with its MultiPV moves (value, depth, the PV's reply as ponder, count 1).
"""

from __future__ import annotations

import signal
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .book import Book
from .format import BookMove
from .graph import propagate_book
from .sfen import book_key


@dataclass
class ExpandSettings:
    depth: int | None = 8
    nodes: int | None = None
    multipv: int = 4
    max_ply: int = 24  # the SFEN ply (1 at the start) of the deepest position searched
    expand_diff: int = 40  # follow moves this close to their position's best (cp)
    positions: int = 100  # positions to search in this run
    batch: int = 8  # positions searched between two propagations
    save_every: int = 8


@dataclass
class ExpandReport:
    searched: int = 0
    rounds: int = 0
    complete: bool = False  # no frontier left within max_ply and expand_diff
    notes: list[str] = field(default_factory=list)


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


def search_position(engine, sfen: str, settings: ExpandSettings) -> list[BookMove]:
    """MultiPV search of one position: its moves as book entries (side to move's view)."""
    from ..api import Limit

    limit = Limit(depth=settings.depth, nodes=settings.nodes)
    infos = engine.analyse(sfen, limit, multipv=settings.multipv)
    out = []
    for info in infos:
        if not info.pv:
            continue
        ponder = str(info.pv[1]) if len(info.pv) > 1 else None
        out.append(BookMove(str(info.pv[0]), ponder, info.score.to_cp(), int(info.depth), 1))
    return out


def expand(
    book: Book,
    roots: list[str],
    engine,
    settings: ExpandSettings,
    save: Callable[[Book], None],
    progress=None,
) -> tuple[Book, ExpandReport]:
    """Grow `book` (see the module's docstring); `save(book)` is called every
    `save_every` positions and at the end (also after Ctrl-C, which ends the run)."""
    report = ExpandReport()
    skip: set[str] = set()
    since_save = 0
    interrupted = []
    old_handler = signal.getsignal(signal.SIGINT)
    try:
        signal.signal(signal.SIGINT, lambda *_: interrupted.append(True))
    except ValueError:  # not the main thread: Ctrl-C stays as it was
        old_handler = None
    try:
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
            for sfen in todo[: min(settings.batch, settings.positions - report.searched)]:
                if interrupted:
                    break
                moves = search_position(engine, sfen, settings)
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
        book, result, _ = propagate_book(book)
        save(book)
        if interrupted:
            report.notes.append("interrupted: the book so far is saved; run again to continue")
    finally:
        if old_handler is not None:
            signal.signal(signal.SIGINT, old_handler)
    return book, report


def save_to(path: str | Path) -> Callable[[Book], None]:
    return lambda book: book.write(path)
