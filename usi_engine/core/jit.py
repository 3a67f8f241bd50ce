"""The `jit` decorator of the hot code: numba's njit, cached on disk, without reference
counting, and arranged so that the first start compiles as little as possible:

* one compilation per function, not one per call shape (`_one_call_shape`);
* declared signatures compiled on first use, not at import (`_declared_on_first_use`);
* recursive calls typed by their declared return type (`_declared_return_for_recursion`);
* a cache that outlived a change to any of these sources thrown away (`_drop_stale_cache`);
* cache entries read and written under a lock, so that processes can fill one cache together
  (`_cache_entries_under_lock`, for usi_engine/precompile.py), and each function compiled by
  one of them while the others wait for it (`_one_process_compiles_it`);
* the search's big recursive functions compiled apart, not again inside each caller
  (`_calls_to_functions_apart`);
* a function that jitted code compiles gets its entry for Python callers only if Python
  calls it (`_python_entry_on_first_call`).

`usi-engine compile-profile` shows what compiles, how often and for how long.
"""

import contextlib
import hashlib
import inspect
import os
from pathlib import Path

from numba import njit
from numba.core import sigutils, types as nbtypes
from numba.core.compiler_lock import global_compiler_lock


def jit(signature=None, specialise=(), apart=False, after=(), **kwargs):
    """numba's njit as the hot code uses it: cached on disk, without reference counting,
    compiled once per function (see `_one_call_shape`), and compiled on first use even when
    it declares its signature (see `_declared_on_first_use`).

    `specialise` names parameters that get one compilation per constant value passed
    (numba's literal types), for the rare hot function where that pays: each value costs
    a whole compilation at the first start.

    `apart` compiles the function apart: its jitted callers call its own machine code
    instead of a copy linked into theirs (see `_calls_to_functions_apart`). `after` lists
    the functions compiled apart that this one calls: they are compiled or loaded whenever
    this one is, so that a caller loaded from the cache finds them. Both need a declared
    signature.

    Hot code never allocates, and the refcount traffic on every array argument (a position
    is ten arrays) cost about 100 ns per call, more than the work of most small functions.
    """
    # no_cfunc_wrapper: numba otherwise adds a C-ABI wrapper to every function, for use as a
    # first-class function value, which this code never does; it cost about a quarter of the
    # compile time of a small function taking a position and a search context
    options = {"cache": True, "_nrt": False, "no_cfunc_wrapper": True}
    options.update(kwargs)

    if (apart or after) and signature is None:
        raise TypeError("jit(apart=..., after=...) needs a declared signature")

    def decorate(fn):
        if apart:
            _APART.add((fn.__module__, fn.__qualname__))
        dispatcher = njit(**options)(fn)
        dispatcher._usi_engine_after = tuple(after)
        _drop_stale_cache(dispatcher)
        _one_process_compiles_it(dispatcher)
        if signature is not None:
            _declared_on_first_use(dispatcher, signature)
        if apart and _APART_BY_NAME:
            _overloads_apart(dispatcher)
        _python_entry_on_first_call(dispatcher)
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
            if name.endswith((".nbi", ".nbc", ".compiling")):
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
def _file_lock(path: str):
    """Hold the lock file `path` (one process at a time)."""
    try:
        f = open(path, "a+b")
    except OSError:  # a folder we cannot write: numba writes no entry there either
        f = None
    if f is None:
        yield
        return
    with f:
        try:
            _lock_file(f)
        except OSError:  # a file system without locks (some network mounts): go on without
            yield
            return
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
            with _file_lock(os.path.join(folder, CACHE_LOCK)):
                return method(self, *args)

        return run

    IndexDataCacheFile.save = locked(save)
    IndexDataCacheFile.load = locked(load)
    IndexDataCacheFile._usi_engine_locked = True


_cache_entries_under_lock()


_compiling_here: set[str] = set()  # the lock files of the functions this process compiles


def _one_process_compiles_it(dispatcher) -> None:
    """Compile `dispatcher` under a lock of its own in the cache folder, so that of the
    processes filling one cache (the engine and usi_engine/precompile.py on a first start)
    one compiles it and the others, coming to it meanwhile, wait and load it.

    Without it both compiled whatever they met, and the helper could only be given functions
    the engine would not reach before it finished them. With it the helper can take any
    share of the work. numba looks in the cache before it compiles, so the process that
    waited loads the entry. No two processes wait for each other: a function's compile
    holds its lock while it types its callees, so a wait cycle would be a cycle of calls,
    and the only ones (the search's recursion, and calls to a function compiled apart)
    compile nothing more. A function this process is compiling already (its own recursion)
    is not locked again.
    """
    index = getattr(getattr(getattr(dispatcher, "_cache", None), "_cache_file", None), "_index_path", None)
    if index is None:  # not cached: nothing to share
        return
    compile_ = dispatcher.compile
    lock_path = f"{os.path.splitext(index)[0]}.compiling"

    def compile(sig):
        with global_compiler_lock:  # first, as numba's own compile: one thread waits, not two
            args, _ = sigutils.normalize_signature(sig)
            if tuple(args) in dispatcher.overloads or lock_path in _compiling_here:
                return compile_(sig)
            with _file_lock(lock_path):
                _compiling_here.add(lock_path)
                try:
                    return compile_(sig)
                finally:
                    _compiling_here.discard(lock_path)

    dispatcher.compile = compile


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
        _refuse_a_caller_without_after(dispatcher)
        if _APART_BY_NAME and _is_apart(dispatcher.py_func):
            return _call_template_apart(dispatcher, args, kws)
        with _without_python_entry(dispatcher):
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


def compile_declared(dispatcher) -> None:
    """Compile (or load from the cache) `dispatcher`'s declared signatures now, and the
    functions apart named in its `after`, as its first call would."""
    _compile_declared(dispatcher)


def compile_for_jitted_callers(dispatcher, argtypes) -> None:
    """Compile (or load) `dispatcher` for `argtypes` now, as a jitted caller would: without
    the entry Python calls it by (`_without_python_entry`)."""
    with global_compiler_lock, _without_python_entry(dispatcher):
        dispatcher.compile(tuple(argtypes))


def _compile_declared(dispatcher):
    declared = getattr(dispatcher, "_usi_engine_declared", None)
    if declared is None:
        return
    with global_compiler_lock:
        if dispatcher._can_compile:
            for sig in declared:
                dispatcher.compile(sig)
            dispatcher.disable_compile()
            # then the functions apart that it calls: its own code did not need them (it calls
            # them through pointers), but loaded from the cache it needs them loaded. Last, so
            # that another process compiling one of them meanwhile has had the longest time
            for callee in dispatcher._usi_engine_after:
                _compile_declared(callee)


@contextlib.contextmanager
def _without_python_entry(dispatcher):
    """Compile `dispatcher` without the wrapper that Python callers enter it by.

    numba gives every compiled function a CPython wrapper: code that unboxes each argument
    from Python objects, for a function taking a position and a search context dozens of
    arrays, each checked and converted. Most of the hot code is only ever called from other
    jitted code, and the wrappers were about an eighth of the first start's compile (docs/
    perft.md). A compile that jitted code asks for leaves it out; `_python_entry_on_first_call`
    builds it if Python ever calls the function.
    """
    options = dispatcher.targetoptions
    if "no_cpython_wrapper" in options or not _PYTHON_ENTRY_ON_DEMAND:
        yield
        return
    options["no_cpython_wrapper"] = True
    try:
        yield
    finally:
        del options["no_cpython_wrapper"]


def _python_entry_on_first_call(dispatcher):
    """Give a compilation without a Python entry (`_without_python_entry`, now or in an
    earlier process that filled the cache) one when Python first calls it.

    numba would put such a compilation into the table that Python calls are dispatched by,
    with a null entry: a call from Python would crash. It goes into the jitted callers'
    table only (`overloads`); a Python call then finds no entry and asks
    `_compile_for_args`, which builds the wrapper in a module of its own, calling the
    function's existing machine code (nothing is compiled again), and enters it in the
    table. Left out if numba's internals change (every compile then has its wrapper).
    """
    add_overload, compile_for_args = dispatcher.add_overload, dispatcher._compile_for_args
    wrapperless: dict = {}  # argument types -> CompileResult without a Python entry
    entries: dict = {}  # argument types -> its Python entry, kept alive here (numba's table
    # of entries holds no reference: `overloads` keeps the entries it makes itself alive)

    def add_overload_for_jitted_callers(cres):
        fndesc = cres.fndesc
        if cres.objectmode or cres.library.get_pointer_to_function(fndesc.llvm_cpython_wrapper_name):
            return add_overload(cres)
        args = tuple(cres.signature.args)
        dispatcher.overloads[args] = cres
        wrapperless[args] = cres

    def compile_then_enter(*args, **kws):
        entry = compile_for_args(*args, **kws)
        with global_compiler_lock:  # two threads calling it first must not build two entries
            for types_, cres in list(wrapperless.items()):
                entries[types_] = _build_python_entry(dispatcher, cres)
                dispatcher._insert([t._code for t in types_], entries[types_], False)
                del wrapperless[types_]
            for types_, cres in dispatcher.overloads.items():
                if entry is cres.entry_point and types_ in entries:  # null: Python calls this
                    entry = entries[types_]
        return entry

    if not _PYTHON_ENTRY_ON_DEMAND:
        return
    dispatcher.add_overload = add_overload_for_jitted_callers
    dispatcher._compile_for_args = compile_then_enter


def _python_entry_on_demand_possible() -> bool:
    """Whether numba still has what `_build_python_entry` and the dispatcher hooks use; if
    not, every compile keeps its wrapper (`_without_python_entry` leaves it in)."""
    from numba.core.cpu import CPUContext
    from numba.core.dispatcher import Dispatcher
    from numba.core.funcdesc import FunctionDescriptor

    return (
        all(hasattr(Dispatcher, n) for n in ("_insert", "add_overload", "_compile_for_args"))
        and all(hasattr(CPUContext, n) for n in ("create_cpython_wrapper", "get_executable"))
        and hasattr(FunctionDescriptor, "llvm_cpython_wrapper_name")
    )


_PYTHON_ENTRY_ON_DEMAND = _python_entry_on_demand_possible()


def _build_python_entry(dispatcher, cres):
    """numba's CPython wrapper for `cres`, in a library of its own, calling the function's
    machine code already loaded in this process. Called under numba's compiler lock."""
    import llvmlite.binding as ll

    fndesc, context = cres.fndesc, cres.target_context
    # the wrapper calls the function by name: say where it is, whichever module holds it
    ll.add_symbol(fndesc.llvm_func_name, cres.library.get_pointer_to_function(fndesc.llvm_func_name))
    library = context.codegen().create_library(f"{fndesc.qualname}.python_entry")
    release_gil = bool(dispatcher.targetoptions.get("nogil", False))
    context.create_cpython_wrapper(library, fndesc, cres.environment, None, release_gil)
    library.finalize()
    return context.get_executable(library, fndesc, cres.environment)


# (module, qualified name) of the functions compiled apart: jit(apart=True)
_APART: set[tuple[str, str]] = set()


def _is_apart(pyfunc) -> bool:
    return (pyfunc.__module__, pyfunc.__qualname__) in _APART


def _apart_symbol(modname: str, qualname: str, argtypes) -> str:
    """The name of a function compiled apart, for these argument types: known before it is
    compiled, and the same in every process (`_calls_to_functions_apart` makes numba name it
    so), so that its callers can be compiled first, or in another process."""
    from numba.core.funcdesc import default_mangler, qualifying_prefix

    return default_mangler(qualifying_prefix(modname, qualname), tuple(argtypes), uid=0)


def _call_template_apart(dispatcher, args, kws):
    """numba's call template for a call to a function compiled apart, from its declared
    signature: the call needs the callee's types and name, not its code, so nothing is
    compiled here (the caller's `after` compiles it next). So `search` compiles without
    waiting for `qsearch`, whichever process compiles that one (core/compile_plan.py)."""
    from numba.core import typing

    pysig, args = dispatcher._compiler.fold_argument_types(args, kws)
    declared = [sigutils.normalize_signature(sig) for sig in dispatcher._usi_engine_declared]
    template = typing.make_concrete_template(
        f"CallTemplate({dispatcher.py_func.__name__})",
        key=dispatcher.py_func.__name__,
        signatures=[return_type(*types_) for types_, return_type in declared],
    )
    return template, pysig, args, {}


_compiling: list = []  # the dispatchers being compiled in this process, innermost last


def _refuse_a_caller_without_after(callee) -> None:
    """A function compiled apart may only be called from functions that name it in their
    `after`: loaded from the cache, a caller would otherwise call a function that nothing
    loaded (numba then raises "unresolved symbol" at the first call). The caller being
    compiled names it, and so does every function that will hold a copy of the caller:
    the callers around it, out to the first one compiled apart itself."""
    fn = callee.py_func
    if not _is_apart(fn):
        return
    for caller in reversed(_compiling):
        if caller is callee:  # its own recursive call
            return
        if callee not in getattr(caller, "_usi_engine_after", ()):
            name = caller.py_func.__qualname__
            raise TypeError(
                f"{name} calls {fn.__qualname__}, which is compiled apart: name it in {name}'s jit(after=...)"
            )
        if _is_apart(caller.py_func):
            return


def _track_compiling() -> None:
    from numba.core import event

    class Compiling(event.Listener):
        def on_start(self, ev):
            _compiling.append(ev.data["dispatcher"])

        def on_end(self, ev):
            _compiling.pop()

    event.register("numba:compile", Compiling())


def _calls_to_functions_apart() -> bool:
    """Call a function compiled apart through a pointer to its own machine code.

    numba links a copy of every callee into the caller's LLVM module, then optimises the
    module and makes machine code of it, callees included. So `root_search` compiled all of
    `search` and `qsearch` again, and `search` all of `qsearch`: 3 to 4 seconds of a first
    start (docs/perft.md). These recursive functions are never inlined anyway, so their
    callers call them the way numba calls a mutually recursive function (its
    `call_unresolved`): through a pointer that numba sets when a module defining the
    function is loaded, into this process or from the cache. The call costs one load more.

    A function compiled apart gets a name that is the same in every process (numba
    numbers the others in the order a process compiles them), so that a caller
    compiled by one process finds its callee compiled by another in a shared cache. The
    name is known beforehand (`_apart_symbol`), so a call to it is typed from its declared
    signature and lowered by that name (`_call_template_apart`, `_overloads_apart`): the
    caller compiles before it, or beside it in another process. A caller loaded from the
    cache does not load its callees: it names them in `after`, and a caller that does not
    is refused when it compiles. Returns whether this is in place; if numba's internals
    change it is not, and jit(apart=True) links the function into its callers as before.
    """
    from numba.core.base import BaseContext
    from numba.core.bytecode import FunctionIdentity
    from numba.core.codegen import JITCodeLibrary
    from numba.core.funcdesc import PythonFunctionDescriptor

    needed = (
        (BaseContext, "call_unresolved"),
        (BaseContext, "insert_user_function"),
        (FunctionIdentity, "from_function"),
        (JITCodeLibrary, "_finalize_specific"),
        (JITCodeLibrary, "_unserialize"),
        (PythonFunctionDescriptor, "from_specialized_function"),
    )
    if getattr(BaseContext, "_usi_engine_apart", False):
        return True
    if not all(hasattr(owner, name) for owner, name in needed):
        return False
    identify, insert = FunctionIdentity.from_function.__func__, BaseContext.insert_user_function
    finalize = JITCodeLibrary._finalize_specific
    describe = PythonFunctionDescriptor.from_specialized_function.__func__

    def from_function(cls, pyfunc):
        func_id = identify(cls, pyfunc)
        if _is_apart(pyfunc):
            func_id.unique_id = 0  # the mangled name's "v0": the same in every process
            func_id.unique_name = f"{func_id.func_qualname}$apart"
        return func_id

    def describe_specialized(cls, func_ir, *args, abi_tags=(), **kwargs):
        # numba's abi tag encodes the compile's options, which differ between a compile for
        # Python callers and one for jitted callers only: left out, as the uid is, so that
        # `_apart_symbol` knows the name beforehand
        if _is_apart(func_ir.func_id.func):
            abi_tags = ()
        return describe(cls, func_ir, *args, abi_tags=abi_tags, **kwargs)

    def insert_user_function(self, func, fndesc, libs=()):
        if (fndesc.modname, fndesc.qualname) not in _APART:
            return insert(self, func, fndesc, libs)
        # the callers of a function apart call it by `_apart_symbol`, typed and lowered
        # before it was compiled: this is where a wrong guess would be caught, not in a crash
        # at its first call
        if _apart_symbol(fndesc.modname, fndesc.qualname, fndesc.argtypes) != fndesc.mangled_name:
            raise RuntimeError(
                f"{fndesc.qualname} compiled apart as {fndesc.mangled_name}, not as its callers call it"
            )
        _lower_calls_apart(self, func, fndesc.mangled_name, fndesc.argtypes)

    def finalize_specific(self):
        # numba sets the pointers of a module it compiled, but for a module loaded from the
        # cache it looks at an empty module: the loaded one's own (its linkable bitcode,
        # set before it is finalised only then) says which pointers it uses and defines.
        # The pointers it uses are mapped before its code is linked; the functions it
        # defines have addresses only after, and callers loaded before it wait for them
        loaded, linker = self._shared_module, self._codegen._rtlinker
        if loaded is not None:
            linker.scan_unresolved_symbols(loaded, self._codegen._engine)
        finalize(self)
        if loaded is not None:
            linker.scan_defined_symbols(loaded)
            linker.resolve(self._codegen._engine)

    _track_compiling()
    PythonFunctionDescriptor.from_specialized_function = classmethod(describe_specialized)
    FunctionIdentity.from_function = classmethod(from_function)
    JITCodeLibrary._finalize_specific = finalize_specific
    BaseContext.insert_user_function = insert_user_function
    BaseContext._usi_engine_apart = True
    return True


# whether calls to functions apart go by pointer, typed from their declared signatures
_APART_BY_NAME = _calls_to_functions_apart()


def _lower_calls_apart(context, key, symbol: str, argtypes) -> None:
    """Lower a call that numba looks up by `key` as a call through the pointer to
    `symbol` (numba's `call_unresolved`), linking nothing into the caller."""

    def call_apart(context, builder, sig, args):
        return context.call_unresolved(builder, symbol, sig, args)

    call_apart.signature = tuple(argtypes)
    call_apart.libs = ()  # nothing linked: the point
    context._defns[key].append(call_apart, call_apart.signature)


def _overloads_apart(dispatcher) -> None:
    """numba lowers a call to a jitted function by its compiled overload (`get_overload`);
    a function compiled apart may not be compiled yet when its callers are, so a call to it
    is lowered by its name instead (`_apart_symbol`)."""
    get_overload = dispatcher.get_overload
    keys: dict = {}  # argument types -> the key its calls are lowered by

    def overload_or_symbol(sig):
        args, _ = sigutils.normalize_signature(sig)
        args = tuple(args)
        if args not in keys:
            declared = [tuple(sigutils.normalize_signature(d)[0]) for d in dispatcher._usi_engine_declared]
            if args not in declared:
                return get_overload(sig)
            fn = dispatcher.py_func
            symbol = _apart_symbol(fn.__module__, fn.__qualname__, args)
            keys[args] = ("usi_engine apart", symbol)
            _lower_calls_apart(dispatcher.targetctx, keys[args], symbol, args)
        return keys[args]

    dispatcher.get_overload = overload_or_symbol
