"""The engine for Python code: ``Engine``, with ``Limit``, ``Info`` and ``Score``.

``Engine`` runs this engine's search in the calling process (no subprocess, no USI text);
``usi_engine.usi.Client`` drives any USI engine through the same ``analyse`` / ``play``.
Importing this module is cheap: numba and the search load when an Engine is made.

>>> from usi_engine import Engine, Limit, Position
>>> with Engine({"USI_Hash": 16}) as engine:
...     infos = engine.analyse(Position(), Limit(depth=4), multipv=2)
...     move = engine.play(Position(), Limit(nodes=2000))
>>> [info.multipv for info in infos], infos[0].depth
([1, 2], 4)
>>> move in Position().legal_moves()
True
"""

from __future__ import annotations

import threading
import warnings
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable, Mapping

if TYPE_CHECKING:
    from .move import Move
    from .position import Position

MATE_CP = 30000  # the centipawn value of "mate in 0" in Score.to_cp


@dataclass(frozen=True)
class Limit:
    """When a search stops: the first of ``time`` (seconds), ``depth`` (plies) and
    ``nodes`` reached.  ``Limit()`` searches until ``stop()`` is called."""

    time: float | None = None
    depth: int | None = None
    nodes: int | None = None

    def __post_init__(self) -> None:
        for name in ("time", "depth", "nodes"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ValueError(f"Limit({name}={value!r}): must be positive")
        if self.depth is not None and int(self.depth) != self.depth:
            raise ValueError(f"Limit(depth={self.depth!r}): must be an integer")

    @property
    def infinite(self) -> bool:
        return self.time is None and self.depth is None and self.nodes is None


@dataclass(frozen=True)
class Score:
    """A search score from the side to move's view: centipawns, or plies to mate
    (``mate > 0``: the side to move mates; ``mate < 0``: it is mated)."""

    cp: int | None = None
    mate: int | None = None

    def __post_init__(self) -> None:
        if (self.cp is None) == (self.mate is None):
            raise ValueError("a Score has either cp or mate")

    @classmethod
    def parse(cls, text: str) -> "Score":
        """From USI: 'cp 35', 'mate 5', 'mate -3' ('mate +' / 'mate -' without a count
        become mate in 1 / mated in 1)."""
        kind, _, value = text.strip().partition(" ")
        value = value.strip()
        if kind == "mate" and value in ("+", "-"):
            return cls(mate=1 if value == "+" else -1)
        try:
            n = int(value)
        except ValueError:
            raise ValueError(f"bad USI score {text!r}") from None
        if kind == "cp":
            return cls(cp=n)
        if kind == "mate":
            return cls(mate=n)
        raise ValueError(f"bad USI score {text!r}: expected 'cp N' or 'mate N'")

    @property
    def is_mate(self) -> bool:
        return self.mate is not None

    def to_cp(self, mate_cp: int = MATE_CP) -> int:
        """Centipawns, a mate as +-(mate_cp - plies) so that faster mates count more."""
        if self.mate is None:
            return int(self.cp)
        return mate_cp - abs(self.mate) if self.mate > 0 else -(mate_cp - abs(self.mate))

    def __neg__(self) -> "Score":
        return Score(cp=-self.cp) if self.mate is None else Score(mate=-self.mate)

    def __str__(self) -> str:
        return f"cp {self.cp}" if self.mate is None else f"mate {self.mate}"


@dataclass
class Info:
    """One analysed line: the score (side to move's view), the principal variation, and
    how much work it took.  ``turn`` is the side to move of the analysed position."""

    score: Score
    pv: list["Move"] = field(default_factory=list)
    depth: int = 0
    seldepth: int = 0
    nodes: int = 0
    time: float = 0.0  # seconds
    nps: int = 0
    multipv: int = 1
    turn: int = 0  # 0 black, 1 white
    bound: str | None = None  # None exact, or 'lowerbound' / 'upperbound'

    @property
    def move(self) -> "Move | None":
        """The best move (the PV's first), None if the engine sent no PV."""
        return self.pv[0] if self.pv else None

    def score_for(self, color: int) -> Score:
        """The score from one side's view: 0 black (sente), 1 white (gote)."""
        return self.score if color == self.turn else -self.score

    @property
    def black_score(self) -> Score:
        return self.score_for(0)


def as_position(position: "Position | str") -> "Position":
    """A Position from a Position, an SFEN, or 'startpos|sfen ... [moves ...]' text."""
    from .position import Position

    if isinstance(position, Position):
        return position
    if not isinstance(position, str):
        raise TypeError(f"expected a Position or SFEN text, got {type(position).__name__}")
    text = position.strip()
    if text.startswith("position "):
        text = text[len("position ") :]
    if text.split()[:1] in (["startpos"], ["sfen"]):
        return Position.from_usi(text)
    return Position(text)


def _fitted_to_machine(settings):
    """`settings` with USI_Hash and Threads cut to what this machine holds, as the USI server
    cuts them (server/limits.py); a RuntimeWarning says what was cut."""
    from .server import limits

    hash_mb, notes = settings.hash_mb, []
    if hash_mb is not None:
        hash_mb, _, notes = limits.fit_tables(hash_mb, 1, limits.memory_mb())
    threads, more = limits.fit_threads(settings.threads, limits.cores())
    for note in notes + more:
        warnings.warn(note, RuntimeWarning, stacklevel=3)
    return replace(settings, hash_mb=hash_mb, threads=threads)


class Engine:
    """This engine, in process.  ``options`` are USI option names and values
    (``{"USI_Hash": 64, "Threads": 2, "LMR": False}``); those about the clock do not apply
    here (``Limit`` says how long to think).

    One search runs at a time; ``stop()`` may be called from any thread and ends the
    current search (its result is returned as usual).  Use it as a context manager or
    call ``close()`` to free the hash table.
    """

    def __init__(self, options: Mapping[str, object] | None = None) -> None:
        import numpy as np
        from .precompile import start as start_compile_helper
        from .server.options import Options
        from .search.factory import make_searcher

        self._np = np
        # on an empty numba cache a second process compiles part of the engine meanwhile, as
        # on a USI engine's first start; it ends with its work, or with this process
        self._precompile = start_compile_helper()
        self._searcher = make_searcher()
        self._options = Options.create()
        self._search_lock = threading.Lock()
        self._stop_lock = threading.Lock()
        self._stop_flag = np.zeros(1, np.int32)
        self._closed = False
        self._eval_key = None  # (EvalDir, FV_SCALE) of the evaluation in use
        self.configure(options or {})
        self._searcher.warmup()

    # --- configuration ------------------------------------------------------------------
    def configure(self, options: Mapping[str, object]) -> None:
        """Set options (ValueError naming the option for an unknown name or a bad value;
        nothing is applied then)."""
        from .search.factory import SearchSettings, configure

        parsed = []
        for name, value in options.items():
            if name not in self._options:
                known = ", ".join(opt.name for opt in self._options.all())
                raise ValueError(f"unknown option {name!r}; known: {known}")
            opt = self._options.get_option(name)
            text = ("true" if value else "false") if isinstance(value, bool) else str(value)
            parsed.append((opt, opt.parse(text)))
        values = {opt.name: value for opt, value in parsed}
        network = self._evaluation(values)  # a bad EvalDir raises before any change
        for opt, value in parsed:
            opt.value = value
        settings = _fitted_to_machine(SearchSettings.from_options(self._options))
        with self._search_lock:
            configure(self._searcher, settings)
            if network is not None:
                self._eval_key, loaded = network
                self._searcher.set_network(None if loaded is None else loaded.arrays)

    def _evaluation(self, values: Mapping[str, object]):
        """((EvalDir, FV_SCALE), the loaded network or None for hand-made) when those
        options change the evaluation, else None.  NNUEFormatError (a ValueError) names the
        file and what is wrong with it."""
        from .search.factory import load_network

        key = tuple(str(values.get(name, self._options[name])).strip() for name in ("EvalDir", "FV_SCALE"))
        if key == self._eval_key:
            return None
        return key, load_network(key[0], int(key[1]))

    @property
    def name(self) -> str:
        """As the USI ``id name`` says it."""
        from .version import ENGINE_NAME, __version__

        return f"{ENGINE_NAME} {__version__}"

    @property
    def options(self) -> dict[str, object]:
        """Current option values by name."""
        return {opt.name: opt.value for opt in self._options.all()}

    def new_game(self) -> None:
        """Forget what earlier searches learned (hash table, history tables)."""
        with self._search_lock:
            self._searcher.new_game()

    # --- searching ----------------------------------------------------------------------
    def analyse(
        self,
        position: "Position | str",
        limit: Limit,
        multipv: int | None = None,
        on_info: Callable[[Info], None] | None = None,
    ) -> list[Info]:
        """Search ``position`` within ``limit``; the best ``multipv`` lines (default: the
        MultiPV option), best first.  ``on_info`` sees every iteration as it finishes.
        An empty list when the side to move has no legal move."""
        infos, _ = self._think(position, limit, multipv, on_info)
        return infos

    def play(self, position: "Position | str", limit: Limit) -> "Move":
        """The move the engine would play; ``Move('resign')`` if it has none."""
        from .move import Move

        _, best = self._think(position, limit, 1, None)
        return Move(best or "resign")

    def evaluate(self, position: "Position | str") -> int:
        """The static evaluation of ``position`` for the side to move, in centipawns, by the
        evaluation in use (``EvalDir``: a folder holding a network's nn.bin; by default the
        hand-made evaluation), as the USI command ``eval`` prints it."""
        return as_position(position).evaluate(self._searcher.network)

    def stop(self) -> None:
        """End the running search now (thread-safe; no effect when none runs)."""
        with self._stop_lock:
            self._stop_flag[0] = 1

    def _think(self, position, limit: Limit, multipv: int | None, on_info):
        if self._closed:
            raise RuntimeError("the engine is closed")
        if not isinstance(limit, Limit):
            raise TypeError(f"limit must be a Limit, got {type(limit).__name__}")
        pos = as_position(position)
        lines = int(multipv or self._options["MultiPV"])
        if lines < 1:
            raise ValueError(f"multipv must be at least 1, got {multipv}")
        turn = pos.side_to_move()
        latest: dict[int, Info] = {}

        def on_iteration(raw) -> None:
            info = _convert(raw, turn)
            if info.bound is None:
                latest[info.multipv] = info
            if on_info is not None:
                on_info(info)

        with self._search_lock:
            with self._stop_lock:
                stop = self._np.zeros(1, self._np.int32)
                self._stop_flag = stop
            timer = threading.Timer(limit.time, stop.__setitem__, (0, 1)) if limit.time else None
            if timer is not None:
                timer.daemon = True
                timer.start()
            try:
                result = self._searcher.think(
                    pos,
                    depth=limit.depth,
                    nodes=limit.nodes,
                    multipv=lines,
                    stop=stop,
                    on_iteration=on_iteration,
                )
            finally:
                if timer is not None:
                    timer.cancel()
        if result.best is None:
            return [], None
        if result.info is not None:
            latest[1] = _convert(result.info, turn)
        return [latest[k] for k in sorted(latest)], result.best

    # --- lifetime -----------------------------------------------------------------------
    def close(self) -> None:
        """Stop any search and free the hash table."""
        self.stop()
        with self._search_lock:
            self._closed = True
            self._searcher = None

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _convert(raw, turn: int) -> Info:
    """searcher.IterationInfo -> Info."""
    from .move import trusted_move

    score = Score(mate=raw.score_mate) if raw.score_mate is not None else Score(cp=int(raw.score_cp or 0))
    return Info(
        score=score,
        pv=[trusted_move(m) for m in raw.pv],
        depth=int(raw.depth),
        seldepth=int(raw.seldepth),
        nodes=int(raw.nodes),
        time=raw.time_ms / 1000.0,
        nps=int(raw.nps),
        multipv=int(raw.multipv),
        turn=turn,
        bound=raw.bound,
    )
