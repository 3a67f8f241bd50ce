"""Stopping a gensfen (or rescore) run: a signal to the run, whether sent by Ctrl-C to the terminal's
process group or by `kill` to the parent alone (a background job, which starts with SIGINT
ignored), ends the parent, its worker processes and their teacher engines, and keeps every
finished shard; a run killed outright (SIGKILL, the out-of-memory killer) takes its workers
and teachers with it within seconds."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from processes import RANDOM_ENGINE, alive, children_of, live_processes, processes_with, wait_for

from usi_engine.training.data import psv

REPO = Path(__file__).resolve().parent.parent


def start_run(out: Path, name: str, *, ignore_sigint: bool, new_session: bool) -> subprocess.Popen:
    """A two-worker gensfen run whose teachers are slow random movers named `name`."""
    teacher = f"{sys.executable} {RANDOM_ENGINE} --sleep-ms 20 --name {name}"
    cmd = [
        sys.executable, "-m", "usi_engine", "gensfen", "--out", str(out), "--positions", "100000",
        "--shard-size", "20", "--seed", "3", "--workers", "2", "--teacher", teacher,
        "--teacher-go", "depth 1", "--no-progress",
    ]  # fmt: skip

    def background_job():  # what `cmd &` in a script gives: SIGINT ignored from the start
        if ignore_sigint:
            signal.signal(signal.SIGINT, signal.SIG_IGN)

    return subprocess.Popen(
        cmd,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=background_job,
        start_new_session=new_session,
    )


def assert_nothing_outlived_the_run(name: str, workers: list[int], out: Path) -> None:
    """No teacher and no worker is left, and every shard on disk is whole (a rerun goes on
    from it)."""
    assert wait_for(lambda: not processes_with(name), 10), "a teacher outlived its run"
    assert wait_for(lambda: not any(alive(pid) for pid in workers), 10), "a worker outlived its run"
    for shard in out.glob("shard_*.bin"):
        assert len(psv.read_records(str(shard))) == 20
    assert not list(out.glob("*.tmp*"))


def clean_up(proc: subprocess.Popen, name: str) -> None:
    """Whatever a failed test left running."""
    if proc.poll() is None:
        proc.kill()
    for pid in processes_with(name):
        os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize(
    "how",
    [
        "SIGINT to the parent of a background job",
        "SIGTERM to the parent",
        "Ctrl-C to the process group",
        "SIGKILL to the parent",
    ],
)
def test_a_signal_ends_the_run_its_workers_and_their_teachers(tmp_path, how):
    name = f"teacher-{uuid.uuid4().hex}"
    out = tmp_path / "run"
    proc = start_run(out, name, ignore_sigint=how.startswith("SIGINT"), new_session=how.startswith("Ctrl-C"))
    try:
        # both teachers answer and at least one shard is saved before the signal
        assert wait_for(lambda: len(processes_with(name)) == 2 and any(out.glob("shard_*.json")), 120)
        workers = children_of(proc.pid)
        assert len(workers) >= 2
        if how.startswith("Ctrl-C"):
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(getattr(signal, how.split()[0]))
        _, stderr = proc.communicate(timeout=30)
        if how.startswith("SIGKILL"):  # nothing can be said; the workers see their run gone
            assert proc.returncode == -signal.SIGKILL
        else:
            assert proc.returncode == 128 + getattr(signal, how.split()[0].replace("Ctrl-C", "SIGINT"))
            assert "gensfen: stopped by SIG" in stderr and "the same command goes on" in stderr, stderr
        assert list(out.glob("shard_*.bin"))
        assert_nothing_outlived_the_run(name, workers, out)
    finally:
        clean_up(proc, name)


def test_a_background_rescore_stopped_by_sigint_ends_its_workers_and_teachers(tmp_path):
    """rescore's pool of teachers stops the same way (the same worker set-up)."""
    name = f"teacher-{uuid.uuid4().hex}"
    teacher = f"{sys.executable} {RANDOM_ENGINE} --sleep-ms 200 --name {name}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "usi_engine", "rescore", str(REPO / "tests" / "data" / "training"),
         "--out", str(tmp_path / "rescored"), "--teacher", teacher, "--teacher-go", "depth 1",
         "--workers", "2", "--no-progress"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )  # fmt: skip
    try:
        assert wait_for(lambda: len(processes_with(name)) == 2, 120)
        workers = children_of(proc.pid)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
        assert proc.returncode == 130
        assert "rescore: stopped by SIGINT" in stderr, stderr
        assert_nothing_outlived_the_run(name, workers, tmp_path / "rescored")
    finally:
        clean_up(proc, name)


def test_a_worker_killed_from_outside_ends_the_run_with_an_error(tmp_path):
    """A worker lost to `kill -9` or the out-of-memory killer took its shard with it; the
    run says so and ends (resumable) instead of waiting for that shard forever."""
    name = f"teacher-{uuid.uuid4().hex}"
    out = tmp_path / "run"
    proc = start_run(out, name, ignore_sigint=False, new_session=False)
    try:
        assert wait_for(lambda: len(processes_with(name)) == 2 and any(out.glob("shard_*.json")), 120)
        workers = children_of(proc.pid)
        victim = min(ppid for _, ppid, cmdline in live_processes() if name.encode() in cmdline)
        assert victim in workers
        os.kill(victim, signal.SIGKILL)
        _, stderr = proc.communicate(timeout=30)
        assert proc.returncode == 1
        assert stderr.strip().splitlines()[-1] == (
            "gensfen: a worker process ended abruptly (killed from outside, or out of memory?); "
            f"the finished shards in {out} are kept and the same command goes on from them"
        )
        assert_nothing_outlived_the_run(name, workers, out)
    finally:
        clean_up(proc, name)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_teacher_that_cannot_start_ends_the_run_with_its_error(tmp_path, workers):
    """A pool used to replace the worker whose teacher failed to start, again and again."""
    out = tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, "-m", "usi_engine", "gensfen", "--out", str(out), "--positions", "40",
         "--shard-size", "20", "--workers", str(workers), "--no-progress",
         "--teacher", f"{sys.executable} -c 'import sys; sys.exit(3)'"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 1
    assert proc.stderr.strip() == (
        "gensfen: the teacher failed: engine exited (exit code 3); "
        f"the finished shards in {out} are kept and the same command goes on from them"
    )
    assert not list(out.glob("shard_*"))


def test_a_teacher_that_fails_is_quoted_in_the_error(tmp_path):
    """A teacher that says why it stops (YaneuraOu: `Error! : failed to read nn.bin :
    FileNotFound`) has its last line in the run's error, not only its exit code."""
    out = tmp_path / "run"
    said = "Error! : failed to read nn.bin : FileNotFound"
    proc = subprocess.run(
        [sys.executable, "-m", "usi_engine", "gensfen", "--out", str(out), "--positions", "40",
         "--shard-size", "20", "--workers", "1", "--no-progress",
         "--teacher", f"{sys.executable} -c 'import sys; print(\"{said}\", flush=True); sys.exit(1)'"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 1
    assert proc.stderr.strip() == (
        f"gensfen: the teacher failed: engine exited (exit code 1), its last line: {said!r}; "
        f"the finished shards in {out} are kept and the same command goes on from them"
    )
    assert not list(out.glob("shard_*"))


@pytest.mark.parametrize("workers", [1, 2])
def test_minutes_running_out_is_said_once_on_time(tmp_path, workers):
    out = tmp_path / "run"
    teacher = f"{sys.executable} {RANDOM_ENGINE} --sleep-ms 20"
    proc = subprocess.run(
        [sys.executable, "-m", "usi_engine", "gensfen", "--out", str(out), "--positions", "200",
         "--shard-size", "20", "--workers", str(workers), "--no-progress", "--minutes", "0.01",
         "--teacher", teacher, "--teacher-go", "depth 1"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    notices = [line for line in proc.stderr.splitlines() if "--minutes ran out" in line]
    assert len(notices) == 1, proc.stderr
    assert notices[0].startswith("gensfen: --minutes ran out at ")
    assert notices[0].endswith("no new shard starts; the shards in progress are finished first")
    made = sorted(out.glob("shard_*.bin"))
    assert len(made) < 10  # the run stopped early
    for shard in made:
        assert len(psv.read_records(str(shard))) == 20
