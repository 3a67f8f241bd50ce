"""The search lifecycle, in process with scripted searchers: the worker is idle before
`bestmove` is out, a hung search is never doubled, the time check with few root moves,
a rejected `position` is never searched."""

from __future__ import annotations

import io
import threading
import time

import numpy as np

from usi_engine.server import engine as engine_mod
from usi_engine.server.options import Options
from usi_engine.position import Position
from usi_engine.server.protocol import Output, UsiProtocol
from usi_engine.search.searcher import IterationInfo, ThinkResult

BUSY = "info string go received while thinking: stopping the previous search first"


class ScriptedSearcher:
    """Answers at once with the first legal move, after one info line; counts what runs."""

    SWITCHES: dict = {}

    def __init__(self) -> None:
        self.running = 0
        self.most_at_once = 0
        self.calls = 0
        self.lock = threading.Lock()

    def think(self, pos, *, depth, nodes, multipv, stop, on_iteration, **kwargs):
        with self.lock:
            self.calls += 1
            self.running += 1
            self.most_at_once = max(self.most_at_once, self.running)
        try:
            return self._think(pos, stop, on_iteration)
        finally:
            with self.lock:
                self.running -= 1

    def _think(self, pos, stop, on_iteration):
        best = pos.legal_moves()[0]
        info = IterationInfo(1, 1, 1, 0, None, None, 10, 1, 10000, 0, [best])
        on_iteration(info)
        return ThinkResult(best, None, info)

    def stability(self) -> float:
        return 0.5

    def new_game(self) -> None:
        pass


class HungSearcher(ScriptedSearcher):
    """Ignores the stop flag until `release` is set (a search that does not stop)."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()

    def _think(self, pos, stop, on_iteration):
        self.release.wait(30)
        return super()._think(pos, stop, on_iteration)


class SlowWriter(io.BytesIO):
    """stdout whose write of a `bestmove` line returns only after `hold` seconds, and says
    when it has been written: the worker is caught between printing and returning."""

    def __init__(self, hold: float) -> None:
        super().__init__()
        self.hold = hold
        self.bestmove_out = threading.Event()

    def write(self, data: bytes) -> int:
        n = super().write(data)
        if b"bestmove" in data:
            self.bestmove_out.set()
            time.sleep(self.hold)
        return n


def make_protocol(searcher, stream=None, options=None):
    stream = stream if stream is not None else io.BytesIO()
    proto = UsiProtocol(options or Options.create({}), out=Output(stream))
    backend = proto.engine.backend
    backend.np, backend._position_cls, backend.searcher = np, Position, searcher
    backend.ready = True
    backend.configure = lambda force=False: None
    backend.load_evaluation = lambda: None  # a fake searcher has no network
    return proto, stream


def output_lines(stream) -> list[str]:
    return stream.getvalue().decode("ascii").splitlines()


def wait_for(predicate, timeout=5.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.001)


def test_go_sent_while_bestmove_is_being_written_finds_the_engine_idle():
    """The GUI's `go` arrives while the worker is still inside the write of its bestmove:
    the engine is idle already (no 'go received while thinking'), and both go's are answered."""
    stream = SlowWriter(hold=0.2)
    searcher = ScriptedSearcher()
    proto, _ = make_protocol(searcher, stream)
    proto.handle("position startpos")
    proto.handle("go btime 0 wtime 0 byoyomi 100")
    assert stream.bestmove_out.wait(5)
    proto.handle("position startpos moves 7g7f")  # the worker is still in write()
    proto.handle("go btime 0 wtime 0 byoyomi 100")
    wait_for(lambda: sum(line.startswith("bestmove") for line in output_lines(stream)) == 2)
    proto.engine._job.wait_finished(5)
    lines = output_lines(stream)
    assert BUSY not in lines
    assert [line for line in lines if line.startswith("bestmove")] == ["bestmove 1g1f", "bestmove 1a1b"]
    assert searcher.most_at_once == 1


def test_go_while_a_search_really_runs_stops_it_first():
    searcher = HungSearcher()
    proto, stream = make_protocol(searcher)
    proto.handle("position startpos")
    proto.handle("go infinite")
    wait_for(lambda: searcher.running == 1)
    searcher.release.set()  # it stops when asked
    proto.handle("go btime 0 wtime 0 byoyomi 100")
    proto.engine._job.wait_finished(5)
    lines = output_lines(stream)
    assert BUSY in lines
    assert sum(line.startswith("bestmove") for line in lines) == 2
    assert searcher.most_at_once == 1


def test_a_search_that_does_not_stop_is_never_doubled(monkeypatch):
    """A stop that is not obeyed within STOP_WAIT_S: the next go answers without searching
    (never a second search on the same search contexts); the late answer still comes."""
    monkeypatch.setattr(engine_mod, "STOP_WAIT_S", 0.3)
    searcher = HungSearcher()
    proto, stream = make_protocol(searcher)
    proto.handle("position startpos")
    proto.handle("go infinite")
    wait_for(lambda: searcher.running == 1)
    proto.handle("stop")
    proto.handle("go btime 0 wtime 0 byoyomi 100")
    lines = output_lines(stream)
    assert "info string the previous search did not stop within 0.3 s: answering without a search" in lines
    assert lines[-1] == "bestmove 1g1f"
    assert searcher.calls == 1
    searcher.release.set()
    wait_for(lambda: sum(line.startswith("bestmove") for line in output_lines(stream)) == 2)
    assert searcher.most_at_once == 1


class ThreeLineSearcher(ScriptedSearcher):
    """Reports one finished iteration of 2 MultiPV lines (there are only 2 root moves)."""

    def _think(self, pos, stop, on_iteration):
        legal = pos.legal_moves()
        infos = [
            IterationInfo(1, 1, k + 1, 0, None, None, 10, 1, 10000, 0, [m], last_line=k == 1)
            for k, m in enumerate(legal)
        ]
        for info in infos:
            on_iteration(info)
        self.stop_after_iteration = int(stop[0])
        return ThinkResult(legal[0], None, infos[0])


def test_multipv_above_the_root_moves_keeps_the_time_check(monkeypatch):
    """MultiPV 5 with 2 legal moves: the end-of-iteration check still stops the search."""
    options = Options.create({})
    options.set("MultiPV", "5")
    searcher = ThreeLineSearcher()
    proto, stream = make_protocol(searcher, options=options)
    proto.handle("position sfen 8k/9/p8/9/9/9/9/9/4K2R1 w - 1")  # 1a1b and 9c9d only
    assert len(proto.engine.position().legal_moves()) == 2
    real_start = engine_mod.SearchJob.start_clock

    def late_clock(job, budget, credit_ms=0.0):
        real_start(job, budget, credit_ms)
        job.clock_start -= 10.0  # 10 s gone: past the share of a 600 s clock

    monkeypatch.setattr(engine_mod.SearchJob, "start_clock", late_clock)
    proto.handle("go btime 600500 wtime 600500")
    proto.engine._job.wait_finished(5)
    assert searcher.stop_after_iteration == 1
    assert output_lines(stream)[-1].startswith("bestmove ")
