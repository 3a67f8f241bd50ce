"""``python -m usi_engine.orphan_guard CMD [ARG...]``: run CMD, and end it and everything
in this process group once the process that started the guard is gone.

A run that starts programs which start engines of their own (cshogi's match client) kills
them when it is stopped.  Killed outright (SIGKILL, the out-of-memory killer), it cannot:
its children would play on alone.  The run starts each such program through this guard, as
the leader of a process group of its own that the program and its engines join; the guard
checks every PARENT_CHECK_SECONDS that the run is still there, and when it is not, kills
the group, itself included.  Otherwise it waits for CMD and exits with its status.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from usi_engine.interrupt import PARENT_CHECK_SECONDS


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m usi_engine.orphan_guard CMD [ARG...]", file=sys.stderr)
        return 2
    parent = os.getppid()
    child = subprocess.Popen(argv)
    while True:
        try:
            code = child.wait(timeout=PARENT_CHECK_SECONDS)
        except subprocess.TimeoutExpired:
            if os.getppid() != parent:  # the run is gone: so are its programs
                os.killpg(0, signal.SIGKILL)
            continue
        return code if code >= 0 else 128 - code  # killed by a signal: as a shell reports it


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
