"""Long commands stop the same way on SIGINT and SIGTERM, also when started as a background
job (SIGINT ignored from the start): the handler is theirs while they run, the caller's
after, and a stopped match keeps its finished games."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from processes import RANDOM_ENGINE

from usi_engine.interrupt import Stopped, stop_on_signals, stops_held

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_raises_stopped_inside_the_block_only(signum, code):
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    with pytest.raises(Stopped) as caught:
        with stop_on_signals():
            os.kill(os.getpid(), signum)
            time.sleep(5)  # the handler runs before this returns
    assert (caught.value.signame, caught.value.exit_code) == (signal.Signals(signum).name, code)
    assert isinstance(caught.value, KeyboardInterrupt)  # code that stops on Ctrl-C stops on it
    assert {s: signal.getsignal(s) for s in before} == before


def test_even_an_ignored_sigint_stops_the_block():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with pytest.raises(Stopped):
            with stop_on_signals():
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(5)
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_stop_inside_stops_held_arrives_as_the_block_ends():
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    reached = []
    with pytest.raises(Stopped) as caught:
        with stop_on_signals():
            with stops_held():
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.3)  # a handler would have run by now
                reached.append("the end of the block")
            reached.append("past the block")
    assert reached == ["the end of the block"]
    assert caught.value.signame == "SIGTERM"
    assert {s: signal.getsignal(s) for s in before} == before


def test_an_ignored_signal_stays_ignored_in_stops_held():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with stops_held():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.3)
        time.sleep(0.1)
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_match_started_in_the_background_stops_on_sigint_and_keeps_its_games(tmp_path):
    engine = f"cmd={sys.executable} {RANDOM_ENGINE} --sleep-ms 30"
    out = tmp_path / "match"
    proc = subprocess.Popen(
        [sys.executable, "-m", "usi_engine", "match", "--engine", engine, "name=A",
         "--engine", engine, "name=B", "--games", "200", "--byoyomi", "100",
         "--random-openings", "4", "--max-moves", "40", "--concurrency", "2", "--quiet",
         "--out", str(out)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not list(out.glob("**/*.kif")) and not list(out.glob("**/*.csa")):
            assert time.monotonic() < deadline and proc.poll() is None, "no game finished"
            time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        stdout, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["interrupted"] is True
    assert 1 <= summary["games"] < 200
