"""Game records: the data of a played game and its CSA / KIF text.

Both formats keep the engines' last reported score and PV of each move as comments
(CSA ``'**`` lines, KIF ``*`` lines) and read back with ``shogi.CSA.Parser`` and
``shogi.KIF.Parser``.  Opening moves are part of the record, marked as book moves.
``usi_engine.notation`` writes the text, as it does for ``usi_engine.record``; it imports
no numba, which the processes that play matches never load.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Optional

from ..notation import csa, kif
from .referee import BLACK, Outcome, Reason


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
def csa_ending(outcome: Outcome, turn: int) -> str:
    """The CSA ``%`` line for ``outcome`` (``turn``: side to move at the end)."""
    loser = None if outcome.winner is None else 1 - outcome.winner
    simple = {
        Reason.RESIGN: "%TORYO",
        Reason.CHECKMATE: "%TSUMI",
        Reason.SENNICHITE: "%SENNICHITE",
        Reason.PERPETUAL_CHECK: "%OUTE_SENNICHITE",
        Reason.ENTERING_KING: "%KACHI",
        Reason.MAX_MOVES: "%MAX_MOVES",
    }
    if outcome.reason in simple:
        return simple[outcome.reason]
    if outcome.reason in (Reason.ILLEGAL_MOVE, Reason.FALSE_DECLARATION) and loser == turn:
        return "%ILLEGAL_MOVE"
    if outcome.reason == Reason.TIME_LOSS and loser == turn:
        return "%TIME_UP"
    return "%+ILLEGAL_ACTION" if loser == BLACK else "%-ILLEGAL_ACTION"


def _end_turn(game: GameRecord) -> int:
    """The side to move after the last move."""
    return int(game.start_sfen.split()[1] == "w") ^ (len(game.moves) & 1)


def _outcome_comment(outcome: Outcome) -> str:
    return f"{outcome.reason.value}{': ' + outcome.detail if outcome.detail else ''}"


def to_csa(game: GameRecord) -> str:
    """The CSA V2.2 text of ``game``."""
    head = [f"$EVENT:{game.event}", f"$START_TIME:{_time_str(game.started)}"]
    if game.ended:
        head.append(f"$END_TIME:{_time_str(game.ended)}")
    if game.outcome is not None:
        ending = csa_ending(game.outcome, _end_turn(game))
        footer = [f"'result {game.outcome.result_str} ({_outcome_comment(game.outcome)})"]
    else:
        ending, footer = "%CHUDAN", []
    return csa(
        game.start_sfen,
        [m.usi for m in game.moves],
        names=(game.black, game.white),
        head=head,
        comments=[["* " + c] if (c := m.comment()) else [] for m in game.moves],
        times_ms=[m.elapsed_ms for m in game.moves],
        ending=ending,
        footer=footer,
    )


# -- KIF ----------------------------------------------------------------------
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


def to_kif(game: GameRecord) -> str:
    """The KIF text of ``game``."""
    head = ["# ---- usi_engine match ----", f"開始日時：{_time_str(game.started)}"]
    if game.ended:
        head.append(f"終了日時：{_time_str(game.ended)}")
    head.append(f"棋戦：{game.event}")
    if game.outcome is not None:
        ending = kif_ending(game.outcome, _end_turn(game))
        footer = [kif_result(game.outcome, len(game.moves)), f"*{_outcome_comment(game.outcome)}"]
    else:
        ending, footer = "中断", []
    return kif(
        game.start_sfen,
        [m.usi for m in game.moves],
        names=(game.black, game.white),
        head=head,
        comments=[[c] if (c := m.comment()) else [] for m in game.moves],
        times_ms=[m.elapsed_ms for m in game.moves],
        ending=ending,
        footer=footer,
    )
