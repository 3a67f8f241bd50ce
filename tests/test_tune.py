"""scripts/tune.py end to end with a fixture engine whose strength depends on two options:
SPSA moves them towards the optimum, a stopped run resumes, the outputs are written."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import pytest

from usi_engine.match import tune, tunecli
from usi_engine.match.spsa import Spsa

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
START, OPTIMUM = (20.0, 80.0), (60.0, 30.0)  # see tests/fixtures/tunable_engine.py


def _args(out, pairs: int = 100) -> list[str]:
    return [
        "--engine",
        f"cmd={sys.executable} {FIXTURES}/tunable_engine.py",
        "--param",
        "Alpha",
        "20",
        "0",
        "100",
        "15",
        "0.15",
        "--param",
        "Beta",
        "80",
        "0",
        "100",
        "15",
        "0.15",
        "--pairs",
        str(pairs),
        "--byoyomi",
        "2000",
        "--concurrency",
        "2",
        "--seed",
        "3",
        "--max-moves",
        "200",
        "--quiet",
        "--out",
        str(out),
    ]


def test_tuning_moves_towards_the_optimum_and_resumes(tmp_path, capsys):
    config = tunecli.build_config(tunecli.build_parser().parse_args(_args(tmp_path / "run")))
    tuner = tune.Tuner(config)

    def stop_at_40(t: tune.Tuner) -> None:
        if t.spsa.done == 40:
            raise KeyboardInterrupt

    first = tuner.run(stop_at_40)
    assert first.interrupted and tuner.spsa.done == 40
    saved = Spsa.load(str(tmp_path / "run" / "spsa.json"))
    assert saved.done == 40 and saved.theta == tuner.spsa.theta and len(saved.history) == 41
    with pytest.raises(SystemExit):  # no silent overwrite of a run
        tunecli.main(_args(tmp_path / "run"))
    assert "exists: --resume" in capsys.readouterr().err

    assert tunecli.main(_args(tmp_path / "run") + ["--resume"]) == 0
    printed = capsys.readouterr().out
    assert "40/100 pairs done" in printed and "Finished: 100/100 pairs" in printed
    final = Spsa.load(str(tmp_path / "run" / "spsa.json"))
    assert final.done == 100 and len(final.history) == 101 and final.history[40] == saved.theta
    assert math.dist(final.theta, OPTIMUM) < 40 < math.dist(START, OPTIMUM)
    cfg = (tmp_path / "run" / "tuned.cfg").read_text()
    values = final.rounded()
    assert f"Alpha = {values['Alpha']}" in cfg and "[options]" in cfg
    assert (tmp_path / "run" / "spsa.png").read_bytes()[:4] == b"\x89PNG"
    assert f"option.Alpha={values['Alpha']}" in printed  # the SPRT to run next


def test_table_params_and_bad_arguments():
    params = tune.table_params(["razormargin", "Tune_FutilityMargin"])
    assert [p.name for p in params] == ["Tune_RazorMargin", "Tune_FutilityMargin"]
    assert all(p.lo <= p.start <= p.hi and p.r_end == 0.002 for p in params)
    with pytest.raises(ValueError, match="Bogus: not in core/params.py"):
        tune.table_params(["Bogus"])
    with pytest.raises(ValueError, match="NAME START MIN MAX C_END"):
        tunecli.parse_param(["X", "1", "2"])
    with pytest.raises(ValueError, match="outside"):
        tunecli.parse_param(["X", "200", "0", "100", "5"])


def test_params_patch_for_the_table(tmp_path):
    config = tunecli.build_config(
        tunecli.build_parser().parse_args(
            ["--engine", "cmd=x", "--params", "RazorMargin", "--pairs", "10", "--out", str(tmp_path)]
        )
    )
    tuner = tune.Tuner(config)
    tuner.spsa.theta = [tuner.spsa.params[0].start + 7.4]
    files = tuner.write_outputs()
    patch = open(files["patch"]).read()
    default = tuner.spsa.params[0].start
    assert f'-    Param("RazorMargin", {default:g},' in patch
    assert f'+    Param("RazorMargin", {default + 7:g},' in patch
    applied = subprocess.run(
        ["git", "apply", "--check", files["patch"]], cwd=REPO, capture_output=True, text=True
    )
    assert applied.returncode == 0, applied.stderr
    assert f"Tune_RazorMargin = {default + 7:g}" in open(files["cfg"]).read()
