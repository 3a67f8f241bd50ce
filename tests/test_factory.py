"""usi_engine/search/factory.py: networks loaded once per file and FV_SCALE, searchers made
and configured from SearchSettings, the switches of search/switches.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from usi_engine.core.network import INFO_FV_SCALE
from usi_engine.core.params import PARAMS, defaults
from usi_engine.core.tt import new_table
from usi_engine.nnue import read_network
from usi_engine.position import Position
from usi_engine.search import factory
from usi_engine.search.factory import SearchSettings, configure, load_network, make_searcher
from usi_engine.search.searcher import DEFAULT_TT_ENTRIES, Searcher
from usi_engine.search.switches import SWITCHES
from usi_engine.server.options import Options

KP = Path(__file__).resolve().parent / "data" / "nnue" / "kp_256x2-32-32"
POS = Position.from_usi("startpos moves 7g7f 3c3d 8h2b+")


def test_the_same_file_and_fv_scale_give_the_same_arrays():
    a = load_network(str(KP))
    assert load_network(str(KP)).arrays is a.arrays
    assert load_network(str(KP / "nn.bin")).arrays is a.arrays  # the file itself: same file
    assert load_network(f" {KP} ", 16).arrays is a.arrays  # as the option strips it
    other = load_network(str(KP), 32)
    assert other.arrays is not a.arrays
    assert (int(a.arrays.info[INFO_FV_SCALE]), int(other.arrays.info[INFO_FV_SCALE])) == (16, 32)
    assert (a.name, a.source, a.fv_scale) == ("kp_256x2-32-32", str(KP / "nn.bin"), 16)
    shipped = load_network()  # <internal> by default
    assert load_network("<internal>").arrays is shipped.arrays
    assert load_network("").arrays is shipped.arrays  # empty: the shipped network, as EvalDir
    assert POS.evaluate(shipped.arrays) == POS.evaluate(read_network(shipped.source))


def test_a_changed_file_is_read_again(tmp_path):
    folder = tmp_path / "net"
    folder.mkdir()
    shutil.copy(KP / "nn.bin", folder / "nn.bin")
    first = load_network(str(folder))
    (folder / "nn.bin").write_bytes((KP / "nn.bin").read_bytes()[:-4])  # cut short
    with pytest.raises(ValueError, match=str(folder / "nn.bin")):
        load_network(str(folder))
    shutil.copy(KP / "nn.bin", folder / "nn.bin")
    again = load_network(str(folder))
    assert again.arrays is not first.arrays
    assert POS.evaluate(again.arrays) == POS.evaluate(first.arrays)


def test_hand_made_without_evaldir_or_with_handmade():
    assert load_network(None) is None
    assert load_network("handmade") is None and load_network(" Hand-Made ") is None
    searcher = make_searcher()
    assert searcher.network is None
    assert POS.evaluate(searcher.network) == POS.evaluate()


@pytest.mark.parametrize("make", ["junk", "missing", "folder"])
def test_a_bad_evaldir_raises_a_value_error_naming_the_file(tmp_path, make):
    if make == "junk":
        (tmp_path / "nn.bin").write_bytes(b"junk")
    elif make == "folder":
        (tmp_path / "nn.bin").mkdir()
    with pytest.raises(ValueError, match=str(tmp_path / "nn.bin")):
        load_network(str(tmp_path))
    with pytest.raises(ValueError, match="FV_SCALE"):
        load_network(str(KP), 0)


def test_a_network_goes_to_every_thread():
    net = load_network(str(KP))
    searcher = make_searcher(SearchSettings(hash_mb=1, threads=2), network=net)
    assert searcher.network is net.arrays
    assert all(p.net is net.arrays for p in searcher._positions) and len(searcher._positions) == 2


def test_settings_are_applied():
    params = defaults()
    params[0] = PARAMS[0].lo
    settings = SearchSettings(
        hash_mb=1,
        threads=3,
        draw_value=-7,
        switches={"LMR": 0, "Mate1Ply": 1},
        search_params=params,
        max_game_ply=256,
    )
    searcher = make_searcher(settings)
    assert searcher.tt.shape == new_table(1).shape
    assert (searcher.threads, len(searcher._contexts)) == (3, 3)
    assert (searcher.draw_value, searcher.max_game_ply) == (-7, 256)
    assert searcher.switches == {**SWITCHES, "LMR": 0, "Mate1Ply": 1}
    assert searcher.search_params == params
    assert all(list(ctx.sp) == params for ctx in searcher._contexts)
    # settings are the whole configuration: a switch not named goes back to its default
    configure(searcher, SearchSettings(switches={"Futility": 0}))
    assert searcher.switches == {**SWITCHES, "Futility": 0}
    assert searcher.threads == 1 and searcher.tt.shape == new_table(1).shape  # None: table kept
    with pytest.raises(ValueError, match="unknown search switch 'Bogus'"):
        configure(searcher, SearchSettings(hash_mb=2, switches={"Bogus": 1}))
    assert searcher.tt.shape == new_table(1).shape  # nothing changed


def test_a_new_searcher_has_the_searchers_defaults():
    searcher = make_searcher()
    assert searcher.tt.shape[0] == DEFAULT_TT_ENTRIES
    assert (searcher.threads, searcher.draw_value, searcher.max_game_ply) == (1, 0, 0)
    assert searcher.switches == dict(SWITCHES) and searcher.search_params == defaults()


def test_settings_from_usi_options():
    opts = Options.create()
    assert SearchSettings.from_options(opts) == SearchSettings(
        hash_mb=24,
        threads=1,
        draw_value=-2,
        switches=dict(SWITCHES),
        search_params=tuple(defaults()),
        max_game_ply=0,
    )
    for name, value in [
        ("USI_Hash", "64"),
        ("Threads", "2"),
        ("DrawValue", "-50"),
        ("NullMove", "false"),
        ("MaxMovesToDraw", "320"),
        (f"Tune_{PARAMS[0].name}", str(PARAMS[0].hi)),
    ]:
        opts.set(name, value)
    settings = SearchSettings.from_options(opts)
    assert (settings.hash_mb, settings.threads, settings.draw_value, settings.max_game_ply) == (
        64,
        2,
        -50,
        320,
    )
    assert settings.all_switches() == {**SWITCHES, "NullMove": 0}
    assert settings.search_params[0] == PARAMS[0].hi
    assert SearchSettings.from_options(Options.create({})).switches == {}  # none declared: defaults


def test_every_switch_has_its_slot_in_the_core():
    in_core = [name for name in SWITCHES if name not in Searcher.PYTHON_SWITCHES]
    assert list(Searcher._SWITCH_PARAM) == in_core
    assert set(Searcher.PYTHON_SWITCHES) <= set(SWITCHES)
    assert Searcher.SWITCHES is SWITCHES
    with pytest.raises(TypeError):
        SWITCHES["LMR"] = 0  # read-only: copy it to change it


def test_a_made_searcher_searches_as_a_plain_one():
    """The factory only configures: the same nodes as Searcher() at the same depth."""

    def nodes(searcher):
        searcher.new_game()
        result = searcher.think(
            Position(),
            depth=6,
            nodes=None,
            multipv=1,
            stop=np.zeros(1, np.int32),
            on_iteration=lambda info: None,
        )
        return result.info.nodes, result.best

    assert nodes(make_searcher(warmup=True)) == nodes(Searcher())


def test_the_cache_is_small():
    factory._cache.clear()
    load_network(str(KP), 16)
    load_network(str(KP), 17)
    load_network(str(KP), 18)
    assert len(factory._cache) == factory.CACHE_SIZE


class _Out:
    def __init__(self) -> None:
        self.infos: list[str] = []

    def info(self, text: str) -> None:
        self.infos.append(text)


def _backend(searcher):
    from usi_engine.server.backend import Backend

    backend = Backend(Options.create(), _Out(), lambda msg: None)
    backend.searcher = searcher
    backend._machine = (None, 64)  # no limit from the machine
    backend._mate_mb = int(backend.options["MateHash"])  # the mate solver is not the subject
    return backend


def test_the_server_keeps_its_table_when_a_new_one_does_not_fit(monkeypatch):
    import usi_engine.search.searcher as searcher_mod

    backend = _backend(make_searcher())
    backend.configure()
    table = backend.searcher.tt

    def no_memory(megabytes):
        raise MemoryError

    monkeypatch.setattr(searcher_mod, "new_table", no_memory)
    backend.options.set("USI_Hash", "4096")
    backend.options.set("Threads", "2")
    backend.options.set("LMR", "false")
    backend.configure()
    assert backend.out.infos[-1] == "USI_Hash 4096 MB: out of memory, keeping the table in use"
    assert backend.searcher.tt is table
    assert backend.searcher.threads == 2 and backend.searcher.switches["LMR"] == 0


def test_the_server_keeps_its_evaluation_after_a_bad_evaldir(tmp_path):
    backend = _backend(make_searcher())
    backend.options.set("EvalDir", str(KP))
    backend.load_evaluation()
    assert backend.out.infos[-1] == f"evaluation: kp_256x2-32-32 from {KP / 'nn.bin'}, FV_SCALE 16"
    net = backend.searcher.network
    (tmp_path / "nn.bin").write_bytes(b"junk")
    backend.options.set("EvalDir", str(tmp_path))
    backend.load_evaluation()
    assert backend.out.infos[-1].startswith(f"EvalDir: {tmp_path / 'nn.bin'}")
    assert backend.out.infos[-1].endswith("; keeping the previous evaluation")
    assert backend.searcher.network is net
    backend.options.set("EvalDir", "handmade")
    backend.load_evaluation()
    assert backend.out.infos[-1] == "evaluation: hand-made" and backend.searcher.network is None
