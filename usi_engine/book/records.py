"""A book from game records: every position of every game up to a ply, with how often each
move was played there (the count) and the reply played most often after it (the ponder move).

Records are KIF, KI2, CSA (the match runner's too) and SFEN/USI move lists, where each line of
a `.sfen`, `.usi` or `.txt` file is one game (`startpos moves ...`, `sfen ... moves ...`,
with or without a leading `position`).  A directory is read recursively; when the match
runner left one game as both `name.csa` and `name.kif`, it is counted once.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from .book import Book
from .format import BookMove
from .sfen import book_key

RECORD_SUFFIXES = (".csa", ".kif", ".kifu", ".ki2", ".ki2u", ".sfen", ".usi", ".txt")
LINE_SUFFIXES = (".sfen", ".usi", ".txt")
# how a game ended (CSA names) -> who won: the side to move at the end (0) or the other (1)
_LOSER_TO_MOVE = {"%TORYO", "%TSUMI", "%TIME_UP", "%ILLEGAL_MOVE", "%+ILLEGAL_ACTION", "%-ILLEGAL_ACTION"}
_WINNER_TO_MOVE = {"%KACHI"}


@dataclass
class Game:
    source: str  # "file" or "file line N"
    start_sfen: str
    moves: list[str]
    winner: int | None = None  # 0 black, 1 white, None unknown or a draw


@dataclass
class RecordStats:
    games: int = 0
    skipped: list[str] = field(default_factory=list)  # "source: why"


def record_files(paths: Iterable[str | Path]) -> list[Path]:
    """The record files named, directories expanded (one file per game name)."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if not path.is_dir():
            out.append(path)
            continue
        chosen: dict[Path, Path] = {}
        for f in sorted(path.rglob("*")):
            if f.is_file() and f.suffix.lower() in RECORD_SUFFIXES:
                stem = f.with_suffix("")
                old = chosen.get(stem)
                if old is None or RECORD_SUFFIXES.index(f.suffix.lower()) < RECORD_SUFFIXES.index(
                    old.suffix.lower()
                ):
                    chosen[stem] = f
        out.extend(sorted(chosen.values()))
    return out


def _winner(result: str | None, moves: int, start_side: int) -> int | None:
    if result is None:
        return None
    to_move = (start_side + moves) % 2
    if result in _LOSER_TO_MOVE:
        return 1 - to_move
    if result in _WINNER_TO_MOVE:
        return to_move
    return None


def read_games(paths: Iterable[str | Path], stats: RecordStats) -> Iterator[Game]:
    """Every game of the files (unreadable ones go to `stats.skipped`)."""
    from ..position import Position
    from ..record import read_record

    for path in record_files(paths):
        if path.suffix.lower() in LINE_SUFFIXES:
            try:
                lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError as exc:
                stats.skipped.append(f"{path}: {exc.strerror or exc}")
                continue
            for number, line in enumerate(lines, 1):
                text = line.strip()
                if not text or text.startswith("#"):
                    continue
                if text.startswith("position "):
                    text = text[len("position ") :]
                if not text.startswith(("startpos", "sfen ")):
                    text = "sfen " + text
                try:
                    pos = Position.from_usi(text)
                except ValueError as exc:
                    stats.skipped.append(f"{path} line {number}: {exc}")
                    continue
                moves = [str(m) for m in pos.move_stack()]
                head = text.split(" moves ")[0]
                start = Position.from_usi(head).sfen()
                yield Game(f"{path} line {number}", start, moves)
            continue
        try:
            rec = read_record(path)
        except OSError as exc:
            stats.skipped.append(f"{path}: {exc.strerror or exc}")
            continue
        except ValueError as exc:
            stats.skipped.append(f"{path}: {exc}")
            continue
        for err in rec.errors:
            stats.skipped.append(f"{path}: {err} (the moves before it are used)")
        side = 0 if rec.start_sfen.split()[1] == "b" else 1
        yield Game(
            str(path), rec.start_sfen, [str(m) for m in rec.moves], _winner(rec.result, len(rec.moves), side)
        )


def book_from_games(
    games: Iterable[Game],
    max_ply: int = 32,
    min_count: int = 1,
    winner_only: bool = False,
    stats: RecordStats | None = None,
) -> Book:
    """Count the moves of the games' positions up to `max_ply` (the SFEN's ply: 1 is the
    start).  `min_count`: keep moves played at least that often; `winner_only`: only the
    moves of the side that won (games without a winner are left out)."""
    from ..position import Position

    stats = stats if stats is not None else RecordStats()
    played: Counter = Counter()  # (sfen, move) -> count
    replies: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for game in games:
        if winner_only and game.winner is None:
            stats.skipped.append(f"{game.source}: no winner")
            continue
        stats.games += 1
        pos = Position(game.start_sfen)
        previous: tuple[str, str] | None = None
        for move in game.moves:
            sfen = pos.sfen()
            key, ply = book_key(sfen)
            if ply is not None and ply > max_ply:
                break
            if previous is not None:
                replies[previous][move] += 1
            previous = None
            if not winner_only or pos.side_to_move() == game.winner:
                played[(sfen, move)] += 1
                previous = (sfen, move)
            pos.push(move)
    book = Book()
    for (sfen, move), count in played.items():
        if count < min_count:
            continue
        ponder = replies[(sfen, move)].most_common(1)
        book.add(sfen, BookMove(move, ponder[0][0] if ponder else None, 0, 0, count))
    return book
