"""The typed Python face of a position: SFEN and USI move text in and out, validation,
and game-state queries.  It owns one set of numba arrays and checks everything before the
numba side (which trusts its input) sees it.

>>> pos = Position()
>>> pos.push("7g7f")
>>> pos.sfen()
'lnsgkgsnl/1r5b1/ppppppppp/9/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL w - 2'
>>> pos.piece_at("7f"), pos.turn, len(pos.legal_moves())
(Piece(piece_type=1, color=0), 1, 30)
>>> pos.pop()
Move('7g7f')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .core import board as cb
from .core.movegen import generate, GEN_ALL, is_legal
from .core.types import (
    BLACK,
    PAWN,
    BISHOP,
    ROOK,
    KING,
    DROP_BASE,
    MAX_MOVES,
    MAX_HISTORY,
    MAX_PLY,
    PIECE_LETTERS,
    base_type,
    square_name,
    parse_square,
    color_of,
    type_of,
    make_move,
    make_drop,
    move_from,
    move_to,
    is_promotion,
)
from .move import Move, trusted_move
from .piece import Piece
from .sfen import START_SFEN, hand_of, parse_sfen, piece_on, sfen_text

if TYPE_CHECKING:
    from .notation import RecordError

# the move and piece accessors of core/types.py as plain Python (py_func: their bodies, which
# call no other jitted function): the one definition of the bit layout, without a numba
# dispatch, or a compilation, per call on the Python side
_move_to, _move_from, _is_promotion = move_to.py_func, move_from.py_func, is_promotion.py_func
_make_move, _make_drop = make_move.py_func, make_drop.py_func
_color_of, _type_of, _base_type = color_of.py_func, type_of.py_func, base_type.py_func


def move_to_usi(m: int) -> str:
    """USI text of an encoded move: '7g7f', '8h2b+', 'P*5e'."""
    to = _move_to(m)
    frm = _move_from(m)
    if frm >= DROP_BASE:
        return f"{PIECE_LETTERS[frm - DROP_BASE]}*{square_name(to)}"
    return f"{square_name(frm)}{square_name(to)}{'+' if _is_promotion(m) else ''}"


def _is_file(text: str) -> bool:
    if "\n" in text or len(text) > 4096:
        return False
    try:
        return Path(text).is_file()
    except (OSError, ValueError):
        return False


class Position:
    """A shogi position with its game history (for sennichite).

    Raises ValueError with a message that says what is wrong on bad SFEN or bad moves;
    a failed call leaves the position as it was.
    """

    START_SFEN = START_SFEN

    def __init__(self, sfen: str | None = None) -> None:
        self.arrays = cb.new_position()
        self._buf = np.empty(MAX_MOVES, np.int32)
        self._set_sfen(START_SFEN if sfen is None or sfen == "startpos" else sfen)

    # --- construction ---------------------------------------------------------------
    def _set_sfen(self, sfen: str) -> None:
        board, hands, side, movenum = parse_sfen(sfen)
        a = cb.new_position()
        a.board[:] = board
        a.hands[:] = hands
        a.st[cb.ST_SIDE] = side
        a.st[cb.ST_MOVENUM] = movenum
        cb.refresh(a)
        them = 1 - a.st[cb.ST_SIDE]
        if a.st[cb.ST_KING + them] >= 0:
            a.st[cb.ST_SIDE] = them
            if cb.in_check_now(a):
                raise ValueError("the side not to move is in check")
            a.st[cb.ST_SIDE] = 1 - them
        self.arrays = a

    @classmethod
    def from_usi(cls, text: str) -> "Position":
        """Build from the arguments of a USI `position` command:
        'startpos [moves ...]' or 'sfen <board> <side> <hands> [<n>] [moves ...]'."""
        tokens = text.split()
        if not tokens:
            raise ValueError("position needs 'startpos' or 'sfen ...'")
        if "moves" in tokens:
            i = tokens.index("moves")
            head, moves = tokens[:i], tokens[i + 1 :]
        else:
            head, moves = tokens, []
        if head == ["startpos"]:
            pos = cls()
        elif head and head[0] == "sfen":
            pos = cls(" ".join(head[1:]))
        else:
            raise ValueError(f"position needs 'startpos' or 'sfen ...', got {' '.join(head)[:40]!r}")
        for k, mv in enumerate(moves):
            try:
                pos.push(mv)
            except ValueError as e:
                raise ValueError(f"move {k + 1} ({mv[:16]!r}): {e}") from None
        return pos

    def copy(self) -> "Position":
        other = Position.__new__(Position)
        other.arrays = cb.new_position()
        cb.copy_into(other.arrays, self.arrays)
        other._buf = np.empty(MAX_MOVES, np.int32)
        return other

    # --- text -------------------------------------------------------------------------
    def sfen(self) -> str:
        a = self.arrays
        return sfen_text(a.board, a.hands, self.side_to_move(), self.game_ply() + 1)

    def parse_move(self, usi: Move | str) -> int:
        """Encoded legal move for USI text; ValueError if unparseable or illegal."""
        if not isinstance(usi, str):
            raise TypeError(f"a move is USI text or a Move, got {type(usi).__name__}")
        text = usi.strip()
        a = self.arrays
        us = self.side_to_move()
        if len(text) == 4 and text[1] == "*":
            letter = text[0].upper()
            if letter not in "PLNSBRG" or text[0] != letter:
                raise ValueError(f"bad drop piece in {text!r} (use upper-case PLNSBRG)")
            pt = PIECE_LETTERS.index(letter)
            to = parse_square(text[2:])
            m = _make_drop(pt, to, us)
        elif len(text) in (4, 5) and (len(text) == 4 or text[4] == "+"):
            frm, to = parse_square(text[:2]), parse_square(text[2:4])
            p = int(a.board[frm])
            if not p or _color_of(p) != us:
                raise ValueError(f"no piece of the side to move on {text[:2]}")
            m = _make_move(frm, to, p, int(len(text) == 5))
        else:
            raise ValueError(f"unparseable move {text[:16]!r}")
        if not is_legal(a, int(m)):
            raise ValueError(f"illegal move {text!r} in {self.sfen()}")
        return m

    # --- moves --------------------------------------------------------------------------
    def push(self, move: Move | str) -> None:
        """Play a move given as a Move or USI text; ValueError if illegal."""
        m = self.parse_move(move)
        if self.arrays.st[cb.ST_PLY] >= MAX_HISTORY - MAX_PLY - 2:
            raise ValueError("game too long for the history buffer")
        cb.do_move(self.arrays, int(m))

    def push_usi(self, usi_move: str) -> None:
        """python-shogi's name for push."""
        self.push(usi_move)

    def pop(self) -> Move:
        """Take back the last move and return it."""
        if self.arrays.st[cb.ST_PLY] == 0:
            raise ValueError("no move to take back")
        m = int(self.arrays.moves[self.arrays.st[cb.ST_PLY] - 1])
        cb.undo_move(self.arrays)
        return trusted_move(move_to_usi(m))

    def peek(self) -> Move | None:
        """The last move played, None at the root."""
        n = self.ply()
        return trusted_move(move_to_usi(int(self.arrays.moves[n - 1]))) if n else None

    def legal_moves(self) -> list[Move]:
        """All legal moves, including the unusual non-promotions."""
        n = generate(self.arrays, self._buf, GEN_ALL, True)
        return [trusted_move(move_to_usi(int(m))) for m in self._buf[:n]]

    def is_legal(self, move: Move | str) -> bool:
        try:
            self.parse_move(move)
        except ValueError:
            return False
        return True

    def move_stack(self) -> list[Move]:
        """Moves played since the root SFEN, oldest first."""
        return [trusted_move(move_to_usi(int(m))) for m in self.arrays.moves[: self.arrays.st[cb.ST_PLY]]]

    # --- board -------------------------------------------------------------------------
    def piece_at(self, square: int | str) -> Piece | None:
        """The piece on a square (index ``(file-1)*9 + rank-1`` or a name such as '7g')."""
        return piece_on(self.arrays.board, square)

    def hand(self, color: int) -> dict[str, int]:
        """Pieces in hand of a side (0 black, 1 white) by letter, e.g. {'P': 2, 'B': 1}."""
        return hand_of(self.arrays.hands, color)

    @property
    def turn(self) -> int:
        """Side to move: 0 black (sente), 1 white (gote)."""
        return self.side_to_move()

    # --- state -------------------------------------------------------------------------
    def side_to_move(self) -> int:
        return int(self.arrays.st[cb.ST_SIDE])

    def ply(self) -> int:
        """Moves played since the root SFEN."""
        return int(self.arrays.st[cb.ST_PLY])

    def game_ply(self) -> int:
        """Plies played in the game: the root SFEN's move number - 1, plus moves since."""
        return int(self.arrays.st[cb.ST_MOVENUM] - 1 + self.arrays.st[cb.ST_PLY])

    def key(self) -> int:
        return int(self.arrays.keys[self.arrays.st[cb.ST_PLY]])

    def is_check(self) -> bool:
        return bool(self.arrays.checks[self.arrays.st[cb.ST_PLY]])

    def is_checkmate(self) -> bool:
        return self.is_check() and generate(self.arrays, self._buf, GEN_ALL, False) == 0

    def is_game_over_by_no_moves(self) -> bool:
        return generate(self.arrays, self._buf, GEN_ALL, False) == 0

    def is_sennichite(self) -> bool:
        """Has the current position occurred for the fourth time (a draw, or a loss for the
        side that checked on every move of the cycle: see ``repetition``)?"""
        return self.repetition() != "none"

    def is_game_over(self) -> bool:
        """No legal move (checkmate; there is no stalemate in shogi), or sennichite."""
        return self.is_game_over_by_no_moves() or self.is_sennichite()

    def repetition(self) -> str:
        """Game-rule sennichite status: 'none', 'draw', 'win' (the opponent checked on every
        move of the cycle and loses), or 'lose' (the side to move did)."""
        state = cb.repetition_state(self.arrays, MAX_HISTORY, 3)
        return {cb.REP_DRAW: "draw", cb.REP_WIN: "win", cb.REP_LOSE: "lose"}.get(int(state), "none")

    def declaration_points(self) -> tuple[int, int, bool]:
        """(points, pieces in the enemy camp besides the king, king in camp) for the side
        to move, as the entering-king rules count them (big pieces 5 points, others 1)."""
        a = self.arrays
        us = self.side_to_move()
        points = pieces = 0
        king_in = False
        for sq in range(81):
            p = int(a.board[sq])
            if not p or _color_of(p) != us:
                continue
            rel = sq % 9 if us == BLACK else 8 - sq % 9
            if rel > 2:
                continue
            t = _type_of(p)
            if t == KING:
                king_in = True
                continue
            pieces += 1
            points += 5 if _base_type(t) in (BISHOP, ROOK) else 1
        for t in range(PAWN, KING):
            points += int(a.hands[us, t]) * (5 if t in (BISHOP, ROOK) else 1)
        return points, pieces, king_in

    def can_declare(self, rule: str) -> bool:
        """Is an entering-king declaration ('bestmove win') valid for the side to move?
        rule: 'none', 'CSA27' (28 points for black, 27 for white) or 'CSA24' (31 points)."""
        if rule.lower() == "none" or self.is_check():
            return False
        points, pieces, king_in = self.declaration_points()
        if rule.upper() == "CSA27":
            need = 28 if self.side_to_move() == BLACK else 27
        elif rule.upper() == "CSA24":
            need = 31
        else:
            raise ValueError(f"unknown entering-king rule {rule!r} (none, CSA24, CSA27)")
        return king_in and pieces >= 10 and points >= need

    def evaluate(self, network=None, fv_scale: int = 16) -> int:
        """Static evaluation for the side to move: the hand-made one, or with `network`
        (a usi_engine.nnue.Network, or core.network.NetArrays which carry their own FV_SCALE)
        its output / fv_scale, as YaneuraOu's `e` prints it."""
        from .core.evaluate import evaluate
        from .core.network import network_arrays, NetArrays

        arrays = self.arrays
        if network is not None:
            if not isinstance(network, NetArrays):
                network = network_arrays(network, fv_scale)
            arrays = cb.new_position(network)
            cb.copy_into(arrays, self.arrays)
        return int(evaluate(arrays))

    # --- records (usi_engine.notation reads and writes them) -----------------------------
    @classmethod
    def from_record(cls, source: str | Path, fmt: str | None = None) -> "Position":
        """The final position of a game record: a file path, or KIF/KI2/CSA/USI text.
        ValueError naming the line if any line of it cannot be read."""
        from .notation import read_file, read_into

        text = source
        if isinstance(source, Path) or _is_file(source):
            text, fmt = read_file(source, fmt)
        rec = Record()
        read_into(rec, text, fmt, Position)
        if rec.errors:
            raise ValueError(str(rec.errors[0]))
        return rec.position()

    @classmethod
    def from_kif(cls, text: str) -> "Position":
        return cls.from_record(text, "kif")

    @classmethod
    def from_csa(cls, text: str) -> "Position":
        return cls.from_record(text, "csa")

    def record(self) -> "Record":
        """This game (root SFEN and moves) as a ``Record`` (``usi_engine.record.Record``)."""
        return Record(start_sfen=self._root().sfen(), moves=self.move_stack(), move_lines=[], format="usi")

    def _root(self) -> "Position":
        """A copy of the position before the first move played."""
        root = self.copy()
        while root.ply():
            root.pop()
        return root

    def kif(self) -> str:
        """The game so far as KIF text."""
        from .notation import kif

        return kif(self._root().sfen(), self.move_stack())

    def csa(self) -> str:
        """The game so far as CSA text."""
        from .notation import csa

        return csa(self._root().sfen(), self.move_stack())

    def __repr__(self) -> str:
        return f"Position({self.sfen()!r})"

    def _repr_svg_(self) -> str:
        """The board as SVG, with the last move and a check marked: how Jupyter shows a
        Position (``usi_engine.svg.board`` draws it, with more options)."""
        from .svg import board, checked_king

        return board(self, lastmove=self.peek(), check=checked_king(self))


def exercise_methods() -> None:
    """Call each Position method the engine's front end uses once, so that numba has loaded
    (or compiled) them before the first clock runs (server/backend.py; precompile.py does
    it too, to have them in the cache before the engine comes to them)."""
    pos = Position()
    for rule in ("none", "CSA24", "CSA27"):
        pos.can_declare(rule)
    work = pos.copy()
    work.push(work.legal_moves()[0])
    work.is_check()
    work.side_to_move()
    work.game_ply()
    work.sfen()
    Position.from_usi("startpos moves 7g7f")


@dataclass
class Record:
    """A game: the start position, the moves read (all legal), and what went wrong.

    ``move_lines[i]`` is the line number of ``moves[i]`` in the source; ``result`` is the
    CSA name of how the game ended (``%TORYO``, ``%SENNICHITE``, ...) when the record says.
    ``usi_engine.record`` reads and writes records; the class lives here, beside
    ``Position``, because each of the two makes the other (``Position.record()``,
    ``Record.position()``).
    """

    start_sfen: str = START_SFEN
    moves: list[Move] = field(default_factory=list)
    move_lines: list[int] = field(default_factory=list)
    names: list[str | None] = field(default_factory=lambda: [None, None])
    result: str | None = None
    errors: list[RecordError] = field(default_factory=list)
    format: str = "usi"

    def position(self, ply: int | None = None) -> Position:
        """The position after ``ply`` moves (all of them by default), with its history."""
        pos = Position(self.start_sfen)
        for m in self.moves[: len(self.moves) if ply is None else ply]:
            pos.push(m)
        return pos

    def positions(self) -> list[Position]:
        """Every position of the game: before move 1, ..., after the last move."""
        pos = Position(self.start_sfen)
        out = [pos.copy()]
        for m in self.moves:
            pos.push(m)
            out.append(pos.copy())
        return out

    def usi(self) -> str:
        """The game as the arguments of a USI ``position`` command."""
        head = "startpos" if self.start_sfen == START_SFEN else f"sfen {self.start_sfen}"
        return head + (" moves " + " ".join(self.moves) if self.moves else "")
