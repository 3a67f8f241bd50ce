"""Game referee: the rules of shogi and the ways a game can end, on python-shogi.

The referee owns the position of one game.  Each engine answer (a move, ``resign``,
``win``) or engine failure (time loss, crash, timeout) is handed to it, and it says
whether the game is over and how:

* an illegal move loses (python-shogi's legal move generator is the oracle; this
  covers moving into check, uchifuzume, nifu, dead pieces);
* no legal reply (checkmate; stalemate also loses in shogi) wins for the mover;
* sennichite -- the same position (board, hands, side to move) for the fourth time --
  is a draw, unless one side checked on every one of its moves since the first of
  those four occurrences: that side loses (perpetual check);
* ``bestmove win`` is judged by the CSA 27-point entering-king rule;
* the game is a draw once ``max_moves`` plies have been played (floodgate: 256).
"""

from __future__ import annotations

import enum
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Optional

import shogi

BLACK: int = shogi.BLACK
WHITE: int = shogi.WHITE

BIG_PIECES = frozenset({shogi.BISHOP, shogi.ROOK, shogi.PROM_BISHOP, shogi.PROM_ROOK})


class Reason(str, enum.Enum):
    """Why a game ended."""

    CHECKMATE = "checkmate"
    RESIGN = "resign"
    ILLEGAL_MOVE = "illegal move"
    SENNICHITE = "sennichite"
    PERPETUAL_CHECK = "perpetual check"
    ENTERING_KING = "entering king declaration"
    FALSE_DECLARATION = "false win declaration"
    MAX_MOVES = "max moves"
    TIME_LOSS = "time loss"
    CRASH = "crash"
    TIMEOUT = "timeout"
    # an engine that failed before it had ever said `readyok` in this match: its command or
    # its options are wrong (a missing network file, a bad path), and no game can count
    NOT_STARTED = "engine never started"


# The detail of a resignation that no search preceded: an engine that could not search (a
# missing module, a network it could not load) may still answer every `go` with `bestmove
# resign`, and a match of such games ends in seconds with a plausible score.
RESIGNED_UNSEARCHED = "without a search (no info line gave a score or a depth)"


@dataclass(frozen=True)
class Outcome:
    """The end of a game: ``winner`` is ``BLACK``, ``WHITE`` or ``None`` (draw)."""

    winner: Optional[int]
    reason: Reason
    detail: str = ""

    @property
    def is_draw(self) -> bool:
        return self.winner is None

    @property
    def result_str(self) -> str:
        """PGN-like result from black's side: ``1-0``, ``0-1`` or ``1/2-1/2``."""
        return {BLACK: "1-0", WHITE: "0-1", None: "1/2-1/2"}[self.winner]


def position_key(board: shogi.Board) -> str:
    """The SFEN of ``board`` without its move number: board, side to move, hands."""
    return " ".join(board.sfen().split()[:3])


def in_enemy_camp(square: int, color: int) -> bool:
    """True if ``square`` lies in the three ranks nearest to ``color``'s opponent."""
    rank = shogi.rank_index(square)
    return rank <= 2 if color == BLACK else rank >= 6


def declaration_points(board: shogi.Board, color: int) -> tuple[int, int]:
    """(pieces in enemy camp besides the king, points) of ``color`` for the 27-point rule.

    Points count the pieces in the enemy camp (king excluded) and in hand; bishops and
    rooks (promoted or not) are worth 5, all other pieces 1.
    """
    in_camp = 0
    points = 0
    for square in shogi.SQUARES:
        piece = board.piece_at(square)
        if piece is None or piece.color != color or piece.piece_type == shogi.KING:
            continue
        if in_enemy_camp(square, color):
            in_camp += 1
            points += 5 if piece.piece_type in BIG_PIECES else 1
    for piece_type, count in board.pieces_in_hand[color].items():
        points += count * (5 if piece_type in BIG_PIECES else 1)
    return in_camp, points


def check_declaration(board: shogi.Board) -> tuple[bool, str]:
    """Judge a ``bestmove win`` by the side to move under the CSA 27-point rule.

    Returns (valid, explanation).
    """
    color = board.turn
    king = board.king_squares[color]
    if king is None or not in_enemy_camp(king, color):
        return False, "king not in the enemy camp"
    if board.is_check():
        return False, "king in check"
    in_camp, points = declaration_points(board, color)
    if in_camp < 10:
        return False, f"only {in_camp} pieces in the enemy camp (need 10)"
    needed = 28 if color == BLACK else 27
    if points < needed:
        return False, f"{points} points (need {needed})"
    return True, f"{in_camp} pieces in camp, {points} points"


class Referee:
    """Plays out one game from an initial SFEN (plus opening moves) and adjudicates it."""

    def __init__(
        self, sfen: str = shogi.STARTING_SFEN, moves: Iterable[str] = (), max_moves: int = 256
    ) -> None:
        self.start_sfen = sfen
        self.board = shogi.Board(sfen)
        self.max_moves = max_moves
        self.moves: list[str] = []
        self._keys: list[str] = [position_key(self.board)]
        self._gave_check: list[bool] = [False]
        self._seen: dict[str, list[int]] = defaultdict(list)
        self._seen[self._keys[0]].append(0)
        for usi in moves:
            if not self.is_legal(usi):
                raise ValueError(f"illegal opening move {usi!r} in {sfen!r}")
            self._push(usi)

    @property
    def turn(self) -> int:
        """Side to move: ``BLACK`` (sente) or ``WHITE`` (gote)."""
        return self.board.turn

    @property
    def ply(self) -> int:
        """Plies played from the initial SFEN (opening moves included)."""
        return len(self.moves)

    def position_command(self, then: Iterable[str] = ()) -> str:
        """The USI ``position`` command for the current position (followed by the
        moves ``then``, e.g. a ponder move)."""
        if self.start_sfen == shogi.STARTING_SFEN:
            head = "position startpos"
        else:
            head = f"position sfen {self.start_sfen}"
        moves = self.moves + list(then)
        return f"{head} moves {' '.join(moves)}" if moves else head

    def is_legal(self, usi: str) -> bool:
        """True if ``usi`` is a well-formed legal move in the current position."""
        try:
            move = shogi.Move.from_usi(usi)
        except (ValueError, KeyError, IndexError):
            return False
        return bool(move) and move in set(self.board.generate_legal_moves())

    def _push(self, usi: str) -> None:
        move = shogi.Move.from_usi(usi)
        self.board.push(move)
        self.moves.append(move.usi())
        key = position_key(self.board)
        self._keys.append(key)
        self._gave_check.append(self.board.is_check())
        self._seen[key].append(len(self._keys) - 1)

    def play(self, usi: str) -> Optional[Outcome]:
        """Apply the mover's ``usi`` move; return the outcome if the game ends."""
        mover = self.turn
        if not self.is_legal(usi):
            return Outcome(1 - mover, Reason.ILLEGAL_MOVE, f"illegal move {usi!r}")
        self._push(usi)
        return self._after_move(mover)

    def _after_move(self, mover: int) -> Optional[Outcome]:
        if not any(True for _ in self.board.generate_legal_moves()):
            return Outcome(mover, Reason.CHECKMATE, "no legal reply")
        repetition = self._repetition_outcome()
        if repetition is not None:
            return repetition
        if self.ply >= self.max_moves:
            return Outcome(None, Reason.MAX_MOVES, f"{self.ply} plies")
        return None

    def _repetition_outcome(self) -> Optional[Outcome]:
        """Sennichite on the fourth occurrence; the perpetual checker loses."""
        now = len(self._keys) - 1
        seen = self._seen[self._keys[now]]
        if len(seen) < 4:
            return None
        first = seen[-4]
        mover = 1 - self.turn
        if self._all_checks(first, now):
            return Outcome(1 - mover, Reason.PERPETUAL_CHECK, "perpetual check by the mover")
        if self._all_checks(first, now - 1):
            return Outcome(mover, Reason.PERPETUAL_CHECK, "perpetual check by the opponent")
        return Outcome(None, Reason.SENNICHITE, "fourfold repetition")

    def _all_checks(self, first: int, last: int) -> bool:
        """True if the moves at positions last, last-2, ... (> first) all gave check."""
        indices = range(last, first, -2)
        return len(indices) > 0 and all(self._gave_check[i] for i in indices)

    def declare_win(self) -> Outcome:
        """Judge ``bestmove win`` of the side to move (a false declaration loses)."""
        mover = self.turn
        valid, why = check_declaration(self.board)
        if valid:
            return Outcome(mover, Reason.ENTERING_KING, why)
        return Outcome(1 - mover, Reason.FALSE_DECLARATION, why)

    def resign(self, detail: str = "") -> Outcome:
        """The side to move resigns."""
        return Outcome(1 - self.turn, Reason.RESIGN, detail)

    def forfeit(self, reason: Reason, detail: str = "", loser: Optional[int] = None) -> Outcome:
        """``loser`` (default: the side to move) loses by time, crash or timeout."""
        loser = self.turn if loser is None else loser
        return Outcome(1 - loser, reason, detail)
