"""A USI client for any engine: ``Client.popen(cmd, options)`` with the same ``analyse`` and
``play`` as the in-process ``usi_engine.Engine``, so that a script can switch between this
engine and, say, YaneuraOu with a strong network without other changes.

>>> import sys
>>> from usi_engine import Limit, Position
>>> from usi_engine.usi import Client
>>> with Client.popen([sys.executable, "-m", "usi_engine"], {"USI_Hash": 16}) as engine:
...     info = engine.analyse(Position(), Limit(depth=3))[0]
...     move = engine.play("startpos moves 7g7f", Limit(nodes=1000))
>>> info.depth, info.pv[0] in Position().legal_moves()
(3, True)
>>> engine.name
'usi_engine 0.3.0'

The process wrapper is the match runner's (``usi_engine.usiproc``): every wait has a
deadline, a dead engine raises ``EngineCrashed``, a silent one ``EngineTimeout``.
"""

from __future__ import annotations

import shlex
import threading
import time
from typing import Callable, Mapping, Sequence

from .api import Info, Limit, Score, as_position
from .usiproc import EngineCrashed, EngineError, EngineLog, EngineTimeout, UsiProcess
from .move import Move

__all__ = ["Client", "EngineError", "EngineCrashed", "EngineTimeout", "parse_info_line"]

STOP_GRACE_S = 10.0  # after the limit (or stop), wait this long for bestmove
NO_DEADLINE_S = 10**7  # depth/nodes/infinite searches wait as long as they take
_INT_FIELDS = {
    "depth": "depth",
    "seldepth": "seldepth",
    "nodes": "nodes",
    "nps": "nps",
    "multipv": "multipv",
    "time": "time",
}


class Client:
    """A running USI engine.  Make one with ``Client.popen``; close it (or use ``with``)."""

    def __init__(self, process: UsiProcess, ready_timeout: float) -> None:
        self._proc = process
        self._ready_timeout = ready_timeout
        self._send_lock = threading.Lock()
        self._search_lock = threading.Lock()
        self._multipv = 1

    @classmethod
    def popen(
        cls,
        cmd: str | Sequence[str],
        options: Mapping[str, object] | None = None,
        *,
        cwd: str | None = None,
        ready_timeout: float = 120.0,
        log: str | None = None,
    ) -> "Client":
        """Start ``cmd`` (a command line, split like a shell, or an argument list), do the
        usi / setoption / isready handshake and ``usinewgame``.  ``log``: a file that
        receives the USI traffic and the engine's stderr."""
        argv = shlex.split(cmd) if isinstance(cmd, str) else list(cmd)
        if not argv:
            raise ValueError("empty engine command")
        proc = UsiProcess(argv, EngineLog(log), tag=argv[0], cwd=cwd)
        client = cls(proc, ready_timeout)
        try:
            proc.start()
            proc.usi(timeout=ready_timeout)
            client._setoptions(options or {})
            proc.isready(ready_timeout)
            client._send("usinewgame")
        except BaseException:
            proc.kill()
            raise
        return client

    # --- identity and options -------------------------------------------------------------
    @property
    def name(self) -> str | None:
        """The engine's ``id name``."""
        return self._proc.id_name

    @property
    def engine_options(self) -> dict[str, str]:
        """The options the engine declared, name -> its ``option`` line."""
        return dict(self._proc.options)

    def configure(self, options: Mapping[str, object]) -> None:
        """Send ``setoption`` for each option, then wait for ``readyok``."""
        with self._search_lock:
            self._setoptions(options)
            self._proc.isready(self._ready_timeout)

    def _setoptions(self, options: Mapping[str, object]) -> None:
        for name, value in options.items():
            if self._proc.options and name not in self._proc.options:
                raise ValueError(
                    f"the engine declares no option {name!r}; it has: " + ", ".join(self._proc.options)
                )
            text = ("true" if value else "false") if isinstance(value, bool) else str(value)
            self._send(f"setoption name {name} value {text}")
            if name in ("MultiPV", "USI_MultiPV"):
                self._multipv = int(value)

    def new_game(self) -> None:
        self._send("usinewgame")

    # --- searching ------------------------------------------------------------------------
    def analyse(
        self,
        position,
        limit: Limit,
        multipv: int | None = None,
        on_info: Callable[[Info], None] | None = None,
    ) -> list[Info]:
        """Search ``position`` (a Position, an SFEN, or 'startpos|sfen ... moves ...') within
        ``limit``; the best ``multipv`` lines, best first (empty if the engine sent none)."""
        infos, _ = self._go(position, limit, multipv, on_info)
        return infos

    def play(self, position, limit: Limit) -> Move:
        """The engine's ``bestmove`` (``Move('resign')`` or ``Move('win')`` for those)."""
        _, best = self._go(position, limit, None, None)
        return best

    def stop(self) -> None:
        """Send ``stop`` (thread-safe); the running analyse/play returns its result."""
        self._send("stop")

    def _multipv_option(self) -> str:
        """`MultiPV`, or `USI_MultiPV` for engines that declare that name instead
        (Fairy-Stockfish in USI mode)."""
        declared = self._proc.options
        for name in ("MultiPV", "USI_MultiPV"):
            if not declared or name in declared:
                return name
        raise ValueError("the engine has no MultiPV option (nor USI_MultiPV)")

    def _go(self, position, limit: Limit, multipv: int | None, on_info):
        if not isinstance(limit, Limit):
            raise TypeError(f"limit must be a Limit, got {type(limit).__name__}")
        pos = as_position(position)
        turn = pos.side_to_move()
        with self._search_lock:
            if multipv is not None and multipv != self._multipv:
                self._setoptions({self._multipv_option(): multipv})
            self._send("position " + pos.record().usi())
            go, timer_s = go_command(limit)
            self._send(go)
            timer = threading.Timer(timer_s, self._send, ("stop",)) if timer_s else None
            if timer is not None:
                timer.daemon = True
                timer.start()
            try:
                return self._read_until_bestmove(limit, turn, on_info)
            finally:
                if timer is not None:
                    timer.cancel()

    def _read_until_bestmove(self, limit: Limit, turn: int, on_info):
        wait = (limit.time + STOP_GRACE_S) if limit.time else NO_DEADLINE_S
        deadline = time.monotonic() + wait
        latest: dict[int, Info] = {}
        while True:
            try:
                line = self._proc.readline(deadline)
            except EngineTimeout:
                raise EngineTimeout(f"no bestmove within {wait:.1f} s") from None
            tokens = line.split()
            if not tokens:
                continue
            if tokens[0] == "info":
                info = parse_info_line(line, turn)
                if info is None:
                    continue
                if info.bound is None:
                    latest[info.multipv] = info
                if on_info is not None:
                    on_info(info)
            elif tokens[0] == "bestmove":
                if len(tokens) < 2:
                    raise EngineError(f"bestmove without a move: {line!r}")
                return [latest[k] for k in sorted(latest)], Move(tokens[1])

    def _send(self, line: str) -> None:
        with self._send_lock:
            self._proc.send(line)

    # --- lifetime -------------------------------------------------------------------------
    def close(self) -> None:
        """``quit`` the engine (killed if it does not exit within 2 s) and close its log."""
        self._proc.quit()
        self._proc.log.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def go_command(limit: Limit) -> tuple[str, float | None]:
    """The ``go`` line for a Limit, and after how many seconds the client must send ``stop``
    itself.  A time alone is a byoyomi (every USI engine knows it); with a depth or node
    limit the engine gets those and the client keeps the clock."""
    if limit.infinite:
        return "go infinite", None
    parts = ["go"]
    if limit.depth is None and limit.nodes is None:
        return f"go btime 0 wtime 0 byoyomi {max(1, round(limit.time * 1000))}", None
    if limit.depth is not None:
        parts += ["depth", str(int(limit.depth))]
    if limit.nodes is not None:
        parts += ["nodes", str(int(limit.nodes))]
    return " ".join(parts), limit.time


def parse_info_line(line: str, turn: int = 0) -> Info | None:
    """An ``info`` line as an Info (None if it has no score, e.g. ``info string``).

    >>> i = parse_info_line("info depth 9 seldepth 12 score cp -35 upperbound nodes 5000 pv 3c3d 2g2f")
    >>> i.score, i.bound, i.pv
    (Score(cp=-35, mate=None), 'upperbound', [Move('3c3d'), Move('2g2f')])
    """
    tokens = line.split()
    values: dict[str, int] = {}
    score = bound = None
    pv: list[Move] = []
    i = 1
    while i < len(tokens):
        key = tokens[i]
        if key == "string":
            break
        if key in _INT_FIELDS and i + 1 < len(tokens):
            try:
                values[key] = int(tokens[i + 1])
            except ValueError:
                pass
            i += 2
        elif key == "score" and i + 2 < len(tokens):
            try:
                score = Score.parse(f"{tokens[i + 1]} {tokens[i + 2]}")
            except ValueError:
                score = None
            i += 3
            if i < len(tokens) and tokens[i] in ("lowerbound", "upperbound"):
                bound = tokens[i]
                i += 1
        elif key == "pv":
            for t in tokens[i + 1 :]:
                try:
                    pv.append(Move(t))
                except ValueError:
                    break
            break
        else:
            i += 1
    if score is None:
        return None
    return Info(
        score=score,
        pv=pv,
        depth=values.get("depth", 0),
        seldepth=values.get("seldepth", 0),
        nodes=values.get("nodes", 0),
        time=values.get("time", 0) / 1000.0,
        nps=values.get("nps", 0),
        multipv=values.get("multipv", 1),
        turn=turn,
        bound=bound,
    )
