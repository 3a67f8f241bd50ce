"""One self-play game that yields training positions.

The opening is made varied but balanced: a few plies chosen at random get a uniformly
random legal move, and every other ply of the opening picks at random among the MultiPV
lines within a margin of the best.  A game whose score is out of balance when the opening
ends is dropped.  From then on each side plays its best move, and every position that a
static evaluation can judge is kept: not in check, best move not a capture, no mate score.
The game ends by the rules (no legal move, sennichite and perpetual check, entering-king
declaration, the ply limit) or when the score passes the adjudication threshold, and its
result is written into every kept position from that position's side to move.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from ...core.types import BLACK, parse_square
from ...position import Position, START_SFEN
from . import psv
from .labeler import Game, Line


@dataclass(frozen=True)
class PlayConfig:
    """Everything that decides what a game looks like (part of a run's identity)."""

    random_moves: int = 2  # plies with a uniformly random move ...
    random_max_ply: int = 12  # ... chosen among the first this many plies
    multipv: int = 3  # opening: random among the best lines ...
    multipv_plies: int = 16  # ... up to this ply ...
    multipv_margin: int = 100  # ... within this many cp of the best
    opening_limit: int = 300  # drop the game if |score| exceeds this after the opening
    write_min_ply: int = 16  # keep positions from this game ply on (and after the opening)
    max_ply: int = 320  # a draw at this many plies
    eval_limit: int = 3000  # adjudicate a win when |score| reaches this
    declaration: str = "CSA27"  # entering-king rule for declarations

    def opening_plies(self) -> int:
        return max(self.random_max_ply, self.multipv_plies)


@dataclass
class GameOutcome:
    records: list[np.ndarray] = field(default_factory=list)
    reason: str = ""  # why the game ended
    result_black: int = psv.DRAW  # the result from black's view
    plies: int = 0
    skipped: Counter = field(default_factory=Counter)


def is_capture(pos: Position, move: str) -> bool:
    """Whether the USI move takes a piece in `pos` (a drop never does)."""
    return "*" not in move and pos.arrays.board[parse_square(move[2:4])] != 0


def _choose_opening_move(rng: random.Random, lines: list[Line], margin: int) -> Line:
    best = lines[0].value()
    near = [line for line in lines if line.mate is None and line.value() >= best - margin]
    return rng.choice(near) if near and lines[0].mate is None else lines[0]


def _rules_end(pos: Position, cfg: PlayConfig) -> tuple[str, int] | None:
    """(reason, result for the side to move) if the game is over before a search."""
    rep = pos.repetition()
    if rep == "draw":
        return "sennichite", psv.DRAW
    if rep in ("win", "lose"):
        return "perpetual check", psv.WIN if rep == "win" else psv.LOSS
    if pos.game_ply() >= cfg.max_ply:
        return "max plies", psv.DRAW
    if pos.can_declare(cfg.declaration):
        return "declaration", psv.WIN
    return None


def play_game(rng: random.Random, labeler, cfg: PlayConfig, start_sfen: str = START_SFEN) -> GameOutcome:
    """Play one game; `outcome.records` is empty when the opening was out of balance."""
    game = Game(start_sfen, [], Position(start_sfen))
    pos = game.pos
    labeler.new_game()
    out = GameOutcome()
    random_plies = set(rng.sample(range(cfg.random_max_ply), min(cfg.random_moves, cfg.random_max_ply)))
    kept: list[tuple[int, np.ndarray]] = []  # (side to move, record without result)
    checked_balance = False
    while True:
        end = _rules_end(pos, cfg)
        if end is not None:
            reason, result = end
            break
        ply = pos.game_ply()
        if ply in random_plies:
            moves = pos.legal_moves()
            if not moves:
                reason, result = "no legal move", psv.LOSS
                break
            _play(game, rng.choice(moves))
            continue
        opening = ply < cfg.multipv_plies
        lines = labeler.search(game, cfg.multipv if opening else 1, opening)
        if not lines:
            reason, result = "no legal move", psv.LOSS
            break
        best = lines[0]
        if best.mate is not None or abs(best.cp) >= cfg.eval_limit:
            reason = "mate score" if best.mate is not None else "eval limit"
            result = psv.WIN if best.value() > 0 else psv.LOSS
            break
        if not checked_balance and ply >= cfg.opening_plies():
            checked_balance = True
            if abs(best.cp) > cfg.opening_limit:
                out.reason = "unbalanced opening"
                out.plies = ply
                return out
        if opening:
            _play(game, _choose_opening_move(rng, lines, cfg.multipv_margin).move)
            continue
        if ply >= cfg.write_min_ply:
            skip = "in check" if pos.is_check() else "capture" if is_capture(pos, best.move) else None
            if skip:
                out.skipped[skip] += 1
            else:
                rec = psv.make_record(pos.sfen(), best.cp, best.move, ply + 1, psv.DRAW)
                kept.append((pos.side_to_move(), rec))
        _play(game, best.move)
    out.reason = reason
    out.plies = pos.game_ply()
    black_result = result if pos.side_to_move() == BLACK else -result
    out.result_black = black_result
    for side, rec in kept:
        rec["game_result"] = black_result if side == BLACK else -black_result
        out.records.append(rec)
    return out


def _play(game: Game, move: str) -> None:
    game.pos.push(move)
    game.moves.append(move)
