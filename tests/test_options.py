"""Unit tests of usi_engine.server.options: declarations, setoption parsing, engine.cfg merge."""

import textwrap

import pytest

from usi_engine.search.switches import SWITCHES as ENGINE_SWITCHES
from usi_engine.server.options import Options, ascii_clean

SWITCHES = {"NullMove": 1, "LMR": 1, "Futility": 0, "Margin": 250}


@pytest.fixture
def opts():
    return Options.create(SWITCHES)


def test_declarations(opts):
    lines = opts.usi_lines()
    assert "option name USI_Hash type spin default 24 min 1 max 65536" in lines
    assert "option name USI_Ponder type check default false" in lines
    assert "option name EnteringKingRule type combo default CSA27 var none var CSA24 var CSA27" in lines
    assert "option name NullMove type check default true" in lines
    assert "option name Futility type check default false" in lines
    assert "option name Margin type spin default 250 min 0 max 1000" in lines
    names = [line.split()[2] for line in lines]
    for required in (
        "USI_Hash",
        "MateHash",
        "USI_Ponder",
        "Threads",
        "MultiPV",
        "NetworkDelay",
        "NetworkDelay2",
        "MinimumThinkingTime",
        "SlowMover",
        "ResignValue",
        "DrawValue",
        "MaxMovesToDraw",
        "EnteringKingRule",
    ):
        assert required in names
    assert all(line.isascii() for line in lines)


def test_set_is_case_insensitive(opts):
    opts.set("usi_hash", "256")
    assert opts["USI_Hash"] == 256
    opts.set("USI_PONDER", "TRUE")
    assert opts["usi_ponder"] is True
    opts.set("enteringkingrule", "csa24")
    assert opts["EnteringKingRule"] == "CSA24"
    opts.set("nullmove", "false")
    assert opts.switches() == {"NullMove": 0, "LMR": 1, "Futility": 0, "Margin": 250}


@pytest.mark.parametrize(
    "name,value,message",
    [
        ("USI_Hash", "lots", "option USI_Hash: expected an integer, got 'lots'"),
        ("USI_Hash", "0", "option USI_Hash: 0 out of range [1, 65536]"),
        ("Threads", "100000", "option Threads: 100000 out of range [1, 256]"),
        ("USI_Ponder", "maybe", "option USI_Ponder: expected true or false, got 'maybe'"),
        ("EnteringKingRule", "CSA99", "option EnteringKingRule: 'CSA99' is not one of none, CSA24, CSA27"),
        ("MultiPV", None, "option MultiPV: missing value"),
        ("NoSuchThing", "1", "unknown option NoSuchThing"),
    ],
)
def test_bad_values_keep_the_old_value(opts, name, value, message):
    before = {o.name: o.value for o in opts.all()}
    with pytest.raises(ValueError) as err:
        opts.set(name, value)
    assert str(err.value) == message
    assert {o.name: o.value for o in opts.all()} == before


def test_ascii_clean():
    assert ascii_clean("a\x00b\u00e9c") == "a?b?c"
    assert ascii_clean("x" * 100, 10) == "x" * 10 + "..."


def test_engine_cfg_merge(tmp_path):
    cfg = tmp_path / "engine.cfg"
    cfg.write_text(
        textwrap.dedent("""\
        [options]
        usi_hash = 128        ; comment
        NetworkDelay2 = 500
        NullMove = false
        Threads = many
        Bogus = 3
        [engine]
        log = false
        [weird]
        x = 1
        """)
    )
    opts = Options.create(SWITCHES)
    opts.load_cfg(cfg)
    assert opts["USI_Hash"] == 128
    assert "option name USI_Hash type spin default 128 min 1 max 65536" in opts.usi_lines()
    assert opts["NetworkDelay2"] == 500
    assert opts["NullMove"] is False
    assert "option name NullMove type check default false" in opts.usi_lines()
    assert opts["Threads"] == 1
    assert opts.engine_settings == {"log": "false"}
    assert opts.take_messages() == [
        "engine.cfg: option Threads: expected an integer, got 'many'",
        "engine.cfg: unknown section [weird]",
    ]
    assert opts.report_pending() == ["engine.cfg: unknown option bogus"]


def test_the_engines_switches_are_declared_last_in_their_order(tmp_path):
    opts = Options.create()
    names = [line.split()[2] for line in opts.usi_lines()]
    assert names[-len(ENGINE_SWITCHES) :] == list(ENGINE_SWITCHES)
    assert opts.switches() == dict(ENGINE_SWITCHES)
    cfg = tmp_path / "engine.cfg"
    cfg.write_text("[options]\nMate1Ply = true\n")
    opts.load_cfg(cfg)
    assert "option name Mate1Ply type check default true" in opts.usi_lines()
    assert opts.switches()["Mate1Ply"] == 1 and opts.report_pending() == []


def test_missing_or_broken_cfg_is_reported(tmp_path):
    opts = Options.create({})
    opts.load_cfg(tmp_path / "nope.cfg")
    assert opts.take_messages()[0].startswith("engine.cfg: cannot read")
    bad = tmp_path / "bad.cfg"
    bad.write_text("no section header\n")
    opts.load_cfg(bad)
    assert opts.take_messages()[0].startswith("engine.cfg: File contains no section headers")


def test_repo_engine_cfg_matches_the_builtin_defaults():
    from usi_engine.cli import REPO_CFG, build_options

    plain = Options.create({})
    merged = build_options(REPO_CFG)
    assert merged.take_messages() == []
    for opt in plain.all():
        assert merged[opt.name] == opt.value, opt.name


def test_switches_are_read_without_importing_numba():
    import subprocess
    import sys

    code = (
        "import sys; from usi_engine.server.options import Options; "
        "import usi_engine.cli, usi_engine.server.protocol, usi_engine.server.timeman, usi_engine.server.engine, "
        "usi_engine.search.factory; "
        "s = Options.create().switches(); print(repr(s)); "
        "assert 'numba' not in sys.modules and 'numpy' not in sys.modules"
    )
    from pathlib import Path

    repo = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=repo)
    assert out.returncode == 0, out.stderr
    switches = eval(out.stdout)
    assert switches == dict(ENGINE_SWITCHES)
    assert all(isinstance(v, int) for v in switches.values())


def test_clear_hash_is_a_button_and_consideration_mode_a_check():
    from usi_engine.server.options import BUTTON, Options

    opts = Options.create({})
    lines = opts.usi_lines()
    assert "option name Clear_Hash type button" in lines
    assert not any("Clear Hash" in line for line in lines)  # the chess spelling is not declared
    assert "option name ConsiderationMode type check default false" in lines
    assert "option name RoundUpToFullSecond type check default true" in lines
    assert opts.set("clear_hash", None).type == BUTTON  # pressed: no value needed
    assert opts.set("Clear Hash", "anything").name == "Clear_Hash"  # accepted, same button
    assert "clear hash" in opts and opts.get_option("CLEAR HASH").name == "Clear_Hash"
    opts.set("ConsiderationMode", "true")
    assert opts["ConsiderationMode"] is True


def _shogihome_option(line: str) -> dict:
    """An `option` line read as ShogiHome 1.29.0's USI module reads it: split on single
    spaces; `name` is followed by ONE token, then `type`; the rest are key/value pairs,
    `var` repeatable.  Raises ValueError where ShogiHome logs 'invalid option command'."""
    tokens = line.split(" ")
    if tokens[:2] != ["option", "name"] or len(tokens) < 5 or tokens[3] != "type":
        raise ValueError(f"invalid option command: {line}")
    option = {"name": tokens[2], "type": tokens[4], "vars": []}
    rest = tokens[5:]
    if len(rest) % 2:
        raise ValueError(f"invalid option command: {line}")
    for key, value in zip(rest[::2], rest[1::2]):
        if key == "var":
            option["vars"].append(value)
        elif key in ("default", "min", "max") and key not in option:
            option[key] = value
        else:
            raise ValueError(f"invalid option command: {line}")
    return option


def _check_usi_spec(option: dict) -> None:
    """The USI specification's rules for the declared default, min, max and vars."""
    kind, default = option["type"], option.get("default")
    assert kind in ("check", "spin", "combo", "button", "string", "filename"), option
    if kind == "button":
        assert set(option) == {"name", "type", "vars"} and not option["vars"], option
    elif kind == "check":
        assert default in ("true", "false"), option
    elif kind == "spin":
        low, high, value = int(option["min"]), int(option["max"]), int(default)
        assert low <= value <= high, option
    elif kind == "combo":
        assert option["vars"] and default in option["vars"], option
    else:
        assert default, option  # a string's empty default is spelled <empty>


def test_every_declared_option_reads_in_shogihome_and_by_the_usi_spec():
    from usi_engine.server.options import Options

    for tuning in (False, True):
        opts = Options.create()
        opts.tuning = tuning
        lines = opts.usi_lines()
        assert len(lines) >= 30
        names = []
        for line in lines:
            option = _shogihome_option(line)
            _check_usi_spec(option)
            names.append(option["name"].lower())
        assert len(names) == len(set(names))  # no name declared twice


def test_shogihome_reader_refuses_what_shogihome_refuses():
    """The reader above fails where ShogiHome does, so the test above can fail."""
    for bad in (
        "option name Clear Hash type button",
        "option name Hash type spin default 1 min",
        "option name X type spin default 1 default 2",
    ):
        with pytest.raises(ValueError, match="invalid option command"):
            _shogihome_option(bad)


def test_an_option_name_with_a_space_cannot_be_declared():
    from usi_engine.server.options import BUTTON, Option

    with pytest.raises(ValueError, match="has a space: GUIs drop such options"):
        Option("Clear Hash", BUTTON, None)
