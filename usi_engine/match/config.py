"""What a match is made of: time controls, engines, openings and the match's settings;
reading opening lists and drawing random balanced openings."""

from __future__ import annotations

import os
import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Optional

import shogi

from .referee import BLACK, WHITE, Referee
from .stats import Sprt
from ..textfile import read_text_lines

# -- configuration -------------------------------------------------------------


@dataclass
class TimeControl:
    """Limits of one engine: main time, Fischer increment, byoyomi, nodes, depth (0 = none)."""

    time_ms: int = 0
    inc_ms: int = 0
    byoyomi_ms: int = 0
    nodes: int = 0
    depth: int = 0

    @property
    def has_clock(self) -> bool:
        return bool(self.time_ms or self.inc_ms or self.byoyomi_ms)

    def describe(self) -> str:
        parts = []
        if self.time_ms or self.inc_ms:
            parts.append(f"{self.time_ms / 1000:g}s+{self.inc_ms / 1000:g}s")
        if self.byoyomi_ms:
            parts.append(f"byoyomi {self.byoyomi_ms / 1000:g}s")
        if self.nodes:
            parts.append(f"nodes {self.nodes}")
        if self.depth:
            parts.append(f"depth {self.depth}")
        return ", ".join(parts) or "unlimited"


@dataclass
class EngineSpec:
    """How to start one engine and how it plays."""

    cmd: list[str]
    name: str
    options: dict[str, str] = field(default_factory=dict)
    tc: TimeControl = field(default_factory=TimeControl)
    cwd: Optional[str] = None
    ponder: bool = False  # think on the opponent's time (go ponder / ponderhit / stop)

    def usi_options(self) -> dict[str, str]:
        """The options to set: the user's, after ``USI_Ponder`` when pondering (as a GUI)."""
        return {"USI_Ponder": "true", **self.options} if self.ponder else dict(self.options)


@dataclass(frozen=True)
class Opening:
    """A start position and the moves played from it before the engines take over."""

    sfen: str = shogi.STARTING_SFEN
    moves: tuple[str, ...] = ()

    def describe(self) -> str:
        head = "startpos" if self.sfen == shogi.STARTING_SFEN else f"sfen {self.sfen}"
        return f"{head} moves {' '.join(self.moves)}" if self.moves else head


@dataclass
class MatchConfig:
    """Everything a match needs; see ``usi-engine match --help``."""

    engines: list[EngineSpec]
    games: int = 2
    concurrency: int = os.cpu_count() or 1
    openings: list[Opening] = field(default_factory=lambda: [Opening()])
    max_moves: int = 256
    margin_ms: int = 300
    hang_timeout_ms: int = 5000
    move_timeout_ms: int = 60000
    ready_timeout_s: float = 120.0
    gauntlet: bool = False
    opening_start: int = 0  # index of the first pair's opening (wraps around)
    sprt: Optional[Sprt] = None
    out_dir: Optional[str] = None
    event: str = "usi_engine match"
    ray_address: Optional[str] = None  # play on a Ray cluster (see raycluster.py)
    ray_working_dir: Optional[str] = None  # shipped to the nodes, the engines' directory
    ray_cpus_per_game: float = 1.0


# -- openings ----------------------------------------------------------------


def parse_opening_line(line: str) -> Optional[Opening]:
    """Parse ``[position] startpos|sfen SFEN|SFEN [moves ...]``; None for blanks/comments."""
    tokens = line.split("#", 1)[0].split()
    if not tokens:
        return None
    if tokens[0] == "position":
        tokens = tokens[1:]
    moves: list[str] = []
    if "moves" in tokens:
        cut = tokens.index("moves")
        tokens, moves = tokens[:cut], tokens[cut + 1 :]
    if tokens == ["startpos"]:
        sfen = shogi.STARTING_SFEN
    else:
        if tokens and tokens[0] == "sfen":
            tokens = tokens[1:]
        if len(tokens) == 3:
            tokens.append("1")
        if len(tokens) != 4:
            raise ValueError(f"bad opening line: {line.strip()!r}")
        sfen = " ".join(tokens)
    Referee(sfen, moves, max_moves=10**9)  # raises ValueError if illegal
    return Opening(sfen, tuple(moves))


def load_openings(path: str) -> list[Opening]:
    """The openings of a file, one per line; ValueError names the file (and the line) that
    is missing, not text, empty, or holds something else than openings."""
    openings = []
    for number, line in enumerate(read_text_lines(path, "openings"), 1):
        try:
            opening = parse_opening_line(line)
        except ValueError as exc:
            raise ValueError(f"{path}: line {number}: {str(exc)[:200]}") from None
        if opening is not None:
            openings.append(opening)
    if not openings:
        raise ValueError(f"{path}: no openings in the file")
    return openings


PIECE_VALUES = {
    shogi.PAWN: 1,
    shogi.LANCE: 3,
    shogi.KNIGHT: 4,
    shogi.SILVER: 5,
    shogi.GOLD: 6,
    shogi.BISHOP: 8,
    shogi.ROOK: 10,
    shogi.KING: 0,
    shogi.PROM_PAWN: 6,
    shogi.PROM_LANCE: 6,
    shogi.PROM_KNIGHT: 6,
    shogi.PROM_SILVER: 6,
    shogi.PROM_BISHOP: 10,
    shogi.PROM_ROOK: 12,
}


def material_balance(board: shogi.Board) -> int:
    """Material of black minus white (pawn units, pieces in hand included)."""
    total = 0
    for square in shogi.SQUARES:
        piece = board.piece_at(square)
        if piece is not None:
            total += PIECE_VALUES[piece.piece_type] * (1 if piece.color == BLACK else -1)
    for color, sign in ((BLACK, 1), (WHITE, -1)):
        for piece_type, count in board.pieces_in_hand[color].items():
            total += sign * count * PIECE_VALUES[piece_type]
    return total


def random_opening(plies: int, rng: random.Random, max_imbalance: int = 2, tries: int = 10000) -> Opening:
    """``plies`` random legal moves from the start; rejects unbalanced or decided positions."""
    for _ in range(tries):
        board = shogi.Board()
        moves = []
        for _ in range(plies):
            legal = list(board.legal_moves)
            if not legal:
                break
            move = rng.choice(legal)
            board.push(move)
            moves.append(move.usi())
        if (
            len(moves) == plies
            and not board.is_check()
            and not board.is_game_over()
            and abs(material_balance(board)) <= max_imbalance
        ):
            return Opening(shogi.STARTING_SFEN, tuple(moves))
    raise RuntimeError(f"no balanced random opening of {plies} plies found")


def random_openings(count: int, plies: int, seed: Optional[int]) -> list[Opening]:
    """``count`` distinct (when possible) random balanced openings."""
    rng = random.Random(seed)
    found: list[Opening] = []
    for _ in range(count):
        opening = random_opening(plies, rng)
        for _ in range(20):
            if opening not in found:
                break
            opening = random_opening(plies, rng)
        found.append(opening)
    return found


def unique_names(names: Iterable[str]) -> list[str]:
    """Make engine names unique by appending ``-2``, ``-3``..."""
    seen: Counter = Counter()
    out = []
    for name in names:
        seen[name] += 1
        out.append(name if seen[name] == 1 else f"{name}-{seen[name]}")
    return out
