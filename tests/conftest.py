"""Shared fixtures: a USI subprocess driver and ONE warmed-up engine per test session.

numba compiles once per fresh clone (at the first `isready`), which can take minutes,
so protocol tests share the `engine` fixture instead of starting their own process.
Set USI_ENGINE_CMD (a shell-style command line) to test another executable.
"""

from __future__ import annotations

import os
import queue
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

# Any Ray cluster a test starts stays on this machine's loopback address (docs/scaling.md):
# set before a test module imports Ray, which reads it once.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")

REPO = Path(__file__).resolve().parent.parent
ISREADY_TIMEOUT = float(os.environ.get("USI_ENGINE_ISREADY_TIMEOUT", "900"))


def engine_command() -> list[str]:
    custom = os.environ.get("USI_ENGINE_CMD")
    if custom:
        return shlex.split(custom)
    return [sys.executable, "-u", "-m", "usi_engine"]


class UsiProcess:
    """A USI engine subprocess: write lines, read lines with timestamps and timeouts."""

    def __init__(self, cmd: list[str] | None = None, cwd: Path = REPO, env: dict | None = None) -> None:
        self.started = time.monotonic()
        full_env = dict(os.environ)
        full_env.update(env or {})
        self.proc = subprocess.Popen(cmd or engine_command(), cwd=cwd, env=full_env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.lines: queue.Queue = queue.Queue()
        self.stderr_chunks: list[bytes] = []
        self.transcript: list[str] = []
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self) -> None:
        for raw in iter(self.proc.stdout.readline, b""):
            self.lines.put((time.monotonic(), raw))
        self.lines.put((time.monotonic(), None))

    def _read_stderr(self) -> None:
        for chunk in iter(lambda: self.proc.stderr.read1(4096), b""):
            self.stderr_chunks.append(chunk)

    def send(self, line: str | bytes) -> float:
        data = line if isinstance(line, bytes) else line.encode("utf-8")
        if not data.endswith(b"\n"):
            data += b"\n"
        self.transcript.append("< " + data.decode("utf-8", "replace").rstrip("\n"))
        self.proc.stdin.write(data)
        self.proc.stdin.flush()
        return time.monotonic()

    def readline(self, timeout: float) -> tuple[float, str]:
        """(timestamp, line) with the raw bytes checked to be ASCII; AssertionError on timeout/EOF."""
        try:
            stamp, raw = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no output within {timeout}s; transcript tail:\n"
                                 + "\n".join(self.transcript[-15:])) from None
        if raw is None:
            self.lines.put((stamp, None))
            raise AssertionError("engine closed stdout; transcript tail:\n" + "\n".join(self.transcript[-15:]))
        assert all(b < 128 for b in raw), f"non-ASCII output: {raw!r}"
        assert raw.endswith(b"\n")
        line = raw.decode("ascii").rstrip("\r\n")
        self.transcript.append("> " + line)
        return stamp, line

    def read_until(self, prefix: str, timeout: float = 30.0) -> tuple[float, list[str]]:
        """Lines up to and including the first one starting with `prefix`; (its timestamp, lines)."""
        deadline = time.monotonic() + timeout
        out = []
        while True:
            stamp, line = self.readline(max(0.01, deadline - time.monotonic()))
            out.append(line)
            if line == prefix or line.startswith(prefix + " ") or (prefix.endswith(" ") and line.startswith(prefix)):
                return stamp, out

    def no_output(self, seconds: float) -> list[str]:
        """Collect whatever arrives within `seconds` (used to check for absence of lines)."""
        out = []
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return out
            try:
                stamp, raw = self.lines.get(timeout=left)
            except queue.Empty:
                return out
            if raw is None:
                self.lines.put((stamp, None))
                return out
            line = raw.decode("ascii", "replace").rstrip("\r\n")
            self.transcript.append("> " + line)
            out.append(line)

    def sync(self, timeout: float = 30.0) -> list[str]:
        """isready/readyok: everything printed before is returned (and so consumed)."""
        self.send("isready")
        return self.read_until("readyok", timeout)[1][:-1]

    def stderr_text(self) -> str:
        return b"".join(self.stderr_chunks).decode("utf-8", "replace")

    def quit(self, timeout: float = 5.0) -> float:
        """Send quit; seconds until the process exited."""
        t0 = time.monotonic()
        try:
            self.send("quit")
        except (BrokenPipeError, OSError):
            pass
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return float("inf")
        return time.monotonic() - t0

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def start_ready_engine(env: dict | None = None, timeout: float = ISREADY_TIMEOUT) -> UsiProcess:
    eng = UsiProcess(env=env)
    eng.send("usi")
    eng.read_until("usiok", 30)
    eng.send("isready")
    eng.read_until("readyok", timeout)
    return eng


@pytest.fixture(scope="session")
def engine():
    """One engine process for the session, past `usi` and `isready` (numba compiled/loaded),
    and past the mate solver's compile, which follows `readyok` in the background: the
    mate probe of a search is skipped until it is done."""
    eng = start_ready_engine()
    eng.send("position sfen 4k4/9/4P4/9/9/9/9/9/4K4 b G 1")
    eng.send("go mate 60000")
    eng.read_until("checkmate", ISREADY_TIMEOUT)
    yield eng
    seconds = eng.quit()
    assert seconds < 1.0, f"quit took {seconds:.2f}s"
    assert eng.stderr_text() == "", f"engine wrote to stderr:\n{eng.stderr_text()[:2000]}"
