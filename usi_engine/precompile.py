"""``python -m usi_engine.precompile``: the second compiler of a first start.

On an empty numba cache (a fresh install, or the first start after the sources changed)
the first `isready` compiles the whole search, and numba compiles in one thread. The engine
starts this process as it begins: on another core it compiles, into the same cache, its
share of the search (core/compile_plan.py: the root, the quiescence search, the mate probe
and the picker, while the engine compiles `search`), then the Position methods, which the
engine calls after its search warmup, then the mate solver, which the engine compiles after
`readyok`. Whatever the cache holds when the engine comes to it is loaded instead of
compiled again, and a function one process is compiling the other waits for (docs/perft.md
has the times).

It writes nothing to stdout or stderr. It ends when its work is done, or at once when the
engine has gone: the engine holds the other end of its stdin, and the end of a process
closes it, however it ended.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading


ALONE = "USI_ENGINE_COMPILE_ALONE"  # set (to anything but "") to compile in one process


def wanted() -> bool:
    """Whether a first start should have the help: the search is not in numba's cache yet,
    there is a second core to compile on, and ALONE is not set."""
    from usi_engine.server.limits import cores

    if os.environ.get(ALONE) or cores() < 2:
        return False
    from usi_engine.core.search import root_search

    cache_file = getattr(getattr(root_search, "_cache", None), "_cache_file", None)
    index = getattr(cache_file, "_index_path", None)
    return index is not None and not os.path.exists(index)


def start() -> subprocess.Popen | None:
    """Start the helper when `wanted()`; None when not wanted or it could not start."""
    if not wanted():
        return None
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, env.get("PYTHONPATH")) if p)
    try:
        helper = subprocess.Popen(
            [sys.executable, "-m", "usi_engine.precompile"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),
        )
    except OSError:
        return None  # the engine compiles alone, as it would on one core
    # reaped as soon as it ends: a finished helper would otherwise stay a zombie process
    # for as long as the engine runs
    threading.Thread(target=helper.wait, name="precompile-reaper", daemon=True).start()
    return helper


def _end_with_the_engine() -> None:
    sys.stdin.buffer.read()  # returns when the engine closes its end or is gone
    os._exit(0)


def main() -> int:
    threading.Thread(target=_end_with_the_engine, name="engine-watch", daemon=True).start()
    from usi_engine.core.compile_plan import helper_share
    from usi_engine.position import exercise_methods
    from usi_engine.search.tsume import warmup

    helper_share()  # what the engine's first isready comes to after the search
    exercise_methods()  # what the engine compiles after its search warmup
    warmup()  # the mate solver, which the engine compiles after `readyok`
    return 0


if __name__ == "__main__":
    sys.exit(main())
