"""The worker pool of the long data jobs: results, a unit's error, a failed set-up and a
dead worker each come back to the run, leaving the block early leaves no process, and a
stop ends the run wherever in the pool's waiting it arrives."""

from __future__ import annotations

import math
import multiprocessing
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from usi_engine.training.data.workers import UNITS_PER_WORKER, WorkerDied, WorkerPool

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def no_process_left():
    """Every test ends with no worker process of its own still running."""
    before = set(multiprocessing.active_children())
    yield
    assert set(multiprocessing.active_children()) <= before


def test_every_result_comes_back_once():
    with WorkerPool(2, os.getpid) as pool:
        assert sorted(pool.results(math.isqrt, [16, 1, 81, 49])) == [1, 4, 7, 9]


def test_a_units_error_is_raised_in_the_run_and_the_workers_end():
    with pytest.raises(ValueError, match="invalid literal for int"):
        with WorkerPool(2, os.getpid) as pool:
            list(pool.results(int, ["1", "x", "3"]))


def test_a_failed_set_up_is_raised_with_its_own_error():
    with pytest.raises(FileNotFoundError, match="no-such-folder"):
        with WorkerPool(2, os.chdir, ("/no-such-folder",)) as pool:
            list(pool.results(abs, [1, 2, 3]))


def test_a_worker_that_dies_raises_worker_died():
    with pytest.raises(WorkerDied, match="ended abruptly"):
        with WorkerPool(2, os.getpid) as pool:
            list(pool.results(os._exit, [9]))


def test_units_are_handed_to_the_workers_a_few_at_a_time():
    """A run of many shards does not give the executor one future per shard: every wait of
    the pool would watch them all."""
    taken = []

    def units():
        for n in range(1000):
            taken.append(n)
            yield n

    with WorkerPool(2, os.getpid) as pool:
        first = next(pool.results(abs, units()))
        assert first in taken and len(taken) <= UNITS_PER_WORKER * 2


# concurrent.futures' wait locks each future's condition in turn; the signal below arrives
# after the first lock, where a stop used to leave the rest held and the run hung at its end
STOP_INSIDE_THE_WAIT = """
    import os, signal, sys
    from concurrent.futures import _base
    from usi_engine.interrupt import Stopped, stop_on_signals
    from usi_engine.training.data.workers import WorkerPool

    lock_all = _base._AcquireFutures.__enter__
    def lock_one_then_stop(self):
        if len(self.futures) > 1 and not getattr(_base, "stopped", False):
            _base.stopped = True
            self.futures[0]._condition.acquire()
            os.kill(os.getpid(), signal.SIGTERM)
            for future in self.futures[1:]:
                future._condition.acquire()
        else:
            lock_all(self)
    _base._AcquireFutures.__enter__ = lock_one_then_stop

    if __name__ == "__main__":
        try:
            with stop_on_signals(), WorkerPool(2, os.getpid) as pool:
                for _ in pool.results(abs, range(1000)):
                    pass
        except Stopped as exc:
            sys.exit(exc.exit_code)
"""


def test_a_stop_inside_the_pools_wait_ends_the_run(tmp_path):
    script = tmp_path / "stop_inside_the_wait.py"
    script.write_text(textwrap.dedent(STOP_INSIDE_THE_WAIT))
    proc = subprocess.run([sys.executable, str(script)], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 143, proc.stderr
