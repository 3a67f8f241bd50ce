"""Analyse a game: evaluate every position, then judge every move against the best one.

Scores are centipawns from black's (sente's) view, clipped at +-CLIP_CP (a mate counts as
the clip) so that a won or lost game does not pile up meaningless losses.  The loss of a
move is the drop of the mover's clipped score: best score before the move minus score after
it (0 when the move played is the engine's best move).  Classes, by loss (a pawn is about
90 in this engine's scale):

    inaccuracy  >= INACCURACY_CP (150: more than a pawn and a half)
    mistake     >= MISTAKE_CP    (400: about a silver or gold)
    blunder     >= BLUNDER_CP    (900: about a rook or bishop)
"""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass, field
from typing import Callable, Protocol

from ..api import Info, Limit, Score
from ..move import Move
from ..position import Position
from ..progress import progress_bar
from ..record import Record

CLIP_CP = 3000
INACCURACY_CP = 150
MISTAKE_CP = 400
BLUNDER_CP = 900
CLASSES = ("blunder", "mistake", "inaccuracy")


class Analyser(Protocol):
    """What analyses a position: ``usi_engine.Engine`` or ``usi_engine.usi.Client``."""

    def analyse(self, position: Position, limit: Limit, multipv: int | None = None) -> list[Info]: ...
    def close(self) -> None: ...


@dataclass
class PositionEval:
    """The engine's view of one position (``ply`` moves into the game)."""

    ply: int
    sfen: str
    turn: int
    score: Score | None = None  # side to move's view; None: not evaluated, or game over
    pv: list[Move] = field(default_factory=list)
    depth: int = 0
    nodes: int = 0
    checkmate: bool = False
    error: str | None = None

    @property
    def black_cp(self) -> int | None:
        """Clipped centipawns from black's view (a checkmated side to move: -+CLIP_CP)."""
        if self.checkmate:
            return -CLIP_CP if self.turn == 0 else CLIP_CP
        if self.score is None:
            return None
        cp = max(-CLIP_CP, min(CLIP_CP, self.score.to_cp()))
        return cp if self.turn == 0 else -cp

    @property
    def best(self) -> Move | None:
        return self.pv[0] if self.pv else None


@dataclass
class MoveAnalysis:
    """One move of the game judged: ``ply`` is its number (1 = the first move)."""

    ply: int
    move: Move
    side: int  # 0 black, 1 white
    line: int | None  # its line in the source record
    eval_before: int | None  # black's view, clipped
    eval_after: int | None
    best: Move | None  # the engine's move in the position before
    best_pv: list[Move]
    loss: int | None  # centipawns the mover lost against the best move
    label: str | None  # 'blunder', 'mistake', 'inaccuracy' or None


def classify(loss: int | None) -> str | None:
    if loss is None:
        return None
    if loss >= BLUNDER_CP:
        return "blunder"
    if loss >= MISTAKE_CP:
        return "mistake"
    if loss >= INACCURACY_CP:
        return "inaccuracy"
    return None


@dataclass
class GameAnalysis:
    record: Record
    engine: str
    limit: Limit
    positions: list[PositionEval]
    moves: list[MoveAnalysis]

    @property
    def errors(self) -> list[str]:
        """What could not be read or evaluated, with line numbers."""
        return [str(e) for e in self.record.errors] + [
            f"position after move {p.ply}: {p.error}" for p in self.positions if p.error
        ]

    def summary(self) -> dict[str, dict]:
        """Per player: moves judged, average loss, moves equal to the engine's, and the
        count of each class."""
        out = {}
        for side, key in ((0, "black"), (1, "white")):
            mine = [m for m in self.moves if m.side == side and m.loss is not None]
            losses = [m.loss for m in mine]
            out[key] = {
                "name": self.record.names[side],
                "moves": len(mine),
                "average_loss": round(sum(losses) / len(losses), 1) if losses else None,
                "best_move_agreement": round(sum(m.move == m.best for m in mine) / len(mine), 3)
                if mine
                else None,
                **{c: sum(m.label == c for m in mine) for c in CLASSES},
            }
        return out


def judge(record: Record, evals: list[PositionEval]) -> list[MoveAnalysis]:
    """The per-move verdicts from the evaluations of positions 0..n."""
    out = []
    for i, move in enumerate(record.moves):
        before, after = evals[i], evals[i + 1]
        side = before.turn
        sign = 1 if side == 0 else -1
        b, a = before.black_cp, after.black_cp
        loss = None
        if b is not None and a is not None:
            loss = 0 if move == before.best else max(0, sign * (b - a))
        out.append(
            MoveAnalysis(
                i + 1,
                move,
                side,
                record.move_lines[i] if i < len(record.move_lines) else None,
                b,
                a,
                before.best,
                list(before.pv),
                loss,
                classify(loss),
            )
        )
    return out


def evaluate_positions(
    positions: list[Position],
    limit: Limit,
    make_engine: Callable[[], Analyser],
    jobs: int = 1,
    progress: bool = False,
) -> list[PositionEval]:
    """Evaluate each position with ``jobs`` engines working in parallel (threads: the
    in-process search releases the GIL, a USI engine is a process of its own)."""
    evals = [PositionEval(ply=k, sfen=p.sfen(), turn=p.side_to_move()) for k, p in enumerate(positions)]
    todo: queue.Queue[int] = queue.Queue()
    for k, p in enumerate(positions):
        if p.is_game_over_by_no_moves():
            evals[k].checkmate = True
        else:
            todo.put(k)
    bar = progress_bar(todo.qsize(), progress, unit_scale=False, desc="analysing")
    failures: list[BaseException] = []

    def work() -> None:
        try:
            engine = make_engine()
        except BaseException as exc:  # reported after the others finished
            failures.append(exc)
            return
        try:
            while not failures:
                try:
                    k = todo.get_nowait()
                except queue.Empty:
                    return
                _evaluate_one(engine, positions[k], limit, evals[k])
                bar.update(1)
        finally:
            engine.close()

    threads = [threading.Thread(target=work, daemon=True) for _ in range(max(1, jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    bar.close()
    if failures:
        raise failures[0]
    return evals


def _evaluate_one(engine: Analyser, pos: Position, limit: Limit, out: PositionEval) -> None:
    try:
        infos = engine.analyse(pos, limit, 1)
    except Exception as exc:  # an engine error costs this position, not the game
        out.error = f"{type(exc).__name__}: {exc}"
        return
    if not infos:
        out.error = "the engine reported no score"
        return
    info = infos[0]
    out.score, out.pv, out.depth, out.nodes = info.score, list(info.pv), info.depth, info.nodes


def analyse_game(
    record: Record,
    limit: Limit,
    make_engine: Callable[[], Analyser],
    *,
    jobs: int = 1,
    progress: bool = False,
    engine_name: str | None = None,
) -> GameAnalysis:
    """Evaluate every position of ``record`` and judge every move.  The engine's name in
    the outputs is ``engine_name``, or what the engine calls itself (its ``name``)."""
    names: list[str] = []

    def make_and_name() -> Analyser:
        engine = make_engine()
        names.append(getattr(engine, "name", None) or "")
        return engine

    evals = evaluate_positions(record.positions(), limit, make_and_name, jobs, progress)
    name = engine_name or next((n for n in names if n), "engine")
    return GameAnalysis(record, name, limit, evals, judge(record, evals))
