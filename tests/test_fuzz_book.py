"""Books that users bring from elsewhere, and makebook given what is not its own: a
damaged .db file is read without an exception, every error names a real line, nothing is
invented; makebook refuses a file that is no book or no record with one line and writes
nothing; a makebook search killed with SIGKILL leaves a whole book or none, and a rerun
goes on from it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzing import CASES, byte_mutation, fuzz_settings, text_mutation
from usi_engine.book import Book, BookMove
from usi_engine.book.format import book_key
from usi_engine.position import Position

REPO = Path(__file__).resolve().parent.parent


def sample_book_text(tmp: Path) -> str:
    """A small real book: a few positions from the start, two or three moves each."""
    book = Book()
    pos = Position()
    for ply, (move, reply) in enumerate([("7g7f", "3c3d"), ("2g2f", "8c8d"), ("2f2e", "8d8e")]):
        book.add(pos.sfen(), BookMove(move, reply, 40 - ply * 10, 12, 3 + ply))
        book.add(pos.sfen(), BookMove("5g5f", None, -20, 10, 1))
        pos.push(move)
        book.add(pos.sfen(), BookMove(reply, None, -35, 12, 2))
        pos.push(reply)
    path = tmp / "sample.db"
    book.write(path)
    return path.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def book_text(tmp_path_factory) -> str:
    return sample_book_text(tmp_path_factory.mktemp("book"))


def check_read(path: Path, lines: list[str]) -> Book:
    """Read `path` whole and on the fly: no exception, errors on real lines, entries backed
    by the file's own lines."""
    book = Book.open(path)
    for err in book.errors:
        assert 1 <= err.line <= max(1, len(lines)), err
        assert err.line == 1 or lines[err.line - 1].strip() == err.text.strip(), err
    text = "\n".join(lines)
    keys_in_file = set()
    for line in (line.strip() for line in lines):
        try:
            if line.startswith("sfen"):
                keys_in_file.add(book_key(line)[0])
        except ValueError:
            pass  # an unreadable sfen line backs no entry
    for key, ply, moves in book.entries():
        # The reader takes any whitespace between fields, so compare keys, not text.
        assert key in keys_in_file
        for move in moves:
            assert move.move in text
        book.moves(f"{key} {ply or 1}")  # a lookup of what was read never raises
    on_disk = Book.open(path, on_the_fly=True)
    try:
        for key, ply, _ in book.entries():
            on_disk.moves(f"{key} {ply or 1}")
    finally:
        on_disk.close()
    return book


@fuzz_settings()
@given(data=st.data())
def test_damaged_text_books_are_read_without_an_exception(book_text, tmp_path_factory, data):
    CASES["book (text)"] += 1
    mutated = text_mutation(book_text, data.draw)
    path = tmp_path_factory.mktemp("fuzz") / "book.db"
    path.write_text(mutated, encoding="utf-8")
    check_read(path, mutated.split("\n"))


@fuzz_settings()
@given(data=st.data())
def test_damaged_bytes_of_a_book_are_read_without_an_exception(book_text, tmp_path_factory, data):
    CASES["book (bytes)"] += 1
    mutated = byte_mutation(book_text.encode(), data.draw)
    path = tmp_path_factory.mktemp("fuzz") / "book.db"
    path.write_bytes(mutated)
    check_read(path, mutated.decode("utf-8", errors="replace").split("\n"))


def test_an_intact_section_survives_a_broken_neighbour(book_text, tmp_path):
    """A broken move line costs its own line only: every other entry is kept."""
    lines = book_text.split("\n")
    broken = next(i for i, line in enumerate(lines) if line and not line.startswith(("#", "sfen")))
    lines[broken] = "7g7f 3c3d forty twelve"
    path = tmp_path / "broken.db"
    path.write_text("\n".join(lines), encoding="utf-8")
    book = Book.open(path)
    assert [e.line for e in book.errors] == [broken + 1]
    (tmp_path / "whole.db").write_text(book_text, encoding="utf-8")
    whole = Book.open(tmp_path / "whole.db")
    assert sum(len(m) for _, _, m in book.entries()) == sum(len(m) for _, _, m in whole.entries()) - 1


# --- makebook refuses what is not its own ---------------------------------------------------
def makebook(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "usi_engine", "makebook", *map(str, args)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("content", [b"", b"hello, this is not a book\n", bytes(range(256)) * 4])
def test_propagate_refuses_a_file_that_is_no_book(tmp_path, content):
    source, out = tmp_path / "in.db", tmp_path / "out.db"
    source.write_bytes(content)
    run = makebook("propagate", source, out)
    assert run.returncode == 2 and run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"usi-engine makebook: {source}: not a .db book (")
    assert lines[0].endswith("): nothing written") and lines[0].isascii()
    assert not out.exists() and os.listdir(tmp_path) == ["in.db"]


def test_records_refuses_files_that_are_no_records(tmp_path):
    text, noise, out = tmp_path / "a.kif", tmp_path / "b.csa", tmp_path / "out.db"
    text.write_text("hello\n")
    noise.write_bytes(bytes(range(256)) * 4)
    for source in (text, noise):
        run = makebook("records", out, source, "--quiet")
        assert run.returncode == 1 and not out.exists()
        assert f"in {source}: nothing written" in run.stderr.strip().splitlines()[-1]
    missing = makebook("records", out, tmp_path / "none.kif")
    assert missing.returncode != 0 and f"{tmp_path / 'none.kif'}" in missing.stderr
    assert not out.exists()


def test_a_killed_search_leaves_a_whole_book_and_a_rerun_goes_on(tmp_path):
    out = tmp_path / "grown.db"
    args = [
        sys.executable,
        "-m",
        "usi_engine",
        "makebook",
        "search",
        str(out),
        "--depth",
        "3",
        "--multipv",
        "2",
        "--max-ply",
        "8",
        "--batch",
        "1",
        "--expand-diff",
        "1000",
        "--positions",
        "60",
        "--quiet",
    ]
    proc = subprocess.Popen(args, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 240
    while not out.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)
    assert proc.wait(30) == -signal.SIGKILL, "the search ended before it could be killed"
    assert out.exists(), "the search saved nothing before it was killed"
    killed = Book.open(out, ignore_ply=True)
    assert killed.errors == [] and len(killed) >= 1  # whole, never torn
    rerun = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    grown = Book.open(out, ignore_ply=True)
    assert grown.errors == [] and len(grown) > len(killed)
    assert {book_key(k)[0] for k, _, _ in killed.entries()} <= {k for k, _, _ in grown.entries()}
    assert sorted(os.listdir(tmp_path)) == ["grown.db"]  # no temporary file left
