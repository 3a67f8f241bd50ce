"""Where the first start's time goes: which numba functions compile, how many
specialisations each gets, and how long each takes.

    usi-engine compile-profile                  # cold: a fresh, empty numba cache
    usi-engine compile-profile --signatures     # also every compiled signature
    usi-engine compile-profile --passes         # also the time per compiler pass
    usi-engine compile-profile --cache-dir DIR  # use (and fill) DIR instead
    usi-engine compile-profile --what search    # only the search's warmup
    usi-engine compile-profile --alone          # without the helper process

With an empty cache and two cores or more, `isready` starts a helper process that compiles
part of the search into the same cache (usi_engine/precompile.py): this process then loads
those functions instead of compiling them, and the table shows the load. `--alone` leaves
the helper out, so that the table has every function's compile time. `--what search` and
`--what mate` never start it.

It runs what the first `isready` does, then the mate solver's compile that follows it in
the background (together: `usi-engine --warmup`), with a listener on numba's
"numba:compile" events. A function's *total* time includes the callees compiled while it
was being typed; *self* is its total minus those, so the self column adds up to the
compile time of the whole run. Times are CPU seconds of the compiling thread, comparable
between runs on a loaded machine; the header gives wall times, `readyok` included.
*sigs* counts the signatures compiled (or loaded from the cache) per function: more than
one usually means a literal argument (True, 1), an int32/int64 mix or a C/A array layout
mix (see core/jit.py and docs/perft.md).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import defaultdict


def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog="usi-engine compile-profile",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--cache-dir", help="numba cache directory (default: a fresh empty one)")
    ap.add_argument(
        "--what",
        choices=("engine", "search", "mate"),
        default="engine",
        help="engine: the whole warmup of `isready` (default); search: "
        "Searcher.warmup only; mate: the mate solver only",
    )
    ap.add_argument(
        "--alone",
        action="store_true",
        help="without the helper process of a first start (usi_engine/precompile.py): "
        "every function compiled here, as on one core",
    )
    ap.add_argument("--signatures", action="store_true", help="print every signature")
    ap.add_argument("--top", type=int, default=0, help="only the N slowest functions")
    ap.add_argument(
        "--passes",
        action="store_true",
        help="also the time per numba compiler pass (self time, all functions)",
    )
    return ap.parse_args(argv)


def _clock() -> float:
    """CPU time of the compiling thread: numba compiles in one thread, and CPU time keeps
    the table comparable between runs on a shared, loaded machine (wall time does not)."""
    return time.thread_time()


class CompileTimer:
    """A numba:compile listener: per dispatcher, inclusive and self seconds and the
    signatures compiled. numba compiles under one global lock, so a single stack suffices."""

    def __init__(self):
        from numba.core import event

        self._event = event
        self.stack: list[list] = []  # [key, start, child seconds]
        self.total = defaultdict(float)
        self.self_time = defaultdict(float)
        self.compiles = defaultdict(list)  # key -> [argument types]
        self.pass_stack: list[list] = []  # [pass name, start, child seconds]
        self.pass_time = defaultdict(float)  # pass name -> self seconds

    def __enter__(self):
        timer = self

        class Listener(self._event.Listener):
            def on_start(self, ev):
                timer.stack.append([ev.data["dispatcher"], _clock(), 0.0])

            def on_end(self, ev):
                disp, t0, child = timer.stack.pop()
                dt = _clock() - t0
                key = qualified_name(disp)
                timer.total[key] += dt
                timer.self_time[key] += dt - child
                timer.compiles[key].append(ev.data["args"])
                if timer.stack:
                    timer.stack[-1][2] += dt

        class PassListener(self._event.Listener):
            def on_start(self, ev):
                timer.pass_stack.append([ev.data["name"], _clock(), 0.0])

            def on_end(self, ev):
                name, t0, child = timer.pass_stack.pop()
                dt = _clock() - t0
                timer.pass_time[name] += dt - child
                if timer.pass_stack:
                    timer.pass_stack[-1][2] += dt

        self._listeners = [("numba:compile", Listener()), ("numba:run_pass", PassListener())]
        for kind, listener in self._listeners:
            self._event.register(kind, listener)
        return self

    def __exit__(self, *exc):
        for kind, listener in self._listeners:
            self._event.unregister(kind, listener)


def qualified_name(dispatcher) -> str:
    fn = dispatcher.py_func
    module = fn.__module__.removeprefix("usi_engine.")
    return f"{module}.{fn.__qualname__}"


def type_name(t) -> str:
    """A numba type, with the namedtuples of arrays (PosArrays, SearchCtx, ...) by name."""
    cls = getattr(t, "instance_class", None)
    if cls is not None and hasattr(cls, "_fields"):
        return cls.__name__
    return str(t)


def dispatchers():
    """Every numba dispatcher defined in usi_engine.core, by qualified name."""
    from numba.core.registry import CPUDispatcher

    found = {}
    for name, module in sorted(sys.modules.items()):
        if not name.startswith("usi_engine"):
            continue
        for value in vars(module).values():
            if isinstance(value, CPUDispatcher) and value.py_func.__module__ == name:
                found[qualified_name(value)] = value
    return found


def run_warmup(what: str, t0: float) -> list[str]:
    """Run the warmup; the wall-clock milestones (seconds since the start) as text."""
    if what == "search":
        from usi_engine.search.searcher import Searcher

        Searcher().warmup()
        return []
    if what == "mate":
        import numpy as np
        from usi_engine.position import Position
        from usi_engine.search.tsume import solve

        solve(
            Position("4k4/9/4P4/9/9/9/9/9/4K4 b G 1"),
            stop=np.zeros(1, np.int32),
            time_limit_ms=None,
            nodes=10000,
        )
        return []
    # what the first `isready` does, then the mate solver's compile that follows it
    from usi_engine.server.backend import Backend
    from usi_engine.cli import build_options, find_config

    class Quiet:
        @staticmethod
        def info(text):
            pass

    backend = Backend(build_options(find_config(None)[0]), Quiet(), log=lambda text: None)
    backend.ensure_ready(idle=True)
    ready = time.perf_counter() - t0
    backend.wait_for_mate_solver()
    return [f"readyok at {ready:.1f} s", f"mate solver compiled at {time.perf_counter() - t0:.1f} s"]


def main(argv=None) -> int:
    args = parse_args(argv)
    cache = args.cache_dir or tempfile.mkdtemp(prefix="numba-cold-")
    os.environ["NUMBA_CACHE_DIR"] = cache  # before numba is imported; the helper inherits it
    if args.alone:
        from usi_engine.precompile import ALONE

        os.environ[ALONE] = "1"
    t0, c0 = time.perf_counter(), time.process_time()
    import numba

    with CompileTimer() as timer:
        milestones = run_warmup(args.what, t0)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0

    table = dispatchers()
    rows = []
    for key in set(table) | set(timer.total):
        disp = table.get(key)
        n_sig = len(disp.overloads) if disp is not None else len(timer.compiles[key])
        if n_sig == 0:
            continue
        inline = disp is not None and disp.targetoptions.get("inline", "never") == "always"
        rows.append(
            (
                timer.self_time.get(key, 0.0),
                timer.total.get(key, 0.0),
                len(timer.compiles.get(key, ())),
                n_sig,
                key,
                inline,
            )
        )
    rows.sort(reverse=True)
    compiled = sum(r[0] for r in rows)
    print(f"# numba {numba.__version__}, cache {cache}")
    print(
        f"# wall {wall:.1f} s, CPU {cpu:.1f} s, of which compiling {compiled:.1f} s CPU; "
        f"{sum(r[2] for r in rows)} compilations of {sum(1 for r in rows if r[2])} functions, "
        f"{sum(r[3] for r in rows)} signatures loaded or compiled; "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    if milestones:
        print("# " + ", ".join(milestones) + " (wall)")
    print(f"{'self s':>7} {'total s':>8} {'compiled':>8} {'sigs':>5}  function")
    for self_s, total_s, n_comp, n_sig, key, inline in rows[: args.top or None]:
        mark = "  (inline)" if inline else ""
        print(f"{self_s:7.2f} {total_s:8.2f} {n_comp:8d} {n_sig:5d}  {key}{mark}")
        if args.signatures and key in table:
            for sig in table[key].overloads:
                print(f"{'':32}({', '.join(type_name(t) for t in sig)})")
    if args.passes:
        print(f"\n{'self s':>7}  compiler pass")
        for name, seconds in sorted(timer.pass_time.items(), key=lambda kv: -kv[1]):
            if seconds >= 0.05:
                print(f"{seconds:7.2f}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
