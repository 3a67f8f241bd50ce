"""A USI engine subprocess: send commands, read answers with deadlines.

A reader thread moves the engine's stdout lines into a queue (``None`` marks end of
file, i.e. the engine died) and another copies its stderr into the engine's log, so
the caller never blocks on a pipe: every wait has a deadline and raises
:class:`EngineTimeout` or :class:`EngineCrashed`.  The engine runs in its own session
so that Ctrl-C in the terminal reaches the match runner only.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import IO, Mapping, Optional, Sequence

EXIT_WAIT_SECONDS = 1.0  # after a failed write, how long to wait for the engine's exit code


class EngineError(Exception):
    """The engine misbehaved."""


class EngineCrashed(EngineError):
    """The engine process ended (or could not be started)."""


class EngineTimeout(EngineError):
    """The engine did not answer in time."""


class Aborted(Exception):
    """The match is being stopped (Ctrl-C or SPRT decision)."""


class EngineLog:
    """A thread-safe log of USI traffic and stderr, shared by instances of an engine.

    It goes to a file (``path``), to memory (``memory=True``: a Ray worker keeps the
    lines and hands them to the driver with :meth:`drain`), or nowhere.

    A file is written by a thread of its own. The reader threads stamp each line the
    engine sends, and those stamps decide time losses, so they must never wait for the
    disk: a flush that stalls for half a second (a loaded machine, a log of hundreds of
    megabytes) used to delay the stamp of the next ``bestmove`` and forfeit the game.
    """

    def __init__(self, path: Optional[str], memory: bool = False, t0: Optional[float] = None) -> None:
        """``t0``: the ``time.monotonic()`` the stamps count from (default: now); the logs
        of one match share it, so their lines can be merged in time order."""
        self._lock = threading.Lock()
        self._memory: Optional[list[str]] = [] if memory else None
        self._t0 = time.monotonic() if t0 is None else t0
        self._pending: Optional["queue.SimpleQueue[Optional[list[str]]]"] = None
        self._writer: Optional[threading.Thread] = None
        if path:
            file = open(path, "a", encoding="utf-8")
            self._pending = queue.SimpleQueue()
            self._writer = threading.Thread(
                target=_write_batches, args=(file, self._pending), name="engine-log", daemon=True
            )
            self._writer.start()

    def write(self, tag: str, direction: str, line: str, stamp: Optional[float] = None) -> None:
        """Log ``line``; ``direction`` is ``>`` (to engine), ``<`` (from), ``!`` (stderr).

        ``stamp``: the ``time.monotonic()`` the line is logged at (default: now).
        """
        if self._pending is None and self._memory is None:
            return
        when = time.monotonic() if stamp is None else stamp
        self.write_lines([f"{when - self._t0:10.3f} {tag} {direction} {line}"])

    def write_lines(self, lines: Sequence[str]) -> None:
        """Append already formatted lines (those :meth:`drain` returned elsewhere)."""
        with self._lock:
            if self._memory is not None:
                self._memory.extend(lines)
            if self._pending is not None:
                self._pending.put(list(lines))

    def drain(self) -> list[str]:
        """The lines kept in memory since the last call."""
        with self._lock:
            lines, self._memory = (self._memory or []), ([] if self._memory is not None else None)
        return lines

    def close(self) -> None:
        """Write what is pending and close the file; later lines are dropped."""
        with self._lock:
            pending, writer = self._pending, self._writer
            self._pending = self._writer = None
        if pending is not None and writer is not None:
            pending.put(None)
            writer.join()


def _write_batches(file: IO[str], pending: "queue.SimpleQueue[Optional[list[str]]]") -> None:
    """The log's writer thread: write and flush what has queued up, until ``None``."""
    with file:
        done = False
        while not done:
            batch = [pending.get()]
            while not pending.empty():
                batch.append(pending.get())
            done = any(lines is None for lines in batch)
            for lines in batch:
                if lines is not None:
                    file.writelines(line + "\n" for line in lines)
            file.flush()


@dataclass
class SearchResult:
    """The answer to a ``go``: bestmove plus the last reported score and PV."""

    bestmove: str
    ponder: Optional[str] = None
    score: Optional[str] = None  # e.g. "cp 35", "mate 5", "mate -3"
    pv: list[str] = field(default_factory=list)
    depth: Optional[int] = None
    nodes: Optional[int] = None
    time_ms: Optional[int] = None  # the engine's own clock in its last `info ... time`
    elapsed_ms: float = 0.0  # the caller's clock, from `go` to `bestmove`


def parse_info(line: str, result: SearchResult) -> None:
    """Update ``result`` with the score/pv/depth/nodes/time of an ``info`` line."""
    tokens = line.split()
    i = 1
    while i < len(tokens):
        key = tokens[i]
        if key == "score" and i + 2 < len(tokens) and tokens[i + 1] in ("cp", "mate"):
            result.score = f"{tokens[i + 1]} {tokens[i + 2]}"
            i += 3
            if i < len(tokens) and tokens[i] in ("lowerbound", "upperbound"):
                i += 1
        elif key in ("depth", "nodes", "time") and i + 1 < len(tokens):
            try:
                setattr(result, "time_ms" if key == "time" else key, int(tokens[i + 1]))
            except ValueError:
                pass
            i += 2
        elif key == "pv":
            result.pv = tokens[i + 1 :]
            return
        elif key == "string":
            return
        else:
            i += 1


class UsiProcess:
    """One running USI engine."""

    def __init__(
        self,
        cmd: Sequence[str],
        log: Optional[EngineLog] = None,
        tag: str = "",
        cwd: Optional[str] = None,
        abort: Optional[threading.Event] = None,
    ) -> None:
        self.cmd = list(cmd)
        self.log = log or EngineLog(None)
        self.tag = tag
        self.cwd = cwd
        self.abort = abort or threading.Event()
        self.proc: Optional[subprocess.Popen] = None
        self._lines: "queue.Queue[tuple[float, Optional[str]]]" = queue.Queue()
        self.last_read_time = 0.0
        self.go_started = 0.0
        self.id_name: Optional[str] = None
        self.options: dict[str, str] = {}
        self.last_words = ""  # the last line the engine wrote (stdout or stderr), for a crash

    # -- process --------------------------------------------------------------
    def start(self) -> None:
        """Start the process and its reader threads."""
        self.log.write(self.tag, "*", f"start {' '.join(self.cmd)}")
        try:
            self.proc = subprocess.Popen(
                self.cmd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                bufsize=1,
                cwd=self.cwd,
                start_new_session=True,
            )
        except OSError as exc:
            raise EngineCrashed(f"cannot start {self.cmd!r}: {exc}") from exc
        self._lines = queue.Queue()
        threading.Thread(target=self._pump_stdout, args=(self.proc, self._lines), daemon=True).start()
        threading.Thread(target=self._pump_stderr, args=(self.proc,), daemon=True).start()

    def _pump_stdout(self, proc: subprocess.Popen, lines: "queue.Queue[tuple[float, Optional[str]]]") -> None:
        assert proc.stdout is not None
        try:
            for raw in proc.stdout:
                stamp = time.monotonic()  # first: this stamp can decide a time loss
                line = raw.rstrip("\r\n")
                if line.strip():
                    self.last_words = line
                lines.put((stamp, line))
                self.log.write(self.tag, "<", line, stamp)
        except (OSError, ValueError):
            pass
        lines.put((time.monotonic(), None))

    def _pump_stderr(self, proc: subprocess.Popen) -> None:
        assert proc.stderr is not None
        try:
            for raw in proc.stderr:
                line = raw.rstrip("\r\n")
                if line.strip():
                    self.last_words = line
                self.log.write(self.tag, "!", line)
        except (OSError, ValueError):
            pass

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill_at_once(self) -> None:
        """SIGKILL to the engine and everything it started, and nothing else: no wait, no
        log, no lock taken, so a signal handler may call it."""
        if self.proc is None or self.proc.returncode is not None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            try:
                self.proc.kill()
            except OSError:
                pass

    def kill(self) -> None:
        """Kill the engine and everything it started."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.kill_at_once()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self.log.write(self.tag, "*", f"killed (exit code {self.proc.returncode})")
        self._close_pipes()

    def quit(self, timeout: float = 2.0) -> None:
        """Send ``quit`` and wait for the process to exit; kill it if it does not."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            try:
                self.send("quit")
                self.proc.wait(timeout=timeout)
            except (EngineCrashed, subprocess.TimeoutExpired):
                pass
        if self.proc.poll() is None:
            self.kill()
        else:
            self.log.write(self.tag, "*", f"exited (exit code {self.proc.returncode})")
            self._close_pipes()

    def _close_pipes(self) -> None:
        assert self.proc is not None
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                if pipe is not None:
                    pipe.close()
            except OSError:
                pass

    # -- I/O ------------------------------------------------------------------
    def send(self, line: str) -> None:
        """Write one command line to the engine."""
        if self.proc is None or self.proc.stdin is None:
            raise EngineCrashed("engine not started")
        self.log.write(self.tag, ">", line)
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except (OSError, ValueError) as exc:
            # a broken pipe most often means the engine has exited: say so, with its exit
            # code, as a failed read does
            try:
                code = self.proc.wait(timeout=EXIT_WAIT_SECONDS)
            except subprocess.TimeoutExpired:
                raise EngineCrashed(f"cannot write to engine: {exc}") from exc
            raise self._exited(code) from exc

    def _exited(self, code: Optional[int]) -> EngineCrashed:
        """The error for an engine that has ended, with the last line it wrote: most engines
        say why they stop (YaneuraOu: `Error! : failed to read nn.bin : FileNotFound`)."""
        text = f"engine exited (exit code {code})"
        if self.last_words:
            text += f", its last line: {ascii(self.last_words[:200])}"
        return EngineCrashed(text)

    def readline(self, deadline: float) -> str:
        """Next line from the engine; ``deadline`` is a ``time.monotonic()`` value.

        ``last_read_time`` is set to the moment the reader thread received the line.
        """
        while True:
            if self.abort.is_set():
                raise Aborted()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise EngineTimeout("no answer in time")
            try:
                stamp, line = self._lines.get(timeout=min(remaining, 0.1))
            except queue.Empty:
                continue
            self.last_read_time = stamp
            if line is None:
                self._lines.put((stamp, None))  # stay at end of file
                code = self.proc.wait() if self.proc else None
                raise self._exited(code)
            return line

    def expect(self, token: str, timeout: float) -> list[str]:
        """Read lines until one whose first word is ``token``; return all lines read."""
        deadline = time.monotonic() + timeout
        seen = []
        while True:
            line = self.readline(deadline)
            seen.append(line)
            if line.split()[:1] == [token]:
                return seen

    # -- USI ------------------------------------------------------------------
    def usi(self, timeout: float = 30.0) -> None:
        """``usi`` / ``usiok`` handshake; records the engine name and options."""
        self.send("usi")
        for line in self.expect("usiok", timeout):
            tokens = line.split()
            if tokens[:2] == ["id", "name"]:
                self.id_name = " ".join(tokens[2:])
            elif tokens[:2] == ["option", "name"] and "type" in tokens:
                self.options[" ".join(tokens[2 : tokens.index("type")])] = line

    def setoptions(self, options: Mapping[str, str]) -> None:
        for name, value in options.items():
            self.send(f"setoption name {name} value {value}")

    def isready(self, timeout: float) -> None:
        """``isready`` / ``readyok``: waits for the engine (numba compilation: be generous)."""
        self.send("isready")
        self.expect("readyok", timeout)

    def new_game(self, timeout: float) -> None:
        """``isready`` (waiting for ``readyok``), then ``usinewgame``: the order a GUI keeps
        before each game. YaneuraOu's NNUE build has answered a ``go nodes`` right after a bare
        ``usinewgame`` with a search of 0 nodes."""
        self.isready(timeout)
        self.send("usinewgame")

    def open(self, options: Mapping[str, str], ready_timeout: float) -> None:
        """Start, handshake, set options and wait until ready."""
        self.start()
        self.usi(timeout=ready_timeout)
        self.setoptions(options)
        self.isready(ready_timeout)

    def go(self, position: str, go: str, timeout: float) -> SearchResult:
        """Send ``position`` and ``go``; wait at most ``timeout`` s for ``bestmove``."""
        self.send(position)
        self.go_started = start = time.monotonic()  # before the send: the answer may be quick
        self.send(go)
        return self._await_bestmove(start, start + timeout)

    def _await_bestmove(self, start: float, deadline: float) -> SearchResult:
        result = SearchResult(bestmove="")
        while True:
            line = self.readline(deadline)
            tokens = line.split()
            if not tokens:
                continue
            if tokens[0] == "info":
                parse_info(line, result)
            elif tokens[0] == "bestmove":
                result.elapsed_ms = max(0.0, (self.last_read_time - start) * 1000.0)
                result.bestmove = tokens[1] if len(tokens) > 1 else ""
                if len(tokens) > 3 and tokens[2] == "ponder":
                    result.ponder = tokens[3]
                return result

    def go_ponder(self, position: str, go: str) -> None:
        """Start pondering: ``position`` (ending with the expected reply) and ``go ponder``.

        No answer is awaited: the engine keeps thinking until :meth:`ponderhit` or
        :meth:`stop_search`.
        """
        self.send(position)
        self.go_started = time.monotonic()
        self.send(go)

    def ponderhit(self, timeout: float) -> SearchResult:
        """Send ``ponderhit`` and wait ``timeout`` s for ``bestmove``.

        The engine's clock runs from the ``ponderhit``, as in a GUI: the elapsed time of
        the result counts from there.
        """
        self.go_started = start = time.monotonic()
        self.send("ponderhit")
        return self._await_bestmove(start, start + timeout)

    def stop_search(self, grace: float) -> Optional[SearchResult]:
        """Send ``stop`` and wait ``grace`` s for the pending bestmove (None if none).

        The elapsed time of the result counts from the ``go``.
        """
        try:
            self.send("stop")
            return self._await_bestmove(self.go_started, time.monotonic() + grace)
        except EngineError:
            return None

    def gameover(self, result: str) -> None:
        """Tell the engine the game ended: ``win``, ``lose`` or ``draw``."""
        self.send(f"gameover {result}")
