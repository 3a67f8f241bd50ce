"""The one way to make a Searcher: its settings, its network, and the searcher itself.

    from usi_engine.search.factory import SearchSettings, load_network, make_searcher
    searcher = make_searcher(SearchSettings(hash_mb=64, threads=2),
                             network=load_network("<internal>"), warmup=True)

`SearchSettings` is everything a Searcher is configured with (hash, threads, draw value,
switches, search parameters, the game-length limit); `configure` applies it to a searcher
that exists (the USI server and `Engine` do when options change); `load_network` reads the
network of an EvalDir option value, once per file and FV_SCALE, so that searchers of one
process share its arrays; `make_searcher` puts them together.

Importing this module is cheap (no numba, no numpy): the search is imported when a
searcher is made or a network loaded.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Mapping, Sequence

from .switches import SWITCHES

if TYPE_CHECKING:
    from ..core.network import NetArrays
    from .searcher import Searcher

INTERNAL = "<internal>"  # EvalDir of the network shipped in the package
HANDMADE = "handmade"  # EvalDir of the hand-made evaluation (no network)
DEFAULT_FV_SCALE = 16
CACHE_SIZE = 2  # networks kept loaded: two engines of one process share theirs


@dataclass(frozen=True)
class SearchSettings:
    """How a Searcher searches. None leaves the searcher's own: for a new one, a table of
    2^20 entries (16 MB) and core/params.py's defaults."""

    hash_mb: int | None = None  # transposition table, MB
    threads: int = 1  # Lazy SMP threads
    draw_value: int = 0  # score of a draw by repetition, side to move's view
    switches: Mapping[str, int] = field(default_factory=dict)  # changes to switches.SWITCHES
    search_params: Sequence[int] | None = None  # core/params.py's table, in PARAMS order
    max_game_ply: int = 0  # a draw at this game ply inside the tree; 0: none

    @classmethod
    def from_options(cls, options) -> "SearchSettings":
        """The settings that USI options give (server.options.Options, or anything that
        answers `name in options`, `options[name]` and `options.search_params()`):
        USI_Hash, Threads, DrawValue, MaxMovesToDraw, the Tune_ values and the switches
        the options declare."""
        return cls(
            hash_mb=int(options["USI_Hash"]),
            threads=int(options["Threads"]),
            draw_value=int(options["DrawValue"]),
            switches={name: int(options[name]) for name in SWITCHES if name in options},
            search_params=tuple(int(v) for v in options.search_params()),
            max_game_ply=int(options["MaxMovesToDraw"]),
        )

    def all_switches(self) -> dict[str, int]:
        """Every switch: switches.SWITCHES' defaults with this settings' changes."""
        return {**SWITCHES, **{name: int(value) for name, value in self.switches.items()}}


def configure(searcher: "Searcher", settings: SearchSettings) -> None:
    """Give `searcher` these settings (all switches: those not named go back to their
    defaults). ValueError for an unknown switch; MemoryError when the table cannot be
    made, with nothing changed (apply the settings again with hash_mb=None to keep the
    table in use)."""
    unknown = set(settings.switches) - set(SWITCHES)
    if unknown:
        raise ValueError(f"unknown search switch {sorted(unknown)[0]!r}")
    searcher.configure(
        hash_mb=settings.hash_mb,
        threads=settings.threads,
        draw_value=settings.draw_value,
        switches=settings.all_switches(),
        max_game_ply=settings.max_game_ply,
        search_params=None if settings.search_params is None else list(settings.search_params),
    )


def make_searcher(
    settings: SearchSettings | None = None, *, network: "LoadedNetwork | None" = None, warmup: bool = False
) -> "Searcher":
    """A new Searcher with `settings`, evaluating with `network` (load_network's; None:
    the hand-made evaluation); `warmup` compiles (or loads from numba's cache) the search
    and runs a tiny one, so that no clock runs while that happens."""
    from .searcher import Searcher

    searcher = Searcher()
    configure(searcher, settings or SearchSettings())
    if network is not None:
        searcher.set_network(network.arrays)
    if warmup:
        searcher.warmup()
    return searcher


@dataclass(frozen=True)
class LoadedNetwork:
    """A network as the search uses it (`arrays`, for Searcher.set_network), and which it is."""

    arrays: "NetArrays"
    name: str  # YaneuraOu's name of the architecture: 'halfkp_256x2-32-32'
    source: str  # the file it was read from
    fv_scale: int


_cache: OrderedDict[tuple, LoadedNetwork] = OrderedDict()
_cache_lock = threading.Lock()


def load_network(evaldir: str | None = INTERNAL, fv_scale: int = DEFAULT_FV_SCALE) -> LoadedNetwork | None:
    """The network of an EvalDir option value, None for the hand-made evaluation.

    As the EvalDir option (docs/nnue.md): '<internal>' (the default; also empty, as a GUI
    sends `<empty>`, or 'internal') the network shipped in the package, 'handmade' none,
    else a folder holding nn.bin (a file is taken too). None, no EvalDir at all, is the
    hand-made evaluation too (a labeler or a judge given no network).
    ValueError (nnue.NNUEFormatError) names the file and what is wrong with it; a bad
    FV_SCALE raises ValueError too. The same file (unchanged on disk) and FV_SCALE give
    the same LoadedNetwork, its arrays shared."""
    from ..core.network import load_eval_dir, network_arrays

    file = None if evaldir is None else _network_file(evaldir)
    if file is None:
        return None
    try:
        stat = file.stat()
        key = (str(file.resolve()), stat.st_mtime_ns, stat.st_size, int(fv_scale))
    except OSError:
        key = None  # load_eval_dir says what is wrong
    with _cache_lock:
        if key is not None and key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
        net = load_eval_dir(evaldir)
        loaded = LoadedNetwork(network_arrays(net, int(fv_scale)), net.name, str(net.source), int(fv_scale))
        if key is not None:
            _cache[key] = loaded
            while len(_cache) > CACHE_SIZE:
                _cache.popitem(last=False)
        return loaded


def _network_file(evaldir: str) -> Path | None:
    """The file load_eval_dir reads for `evaldir`; None for the hand-made evaluation."""
    from ..core.network import HANDMADE_NAMES, SHIPPED_NAMES, shipped_network_path

    text = str(evaldir).strip()
    if text.lower() in HANDMADE_NAMES:
        return None
    if text.lower() in SHIPPED_NAMES:
        return shipped_network_path()
    path = Path(text)
    return path if path.is_file() else path / "nn.bin"
