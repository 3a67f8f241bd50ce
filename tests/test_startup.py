"""First start as a new user meets it: the engine process on an empty numba cache, driven
through USI. Reports the time to `readyok` cold, then warm on the cache it filled; asserts
only that both finish and search (the figures depend on the machine and its load).
The warm start also guards numba issue #6061: cached code that calls a recursive function
crashed when loaded from the cache by a second process.

After `readyok` the mate solver is still being compiled in the background (backend.py):
the first `go` must not wait for it, `go mate` must wait and then answer, and nothing that
a game uses may be left to load or compile after `readyok` (it would queue behind the mate
solver's compile and stall a clock).
"""

from __future__ import annotations

import ast
import time

from conftest import ISREADY_TIMEOUT, UsiProcess, run_python

from test_protocol import assert_legal, go_and_wait

MATE_IN_ONE = "4k4/9/4P4/9/9/9/9/9/4K4 b G 1"


def ready_and_search(cache_dir) -> tuple[float, float, float]:
    """(seconds from process start to usiok, to readyok, ms from the first go to its
    bestmove); then `go mate` answered."""
    eng = UsiProcess(env={"NUMBA_CACHE_DIR": str(cache_dir)})
    try:
        eng.send("usi")
        usiok, _ = eng.read_until("usiok", 30)
        eng.send("isready")
        readyok, _ = eng.read_until("readyok", ISREADY_TIMEOUT)
        eng.send("position startpos moves 7g7f")
        first_go_ms, best, _, _ = go_and_wait(eng, "go btime 0 wtime 0 byoyomi 500", 60)
        assert_legal("startpos moves 7g7f", best)
        eng.send("position sfen " + MATE_IN_ONE)
        eng.send("go mate 5000")  # waits for the solver's compile, then has 5 s
        _, lines = eng.read_until("checkmate", ISREADY_TIMEOUT)
        assert lines[-1] == "checkmate G*5b"
        assert eng.quit() < 1.0
        assert eng.stderr_text() == ""
        return usiok - eng.started, readyok - eng.started, first_go_ms
    finally:
        eng.kill()


# in a process on the cache the engines filled: how many signatures the cache holds of
# each function the helper process compiles (usi_engine/precompile.py)
HELPER_SHARE_ENTRIES = r"""
from usi_engine.commands.compile_profile import qualified_name
from usi_engine.core.compile_plan import HELPER_SHARE
print({qualified_name(f): len(f._cache._cache_file._load_index()) for f in HELPER_SHARE})
"""


def test_cold_then_warm_readyok(tmp_path):
    t0 = time.monotonic()
    cold_usiok, cold, cold_go = ready_and_search(tmp_path)
    warm_usiok, warm, warm_go = ready_and_search(tmp_path)
    assert any(tmp_path.rglob("*.nbi"))  # the cold start filled the cache
    # the helper compiled, and the engine loaded, the very signatures the search asks for:
    # had they differed, the engine would have added its own beside the helper's
    run = run_python(HELPER_SHARE_ENTRIES, tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    entries = ast.literal_eval(run.stdout.strip().splitlines()[-1])
    assert entries and set(entries.values()) == {1}, entries
    # byoyomi 500: the first search must not queue behind the mate solver's compile
    assert cold_go < 5000 and warm_go < 5000
    print(
        f"readyok after process start: cold {cold:.1f} s (usiok {cold_usiok:.2f} s, first "
        f"go {cold_go:.0f} ms), warm {warm:.2f} s (usiok {warm_usiok:.2f} s, first go "
        f"{warm_go:.0f} ms); {time.monotonic() - t0:.0f} s in all"
    )


GAME_AFTER_READYOK = r"""
import io, sys, threading, time
from numba.core.registry import CPUDispatcher
from usi_engine.cli import build_options, find_config
from usi_engine.server.protocol import UsiProtocol, Output

class Sink(io.RawIOBase):
    def __init__(self):
        self.text, self.lock = "", threading.Lock()
    def writable(self):
        return True
    def write(self, b):
        with self.lock:
            self.text += bytes(b).decode("ascii")
        return len(b)

def wait_for(sink, token):
    deadline = time.monotonic() + 600
    while token not in sink.text:
        assert time.monotonic() < deadline, f"no {token!r}: {sink.text[-500:]}"
        time.sleep(0.01)
    sink.text = ""

def overloads():
    return {f"{v.py_func.__module__}.{v.py_func.__name__}": len(v.overloads)
            for name, module in list(sys.modules.items()) if name.startswith("usi_engine")
            for v in vars(module).values() if isinstance(v, CPUDispatcher)}

sink = Sink()
proto = UsiProtocol(build_options(find_config(None)[0]), out=Output(stream=sink))
proto.handle("usi"); wait_for(sink, "usiok")
proto.handle("isready"); wait_for(sink, "readyok")
proto.engine.backend.wait_for_mate_solver()
before = overloads()
for line, token in [
        ("usinewgame", None), ("position startpos", None),
        ("go btime 10000 wtime 10000 byoyomi 1000", "bestmove"),
        ("position startpos moves 7g7f 3c3d 8h2b+ 3a2b", None),
        ("go btime 10000 wtime 10000 binc 1000 winc 1000", "bestmove"),
        ("position startpos moves 7g7f 3c3d 8h2b+ 3a2b B*4e", None),
        ("go ponder btime 10000 wtime 10000 byoyomi 1000", None), ("ponderhit", "bestmove"),
        ("position startpos moves 5i5h 5a5b 5h5i 5b5a 5i5h 5a5b 5h5i 5b5a 5i5h 5a5b 5h5i", None),
        ("go depth 3", "bestmove"),
        ("position sfen 9/3k5/9/+R1S6/9/9/9/9/9 b G2Sr2b3gs4n4l18p 1", None),
        ("go btime 0 wtime 0 byoyomi 2000", "bestmove"),
        ("go mate 3000", "checkmate"),
        ("position sfen 4k4/9/9/9/9/9/9/9/4K4 b - 1", None), ("go depth 2", "bestmove"),
        ("setoption name MultiPV value 3", None), ("position startpos", None),
        ("go depth 4", "bestmove"), ("gameover win", None)]:
    proto.handle(line)
    if token:
        wait_for(sink, token)
after = overloads()
print({k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k, 0)})
"""


def test_a_game_loads_nothing_after_readyok():
    """Every numba function a game calls from Python is loaded by the warmup: the `overloads`
    of every dispatcher are the same before and after a game with byoyomi, Fischer, ponder,
    a repetition, a mate probe, `go mate`, bare kings and MultiPV."""
    run = run_python(GAME_AFTER_READYOK)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip().splitlines()[-1] == "{}", run.stdout[-2000:]
