"""Where the search spends its time: a Linux `perf` profile of the jitted code, by function.

    usi-engine perf-profile                          # hand-made evaluation, depth 10
    usi-engine perf-profile --evaldir internal       # the shipped network
    usi-engine perf-profile --depth 11 --top 40

perf samples the process, but numba's machine code lives in anonymous memory that perf
cannot name.  So this command compiles everything afresh (a temporary numba cache: code
loaded from a cache keeps no LLVM module to ask), writes /tmp/perf-<pid>.map with the
address of every jitted function (perf's convention for JIT code), then records the
bench positions' searches with `perf record -p <pid>` and prints `perf report` by symbol
with numba's mangled names shortened to module.function.  Functions that LLVM inlined
count in their caller.  Needs `perf` (Debian: linux-perf) and perf_event_paranoid <= 2;
compiling takes about a minute.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time


def short_name(mangled: str) -> str:
    """'_ZN10usi_engine4core6search7qsearchB4v141B...' -> 'usi_engine.core.search.qsearch'."""
    if not mangled.startswith("_ZN"):
        return mangled
    parts, i = [], 3
    while i < len(mangled) and mangled[i].isdigit():
        j = i
        while mangled[j].isdigit():
            j += 1
        n = int(mangled[i:j])
        parts.append(mangled[j : j + n])
        i = j + n
    return ".".join(parts) or mangled


def engine_dispatchers() -> list:
    """Every numba dispatcher defined in a usi_engine module already imported."""
    from numba.core.registry import CPUDispatcher

    found: dict[int, object] = {}
    for name, module in list(sys.modules.items()):
        if name.startswith("usi_engine"):
            for attr in dir(module):
                disp = getattr(module, attr, None)
                if isinstance(disp, CPUDispatcher):
                    found[id(disp)] = disp
    return list(found.values())


def jitted_symbols(dispatchers) -> list[tuple[int, str]]:
    """(address, LLVM name) of every function compiled for these dispatchers, sorted.
    Code loaded from numba's cache has no LLVM module to list: it is skipped."""
    found = set()
    for disp in dispatchers:
        for cres in disp.overloads.values():
            library = cres.library
            module = getattr(library, "_final_module", None)
            if module is None:
                continue
            for fn in module.functions:
                if not fn.is_declaration:
                    address = library.get_pointer_to_function(fn.name)
                    if address:
                        found.add((address, fn.name))
    return sorted(found)


def write_perf_map(symbols: list[tuple[int, str]], path: str | None = None) -> str:
    """perf's map for this process (or `path`): "<start> <size> <name>" in hex, a function's
    size being the gap to the next one."""
    path = path or f"/tmp/perf-{os.getpid()}.map"
    with open(path, "w", encoding="ascii") as fh:
        for i, (address, name) in enumerate(symbols):
            end = symbols[i + 1][0] if i + 1 < len(symbols) else address + 4096
            fh.write(f"{address:x} {min(end - address, 1 << 20):x} {name}\n")
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="usi-engine perf-profile",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "--evaldir",
        default="handmade",
        help="handmade, internal (the shipped network) or a folder with nn.bin",
    )
    ap.add_argument("--depth", type=int, default=10)
    ap.add_argument("--top", type=int, default=30, help="functions to print")
    ap.add_argument(
        "--out",
        default=os.path.join(tempfile.gettempdir(), "usi_engine_perf.data"),
        help="perf's data file (perf report -i FILE reads it again)",
    )
    args = ap.parse_args(argv)
    if subprocess.run(["sh", "-c", "command -v perf"], capture_output=True).returncode != 0:
        print("perf not found: install linux-perf (Debian) or linux-tools (Ubuntu)")
        return 2
    os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="usi_engine_numba_")
    from . import bench, nnue_bench  # numba loads after NUMBA_CACHE_DIR is set

    searcher = bench.make_searcher(bench.DEFAULT_HASH_MB, 1, net=nnue_bench.load(args.evaldir))
    symbols = jitted_symbols(engine_dispatchers())
    write_perf_map(symbols)
    print(f"# {len(symbols)} jitted functions mapped; evaluation {args.evaldir}, depth {args.depth}")
    recorder = subprocess.Popen(
        ["perf", "record", "-F", "999", "-o", args.out, "-p", str(os.getpid())],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(1.0)  # perf attaches before the first search
    nodes, t0 = 0, time.perf_counter()
    for sfen, _comment in bench.load_positions(bench.DEFAULT_POSITIONS):
        bench.fresh(searcher)
        result, _ = bench.timed_think(searcher, bench.make_position(sfen), depth=args.depth, movetime_ms=None)
        nodes += result.info.nodes if result.info else 0
    seconds = time.perf_counter() - t0
    recorder.send_signal(signal.SIGINT)
    recorder.wait()
    print(f"# {nodes} nodes in {seconds:.2f} s under perf")
    report = subprocess.run(
        ["perf", "report", "-i", args.out, "--sort", "sym", "--stdio"], capture_output=True, text=True
    ).stdout
    # a function compiled for several argument types or constants counts once, summed
    share: dict[str, float] = {}
    for line in report.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+\[\.\]\s+(\S+)", line)
        if m:
            name = short_name(m.group(2))
            share[name] = share.get(name, 0.0) + float(m.group(1))
    for name, percent in sorted(share.items(), key=lambda kv: -kv[1])[: args.top]:
        print(f"{percent:6.2f}%  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
