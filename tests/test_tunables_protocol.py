"""The tunable constants as a tuner meets them over USI: hidden from GUIs, declared in
tuning mode, shogiarena's `usi_tunables`, and setoption checked against the table."""

import json

import pytest

from conftest import UsiProcess
from usi_engine.core.params import PARAMS
from usi_engine.server.options import Options


def option_names(lines):
    return [line.split()[2] for line in lines if line.startswith("option name ")]


def test_usi_tunables_declares_the_table_and_tuning_mode():
    eng = UsiProcess()
    try:
        eng.send("usi")
        _, plain = eng.read_until("usiok", 30)
        assert not [n for n in option_names(plain) if n.startswith("Tune_")]
        eng.send("usi_tunables")
        _, answer = eng.read_until("usi_tunablesok", 30)
        manifest_line = [line for line in answer if line.startswith("info string shogiarena_tunables_json ")]
        assert len(manifest_line) == 1
        manifest = json.loads(manifest_line[0].split(" ", 3)[3])
        assert [t["id"] for t in manifest["tunables"]] == [p.name for p in PARAMS]
        assert all(t["option"] == "Tune_" + t["id"] for t in manifest["tunables"])
        eng.send("usi")
        _, tuning = eng.read_until("usiok", 30)
        assert [n for n in option_names(tuning) if n.startswith("Tune_")] == [
            "Tune_" + p.name for p in PARAMS
        ]
    finally:
        eng.quit()


def test_setoption_of_a_tunable_is_range_checked_and_keeps_the_old_value():
    opts = Options.create()
    first = PARAMS[0]
    opts.set("Tune_" + first.name, str(first.lo))
    assert opts.search_params()[0] == first.lo
    with pytest.raises(ValueError, match=f"Tune_{first.name}") as err:
        opts.set("tune_" + first.name.lower(), str(first.hi + 1))
    assert str(first.hi) in str(err.value)
    assert opts.search_params() == [first.lo] + [p.default for p in PARAMS[1:]]
