"""Squares, pieces, hands and the move encoding: the one source of truth for constants.

Squares: ``sq = file_index * 9 + rank_index`` where file_index 0..8 is USI file 1..9 and
rank_index 0..8 is USI rank a..i.  Black (sente) moves towards rank a (rank_index 0).

Pieces: a piece type 1..14 (promoted = base + PROMOTED); a coloured piece adds WHITE_BIT
for white (gote).  0 is an empty square.

Moves are int32: ``to | from << 7 | promote << 14 | piece << 15``.  ``from`` is a square
0..80, or ``DROP_BASE + piece_type`` for a drop (82..88).  ``piece`` is the coloured piece
that moves, before promotion, so history tables index a move without looking at the board.
"""
import inspect

import numpy as np
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
    options = {"cache": True, "_nrt": False}
    options.update(kwargs)

    def decorate(fn):
        dispatcher = njit(**options)(fn)
        if signature is not None:
            _declared_on_first_use(dispatcher, signature)
        return _one_call_shape(dispatcher, specialise)
    return decorate


def _declared_return_for_recursion():
    """Type a recursive call by the signature's declared return type.

    numba types a self-recursive call by cloning the caller's type inference and running it
    again without the recursive calls, once per recursive call site per propagation round,
    even when the signature states the return type: `search` (five recursive calls) was
    typed about twenty times over, most of its compile time. With a declared return type
    (our recursive functions all declare theirs, numba issue #6061) that inference can only
    find the declared type, so it is answered directly. Only typing is shortened: the code
    compiled, and cached, is the same. Left out if numba's internals change.
    """
    from numba.core.typeinfer import TypeInferer
    seed, partial = (getattr(TypeInferer, name, None) for name in ("seed_return",
                                                                  "return_types_from_partial"))
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
    time (issue #15: 16 copies of one move generator helper). Arguments are converted at
    the call site, so the values, and the search, are the same; calls from Python are not
    affected. scripts/compile_profile.py shows the compilations per function.
    """
    resolve = dispatcher.get_call_template
    names = list(inspect.signature(dispatcher.py_func).parameters)
    keep = {names.index(name) for name in specialise}

    def get_call_template(args, kws):
        _compile_declared(dispatcher)
        return resolve(tuple(a if i in keep else _call_type(a) for i, a in enumerate(args)),
                       {k: v if k in specialise else _call_type(v) for k, v in kws.items()})

    dispatcher.get_call_template = get_call_template
    return dispatcher


def _declared_on_first_use(dispatcher, signature):
    """Compile the declared signature when the function is first called (from Python or
    from jitted code), not when its module is imported.

    Recursive functions and their callers declare their signatures (numba issue #6061);
    numba's own `njit(signature)` compiles them at import, so importing core/mate.py for
    `mate_in_1` used to compile the whole df-pn solver. The code compiled is the same as
    with njit(signature): that signature only, then no other.
    """
    dispatcher._declared = signature if isinstance(signature, list) else [signature]

    def compile_for_args(*args, **kws):
        _compile_declared(dispatcher)
        return dispatcher      # called again: now it converts the arguments or says why not

    dispatcher._compile_for_args = compile_for_args


def _compile_declared(dispatcher):
    declared = getattr(dispatcher, "_declared", None)
    if declared is None:
        return
    with global_compiler_lock:
        if dispatcher._can_compile:
            for sig in declared:
                dispatcher.compile(sig)
            dispatcher.disable_compile()


NSQ = 81
BLACK = 0
WHITE = 1

# piece types
NO_PIECE = 0
PAWN, LANCE, KNIGHT, SILVER, BISHOP, ROOK, GOLD, KING = 1, 2, 3, 4, 5, 6, 7, 8
PRO_PAWN, PRO_LANCE, PRO_KNIGHT, PRO_SILVER, HORSE, DRAGON = 9, 10, 11, 12, 13, 14
PROMOTED = 8          # added to a base type to promote it
WHITE_BIT = 16        # added to a type for a white piece
PIECE_NB = 32         # size of tables indexed by coloured piece
HAND_NB = 8           # hands[color, PAWN..GOLD]; index 0 unused

# move encoding
MOVE_NONE = 0
MOVE_NULL = (1 << 7) | 1          # from == to: never a real move
DROP_BASE = 81                    # from = DROP_BASE + piece type for a drop
FROM_NB = DROP_BASE + HAND_NB     # size of the from-or-drop axis of butterfly tables
PROMOTE_FLAG = 1 << 14

# limits
MAX_MOVES = 600                   # the most legal moves known in shogi is 593
MAX_PLY = 128                     # search depth limit (plies from the root)
MAX_HISTORY = 4096                # game plies + search plies kept in the key history

# usi letters
PIECE_LETTERS = "?PLNSBRGK"       # index by base type 1..8
HAND_ORDER = (ROOK, BISHOP, GOLD, SILVER, KNIGHT, LANCE, PAWN)   # SFEN hand order
MAX_IN_HAND = np.array([0, 18, 4, 4, 4, 2, 2, 4, 0], dtype=np.int8)


@jit(inline="always")
def make_move(frm, to, piece, promote):
    return to | (frm << 7) | (promote << 14) | (piece << 15)


@jit(inline="always")
def make_drop(pt, to, color):
    return to | ((DROP_BASE + pt) << 7) | ((pt | (color << 4)) << 15)


@jit(inline="always")
def move_to(m):
    return m & 127


@jit(inline="always")
def move_from(m):
    """A square 0..80, or DROP_BASE + piece type for a drop."""
    return (m >> 7) & 127


@jit(inline="always")
def is_drop(m):
    return ((m >> 7) & 127) >= DROP_BASE


@jit(inline="always")
def is_promotion(m):
    return (m >> 14) & 1


@jit(inline="always")
def moved_piece(m):
    """The coloured piece that moves (before promotion); for a drop, the dropped piece."""
    return (m >> 15) & 31


@jit(inline="always")
def moved_piece_after(m):
    return ((m >> 15) & 31) | (((m >> 14) & 1) << 3)


@jit(inline="always")
def color_of(p):
    return p >> 4


@jit(inline="always")
def type_of(p):
    return p & 15


@jit(inline="always")
def base_type(t):
    """Unpromoted type of a piece type (GOLD and KING stay)."""
    return t - PROMOTED if t > KING else t


@jit(inline="always")
def file_of(sq):
    return sq // 9


@jit(inline="always")
def rank_of(sq):
    return sq % 9


@jit(inline="always")
def relative_rank(color, sq):
    """0 is the farthest rank from `color`'s side (rank a for black)."""
    r = sq % 9
    return r if color == BLACK else 8 - r


def square_name(sq: int) -> str:
    return f"{sq // 9 + 1}{'abcdefghi'[sq % 9]}"


def parse_square(text: str) -> int:
    """'7g' -> square index; ValueError on anything else."""
    if len(text) != 2 or text[0] not in "123456789" or text[1] not in "abcdefghi":
        raise ValueError(f"bad square {text!r}")
    return (int(text[0]) - 1) * 9 + "abcdefghi".index(text[1])

