"""The tunables (core/params.py) as a tuner sees them: Tune_ options and their setoption checks,
shogiarena's usi_tunables answer, a params.py patch."""

import difflib
import json
import os
import re
import subprocess
import sys

import pytest

from usi_engine.server import tunables
from usi_engine.server.options import Options
from usi_engine.core.params import PARAMS

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_option_lines_declare_every_param_as_a_spin():
    opts = Options.create()
    assert not any(line.startswith("option name Tune_") for line in opts.usi_lines())
    opts.tuning = True
    lines = [line for line in opts.usi_lines() if line.startswith("option name Tune_")]
    assert len(lines) == len(PARAMS) > 0
    for line, p in zip(lines, PARAMS):
        assert line == (f"option name Tune_{p.name} type spin default {p.default} min {p.lo} max {p.hi}")
        assert line.isascii()


def test_usi_tunables_answer_has_shogiarenas_form():
    info, done = tunables.usi_tunables_lines()
    assert done == "usi_tunablesok"
    prefix = "info string shogiarena_tunables_json "
    assert info.startswith(prefix) and info.isascii() and "\n" not in info
    data = json.loads(info[len(prefix) :])
    assert data["schema_version"] == "shogiarena.usi_tunables.v1"
    assert [t["id"] for t in data["tunables"]] == [p.name for p in PARAMS]
    for t, p in zip(data["tunables"], PARAMS):
        assert t == {
            "id": p.name,
            "option": f"Tune_{p.name}",
            "value_type": "int",
            "encoding": "integer",
            "default": p.default,
            "min": p.lo,
            "max": p.hi,
            "schedule": {"c_end": p.step, "r_end": 0.002},
        }
        assert p.lo <= p.default <= p.hi  # shogiarena rejects a default outside the bounds


def test_setoption_maps_back_to_the_table():
    opts = Options.create()
    values = [p.default for p in PARAMS]
    for i, p in enumerate(PARAMS):
        opts.set(f"Tune_{p.name}", str(p.hi))
        values[i] = p.hi
        assert opts.search_params() == values
        opts.set(f"tune_{p.name.lower()}", f" {p.lo} ")
        values[i] = p.lo
        assert opts.search_params() == values
        assert f"TUNE_{p.name.upper()}" in opts and opts.get_option(f"TUNE_{p.name.upper()}").tunable
    assert not opts.get_option("USI_Hash").tunable


def test_bad_setoption_values_are_refused_and_nothing_is_lost():
    p = PARAMS[0]
    opts = Options.create()
    before = opts.search_params()
    for name, value, error in [
        ("Tune_NoSuchThing", "1", "unknown option Tune_NoSuchThing"),
        (p.name, "1", f"unknown option {p.name}"),  # the prefix is needed
        (f"Tune_{p.name}", "abc", f"option Tune_{p.name}: expected an integer, got 'abc'"),
        (f"Tune_{p.name}", "1.5", "expected an integer"),
        (f"Tune_{p.name}", str(p.hi + 1), f"option Tune_{p.name}: {p.hi + 1} out of range [{p.lo}, {p.hi}]"),
        (f"Tune_{p.name}", str(p.lo - 1), "out of range"),
    ]:
        with pytest.raises(ValueError, match=re.escape(error)):
            opts.set(name, value)
        assert opts.search_params() == before


def test_params_patch():
    tuned = {p.name: p.lo for p in PARAMS}
    source = open(os.path.join(REPO, "usi_engine", "core", "params.py")).read()
    patched = tunables.with_defaults(source, tuned)
    changed = [
        line
        for line in difflib.unified_diff(source.splitlines(), patched.splitlines(), lineterm="")
        if line.startswith("+") and not line.startswith("+++")
    ]
    assert len(changed) == sum(p.lo != p.default for p in PARAMS)
    namespace: dict = {}
    exec(compile(patched, "params.py", "exec"), namespace)
    assert [q.default for q in namespace["PARAMS"]] == [p.lo for p in PARAMS]
    with pytest.raises(ValueError, match="no Param"):
        tunables.with_defaults(source, {"Bogus": 1})


def test_importing_tunables_does_not_import_numba():
    code = "import sys, usi_engine.server.tunables; assert 'numba' not in sys.modules"
    run = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": REPO},
    )
    assert run.returncode == 0, run.stderr


def _bench_total(capsys, tmp_path, *tune):
    from usi_engine.commands import bench, data_file

    middle = [
        line for line in open(data_file("bench_positions.txt"), encoding="utf-8") if "# middle game" in line
    ]
    positions = tmp_path / "positions.txt"
    positions.write_text(middle[0], encoding="utf-8")
    argv = ["--depth", "8", "--positions", str(positions), *(a for t in tune for a in ("--tune", t))]
    assert bench.main(argv) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("total nodes ")
    return int(last.split()[2])


def test_bench_tune_changes_the_tree_and_defaults_give_it_back(capsys, tmp_path):
    default = _bench_total(capsys, tmp_path)
    default_name = next(p for p in PARAMS if p.name == "QsMoveCount").default
    assert _bench_total(capsys, tmp_path, f"QsMoveCount={default_name}") == default
    assert _bench_total(capsys, tmp_path, "QsMoveCount=0", "LmrCutNode=2") != default


@pytest.mark.parametrize(
    "setting, message",
    [
        ("QsMoveCount", "--tune 'QsMoveCount': expected NAME=INTEGER, e.g. QsMoveCount=2"),
        ("QsMoveCount=two", "--tune 'QsMoveCount=two': expected NAME=INTEGER"),
        ("QsMoveCnt=2", "no tunable named 'QsMoveCnt' (did you mean QsMoveCount?)"),
        ("QsMoveCount=99", "--tune 'QsMoveCount=99': QsMoveCount ranges over 0..16"),
    ],
)
def test_bench_tune_refuses_bad_settings_by_name(capsys, setting, message):
    from usi_engine.commands import bench

    with pytest.raises(SystemExit) as exc:
        bench.main(["--tune", setting])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err
