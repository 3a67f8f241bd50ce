"""The helper process of a first start (usi_engine/precompile.py) and the lock under which
processes share numba's cache (core/jit.py). That the helper's work is what the engine
loads is checked on a real cold start in test_startup.py."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from conftest import REPO, run_python

WANTED = """
from usi_engine import precompile
from usi_engine.core.search import root_search
print(precompile.wanted(), root_search._cache._cache_file._index_path)
"""


def test_wanted_only_while_the_search_is_not_cached(tmp_path):
    empty = run_python(WANTED, tmp_path, timeout=120)
    assert empty.returncode == 0, empty.stderr[-2000:]
    wanted, index = empty.stdout.split()
    assert wanted == "True"  # the test machines have two cores or more
    open(index, "wb").close()  # as if the search had been compiled and cached
    warm = run_python(WANTED, tmp_path, timeout=120)
    assert warm.stdout.split() == ["False", index], warm.stderr[-2000:]


def test_the_helper_ends_with_the_engine_and_says_nothing(tmp_path):
    """Its stdin closed (the engine gone), the helper exits at once, silently."""
    t0 = time.monotonic()
    helper = subprocess.run(
        [sys.executable, "-m", "usi_engine.precompile"],
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)},
    )
    assert helper.returncode == 0
    assert helper.stdout == b"" and helper.stderr == b""
    assert time.monotonic() - t0 < 30  # well before its compile could have finished
    assert not list(tmp_path.rglob("*.nbi"))  # ended before it wrote anything


def test_a_finished_helper_is_reaped_while_the_engine_runs(tmp_path, monkeypatch):
    """The engine never waits for its helper; start() leaves a thread that does, so the
    helper's end does not leave a zombie process beside the engine."""
    from usi_engine import precompile

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(precompile, "wanted", lambda: True)
    helper = precompile.start()
    assert helper is not None
    helper.stdin.close()  # as the engine's end would: the helper exits at once
    deadline = time.monotonic() + 60
    while helper.returncode is None and time.monotonic() < deadline:
        time.sleep(0.05)  # only the reaper's wait() sets returncode: nothing here polls
    assert helper.returncode == 0


HOLD_THE_LOCK = r"""
import sys, time
from usi_engine.core.jit import _file_lock
with _file_lock(sys.argv[1]):
    print("held", flush=True)
    time.sleep(2)
print("released", flush=True)
"""


def test_a_lock_file_admits_one_process_at_a_time(tmp_path):
    from usi_engine.core.jit import CACHE_LOCK, _file_lock

    lock = str(tmp_path / CACHE_LOCK)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_THE_LOCK, lock],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        t0 = time.monotonic()
        with _file_lock(lock):
            waited = time.monotonic() - t0
        assert waited > 1.0  # it waited for the other process to let go
        assert holder.stdout.readline().strip() == "released"
    finally:
        holder.wait(30)


def test_numba_reads_and_writes_cache_entries_under_the_lock():
    from numba.core.caching import IndexDataCacheFile

    import usi_engine.core.jit  # noqa: F401  (installs the lock)

    assert IndexDataCacheFile._usi_engine_locked
    for name in ("save", "load"):
        assert getattr(IndexDataCacheFile, name).__qualname__.startswith("_cache_entries_under_lock")


def test_the_windows_branch_of_the_lock_file(tmp_path, monkeypatch):
    """Where fcntl is missing the lock is msvcrt's on the file's first byte: taken again when
    msvcrt gives up (after 10 s on a held lock), let go on the way out."""
    import types

    from usi_engine.core.jit import CACHE_LOCK, _file_lock

    calls = []

    def locking(fd, mode, nbytes):
        calls.append((mode, nbytes, os.lseek(fd, 0, os.SEEK_CUR)))
        if len(calls) == 1:
            raise OSError("deadlock avoided")  # what msvcrt raises when it gives up

    fake = types.SimpleNamespace(LK_LOCK=1, LK_UNLCK=0, locking=locking)
    monkeypatch.setitem(sys.modules, "msvcrt", fake)
    monkeypatch.setattr(os, "name", "nt")
    with _file_lock(str(tmp_path / CACHE_LOCK)):
        assert calls == [(1, 1, 0), (1, 1, 0)]
    assert calls[2:] == [(0, 1, 0)]


def test_a_file_system_without_locks_compiles_without_them(tmp_path, monkeypatch):
    """Where the file system refuses locks (flock fails with ENOLCK on some network mounts)
    every compile takes a lock file: it must go on unlocked, not fail."""
    import errno
    import fcntl

    from usi_engine.core.jit import _file_lock

    def refuse(f, op):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", refuse)
    ran = []
    with _file_lock(str(tmp_path / "f.compiling")):
        ran.append(True)
    assert ran == [True] and (tmp_path / "f.compiling").exists()
