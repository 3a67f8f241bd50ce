"""The worker pool of the long data jobs: results, a unit's error, a failed set-up and a
dead worker each come back to the run, and leaving the block early leaves no process."""

from __future__ import annotations

import math
import multiprocessing
import os

import pytest

from usi_engine.training.data.workers import WorkerDied, WorkerPool


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
