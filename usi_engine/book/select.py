"""Choosing a move from the book, as YaneuraOu does (its option names in brackets):

1. no book move past ply `moves` [BookMoves] (the ply of the SFEN: 1 at the start), and
   none in `ignore_rate` percent of the lookups [BookIgnoreRate];
2. the position's moves, illegal ones dropped (each named in a note);
3. if the first listed move (most played, then best value) was searched less deep than
   `depth_limit` [BookDepthLimit, 0 = off], the book is not used here;
4. moves whose value is below both the first move's value minus `eval_diff`
   [BookEvalDiff] and the side's floor [BookEvalBlackLimit / BookEvalWhiteLimit] are
   dropped;
5. one of the rest, uniformly, or in proportion to its count [ConsiderBookMoveCount].

The PV follows the book from the chosen move for up to `pv_moves` plies [BookPvMoves]:
each entry's ponder move when it is legal, else the book's first listed move; its second
move is the ponder move.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Protocol

from .format import BookMove
from .sfen import book_key


class MovesOfPositions(Protocol):
    """What choosing needs of a book: its moves in a position (``Book.moves``)."""

    def moves(self, position) -> list[BookMove]: ...


@dataclass(frozen=True)
class BookSettings:
    """The selection options, with YaneuraOu's defaults."""

    moves: int = 16  # BookMoves
    ignore_rate: int = 0  # BookIgnoreRate, percent
    eval_diff: int = 30  # BookEvalDiff
    eval_black_limit: int = 0  # BookEvalBlackLimit
    eval_white_limit: int = -140  # BookEvalWhiteLimit
    depth_limit: int = 16  # BookDepthLimit (0: any depth)
    consider_count: bool = False  # ConsiderBookMoveCount
    pv_moves: int = 8  # BookPvMoves

    @classmethod
    def from_options(cls, options) -> "BookSettings":
        """From the USI option table (names as YaneuraOu's)."""
        return cls(
            moves=int(options["BookMoves"]),
            ignore_rate=int(options["BookIgnoreRate"]),
            eval_diff=int(options["BookEvalDiff"]),
            eval_black_limit=int(options["BookEvalBlackLimit"]),
            eval_white_limit=int(options["BookEvalWhiteLimit"]),
            depth_limit=int(options["BookDepthLimit"]),
            consider_count=bool(options["ConsiderBookMoveCount"]),
            pv_moves=int(options["BookPvMoves"]),
        )


@dataclass
class BookChoice:
    """The book's answer: the move and what the book says about it."""

    move: str
    ponder: str | None
    value: int
    depth: int
    count: int
    pv: list[str]
    candidates: list[BookMove] = field(default_factory=list)  # the moves chosen among


def _position(position):
    from ..api import as_position

    return as_position(position).copy()


def legal_moves(book: MovesOfPositions, pos, notes: list[str] | None = None) -> list[BookMove]:
    """The book's moves for `pos` that are legal there (illegal ones named in `notes`)."""
    found = book.moves(pos.sfen())
    if not found:
        return []
    legal = set(pos.legal_moves())
    kept = [m for m in found if m.move in legal]
    if notes is not None:
        for m in found:
            if m.move not in legal:
                notes.append(f"book: {m.move} is not legal in {pos.sfen()}, dropped")
    return kept


def choose(
    book: MovesOfPositions, position, settings: BookSettings, rng=None, notes: list[str] | None = None
) -> BookChoice | None:
    """The book move for `position` (a Position or SFEN text), or None; why moves were
    dropped goes to `notes` (the engine prints them as `info string`)."""
    rng = rng or random
    notes = notes if notes is not None else []
    ply = book_key(position if isinstance(position, str) else position.sfen())[1] or 1
    if ply > settings.moves:
        return None
    if settings.ignore_rate > 0 and rng.randrange(100) < settings.ignore_rate:
        return None
    pos = _position(position)
    moves = legal_moves(book, pos, notes)
    if not moves:
        return None
    first = moves[0]
    if settings.depth_limit and first.depth < settings.depth_limit:
        notes.append(
            f"book: depth {first.depth} of {first.move} is below BookDepthLimit "
            f"{settings.depth_limit}, not using the book"
        )
        return None
    side_limit = settings.eval_black_limit if pos.side_to_move() == 0 else settings.eval_white_limit
    floor = max(first.value - settings.eval_diff, side_limit)
    kept = [m for m in moves if m.value >= floor]
    if len(kept) != len(moves):
        name = "BookEvalBlackLimit" if pos.side_to_move() == 0 else "BookEvalWhiteLimit"
        notes.append(
            f"book: BookEvalDiff {settings.eval_diff}, {name} {side_limit}: {len(moves)} moves to {len(kept)}"
        )
    if not kept:
        return None
    chosen = _pick(kept, settings.consider_count, rng)
    pv = book_pv(book, pos, chosen, settings.pv_moves)
    ponder = pv[1] if len(pv) > 1 else None
    return BookChoice(chosen.move, ponder, chosen.value, chosen.depth, chosen.count, pv, kept)


def _pick(moves: list[BookMove], by_count: bool, rng) -> BookMove:
    if not by_count:
        return moves[rng.randrange(len(moves))]
    weights = [m.count for m in moves]
    if sum(weights) == 0:  # a book whose counts are all 0: uniform
        weights = [1] * len(moves)
    return rng.choices(moves, weights=weights, k=1)[0]


def book_pv(book: MovesOfPositions, pos, chosen: BookMove, length: int) -> list[str]:
    """The chosen move, then at each position the previous entry's ponder move when it is
    legal, else the book's first listed move; up to `length` moves, ending where the book
    ends or a position repeats."""
    pos = pos.copy()
    pv = [chosen.move]
    entry: BookMove | None = chosen
    seen = {book_key(pos.sfen())[0]}
    pos.push(chosen.move)
    while len(pv) < max(1, length):
        key = book_key(pos.sfen())[0]
        if key in seen:
            break
        seen.add(key)
        nxt = legal_moves(book, pos)
        if entry is not None and entry.ponder and pos.is_legal(entry.ponder):
            move = entry.ponder
            entry = next((m for m in nxt if m.move == move), None)
        elif nxt:
            entry = nxt[0]
            move = entry.move
        else:
            break
        pv.append(move)
        pos.push(move)
    return pv
