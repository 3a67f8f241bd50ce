"""The first start's two compilers: who compiles what first.

numba compiles in one thread, depth first: typing a function compiles each callee it comes
to, unless the on-disk cache holds it. On an empty cache (a fresh install, or the first
start after the sources changed) the first `isready` compiles the whole search, and on a
machine with a second core the engine starts a helper process (usi_engine/precompile.py)
that compiles into the same cache meanwhile. Two things in core/jit.py let them share the
work without either compiling anything twice or waiting long for the other:

* one process compiles a function while another that comes to it waits, then loads it
  (`_one_process_compiles_it`);
* `search` and `qsearch` are compiled apart, and a call to them is typed and lowered from
  their declared signatures (`_call_template_apart`): `search`, `qsearch` and `root_search`
  compile in any order, each in either process.

So the work is split by plan, not by race. The engine compiles `search` first
(`engine_first`), with the callees it comes to on the way (the evaluation, the history and
the move loop's techniques), then `init_root` and `root_search` when its warmup search
calls them. The helper compiles what the engine comes to after `search` or late in it, in
this order (`helper_share`): `init_root`; the mate probe and the move picker, both of which
`search` comes to late; the quiescence search; the root search. Then the Position methods
and the mate solver (precompile.py). docs/perft.md has the timeline.

`tests/test_startup.py` checks after a real first start that each function of HELPER_SHARE
has one cache entry: had the helper compiled a signature that the engine does not ask for,
the engine would have added its own beside it.
"""

import numpy as np

from .board import ST_SIDE
from .context import CTX_T, POS_T
from .history import NO_CONTINUATION
from .intrinsics import by_ref
from .jit import compile_for_jitted_callers, compile_declared
from .movepick import picker_next
from .search import init_root, qsearch, root_search, search
from .short_mate import mate_in_1_ref
from .types import jit


@jit(cache=False)  # nothing to keep: what counts is its callees, each cached on its own
def _late_callees(pos, ctx):
    """Call the mate probe and the move picker the way the search does. Never run."""
    mate = mate_in_1_ref(by_ref(pos), ctx.mate_buf)
    return picker_next(by_ref(pos), by_ref(ctx), np.int64(1), pos.st[ST_SIDE], NO_CONTINUATION, mate > 0)


# what the helper compiles, in order (tests/test_startup.py checks each signature)
HELPER_SHARE = (init_root, mate_in_1_ref, picker_next, qsearch, root_search)


def engine_first() -> None:
    """What the engine's first `isready` compiles (or loads) before its warmup search."""
    compile_declared(search)


def helper_share() -> None:
    """What the helper compiles while the engine is in `engine_first`."""
    init_root.compile((POS_T, CTX_T))  # as Python calls it, before each search
    compile_for_jitted_callers(_late_callees, (POS_T, CTX_T))
    compile_declared(qsearch)
    for signature in root_search._usi_engine_declared:  # not its `after`: `search` is the engine's
        root_search.compile(signature)
