"""core/jit.py: the hot code's decorator compiles once per function (not once per literal or
integer width), compiles declared signatures on first use, and types recursive calls by
their declared return type. The functions here are not cached (cache=False), so every run
really compiles and the counts of compiled signatures mean something."""

from __future__ import annotations

import os

import numpy as np
import pytest
from numba import int64, int32

from usi_engine.core import intrinsics
from usi_engine.core import nnue as cn
from usi_engine.core import tt as ctt
from usi_engine.core.jit import jit


@jit(cache=False)
def _scaled(x, flag):
    return x * 2 if flag else x


@jit(cache=False)
def _calls_with_many_shapes(a):
    small = np.int32(a[0])
    return _scaled(1, True) + _scaled(small, False) + _scaled(a[1], True) + _scaled(7, False)


def test_one_compilation_for_literals_and_integer_widths():
    a = np.array([3, 4], np.int64)
    assert _calls_with_many_shapes(a) == 2 + 3 + 8 + 7
    assert len(_scaled.signatures) == 1
    assert [str(t) for t in _scaled.signatures[0]] == ["int64", "bool"]


@jit(cache=False, specialise=("mode",))
def _by_mode(mode, x):
    if mode == 0:
        return x
    if mode == 1:
        return -x
    return 2 * x


@jit(cache=False)
def _calls_by_mode(x, runtime_mode):
    return _by_mode(0, x) + _by_mode(1, x) + _by_mode(1, x) + _by_mode(runtime_mode, x)


def test_specialised_parameter_compiles_once_per_constant():
    assert _calls_by_mode(5, 2) == 5 - 5 - 5 + 10
    shapes = sorted(str(sig[0]) for sig in _by_mode.signatures)
    assert shapes == ["Literal[int](0)", "Literal[int](1)", "int64"]
    assert all(str(sig[1]) == "int64" for sig in _by_mode.signatures)


@jit(int64(int32[::1], int64), cache=False)
def _declared_sum(buf, n):
    s = 0
    for i in range(n):
        s += buf[i]
    return s


def test_declared_signature_compiles_on_first_use_only():
    assert _declared_sum.signatures == []  # nothing compiled at import
    buf = np.arange(5, dtype=np.int32)
    assert _declared_sum(buf, 5) == 10
    assert len(_declared_sum.signatures) == 1
    with pytest.raises(TypeError):  # no other signature is compiled
        _declared_sum(buf[::2], 2)
    assert len(_declared_sum.signatures) == 1


@jit(int64(int64, int64), cache=False)
def _paths(rows, cols):
    """Lattice paths: two recursive calls, like the search's several call sites."""
    if rows == 0 or cols == 0:
        return np.int64(1)
    return _paths(rows - np.int64(1), cols) + _paths(rows, cols - np.int64(1))


def test_recursion_with_declared_return_type():
    assert _paths(4, 4) == 70
    assert _paths(6, 3) == 84


@jit(cache=False)
def _area(shape):
    return shape[0] * shape[1]


@jit(cache=False)
def _areas(a, b):
    return _area(a) + _area(b)


def test_a_function_compiled_for_jitted_code_gets_its_python_entry_when_python_calls_it():
    """Compiled for a jitted caller, a function has no CPython wrapper (numba's is most of a
    small function's compile); the first Python call builds one, and it stays usable."""
    import gc

    a, b = np.array([2, 3], np.int64), np.array([4, 5], np.int64)
    assert _areas(a, b) == 26
    (cres,) = _area.overloads.values()
    assert cres.library.get_pointer_to_function(cres.fndesc.llvm_cpython_wrapper_name) == 0
    assert _area(a) == 6  # built now
    gc.collect()  # the entry must not go with the call that built it
    assert [_area(b) for _ in range(3)] == [20, 20, 20]
    assert _areas(b, b) == 40 and len(_area.overloads) == 1  # nothing compiled again


@jit(int64(int64), apart=True, cache=False)
def _countdown(n):
    """Recursive and compiled apart, as the search's `search` and `qsearch`."""
    if n <= 0:
        return np.int64(0)
    return np.int64(1) + _countdown(n - np.int64(1))


@jit(int64(int64), after=(_countdown,), cache=False)
def _two_countdowns(n):
    return _countdown(n) + _countdown(n + 1)


@jit(cache=False)
def _countdown_without_after(n):
    return _countdown(n)


def test_a_function_compiled_apart_is_called_not_copied():
    assert _two_countdowns(5) == 11
    callee = next(iter(_countdown.overloads.values())).fndesc.mangled_name
    caller_module = next(iter(_two_countdowns.inspect_llvm().values()))
    assert f"@{callee}(" not in caller_module  # no copy of its code, not even declared
    assert f'@".numba.unresolved${callee}"' in caller_module  # a pointer to it
    assert f"@{callee}(" in next(iter(_countdown.inspect_llvm().values()))  # defined there


def test_a_caller_that_does_not_name_a_function_compiled_apart_is_refused():
    with pytest.raises(TypeError) as refused:
        _countdown_without_after(3)
    assert (
        "_countdown_without_after calls _countdown, which is compiled apart: "
        "name it in _countdown_without_after's jit(after=...)"
    ) in str(refused.value)
    assert _countdown(3) == 3 and _two_countdowns(2) == 5  # nothing else lost


APART_MODULE = """
import numpy as np
from numba import int64
from usi_engine.core.jit import jit


@jit(int64(int64), apart=True)
def countdown(n):
    if n <= 0:
        return np.int64(0)
    return np.int64(1) + countdown(n - np.int64(1))


@jit(int64(int64), after=(countdown,))
def two_countdowns(n):
    return countdown(n) + countdown(n + 1)


print(two_countdowns(5), next(iter(countdown.overloads.values())).fndesc.mangled_name,
      sum(two_countdowns.stats.cache_hits.values()), sum(countdown.stats.cache_hits.values()))
"""


def test_a_function_compiled_apart_has_one_name_in_every_process_and_loads_from_the_cache(tmp_path):
    """A caller compiled by one process and loaded by another (the engine and its helper
    share a cache) finds its callee by name: the names must agree between processes, and a
    caller loaded from the cache must load its callee (numba used to abort there)."""
    import subprocess
    import sys

    (tmp_path / "apart_probe.py").write_text(APART_MODULE)

    def start():
        out = subprocess.run(
            [sys.executable, str(tmp_path / "apart_probe.py")],
            capture_output=True,
            text=True,
            env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")},
        )
        assert out.returncode == 0, out.stderr[-2000:]
        value, name, caller_hits, callee_hits = out.stdout.split()
        return int(value), name, int(caller_hits) + int(callee_hits)

    cold, warm = start(), start()
    assert cold[0] == warm[0] == 11
    assert cold[1] == warm[1] and "B2v0" in cold[1]  # the same name, numbered 0 in both
    assert cold[2] == 0 and warm[2] == 2  # compiled, then both loaded from the cache


@jit(int64(int64), apart=True, cache=False)
def _countup(n):
    if n <= 0:
        return np.int64(0)
    return np.int64(2) + _countup(n - np.int64(1))


@jit(int64(int64), after=(_countup,), cache=False)
def _countups(n):
    return _countup(n) * 10


def test_a_caller_compiles_before_the_function_apart_it_calls():
    """A call to a function compiled apart is typed and lowered from its declared signature
    and the name it will have, so the caller compiles first, with nothing of the callee
    compiled inside it (the engine and its helper compile `search` and `qsearch` at once);
    the callee is compiled next, for `after`, and the caller then reaches it."""
    from numba.core import event

    from usi_engine.core.jit import _apart_symbol

    order = []

    class Order(event.Listener):
        def on_start(self, ev):
            order.append(("start", ev.data["dispatcher"].py_func.__name__))

        def on_end(self, ev):
            order.append(("end", ev.data["dispatcher"].py_func.__name__))

    with event.install_listener("numba:compile", Order()):
        assert _countups(3) == 60
    assert order == [("start", "_countups"), ("end", "_countups"), ("start", "_countup"), ("end", "_countup")]
    (cres,) = _countup.overloads.values()
    assert cres.fndesc.mangled_name == _apart_symbol(__name__, "_countup", (int64,))
    assert f'@".numba.unresolved${cres.fndesc.mangled_name}"' in next(iter(_countups.inspect_llvm().values()))


SHARED_COMPILE = """
import sys, time
from numba import int64
from numba.core import event
from usi_engine.core.jit import jit


@jit(int64(int64))
def slow_to_compile(n):
    return n * 3


class Slow(event.Listener):
    def on_start(self, ev):
        print("compiling", flush=True)
        time.sleep(float(sys.argv[1]))  # a long compile, lock held

    def on_end(self, ev):
        pass


event.register("numba:compile", Slow())
t0 = time.monotonic()
value = slow_to_compile(4)
hits = sum(slow_to_compile.stats.cache_hits.values())
print(value, hits, round(time.monotonic() - t0, 2), flush=True)
"""


def test_of_two_processes_one_compiles_a_function_and_the_other_waits_and_loads_it(tmp_path):
    """The engine and its helper fill one cache: a function that one of them is compiling the
    other waits for, then loads from the cache, instead of compiling it a second time."""
    import subprocess
    import sys

    (tmp_path / "shared_compile.py").write_text(SHARED_COMPILE)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}

    def start(seconds):
        return subprocess.Popen(
            [sys.executable, str(tmp_path / "shared_compile.py"), str(seconds)],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )

    first = start(3)
    try:
        assert first.stdout.readline().strip() == "compiling"
        second = start(0)
        second_out, _ = second.communicate(timeout=120)
        first_out, _ = first.communicate(timeout=120)
    finally:
        first.kill()
    assert first_out.split()[:2] == ["12", "0"]  # compiled it
    assert "compiling" not in second_out  # never compiled it ...
    value, hits, waited = second_out.split()
    assert value == "12" and hits == "1"  # ... but loaded the first one's
    assert float(waited) > 1.0  # after waiting for it


STALE_PROBE = "from usi_engine.core import search, jit; print(next(iter(jit._checked_cache_dirs)))"


def test_a_cache_older_than_the_sources_is_emptied(tmp_path):
    """numba checks a cached function against its own file only; after any change to the
    numba world's sources every cache file of the folder goes (nothing compiles here: the
    import only decorates)."""
    import subprocess
    import sys
    from usi_engine.core.jit import SOURCES_STAMP, sources_digest

    def start():
        out = subprocess.run(
            [sys.executable, "-c", STALE_PROBE],
            capture_output=True,
            text=True,
            env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)},
            check=True,
        )
        return out.stdout.strip()

    folder = start()
    assert folder.startswith(str(tmp_path))
    stamp = os.path.join(folder, SOURCES_STAMP)
    assert open(stamp).read().strip() == sources_digest()
    old = os.path.join(folder, "search.search-1.py311.nbi")
    open(old, "w").write("an index of an older build")
    start()  # same sources: the entry stays
    assert os.path.exists(old)
    open(stamp, "w").write("0" * 40)  # as if the sources had changed since
    start()
    assert not os.path.exists(old)
    assert open(stamp).read().strip() == sources_digest()


def test_perf_profile_maps_freshly_compiled_functions(tmp_path):
    # usi-engine perf-profile names jitted code for perf: the address of every compiled
    # function, written as perf's "<start> <size> <name>" map, names shortened for reading
    from usi_engine.commands.perf_profile import jitted_symbols, write_perf_map, short_name

    _calls_with_many_shapes(np.array([3, 4], np.int64))
    symbols = jitted_symbols([_scaled, _calls_with_many_shapes])
    names = [short_name(name) for _, name in symbols]
    assert any(n.endswith("test_jit._scaled") for n in names), names
    assert any(n.endswith("test_jit._calls_with_many_shapes") for n in names), names
    path = write_perf_map(symbols, str(tmp_path / "perf.map"))
    rows = [line.split() for line in open(path, encoding="ascii")]
    assert [int(r[0], 16) for r in rows] == [a for a, _ in symbols]
    assert all(int(r[1], 16) > 0 for r in rows)
    assert (
        short_name("_ZN10usi_engine4core6search7qsearchB4v141B50c8tJTIeFIjxE")
        == "usi_engine.core.search.qsearch"
    )


@jit(cache=False)
def _probe_after_prefetch(table, key):
    ctt.prefetch(table, key)
    return ctt.probe(table, key)


def test_prefetch_emits_the_instruction_and_changes_no_result():
    """The transposition table's prefetch is a hint: the probe after it reads the same entry,
    and the compiled code holds a real prefetch instruction (not an empty call)."""
    table = ctt.table_for_entries(64)
    key = np.uint64(0x0123_4567_89AB_CDEF)
    ctt.store(table, key, 4242, 37, -5, 12, ctt.BOUND_EXACT, 0, True)
    assert _probe_after_prefetch(table, key) == ctt.probe(table, key)
    assert _probe_after_prefetch(table, key)[:2] == (True, 4242)
    assert not _probe_after_prefetch(table, np.uint64(77))[0]
    asm = _probe_after_prefetch.inspect_asm(_probe_after_prefetch.signatures[0])
    assert "prefetch" in asm


@jit(cache=False)
def _dots(x, x_off, w, out, out_avx2, out_portable, sums):
    for i in range(0, 8, 4):
        intrinsics.dot4_u8_i8(x, x_off, w, i * 64, 64, out, i)
        intrinsics.dot4_u8_i8_avx2(x, x_off, w, i * 64, 64, out_avx2, i)
        intrinsics.dot4_u8_i8_portable(x, x_off, w, i * 64, 64, out_portable, i)
    sums[0] = intrinsics.dot_u8_i8(x, x_off, w, 0, 32)
    sums[1] = intrinsics.dot_u8_i8_avx2(x, x_off, w, 0, 32)
    sums[2] = intrinsics.dot_u8_i8_portable(x, x_off, w, 0, 32)


@jit(cache=False)
def _best_dots(x, w, out):
    intrinsics.dot4_u8_i8(x, 0, w, 0, 64, out, 0)


def test_vector_dot_products_equal_numpy_on_every_instruction_set():
    """The network's dot products (uint8 inputs of a ClippedReLU, int8 weights): the CPU's
    best sequence (AVX-512 VNNI's vpdpbusd where it has it), the AVX2 sequence and the
    portable vector code give numpy's sums, extremes included; the best one is written with
    the instructions of the CPU's instruction set."""
    rng = np.random.default_rng(5)
    for trial in range(300):
        x = rng.integers(0, 128, 100).astype(np.uint8)
        w = rng.integers(-128, 128, 8 * 64).astype(np.int8)
        if trial == 0:
            x[:], w[:] = 127, -128  # the largest products in every pair: no int16 saturation
        elif trial == 1:
            x[:], w[:] = 127, 127
        x_off = int(rng.integers(0, 100 - 64))
        out, out_avx2, out_portable = (np.zeros(8, np.int32) for _ in range(3))
        sums = np.zeros(3, np.int32)
        _dots(x, x_off, w, out, out_avx2, out_portable, sums)
        xs = x[x_off : x_off + 64].astype(np.int64)
        expected = [int(xs @ w[r * 64 : (r + 1) * 64].astype(np.int64)) for r in range(8)]
        assert (
            out.tolist() == expected and out_avx2.tolist() == expected and out_portable.tolist() == expected
        )
        assert sums.tolist() == [int(xs[:32] @ w[:32].astype(np.int64))] * 3
    _best_dots(np.zeros(64, np.uint8), np.zeros(256, np.int8), np.zeros(4, np.int32))
    asm = _best_dots.inspect_asm(_best_dots.signatures[0])
    isa = intrinsics.target_isa()
    if isa == intrinsics.ISA_VNNI:
        assert "vpdpbusd" in asm and "vpmaddubsw" not in asm and "vphaddd" in asm
    elif isa == intrinsics.ISA_AVX2:
        assert "vpmaddubsw" in asm and "vphaddd" in asm
    else:
        assert isa == intrinsics.ISA_PORTABLE and "vpmaddubsw" not in asm and "vpdpbusd" not in asm


@jit(cache=False)
def _layer(w, b, x, x_off, y, sums):
    cn._affine_relu_simd(w, 64, b, 4, 32, 128, x, x_off, y, 3, sums)


def test_affine_layer_equals_numpy_and_compiles_to_plain_vector_code():
    """A layer of the network (uint8 inputs, int8 weights, int32 biases, ClippedReLU of the
    sums >> 6 into uint8) at offsets into larger arrays, as the forward pass calls it,
    equals numpy's; and its loop over the outputs compiles without gathers or byte-by-byte
    extracts, which numba's negative-index handling of `array[offset + i]` had caused."""
    rng = np.random.default_rng(7)
    w = rng.integers(-128, 128, 64 + 32 * 128).astype(np.int8)
    b = rng.integers(-20000, 20000, 4 + 32).astype(np.int32)
    matrix = w[64:].reshape(32, 128).astype(np.int64)
    for _ in range(50):
        x = rng.integers(0, 128, 200).astype(np.uint8)
        x_off = int(rng.integers(0, 200 - 128))
        y, sums = np.full(40, 255, np.uint8), np.zeros(32, np.int32)
        _layer(w, b, x, x_off, y, sums)
        expected = np.clip((b[4:].astype(np.int64) + matrix @ x[x_off : x_off + 128]) >> 6, 0, 127)
        assert y[3:35].tolist() == expected.tolist()
        assert (y[:3] == 255).all() and (y[35:] == 255).all()  # nothing outside the layer's outputs
    asm = _layer.inspect_asm(_layer.signatures[0])
    assert "vpgather" not in asm and "vpextrb" not in asm


@jit(cache=False)
def _fill_through(value_ref, start):
    """A callee taking a tuple of arrays by reference: writes into its arrays and reads
    their shapes and the scalar beside them."""
    board, table, step = intrinsics.deref(value_ref)
    for i in range(board.shape[0]):
        board[i] = start + i * step
    table[table.shape[0] - 1, table.shape[1] - 1] = board.sum()
    return board.shape[0] * 1000 + table.shape[0] * 10 + table.shape[1]


@jit(cache=False)
def _by_ref_caller(board, table, step):
    value = (board, table, step)
    first = _fill_through(intrinsics.by_ref(value), 1)
    second = _fill_through(intrinsics.by_ref(value), 100)  # a second call site, its own slot
    return first, second


def test_by_ref_hands_on_the_arrays_themselves():
    """What the search's by-reference calls rely on: the callee sees the caller's arrays
    (shapes, strides, data) and a scalar, and what it writes lands in the caller's arrays."""
    board = np.zeros(9, np.int32)
    table = np.zeros((3, 4), np.int64)
    first, second = _by_ref_caller(board, table, np.int64(7))
    assert first == second == 9 * 1000 + 3 * 10 + 4
    assert board.tolist() == [100 + 7 * i for i in range(9)]
    assert table[2, 3] == sum(100 + 7 * i for i in range(9))
    assert table.sum() == table[2, 3]
