"""The `jit` decorator of the hot code: numba's njit, cached on disk, without reference
counting, and arranged so that the first start compiles as little as possible:

* one compilation per function, not one per call shape (`_one_call_shape`);
* declared signatures compiled on first use, not at import (`_declared_on_first_use`);
* recursive calls typed by their declared return type (`_declared_return_for_recursion`);
* a cache that outlived a change to any of these sources thrown away (`_drop_stale_cache`);
* cache entries read and written under a lock, so that processes can fill one cache together
  (`_cache_entries_under_lock`, for usi_engine/precompile.py).

`usi-engine compile-profile` shows what compiles, how often and for how long.
"""

import contextlib
import hashlib
import inspect
import os
from pathlib import Path

from numba import njit
from numba.core import types as nbtypes
from numba.core.compiler_lock import global_compiler_lock


def jit(signature=None, specialise=(), **kwargs):
    """numba's njit as the hot code uses it: cached on disk, without reference counting,
    compiled once per function (see `_one_call_shape`), and compiled on first use even when
    it declares its signature (see `_declared_on_first_use`).

    `specialise` names parameters that get one compilation per constant value passed
    (numba's literal types), for the rare hot function where that pays: each value costs
    a whole compilation at the first start.

    Hot code never allocates, and the refcount traffic on every array argument (a position
    is ten arrays) cost about 100 ns per call, more than the work of most small functions.
    """
    # no_cfunc_wrapper: numba otherwise adds a C-ABI wrapper to every function, for use as a
    # first-class function value, which this code never does; it cost about a quarter of the
    # compile time of a small function taking a position and a search context
    options = {"cache": True, "_nrt": False, "no_cfunc_wrapper": True}
    options.update(kwargs)

    def decorate(fn):
        dispatcher = njit(**options)(fn)
        _drop_stale_cache(dispatcher)
        if signature is not None:
            _declared_on_first_use(dispatcher, signature)
        return _one_call_shape(dispatcher, specialise)

    return decorate


SOURCES_STAMP = "usi_engine_sources.sha1"
_checked_cache_dirs: set[str] = set()


def sources_digest() -> str:
    """sha1 of the sources of the numba world: every module of this folder."""
    h = hashlib.sha1()
    for path in sorted(Path(__file__).resolve().parent.glob("*.py")):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def _drop_stale_cache(dispatcher) -> None:
    """Empty `dispatcher`'s cache folder if any source of the numba world changed since the
    cache was filled.

    numba checks a cached function against its own file only, and a cached caller holds
    the compiled code of its callees: after an edit (or a `git pull`) of movegen.py the
    cached search of an unchanged search.py still ran the old move generator. A digest of
    all the sources, kept in the cache folder, says whether its entries are still ours.
    Runs at import, before anything is loaded or compiled; once per folder and process.
    """
    folder = getattr(getattr(dispatcher, "_cache", None), "cache_path", None)
    if folder is None or folder in _checked_cache_dirs:
        return
    _checked_cache_dirs.add(folder)
    digest = sources_digest()
    stamp = os.path.join(folder, SOURCES_STAMP)
    try:
        with open(stamp) as f:
            if f.read().strip() == digest:
                return
    except OSError:
        pass
    try:
        os.makedirs(folder, exist_ok=True)
        for name in os.listdir(folder):
            if name.endswith((".nbi", ".nbc")):
                os.remove(os.path.join(folder, name))
        tmp = f"{stamp}.{os.getpid()}"
        with open(tmp, "w") as f:
            f.write(digest + "\n")
        os.replace(tmp, stamp)
    except OSError:
        pass  # a read-only cache: numba falls back to its own checks


def _declared_return_for_recursion():
    """Type a recursive call by the signature's declared return type.

    numba types a self-recursive call by cloning the caller's type inference and running it
    again without the recursive calls, once per recursive call site per propagation round,
    even when the signature states the return type: `search` (five recursive calls) was
    typed about twenty times over, most of its compile time. With a declared return type
    (our recursive functions all declare theirs, numba issue #6061) the call returns that
    type whatever the inference finds, so it is answered directly. Only typing is shortened:
    the LLVM IR of search, qsearch and root_search was checked byte-identical with and
    without. Left out if numba's internals change.
    """
    from numba.core.typeinfer import TypeInferer

    seed, partial = (
        getattr(TypeInferer, name, None) for name in ("seed_return", "return_types_from_partial")
    )
    if seed is None or partial is None or getattr(TypeInferer, "_usi_engine_patched", False):
        return

    def seed_return(self, typ):
        self._usi_engine_declared_return = typ
        return seed(self, typ)

    def return_types_from_partial(self):
        declared = getattr(self, "_usi_engine_declared_return", None)
        return declared if declared is not None else partial(self)

    TypeInferer.seed_return = seed_return
    TypeInferer.return_types_from_partial = return_types_from_partial
    TypeInferer._usi_engine_patched = True


_declared_return_for_recursion()


CACHE_LOCK = "usi_engine_cache.lock"


@contextlib.contextmanager
def _cache_lock(folder: str):
    """Hold the cache folder's lock file (one process at a time)."""
    try:
        f = open(os.path.join(folder, CACHE_LOCK), "a+b")
    except OSError:  # a folder we cannot write: numba writes no entry there either
        f = None
    if f is None:
        yield
        return
    with f:
        _lock_file(f)
        try:
            yield
        finally:
            _unlock_file(f)


def _lock_file(f) -> None:
    if os.name == "nt":
        import msvcrt

        f.seek(0)  # the lock is the file's first byte
        while True:
            try:
                msvcrt.locking(f.fileno(), msvcrt.LK_LOCK, 1)  # gives up after 10 s: again
                return
            except OSError:
                continue
    else:
        import fcntl

        fcntl.flock(f, fcntl.LOCK_EX)


def _unlock_file(f) -> None:
    if os.name == "nt":
        import msvcrt

        f.seek(0)
        msvcrt.locking(f.fileno(), msvcrt.LK_UNLCK, 1)
    else:
        import fcntl

        fcntl.flock(f, fcntl.LOCK_UN)


def _cache_entries_under_lock():
    """Read and write numba's cache entries under a lock shared by every process.

    numba saves an entry by reading the function's index, picking the first unused data
    file name, writing the index, then the data file. Two processes saving two signatures of
    one function at once (the engine and usi_engine/precompile.py, or two engines on an empty
    cache) can pick the same name: one index then points at the other's code. And a load
    between the index and the data write can find an entry whose file is not there yet. With
    the lock an entry is all there or not at all. Left out if numba's internals change.
    """
    from numba.core.caching import IndexDataCacheFile

    save, load = (getattr(IndexDataCacheFile, name, None) for name in ("save", "load"))
    if save is None or load is None or getattr(IndexDataCacheFile, "_usi_engine_locked", False):
        return

    def locked(method):
        def run(self, *args):
            folder = getattr(self, "_cache_path", None)
            if folder is None or not os.path.isdir(folder):
                return method(self, *args)
            with _cache_lock(folder):
                return method(self, *args)

        return run

    IndexDataCacheFile.save = locked(save)
    IndexDataCacheFile.load = locked(load)
    IndexDataCacheFile._usi_engine_locked = True


_cache_entries_under_lock()


def _call_type(t):
    """The type a jitted callee is compiled for: a literal (True, 0, GEN_ALL) as its plain
    type, and any integer narrower than 64 bits as int64 (numba computes in int64 anyway)."""
    t = nbtypes.unliteral(t)
    if isinstance(t, nbtypes.Integer) and t.bitwidth < 64:
        return nbtypes.int64
    return t


def _one_call_shape(dispatcher, specialise=()):
    """Make calls from other jitted code compile `dispatcher` for plain argument types.

    numba otherwise compiles a callee once per distinct argument typing: every literal value
    (`generate(pos, out, GEN_CAPTURES, False)` and `generate(pos, out, GEN_QUIETS, False)` are
    two compilations) and every integer width. That multiplied the first start's compile
    time (16 copies of one move generator helper were seen). Arguments are converted at
    the call site, so the values, and the search, are the same; calls from Python are not
    affected. usi-engine compile-profile shows the compilations per function.
    """
    resolve = dispatcher.get_call_template
    names = list(inspect.signature(dispatcher.py_func).parameters)
    keep = {names.index(name) for name in specialise}

    def get_call_template(args, kws):
        _compile_declared(dispatcher)
        return resolve(
            tuple(a if i in keep else _call_type(a) for i, a in enumerate(args)),
            {k: v if k in specialise else _call_type(v) for k, v in kws.items()},
        )

    dispatcher.get_call_template = get_call_template
    return dispatcher


def _declared_on_first_use(dispatcher, signature):
    """Compile the declared signature when the function is first called (from Python or
    from jitted code), not when its module is imported.

    Recursive functions and their callers declare their signatures (numba issue #6061);
    numba's own `njit(signature)` compiles them at import, so importing a module for one
    function compiled every declared one in it (the whole df-pn solver, when it shared a
    module with `mate_in_1`). The code compiled is the same as
    with njit(signature): that signature only, then no other.
    """
    dispatcher._usi_engine_declared = signature if isinstance(signature, list) else [signature]

    def compile_for_args(*args, **kws):
        _compile_declared(dispatcher)
        return dispatcher  # called again: now it converts the arguments or says why not

    dispatcher._compile_for_args = compile_for_args


def _compile_declared(dispatcher):
    declared = getattr(dispatcher, "_usi_engine_declared", None)
    if declared is None:
        return
    with global_compiler_lock:
        if dispatcher._can_compile:
            for sig in declared:
                dispatcher.compile(sig)
            dispatcher.disable_compile()
