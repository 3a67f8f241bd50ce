"""Commands given a file that is not theirs: missing, empty, plain text, random bytes, a cut
shard.  Each answers one line naming the file and the problem, exits non-zero, and writes
nothing (no output folder appears).

The commands run in this process through their ``main`` (as the console would, ``SystemExit``
included); one run per command goes through a real subprocess for the exit status.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from usi_engine.cli import SUBCOMMANDS

REPO = Path(__file__).resolve().parent.parent
SHARD = REPO / "tests" / "data" / "training" / "shard_00000.bin"


def script_main(name: str):
    """The main of the subcommand that scripts/NAME.py runs."""
    word = {"train_nnue": "train"}.get(name, name)
    return importlib.import_module(SUBCOMMANDS[word][0]).main


@pytest.fixture
def bad_files(tmp_path):
    """name -> (path, words the refusal must hold)."""
    files = tmp_path / "in"
    files.mkdir()
    (files / "empty.bin").write_bytes(b"")
    (files / "text.bin").write_text("hello world\nthis is not what you think\n")
    (files / "random.bin").write_bytes(bytes((i * 7919 + 13) % 251 for i in range(8000)))
    (files / "cut.bin").write_bytes(SHARD.read_bytes()[:-13])
    return files


def refusal(main, argv, capsys) -> tuple[int, list[str]]:
    """(exit status, the lines written on stderr) of a command's main."""
    try:
        code = main(argv)
        err = capsys.readouterr().err
    except SystemExit as exc:
        err = capsys.readouterr().err
        if isinstance(exc.code, str):  # SystemExit("message"): Python prints it
            code, err = 1, err + exc.code + "\n"
        else:
            code = exc.code
    return code, [line for line in err.splitlines() if line.strip()]


def assert_refused(main, argv, capsys, path, words, out):
    code, lines = refusal(main, argv, capsys)
    assert code not in (0, None), lines
    assert len(lines) == 1, lines
    assert str(path) in lines[0] and words in lines[0], lines[0]
    assert not os.path.exists(out), f"{out} was written"


# --- gensfen --openings --------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, words",
    [
        ("missing.txt", "No such file or directory"),
        ("empty.bin", "no opening position in the file"),
        ("text.bin", "line 1: not a position"),
        ("random.bin", "not a text file of SFEN lines"),
    ],
)
def test_gensfen_openings(bad_files, tmp_path, capsys, name, words):
    out = tmp_path / "gen"
    path = bad_files / name
    assert_refused(
        script_main("gensfen"),
        ["--out", str(out), "--positions", "10", "--workers", "1", "--openings", str(path)],
        capsys,
        path,
        words,
        out,
    )


def test_gensfen_teacher_that_does_not_exist(tmp_path, capsys):
    out = tmp_path / "gen"
    assert_refused(
        script_main("gensfen"),
        ["--out", str(out), "--positions", "10", "--teacher", str(tmp_path / "no-engine")],
        capsys,
        tmp_path / "no-engine",
        "no such file",
        out,
    )


# --- rescore: input shards -----------------------------------------------------------------
SHARD_PROBLEMS = [
    ("missing.bin", "no such file or folder"),
    ("empty.bin", "empty file, no PackedSfenValue record"),
    ("text.bin", "is not a multiple of the 40-byte PackedSfenValue record"),
    ("random.bin", "is not a packed SFEN"),
    ("cut.bin", "is not a multiple of the 40-byte PackedSfenValue record"),
]


@pytest.mark.parametrize("name, words", SHARD_PROBLEMS)
def test_rescore_inputs(bad_files, tmp_path, capsys, name, words):
    out = tmp_path / "scored"
    path = bad_files / name
    # a teacher that exists: the input is refused before it is started
    assert_refused(
        script_main("rescore"),
        [
            str(SHARD),
            str(path),
            "--out",
            str(out),
            "--workers",
            "1",
            "--teacher",
            f"{sys.executable} -m usi_engine",
            "--no-progress",
        ],
        capsys,
        path,
        words,
        out,
    )


# --- train_nnue: data files ----------------------------------------------------------------
@pytest.mark.parametrize("name, words", SHARD_PROBLEMS)
def test_train_data(bad_files, tmp_path, capsys, name, words):
    out = tmp_path / "net"
    path = bad_files / name
    assert_refused(
        script_main("train_nnue"),
        [str(path), str(SHARD), "--out", str(out), "--threads", "1", "--no-progress"],
        capsys,
        path,
        words,
        out,
    )


def test_train_foreign_checkpoint(bad_files, tmp_path, capsys):
    out = tmp_path / "net"
    path = bad_files / "random.bin"
    assert_refused(
        script_main("train_nnue"),
        [str(SHARD), str(SHARD), "--out", str(out), "--threads", "1", "--resume", str(path), "--no-progress"],
        capsys,
        path,
        "not a training checkpoint",
        out,
    )


# --- match: openings, config, engine command -----------------------------------------------
@pytest.mark.parametrize(
    "name, words",
    [
        ("missing.txt", "No such file or directory"),
        ("empty.bin", "no openings in the file"),
        ("text.bin", "line 1: bad opening line"),
        ("random.bin", "not a text file of openings"),
    ],
)
def test_match_openings(bad_files, tmp_path, capsys, name, words):
    out = tmp_path / "match"
    path = bad_files / name
    assert_refused(
        script_main("match"),
        ["--engine", "cmd=true", "--engine", "cmd=true", "--out", str(out), "--openings", str(path)],
        capsys,
        path,
        words,
        out,
    )


@pytest.mark.parametrize(
    "name, words",
    [
        ("missing.txt", "No such file or directory"),
        ("empty.bin", "empty config"),
        ("text.bin", "not a match config"),
        ("random.bin", "not a match config"),
    ],
)
def test_match_config(bad_files, tmp_path, capsys, name, words):
    out = tmp_path / "match"
    path = bad_files / name
    assert_refused(script_main("match"), ["--config", str(path), "--out", str(out)], capsys, path, words, out)


@pytest.mark.parametrize(
    "cmd, words",
    [
        ("{tmp}/no-engine", "no such file"),
        ("no-such-engine-anywhere --usi", "command not found"),
        ("{shard}", "not executable"),
    ],
)
def test_match_engine_that_cannot_start(tmp_path, capsys, cmd, words):
    """Before, the match 'played' its games: each lost at once as a crash."""
    out = tmp_path / "match"
    cmd = cmd.format(tmp=tmp_path, shard=SHARD)
    assert_refused(
        script_main("match"),
        ["--engine", f"cmd={cmd}", "--engine", "cmd=true", "--games", "2", "--out", str(out)],
        capsys,
        cmd.split()[0],
        words,
        out,
    )


# --- the exit status, through real processes -------------------------------------------------
@pytest.mark.parametrize(
    "script, args, words",
    [
        ("gensfen.py", ["--out", "{out}", "--positions", "10", "--openings", "{bad}"], "not a text file"),
        ("rescore.py", ["{bad}", "--out", "{out}", "--teacher", "true"], "is not a packed SFEN"),
        ("train_nnue.py", ["{bad}", "{bad}", "--out", "{out}"], "is not a packed SFEN"),
        (
            "match.py",
            ["--engine", "cmd=true", "--engine", "cmd=true", "--openings", "{bad}", "--out", "{out}"],
            "not a text file",
        ),
    ],
)
def test_exit_status(bad_files, tmp_path, script, args, words):
    out, bad = tmp_path / "out", bad_files / "random.bin"
    argv = [a.format(out=out, bad=bad) for a in args]
    run = subprocess.run(
        [sys.executable, str(REPO / "scripts" / script)] + argv,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode != 0 and run.stdout == ""
    assert run.stderr.count("\n") == 1 and str(bad) in run.stderr and words in run.stderr, run.stderr
    assert not out.exists()
