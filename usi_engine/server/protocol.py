"""The USI loop: read a line, dispatch to one function per command, answer.

Rules kept here:
* stdout is written by one lock-holding writer, ASCII only, flushed after each line;
* any malformed input is answered by ``info string <what was wrong>`` and otherwise
  ignored (the last good position is kept);
* nothing heavy is imported before `usi` is answered.
"""

from __future__ import annotations

import os
import queue
import re
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import BinaryIO

from ..version import ENGINE_AUTHOR, ENGINE_NAME, __version__
from .engine import UsiEngine
from .options import BUTTON, Options, ascii_clean
from .timeman import parse_go

_SETOPTION_RE = re.compile(r"^setoption\s+name\s+(.*?)(?:\s+value(?:\s+(.*))?)?\s*$", re.IGNORECASE)
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def clean_output(line: str) -> str:
    """One output line: printable ASCII only, no embedded newlines."""
    return "".join(c if 32 <= ord(c) < 127 else "?" for c in line)


class Output:
    """Thread-safe, flushed, ASCII-only line writer (the engine's only stdout path)."""

    def __init__(self, stream: BinaryIO | None = None, log=None) -> None:
        self._stream = stream if stream is not None else sys.stdout.buffer
        self._lock = threading.Lock()
        self._log = log
        self.closed = False

    def send(self, line: str) -> None:
        self.send_many([line])

    def send_many(self, lines: list[str]) -> None:
        """Several lines with nothing from other threads in between (final info + bestmove)."""
        data = [clean_output(line) for line in lines]
        with self._lock:
            if self.closed:
                return
            try:
                self._stream.write(b"".join(d.encode("ascii") + b"\n" for d in data))
                self._stream.flush()
            except (OSError, ValueError):
                self.closed = True  # the GUI went away
        if self._log is not None:
            for d in data:
                self._log.write("> " + d)

    def info(self, text: str) -> None:
        self.send("info string " + ascii_clean(text, 400))


class Log:
    """Optional debug log (engine.cfg [engine] log, env USI_ENGINE_LOG, option DebugLog)."""

    def __init__(self, path: Path | None = None) -> None:
        self._lock = threading.Lock()
        self._fh = None
        self.path = path
        if path is not None:
            self.enable(path)

    @staticmethod
    def default_path() -> Path:
        base = os.environ.get("LOCALAPPDATA") if os.name == "nt" else os.environ.get("XDG_CACHE_HOME")
        root = Path(base) if base else Path.home() / ".cache"
        return root / "usi_engine" / "engine.log"

    @property
    def enabled(self) -> bool:
        return self._fh is not None

    def enable(self, path: Path | None = None) -> None:
        if self._fh is not None:
            return
        path = Path(path) if path else self.default_path()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = open(path, "a", encoding="utf-8", errors="replace", buffering=1)
            self.path = path
        except OSError:
            self._fh = None

    def disable(self) -> None:
        with self._lock:
            if self._fh is not None:
                self._fh.close()
                self._fh = None

    def write(self, text: str) -> None:
        if self._fh is None:
            return
        with self._lock:
            if self._fh is not None:
                try:
                    self._fh.write(f"{time.strftime('%H:%M:%S')} {text}\n")
                except (OSError, ValueError):
                    pass

    def file(self):
        return self._fh


def decode_line(raw: bytes) -> str:
    """Bytes from stdin -> text: CR/LF stripped, bad UTF-8 and control characters -> '?'."""
    text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
    text = text.replace("\t", " ").replace("\r", " ")
    return _CONTROL_RE.sub("?", text)


class UsiProtocol:
    def __init__(
        self,
        options: Options,
        out: Output | None = None,
        log: Log | None = None,
        messages: list[str] | None = None,
    ) -> None:
        self.log = log or Log()
        self.out = out or Output(log=self.log)
        self.options = options
        self.engine = UsiEngine(self.out, options, log=self.log.write)
        self.messages = list(messages or [])
        self._preloaded = False
        self.line_time: float | None = None  # when the current line was read
        self.commands = {
            "usi": self.cmd_usi,
            "isready": self.cmd_isready,
            "setoption": self.cmd_setoption,
            "usinewgame": self.cmd_usinewgame,
            "position": self.cmd_position,
            "go": self.cmd_go,
            "stop": self.cmd_stop,
            "ponderhit": self.cmd_ponderhit,
            "gameover": self.cmd_gameover,
            "quit": self.cmd_quit,
            "eval": self.cmd_eval,  # extension: static evaluation (YaneuraOu's `e`)
            "e": self.cmd_eval,
            "usi_tunables": self.cmd_usi_tunables,  # shogiarena: the tunable constants
        }

    # ------------------------------------------------------------------ loop
    def run(self, stdin: BinaryIO | None = None, hard_exit_after: float | None = None) -> None:
        """Read stdin until `quit` or EOF.

        A reader thread stamps each line with its arrival time: the GUI's clock starts when
        it sends `go`, even if we are still busy with an earlier `usinewgame` or `position`.
        With `hard_exit_after` (seconds), a `quit` or EOF ends the process after that long
        even if the command loop is still busy (say, compiling at isready).
        """
        stream = stdin if stdin is not None else sys.stdin.buffer
        lines: queue.Queue = queue.Queue()

        def reader() -> None:
            while True:
                try:
                    raw = stream.readline()
                except (OSError, ValueError):
                    raw = b""
                lines.put((time.monotonic(), raw))
                if not raw or raw.strip() == b"quit":
                    if hard_exit_after is not None:
                        threading.Timer(hard_exit_after, self._hard_exit).start()
                    if not raw:
                        return

        threading.Thread(target=reader, name="stdin", daemon=True).start()
        while True:
            stamp, raw = lines.get()
            if not raw:  # EOF: the GUI is gone
                self.cmd_quit("")
                return
            self.line_time = stamp
            if not self.handle(decode_line(raw)):
                return

    def _hard_exit(self) -> None:
        self.log.write("quit: command loop busy, exiting anyway")
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        os._exit(0)

    def handle(self, line: str) -> bool:
        """One input line; False after `quit`."""
        self.log.write("< " + line[:2000])
        stripped = line.strip()
        if not stripped:
            return True
        parts = stripped.split(None, 1)
        name = parts[0]
        rest = parts[1] if len(parts) > 1 else ""
        func = self.commands.get(name)
        if func is None:
            self.out.info(f"unknown command {ascii_clean(name, 40)}")
            return True
        try:
            return func(rest) is not False
        except Exception as exc:
            self.log.write(traceback.format_exc())
            self.out.info(f"{name}: {ascii_clean(exc, 300)}")
            return True

    # ------------------------------------------------------------------ commands
    def cmd_usi(self, rest: str) -> None:
        self.out.send(f"id name {ENGINE_NAME} {__version__}")
        self.out.send(f"id author {ENGINE_AUTHOR}")
        for line in self.options.usi_lines():
            self.out.send(line)
        for msg in self.messages + self.options.take_messages():
            self.out.info(msg)
        self.messages = []
        self.out.send("usiok")
        if not self._preloaded:
            self._preloaded = True
            self.engine.preload()

    def cmd_isready(self, rest: str) -> None:
        try:
            self.engine.isready()
        except Exception as exc:
            self.log.write(traceback.format_exc())
            self.out.info(f"initialization failed: {ascii_clean(repr(exc), 300)}")
        self.out.send("readyok")

    def cmd_setoption(self, rest: str) -> None:
        m = _SETOPTION_RE.match("setoption " + rest)
        if not m or not m.group(1).strip():
            self.out.info("setoption: expected 'setoption name <id> [value <x>]'")
            return
        name, value = m.group(1).strip(), m.group(2)
        if value is not None:
            value = value.rstrip()
        try:
            opt = self.options.set(name, value)
        except ValueError as exc:
            self.out.info(str(exc))
            return
        if opt.type == BUTTON:
            self.engine.press(opt.name)
        if name.lower() == "debuglog":
            if self.options["DebugLog"]:
                self.log.enable()
            else:
                self.log.disable()

    def cmd_usinewgame(self, rest: str) -> None:
        self.engine.new_game()

    def cmd_position(self, rest: str) -> None:
        try:
            self.engine.set_position(rest)
        except ValueError as exc:
            msg = ascii_clean(exc, 300)
            if not msg.startswith("position:"):
                msg = "position: " + msg
            self.out.info(msg + " (position unchanged)")

    def cmd_go(self, rest: str) -> None:
        params, errors = parse_go(rest.split())
        for err in errors:
            self.out.info(err)
        try:
            self.engine.go(params, received=self.line_time)
        except Exception as exc:  # every go must still be answered exactly once
            self.log.write(traceback.format_exc())
            self.out.info(f"go failed: {ascii_clean(repr(exc), 300)}")
            self.out.send(self.engine.fallback_answer(params))

    def cmd_stop(self, rest: str) -> None:
        self.engine.stop()

    def cmd_ponderhit(self, rest: str) -> None:
        params = None
        if rest.strip():
            params, errors = parse_go(rest.split())
            for err in errors:
                self.out.info(err.replace("go:", "ponderhit:", 1))
        self.engine.ponderhit(params, received=self.line_time)

    def cmd_gameover(self, rest: str) -> None:
        result = rest.strip().lower()
        if result not in ("win", "lose", "draw"):
            self.out.info(f"gameover: expected win, lose or draw, got '{ascii_clean(rest.strip(), 40)}'")
        self.engine.gameover(result)

    def cmd_eval(self, rest: str) -> None:
        self.out.send(f"eval = {self.engine.static_eval()}")

    def cmd_usi_tunables(self, rest: str) -> None:
        """shogiarena's handshake: the tunables as JSON; from now on `usi` declares them."""
        from .tunables import usi_tunables_lines

        self.options.tuning = True
        self.out.send_many(usi_tunables_lines())

    def cmd_quit(self, rest: str) -> bool:
        self.engine.quit()
        return False
