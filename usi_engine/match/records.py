"""Game records: the data of a played game and its CSA / KIF text.

Both formats keep the engines' last reported score and PV of each move as comments
(CSA ``'**`` lines, KIF ``*`` lines) and read back with ``shogi.CSA.Parser`` and
``shogi.KIF.Parser``.  Opening moves are part of the record, marked as book moves.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Optional

import shogi
import shogi.CSA

from .referee import BLACK, Outcome, Reason

CSA_PIECES = shogi.CSA.PIECE_SYMBOLS
KIF_PIECES = ["", "歩", "香", "桂", "銀", "金", "角", "飛", "玉", "と", "成香", "成桂", "成銀", "馬", "龍"]
KIF_FILES = "０１２３４５６７８９"
KIF_RANKS = "〇一二三四五六七八九"


@dataclass
class MoveRecord:
    """One ply: the move, thinking time and the engine's last reported info."""

    usi: str
    elapsed_ms: float = 0.0
    score: Optional[str] = None
    pv: list[str] = field(default_factory=list)
    depth: Optional[int] = None
    book: bool = False

    def comment(self) -> str:
        """Human text for the score/PV comment ('' if nothing was reported)."""
        if self.book:
            return "book"
        parts = []
        if self.score:
            parts.append(f"score {self.score}")
        if self.depth is not None:
            parts.append(f"depth {self.depth}")
        if self.pv:
            parts.append("pv " + " ".join(self.pv))
        return " ".join(parts)


@dataclass
class GameRecord:
    """A finished (or aborted, ``outcome is None``) game."""

    index: int
    black: str
    white: str
    start_sfen: str
    moves: list[MoveRecord] = field(default_factory=list)
    outcome: Optional[Outcome] = None
    started: dt.datetime = field(default_factory=dt.datetime.now)
    ended: Optional[dt.datetime] = None
    event: str = "usi_engine match"
    black_engine: int = 0
    white_engine: int = 1
    opening: int = 0
    pair: int = 0  # games of one pair: same opening, colours swapped


def _time_str(when: Optional[dt.datetime]) -> str:
    return (when or dt.datetime.now()).strftime("%Y/%m/%d %H:%M:%S")


# -- CSA ----------------------------------------------------------------------
def csa_square(square: int) -> str:
    return shogi.CSA.SQUARE_NAMES[square]


def csa_move(board: shogi.Board, usi: str) -> str:
    """``+7776FU`` style move of the side to move of ``board``."""
    move = shogi.Move.from_usi(usi)
    color = "+" if board.turn == BLACK else "-"
    if move.drop_piece_type:
        return f"{color}00{csa_square(move.to_square)}{CSA_PIECES[move.drop_piece_type]}"
    piece_type = board.piece_type_at(move.from_square)
    if move.promotion:
        piece_type = shogi.PIECE_PROMOTED[piece_type]
    return f"{color}{csa_square(move.from_square)}{csa_square(move.to_square)}{CSA_PIECES[piece_type]}"


def csa_position(board: shogi.Board) -> list[str]:
    """The CSA initial position lines (``PI`` for the standard start)."""
    if board.sfen() == shogi.STARTING_SFEN:
        return ["PI", "+"]
    lines = []
    for rank in range(9):
        row = "".join(_csa_cell(board.piece_at(rank * 9 + file)) for file in range(9))
        lines.append(f"P{rank + 1}{row}")
    for color, sign in ((shogi.BLACK, "+"), (shogi.WHITE, "-")):
        hand = "".join(f"00{CSA_PIECES[pt]}" * n for pt, n in sorted(board.pieces_in_hand[color].items()))
        if hand:
            lines.append(f"P{sign}{hand}")
    lines.append("+" if board.turn == BLACK else "-")
    return lines


def _csa_cell(piece: Optional[shogi.Piece]) -> str:
    if piece is None:
        return " * "
    return ("+" if piece.color == BLACK else "-") + CSA_PIECES[piece.piece_type]


def csa_ending(outcome: Outcome, turn: int) -> str:
    """The CSA ``%`` line for ``outcome`` (``turn``: side to move at the end)."""
    loser = None if outcome.winner is None else 1 - outcome.winner
    simple = {
        Reason.RESIGN: "%TORYO", Reason.CHECKMATE: "%TSUMI", Reason.SENNICHITE: "%SENNICHITE",
        Reason.PERPETUAL_CHECK: "%OUTE_SENNICHITE", Reason.ENTERING_KING: "%KACHI",
        Reason.MAX_MOVES: "%MAX_MOVES",
    }
    if outcome.reason in simple:
        return simple[outcome.reason]
    if outcome.reason in (Reason.ILLEGAL_MOVE, Reason.FALSE_DECLARATION) and loser == turn:
        return "%ILLEGAL_MOVE"
    if outcome.reason == Reason.TIME_LOSS and loser == turn:
        return "%TIME_UP"
    return "%+ILLEGAL_ACTION" if loser == BLACK else "%-ILLEGAL_ACTION"


def to_csa(game: GameRecord) -> str:
    """The CSA V2.2 text of ``game``."""
    board = shogi.Board(game.start_sfen)
    lines = ["V2.2", f"N+{game.black}", f"N-{game.white}", f"$EVENT:{game.event}",
             f"$START_TIME:{_time_str(game.started)}"]
    if game.ended:
        lines.append(f"$END_TIME:{_time_str(game.ended)}")
    lines += csa_position(board)
    for move in game.moves:
        lines.append(f"{csa_move(board, move.usi)},T{max(0, int(move.elapsed_ms // 1000))}")
        if move.comment():
            lines.append(f"'** {move.comment()}")
        board.push_usi(move.usi)
    if game.outcome is not None:
        lines.append(csa_ending(game.outcome, board.turn))
        lines.append(f"'result {game.outcome.result_str} ({game.outcome.reason.value}"
                     f"{': ' + game.outcome.detail if game.outcome.detail else ''})")
    else:
        lines.append("%CHUDAN")
    return "\n".join(lines) + "\n"


# -- KIF ----------------------------------------------------------------------
def kif_move(board: shogi.Board, usi: str, last_to: Optional[int]) -> str:
    """``７六歩(77)`` style move (``同　`` when recapturing on the last square)."""
    move = shogi.Move.from_usi(usi)
    to = move.to_square
    if to == last_to:
        dest = "同　"
    else:
        dest = KIF_FILES[9 - to % 9] + KIF_RANKS[to // 9 + 1]
    if move.drop_piece_type:
        return f"{dest}{KIF_PIECES[move.drop_piece_type]}打"
    piece = KIF_PIECES[board.piece_type_at(move.from_square)]
    frm = move.from_square
    return f"{dest}{piece}{'成' if move.promotion else ''}({9 - frm % 9}{frm // 9 + 1})"


def _clock(ms: float) -> str:
    seconds = max(0, int(ms // 1000))
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def kif_ending(outcome: Outcome, turn: int) -> str:
    """The KIF special move ending the game (from the side to move's view)."""
    if outcome.reason == Reason.RESIGN:
        return "投了"
    if outcome.reason == Reason.CHECKMATE:
        return "詰み"
    if outcome.reason == Reason.SENNICHITE:
        return "千日手"
    if outcome.reason == Reason.MAX_MOVES:
        return "持将棋"
    if outcome.reason == Reason.ENTERING_KING:
        return "入玉勝ち"
    if outcome.reason in (Reason.TIME_LOSS, Reason.TIMEOUT) and outcome.winner != turn:
        return "切れ負け"
    return "反則勝ち" if outcome.winner == turn else "反則負け"


def kif_result(outcome: Outcome, plies: int) -> str:
    """The closing ``まで...`` line."""
    if outcome.winner is None:
        what = "千日手" if outcome.reason == Reason.SENNICHITE else "持将棋"
        return f"まで{plies}手で{what}"
    return f"まで{plies}手で{'先手' if outcome.winner == BLACK else '後手'}の勝ち"


def kif_header(game: GameRecord, board: shogi.Board) -> list[str]:
    lines = ["# ---- usi_engine match ----", f"開始日時：{_time_str(game.started)}"]
    if game.ended:
        lines.append(f"終了日時：{_time_str(game.ended)}")
    lines.append(f"棋戦：{game.event}")
    if board.sfen() == shogi.STARTING_SFEN:
        lines.append("手合割：平手")
    else:
        lines += board.kif_str().split("\n")
        if board.turn != BLACK:
            lines.append("後手番")
    lines += [f"先手：{game.black}", f"後手：{game.white}", "手数----指手---------消費時間--"]
    return lines


def to_kif(game: GameRecord) -> str:
    """The KIF text of ``game``."""
    board = shogi.Board(game.start_sfen)
    lines = kif_header(game, board)
    last_to: Optional[int] = None
    totals = [0.0, 0.0]
    for number, move in enumerate(game.moves, start=1):
        totals[board.turn] += move.elapsed_ms
        text = kif_move(board, move.usi, last_to)
        per = max(0, int(move.elapsed_ms // 1000))
        lines.append(f"{number:4d} {text:<12}({per // 60:2d}:{per % 60:02d}/{_clock(totals[board.turn])})")
        if move.comment():
            lines.append(f"*{move.comment()}")
        last_to = shogi.Move.from_usi(move.usi).to_square
        board.push_usi(move.usi)
    plies = len(game.moves)
    if game.outcome is not None:
        lines.append(f"{plies + 1:4d} {kif_ending(game.outcome, board.turn)}")
        lines.append(kif_result(game.outcome, plies))
        lines.append(f"*{game.outcome.reason.value}{': ' + game.outcome.detail if game.outcome.detail else ''}")
    else:
        lines.append(f"{plies + 1:4d} 中断")
    return "\n".join(lines) + "\n"
