"""`usi-engine NAME ...`: every subcommand answers --help, and an unknown word is still an
error of the engine's own parser, not a subcommand."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from usi_engine.cli import SUBCOMMANDS

REPO = Path(__file__).resolve().parent.parent


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "usi_engine", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_every_subcommand_answers_help(name):
    done = run(name, "--help")
    assert done.returncode == 0, done.stderr[-1000:]
    assert done.stdout.startswith("usage: ") and done.stderr == ""


def test_help_names_every_subcommand_and_a_wrong_word_is_refused():
    listed = run("--help").stdout
    assert all(f"usi-engine {name}" in listed for name in SUBCOMMANDS)
    wrong = run("matchh")
    assert wrong.returncode == 2 and "unrecognized arguments: matchh" in wrong.stderr
