"""First start as a new user meets it: the engine process on an empty numba cache, driven
through USI. Reports the time to `readyok` cold, then warm on the cache it filled; asserts
only that both finish and search (the figures depend on the machine and its load).
The warm start also guards numba issue #6061: cached code that calls a recursive function
crashed when loaded from the cache by a second process."""

from __future__ import annotations

import time

from conftest import ISREADY_TIMEOUT, UsiProcess

from test_protocol import assert_legal, go_and_wait


def ready_and_search(cache_dir) -> tuple[float, float]:
    """(seconds from process start to usiok, to readyok); then one short search."""
    eng = UsiProcess(env={"NUMBA_CACHE_DIR": str(cache_dir)})
    try:
        eng.send("usi")
        usiok, _ = eng.read_until("usiok", 30)
        eng.send("isready")
        readyok, _ = eng.read_until("readyok", ISREADY_TIMEOUT)
        eng.send("position startpos moves 7g7f")
        _, best, _, _ = go_and_wait(eng, "go btime 0 wtime 0 byoyomi 500", 60)
        assert_legal("startpos moves 7g7f", best)
        assert eng.quit() < 1.0
        assert eng.stderr_text() == ""
        return usiok - eng.started, readyok - eng.started
    finally:
        eng.kill()


def test_cold_then_warm_readyok(tmp_path):
    t0 = time.monotonic()
    cold_usiok, cold = ready_and_search(tmp_path)
    warm_usiok, warm = ready_and_search(tmp_path)
    assert any(tmp_path.rglob("*.nbi"))                  # the cold start filled the cache
    print(f"readyok after process start: cold {cold:.1f} s (usiok {cold_usiok:.2f} s), "
          f"warm {warm:.2f} s (usiok {warm_usiok:.2f} s); {time.monotonic() - t0:.0f} s in all")
