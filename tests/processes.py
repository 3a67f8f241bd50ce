"""What the stop tests ask of the machine's processes: which are alive, and waiting for a
condition. A zombie (ended, its exit status not yet collected) counts as ended: when a run
is killed, its children's zombies wait for whatever process adopts them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def live_processes() -> list[tuple[int, int, list[bytes]]]:
    """(pid, parent pid, command line words) of every process that is not a zombie."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if stat[0] != "Z":
            found.append((int(entry), int(stat[1]), cmdline))
    return found


def processes_with(token: str) -> list[int]:
    """Pids of live processes whose command line holds the word `token`."""
    return [pid for pid, _, cmdline in live_processes() if token.encode() in cmdline]


def children_of(parent: int) -> list[int]:
    return [pid for pid, ppid, _ in live_processes() if ppid == parent]


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_for(predicate, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


RANDOM_ENGINE = Path(__file__).resolve().parent / "fixtures" / "random_engine.py"


def pid_recording_engine(folder: Path, engine: str, pids: Path) -> Path:
    """An executable at folder/engine.sh that appends its pid to `pids`, then becomes the
    command `engine` (keeping that pid): a client that starts an engine by its path alone
    can then be asked which engines it started."""
    script = folder / "engine.sh"
    script.write_text(f'#!/bin/sh\necho $$ >> "{pids}"\nexec {engine}\n', encoding="utf-8")
    script.chmod(0o755)
    return script


def recorded_pids(pids: Path) -> list[int]:
    return [int(pid) for pid in pids.read_text().split()] if pids.exists() else []


def slow_engine(folder: Path, pids: Path) -> Path:
    """A random mover that thinks ten minutes a move (no game ends in a test), started by
    its path alone, recording its pid in `pids`."""
    return pid_recording_engine(folder, f'"{sys.executable}" "{RANDOM_ENGINE}" --sleep-ms 600000', pids)


def signal_once_engines_think(
    cmd: list[str], pids: Path, engines: int, signum: int = signal.SIGTERM
) -> subprocess.CompletedProcess:
    """Run `cmd`; once `engines` engines have recorded their pids in `pids` and thought a
    second, `signum` to the command alone (not its process group, as a background run is
    stopped). Its exit status and output, after every engine it started has ended."""
    run = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert wait_for(lambda: len(recorded_pids(pids)) == engines, 60)
        time.sleep(1)
        run.send_signal(signum)
        stdout, stderr = run.communicate(timeout=30)
    finally:
        run.kill()
    assert wait_for(lambda: not any(alive(pid) for pid in recorded_pids(pids)), 10)
    return subprocess.CompletedProcess(cmd, run.returncode, stdout, stderr)
