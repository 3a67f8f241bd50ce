"""`usi-engine NAME ...`: every subcommand answers --help with its own usage, `--help` names
them all, an unknown word is still an error of the engine's own parser (with a hint), and the
engine's path imports none of them."""

from __future__ import annotations

import io
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

from usi_engine.cli import SUBCOMMANDS

REPO = Path(__file__).resolve().parent.parent


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "usi_engine", *args], cwd=REPO, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_every_subcommand_answers_help(name):
    done = run(name, "--help")
    assert done.returncode == 0, done.stderr[-1000:]
    assert done.stdout.startswith("usage: ") and done.stderr == ""
    # its own usage: the first line names the command (match.py, usi-engine bench, ...), and
    # it is not the engine's
    first = done.stdout.splitlines()[0]
    assert name in first and not first.startswith("usage: usi-engine [-h] [--config PATH]")


def test_help_names_every_subcommand_and_a_wrong_word_is_refused():
    listed = run("--help").stdout
    assert all(f"usi-engine {name}" in listed for name in SUBCOMMANDS)
    wrong = run("matchh")
    assert wrong.returncode == 2 and "unrecognized arguments: matchh" in wrong.stderr
    assert "did you mean 'usi-engine match'?" in wrong.stderr
    assert "usi-engine --help lists the commands" in run("--no-such-flag").stderr


def test_every_subcommand_module_has_a_main():
    for word, (module, what) in SUBCOMMANDS.items():
        assert module.startswith("usi_engine.") and what, word
        path = REPO / (module.replace(".", "/") + ".py")
        assert "\ndef main(argv" in path.read_text(encoding="utf-8"), module


def test_the_engine_and_the_table_import_no_command():
    # `usi` is answered before numba loads: the command line and the commands package import
    # the standard library only; a command's module is imported when its word is given
    code = (
        "import sys, usi_engine.cli, usi_engine.commands\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('numba', 'numpy', 'torch')\n"
        "         or (m.startswith('usi_engine.commands.') or m in ('usi_engine.match.cli',))]\n"
        "print(heavy)"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr


def _joined_lines(source: bytes) -> list[int]:
    """Lines where a triple-quoted string that is not raw ends a line with one backslash
    (after its first character: a backslash right after the quotes only drops that newline)."""
    found = []
    for token in tokenize.tokenize(io.BytesIO(source).readline):
        if token.type != tokenize.STRING:
            continue
        prefix, _, rest = token.string.partition(token.string[-1] * 3)
        if not rest or "r" in prefix.lower():
            continue
        if "\\\n" in rest.replace("\\\\", "")[1:]:
            found.append(token.start[0])
    return found


def test_no_help_text_joins_an_example_to_the_next_line():
    """A shell example continued with a backslash must spell it `\\\\` in a string that is
    not raw: one ends the line inside Python, and --help prints the two lines as one."""
    files = sorted((REPO / "usi_engine").rglob("*.py")) + sorted((REPO / "scripts").rglob("*.py"))
    joined = [
        f"{path.relative_to(REPO)}:{line}" for path in files for line in _joined_lines(path.read_bytes())
    ]
    assert joined == []
