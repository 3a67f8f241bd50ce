"""Who searches the self-play positions: our own search in process, or any USI engine.

Both answer `search(game, multipv)` with the best lines, best first, each a `Line` with
the move and the score from the side to move's view (centipawns, or plies to mate).
"""

from __future__ import annotations

import os
import shlex
import time
from dataclasses import dataclass

import numpy as np

from ...position import Position


@dataclass
class Line:
    move: str
    cp: int | None  # centipawns from the side to move's view, None for a mate
    mate: int | None  # plies to mate, negative when the side to move is mated

    def value(self) -> int:
        """One comparable number: mates beyond every centipawn score."""
        if self.mate is None:
            return self.cp
        return (100000 - abs(self.mate)) * (1 if self.mate > 0 else -1)


@dataclass
class Game:
    """The game so far: its start SFEN, the moves played, and the current position."""

    start_sfen: str
    moves: list[str]
    pos: Position

    def usi_position(self) -> str:
        text = f"position sfen {self.start_sfen}"
        return text + (" moves " + " ".join(self.moves) if self.moves else "")


class OwnSearch:
    """Our Searcher, one thread, a fixed depth and/or node limit, evaluating with the network
    in `evaldir` (YaneuraOu's EvalDir: a folder holding nn.bin) or, by default, hand-made.

    The TT and histories are cleared at every new game and the TT generation restarts at
    0, so a game depends only on its moves: the same seed gives the same data on any
    machine and in any worker."""

    def __init__(
        self, depth: int | None, nodes: int | None, hash_mb: int = 16, evaldir: str | None = None
    ) -> None:
        from ...search.factory import SearchSettings, load_network, make_searcher

        if not depth and not nodes:
            raise ValueError("give a search depth or a node limit (or both)")
        self.depth, self.nodes = depth, nodes
        # the evaluation the search uses, as the engine's EvalDir option: a network folder
        # (the next round of training is labelled by the last round's network) or hand-made
        network = load_network(evaldir) if evaldir else None
        self.searcher = make_searcher(
            SearchSettings(hash_mb=hash_mb, threads=1), network=network, warmup=True
        )
        self._stop = np.zeros(1, np.int32)

    def new_game(self) -> None:
        self.searcher.new_game()
        self.searcher.generation = 0

    def search(self, game: Game, multipv: int, opening: bool = False) -> list[Line]:
        """The lines of `multipv` searches (the opening's plies are searched as the others)."""
        lines: dict[int, Line] = {}

        def keep(info) -> None:
            if info.bound is None and info.pv:
                lines[info.multipv] = Line(info.pv[0], info.score_cp, info.score_mate)

        result = self.searcher.think(
            game.pos, depth=self.depth, nodes=self.nodes, multipv=multipv, stop=self._stop, on_iteration=keep
        )
        if result.best is None:
            return []
        # The final line is the one the search stands by (a node limit may cut an iteration).
        lines[1] = Line(result.best, result.info.score_cp, result.info.score_mate)
        return [lines[k] for k in sorted(lines)]

    def close(self) -> None:
        pass

    def kill(self) -> None:
        """Nothing of this labeler runs outside its process."""


def absolute_command(command: str) -> str:
    """`command` with its program made absolute when it is given as a relative path to a file
    (`../engines/gpsusi`): a run records its teacher, and the same engine must be recognised
    when the run is resumed from another folder.  Programs found on PATH stay as written."""
    words = shlex.split(command)
    if words and os.sep in words[0] and not os.path.isabs(words[0]) and os.path.isfile(words[0]):
        words[0] = os.path.abspath(words[0])
        return shlex.join(words)
    return command


def parse_teacher_options(texts: list[str]) -> tuple[tuple[str, str], ...]:
    """`--teacher-option NAME=VALUE` texts as (name, value) pairs; ValueError names a bad one.

    A value that names an existing file or folder by a relative path (`EvalDir=runs/r11c`)
    is made absolute: the user means it from the current folder, but YaneuraOu reads a
    relative `EvalDir` from its own program's folder, and a resumed run must recognise it."""
    options = []
    for text in texts:
        name, sep, value = text.partition("=")
        if not sep or not name:
            raise ValueError(f"--teacher-option needs NAME=VALUE, got {text!r}")
        if value and not os.path.isabs(value) and os.path.exists(value):
            value = os.path.abspath(value)
        options.append((name, value))
    return tuple(options)


class UsiTeacher:
    """Any USI engine as the labeler: `position` + `go <limit>`, MultiPV set when needed.

    `opening_go`, if given, is the limit of the opening's plies: they are played, not
    written, and a game whose opening ends out of balance is dropped, so a shallower search
    there spends the teacher's time on the positions that are kept."""

    def __init__(
        self,
        command: str,
        go: str = "depth 8",
        options: dict[str, str] | None = None,
        timeout: float = 600.0,
        opening_go: str | None = None,
    ) -> None:
        self.command = command
        self.go = go
        self.opening_go = opening_go or go
        self.options = dict(options or {})
        self.timeout = timeout
        self._start()

    def _start(self) -> None:
        from ...usiproc import UsiProcess

        self.proc = UsiProcess(shlex.split(self.command), tag="teacher")
        self.proc.open(self.options, ready_timeout=self.timeout)
        self._multipv = 0
        if "MultiPV" not in self.proc.options:
            self._multipv = 1  # the engine has no MultiPV: always one line

    def restart(self) -> None:
        """A fresh process after a crash or a search that never answered."""
        self.proc.kill()
        self._start()

    def new_game(self) -> None:
        self.proc.new_game(self.timeout)

    def search(self, game: Game, multipv: int, opening: bool = False) -> list[Line]:
        if self._multipv != multipv and "MultiPV" in self.proc.options:
            self.proc.setoptions({"MultiPV": str(multipv)})
            self.proc.isready(self.timeout)
            self._multipv = multipv
        self.proc.send(game.usi_position())
        self.proc.send(f"go {self.opening_go if opening else self.go}")
        deadline = time.monotonic() + self.timeout
        lines: dict[int, Line] = {}
        while True:
            text = self.proc.readline(deadline)
            tokens = text.split()
            if tokens[:1] == ["info"]:
                parsed = parse_info_line(tokens)
                if parsed is not None:
                    lines[parsed[0]] = parsed[1]
            elif tokens[:1] == ["bestmove"]:
                best = tokens[1] if len(tokens) > 1 else "resign"
                break
        if best in ("resign", "win") or not lines:
            return []
        first = lines.get(1)
        if first is None or first.move != best:
            first = Line(best, first.cp if first else 0, first.mate if first else None)
        lines[1] = first
        return [lines[k] for k in sorted(lines)]

    def close(self) -> None:
        self.proc.quit()

    def kill(self) -> None:
        """End the engine at once (its worker is about to exit; a signal handler may call
        this): no `quit`, no wait."""
        self.proc.kill_at_once()


def parse_info_line(tokens: list[str]) -> tuple[int, Line] | None:
    """(multipv index, Line) of an exact-score `info ... score ... pv ...` line, else None."""
    k, cp, mate, move = 1, None, None, None
    i = 1
    while i < len(tokens):
        key = tokens[i]
        if key == "multipv" and i + 1 < len(tokens) and tokens[i + 1].isdigit():
            k = int(tokens[i + 1])
            i += 2
        elif key == "score" and i + 2 < len(tokens):
            kind, text = tokens[i + 1], tokens[i + 2]
            i += 3
            if i < len(tokens) and tokens[i] in ("lowerbound", "upperbound"):
                return None
            try:
                if kind == "cp":
                    cp = int(text)
                elif kind == "mate":
                    mate = int(text.lstrip("+")) if text.lstrip("+-") else (1 if text != "-" else -1)
            except ValueError:
                return None
        elif key == "pv":
            move = tokens[i + 1] if i + 1 < len(tokens) else None
            break
        elif key == "string":
            return None
        else:
            i += 1
    if move is None or (cp is None and mate is None):
        return None
    return k, Line(move, cp, mate)
