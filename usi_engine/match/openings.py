"""Balanced opening suites for matches: lines of real-looking play, each position judged
even by an engine.

Each opening starts from the initial position and plays ``plies`` moves, every one chosen
at random among the moves that the judge's MultiPV search rates within ``spread`` cp of
its best, so the lines look like play rather than random moves.  The final position is
searched deeper and kept only if its score lies within ``balance`` cp of zero and it is
new.  The judge may be this engine (:class:`OwnJudge`) or any USI engine
(:class:`UsiJudge`): a suite for headline matches is made by another engine, so that no
choice in it reflects our own evaluation.

Opening ``i`` draws its random choices from ``(seed, i, attempt)`` alone, and the judge's
table is cleared before every search: the same judge and seed give the same suite, and a
longer suite begins with the shorter one.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, Iterator, Protocol, Sequence

MAX_ATTEMPTS = 200  # openings in a row rejected as unbalanced: the settings are wrong


class Judge(Protocol):
    """Rates a position: its best lines' first moves and scores (cp, side to move's view)."""

    def lines(self, moves: Sequence[str], multipv: int, deep: bool) -> list[tuple[str, int]]:
        """The MultiPV lines after ``moves`` from the start position, best first; mate
        scores are left out.  ``deep``: the balance check's longer search."""
        ...


@dataclass(frozen=True)
class SuiteSettings:
    count: int = 300
    plies: int = 16
    multipv: int = 4
    spread: int = 60
    balance: int = 120
    seed: int = 1


@dataclass(frozen=True)
class Kept:
    """One opening of the suite and the judge's score of its final position."""

    index: int
    moves: tuple[str, ...]
    score: int
    attempts: int

    def line(self) -> str:
        return "startpos moves " + " ".join(self.moves)


def choose_line(judge: Judge, rng: random.Random, settings: SuiteSettings) -> list[str] | None:
    """One line of ``plies`` moves, each drawn among the judge's near-best moves."""
    moves: list[str] = []
    for _ in range(settings.plies):
        lines = judge.lines(moves, settings.multipv, deep=False)
        if not lines:
            return None
        best = lines[0][1]
        choices = sorted(move for move, cp in lines if cp >= best - settings.spread)
        moves.append(rng.choice(choices))
    return moves


def make_suite(
    judge: Judge, settings: SuiteSettings, progress: Callable[[Kept], None] | None = None
) -> Iterator[Kept]:
    """Yield ``count`` balanced, distinct openings, in order.

    Raises RuntimeError after MAX_ATTEMPTS rejected lines in a row (a balance that no
    line meets)."""
    seen: set[tuple[str, ...]] = set()
    for index in range(settings.count):
        for attempt in range(MAX_ATTEMPTS):
            rng = random.Random(f"{settings.seed}/{index}/{attempt}")
            moves = choose_line(judge, rng, settings)
            if moves is None or tuple(moves) in seen:
                continue
            checked = judge.lines(moves, 1, deep=True)
            if not checked or abs(checked[0][1]) > settings.balance:
                continue
            seen.add(tuple(moves))
            kept = Kept(index, tuple(moves), checked[0][1], attempt + 1)
            if progress is not None:
                progress(kept)
            yield kept
            break
        else:
            raise RuntimeError(
                f"{MAX_ATTEMPTS} lines in a row were out of balance (|score| > "
                f"{settings.balance} cp) or repeated: widen --balance or "
                f"shorten --plies"
            )


class UsiJudge:
    """Any USI engine as the judge, at fixed depths (``go depth``), one thread, its
    table cleared (``usinewgame``) before every search."""

    def __init__(
        self,
        command: str | Sequence[str],
        depth: int,
        check_depth: int,
        options: dict[str, object] | None = None,
    ) -> None:
        from ..api import Limit
        from ..usi import Client

        self.client = Client.popen(command, options or {})
        if "Threads" in self.client.engine_options and "Threads" not in (options or {}):
            self.client.configure({"Threads": 1})  # one thread: the same lines each run
        self.limit, self.check_limit = Limit(depth=depth), Limit(depth=check_depth)

    def lines(self, moves: Sequence[str], multipv: int, deep: bool) -> list[tuple[str, int]]:
        self.client.new_game()
        position = "startpos moves " + " ".join(moves) if moves else "startpos"
        infos = self.client.analyse(position, self.check_limit if deep else self.limit, multipv)
        return [
            (str(info.move), info.score.cp)
            for info in infos
            if info.move is not None and info.score.cp is not None
        ]

    def close(self) -> None:
        self.client.close()


class OwnJudge:
    """This engine's search (in process) as the judge: one thread, a table of 2^20
    entries, the hand-made evaluation."""

    def __init__(self, depth: int, check_depth: int) -> None:
        from ..search.factory import make_searcher

        self.searcher = make_searcher(warmup=True)
        self.depth, self.check_depth = depth, check_depth

    def lines(self, moves: Sequence[str], multipv: int, deep: bool) -> list[tuple[str, int]]:
        import numpy as np
        from ..position import Position

        pos = Position()
        for move in moves:
            pos.push(move)
        found: dict[int, tuple[str, int]] = {}

        def keep(info) -> None:
            if info.pv and info.score_cp is not None and info.bound is None:
                found[info.multipv] = (info.pv[0], info.score_cp)

        self.searcher.new_game()
        self.searcher.think(
            pos,
            depth=self.check_depth if deep else self.depth,
            nodes=None,
            multipv=multipv,
            stop=np.zeros(1, np.int32),
            on_iteration=keep,
        )
        return [found[k] for k in sorted(found)]

    def close(self) -> None:
        pass
