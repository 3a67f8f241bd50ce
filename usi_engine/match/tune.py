"""SPSA tuning by game pairs (``usi-engine tune``), on this machine or on Ray.

Each iteration plays one pair: engine 0 with ``theta + c * flip`` against engine 1 with
``theta - c * flip``, one opening, colours swapped, on one table (the engines keep their
processes; the perturbed values go in by ``setoption`` before each game).  The result
(wins - losses of the ``+`` side) updates theta (see :mod:`.spsa`).  Pairs run
``concurrency`` at a time; the state is checkpointed every few seconds and at the end
(Ctrl-C included), so a stopped run resumes where it was.

Writes to ``--out``: ``spsa.json`` (checkpoint), ``spsa.png`` (each parameter's
trajectory, if matplotlib is installed), ``tuned.cfg`` (an engine.cfg ``[options]``
section) and ``params.patch`` (the same values as new defaults in core/params.py).
"""

from __future__ import annotations

import concurrent.futures as cf
import difflib
import math
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ..core.params import PARAMS
from ..interrupt import first_done
from ..server import tunables
from .records import GameRecord
from .referee import BLACK
from .config import EngineSpec, MatchConfig, Opening
from .runner import Table
from .schedule import ScheduledGame
from .spsa import Probe, Spsa, SpsaParam
from ..usiproc import EngineLog

SAVE_EVERY_S = 5.0  # checkpoint period: a crash loses at most this much play
PARAMS_PY = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "core", "params.py")


def table_params(names: Optional[list[str]] = None, r_end: float = tunables.R_END) -> list[SpsaParam]:
    """SPSA parameters from core/params.py (all, or those named), options ``Tune_<Name>``."""
    by_name = {p.name.lower(): p for p in PARAMS}
    chosen = PARAMS if not names else []
    for name in names or []:
        key = name.strip().lower().removeprefix(tunables.PREFIX.lower())
        if key not in by_name:
            raise ValueError(f"{name}: not in core/params.py ({', '.join(p.name for p in PARAMS)})")
        chosen.append(by_name[key])
    return [SpsaParam(tunables.option_name(p), p.default, p.lo, p.hi, p.step, r_end) for p in chosen]


@dataclass
class TuneConfig:
    """A tuning run: the engine, its limits, the openings, SPSA's settings, where to write."""

    engine: EngineSpec
    params: list[SpsaParam]
    pairs: int
    openings: list[Opening]
    out_dir: str
    concurrency: int = 1
    max_moves: int = 256
    margin_ms: int = 300
    hang_timeout_ms: int = 5000
    ready_timeout_s: float = 120.0
    big_a: Optional[float] = None
    alpha: float = 0.602
    gamma: float = 0.101
    seed: Optional[int] = None
    ray_address: Optional[str] = None
    ray_working_dir: Optional[str] = None
    ray_cpus_per_game: float = 1.0
    plot: bool = True

    def match_config(self) -> MatchConfig:
        """Engine 0 plays the ``+`` values, engine 1 the ``-`` values (same engine)."""
        plus = EngineSpec(
            list(self.engine.cmd), "plus", dict(self.engine.options), self.engine.tc, self.engine.cwd
        )
        minus = EngineSpec(
            list(self.engine.cmd), "minus", dict(self.engine.options), self.engine.tc, self.engine.cwd
        )
        return MatchConfig(
            [plus, minus],
            games=2,
            concurrency=self.concurrency,
            max_moves=self.max_moves,
            margin_ms=self.margin_ms,
            hang_timeout_ms=self.hang_timeout_ms,
            ready_timeout_s=self.ready_timeout_s,
            event="usi_engine SPSA",
        )


def pair_games(probe: Probe, spsa: Spsa, openings: list[Opening]) -> list[ScheduledGame]:
    """The two games of ``probe``'s pair: same opening, colours swapped."""
    values = {
        0: {k: str(v) for k, v in spsa.rounded(probe.plus).items()},
        1: {k: str(v) for k, v in spsa.rounded(probe.minus).items()},
    }
    index = probe.k % len(openings)
    return [
        ScheduledGame(
            2 * probe.k + 1 + g, black, 1 - black, openings[index], index, probe.k + 1, engine_options=values
        )
        for g, black in enumerate((0, 1))
    ]


def pair_result(records: list[GameRecord]) -> Optional[int]:
    """Wins - losses of engine 0 (the ``+`` side) in a finished pair; None if unfinished."""
    if len(records) != 2 or any(r.outcome is None for r in records):
        return None
    result = 0
    for r in records:
        assert r.outcome is not None
        if r.outcome.winner is not None:
            plus_side = BLACK if r.black_engine == 0 else 1 - BLACK
            result += 1 if r.outcome.winner == plus_side else -1
    return result


class LocalPool:
    """Pairs on this machine: ``slots`` threads, each with its own :class:`Table`."""

    def __init__(self, config: MatchConfig, slots: int) -> None:
        self.config = config
        self.slots = slots
        self.abort = threading.Event()
        self.logs = [EngineLog(None) for _ in config.engines]
        self.executor = cf.ThreadPoolExecutor(slots)
        self.local = threading.local()
        self.tables: list[Table] = []
        self.futures: dict[cf.Future, Any] = {}
        self.lost = 0

    def _table(self) -> Table:
        if not hasattr(self.local, "table"):
            self.local.table = Table(self.config, self.logs, f"w{len(self.tables) + 1}", self.abort)
            self.tables.append(self.local.table)
        return self.local.table

    def free(self) -> int:
        return self.slots - len(self.futures)

    def in_flight(self) -> int:
        return len(self.futures)

    def submit(self, key: Any, games: list[ScheduledGame]) -> None:
        self.futures[self.executor.submit(lambda: self._table().play_games(games))] = key

    def next_done(self, timeout: float) -> Optional[tuple[Any, Optional[list[GameRecord]]]]:
        done, _ = first_done(self.futures, timeout)
        if not done:
            return None
        future = done.pop()
        key = self.futures.pop(future)
        return key, future.result()

    def stop(self) -> None:
        self.abort.set()

    def close(self) -> None:
        self.abort.set()
        self.executor.shutdown(wait=True)
        for table in self.tables:
            table.close()


@dataclass
class TuneResult:
    spsa: Spsa
    interrupted: bool = False
    wins: int = 0
    losses: int = 0
    draws: int = 0
    seconds: float = 0.0
    pairs_played: int = 0
    files: dict[str, str] = field(default_factory=dict)


class Tuner:
    """Runs SPSA: hands out probes to a pool, applies results, checkpoints, reports."""

    def __init__(self, config: TuneConfig, resume: bool = False) -> None:
        self.config = config
        os.makedirs(config.out_dir, exist_ok=True)
        self.checkpoint = os.path.join(config.out_dir, "spsa.json")
        if resume:
            self.spsa = Spsa.load(self.checkpoint)
            names = [p.name for p in self.spsa.params]
            if names != [p.name for p in config.params]:
                raise ValueError(f"{self.checkpoint} tunes {', '.join(names)}, not the parameters asked")
        elif os.path.exists(self.checkpoint):
            raise ValueError(f"{self.checkpoint} exists: --resume to continue it, or another --out")
        else:
            self.spsa = Spsa(
                list(config.params), config.pairs, config.big_a, config.alpha, config.gamma, config.seed
            )
        self.result = TuneResult(self.spsa)
        self._t0 = self._saved = time.monotonic()

    def _pool(self, match: MatchConfig) -> Any:
        slots = max(1, min(self.config.concurrency, self.spsa.iterations - self.spsa.done))
        if self.config.ray_address:
            from .raycluster import RayPool

            return RayPool(match, slots, self.config.ray_cpus_per_game)
        return LocalPool(match, slots)

    def run(self, progress: Optional[Callable[["Tuner"], None]] = None) -> TuneResult:
        """Play until ``pairs`` results are in (or Ctrl-C); write the outputs."""
        owned = False
        if self.config.ray_address:
            from .raycluster import connect
            import ray

            owned = connect(
                self.config.ray_address,
                num_cpus=self.config.concurrency if self.config.ray_address == "local" else None,
                working_dir=self.config.ray_working_dir,
            )
            if self.config.concurrency <= 0:
                self.config.concurrency = max(
                    1, int(ray.cluster_resources().get("CPU", 1) // self.config.ray_cpus_per_game)
                )
        pool = self._pool(self.config.match_config())
        start = self._t0 = time.monotonic()
        try:
            self._loop(pool, progress)
        except KeyboardInterrupt:
            self.result.interrupted = True
            pool.stop()
        finally:
            pool.close()
            self.result.seconds += time.monotonic() - start
            self.spsa.save(self.checkpoint)
            self.result.files = self.write_outputs()
            if owned:
                import ray

                ray.shutdown()
        return self.result

    def _loop(self, pool: Any, progress: Optional[Callable[["Tuner"], None]]) -> None:
        spsa = self.spsa
        retry: list[Probe] = []
        while not spsa.finished:
            while pool.free() and (retry or spsa.handed_out < spsa.iterations):
                probe = retry.pop() if retry else spsa.probe()
                pool.submit(probe, pair_games(probe, spsa, self.config.openings))
            answer = pool.next_done(timeout=0.5)
            if answer is None:
                continue
            probe, records = answer
            result = pair_result(records) if records is not None else None
            if result is None:
                retry.append(probe)  # a dead worker or an aborted pair: play it again
                continue
            self._count(records)
            spsa.update(probe, result)
            if time.monotonic() - self._saved > SAVE_EVERY_S:
                spsa.save(self.checkpoint)
                self._saved = time.monotonic()
            if progress is not None:
                progress(self)

    def _count(self, records: list[GameRecord]) -> None:
        self.result.pairs_played += 1
        for r in records:
            assert r.outcome is not None
            plus_side = BLACK if r.black_engine == 0 else 1 - BLACK
            if r.outcome.winner is None:
                self.result.draws += 1
            elif r.outcome.winner == plus_side:
                self.result.wins += 1
            else:
                self.result.losses += 1

    def progress_line(self) -> str:
        spsa, r = self.spsa, self.result
        values = "  ".join(
            f"{p.name.removeprefix(tunables.PREFIX)} {t:.1f}" for p, t in zip(spsa.params, spsa.theta)
        )
        elapsed = time.monotonic() - self._t0
        rate = r.pairs_played / elapsed if elapsed > 0 else 0.0
        return (
            f"pair {spsa.done}/{spsa.iterations}  {rate:.2f} pairs/s  "
            f"+side W-L-D {r.wins}-{r.losses}-{r.draws}  {values}"
        )

    # -- outputs ------------------------------------------------------------------
    def write_outputs(self) -> dict[str, str]:
        """tuned.cfg, params.patch (for core/params.py's table) and spsa.png."""
        files = {}
        spsa = self.spsa
        rounded = spsa.rounded()
        comment = f"SPSA: {spsa.done} of {spsa.iterations} pairs, engine {' '.join(self.config.engine.cmd)}"
        files["checkpoint"] = self.checkpoint
        path = os.path.join(self.config.out_dir, "tuned.cfg")
        lines = [f"; {comment}", "[options]"] + [f"{k} = {v}" for k, v in rounded.items()]
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        files["cfg"] = path
        table = {
            k.removeprefix(tunables.PREFIX): v for k, v in rounded.items() if k.startswith(tunables.PREFIX)
        }
        if table and os.path.exists(PARAMS_PY):
            source = open(PARAMS_PY, encoding="utf-8").read()
            patched = tunables.with_defaults(source, table)
            diff = difflib.unified_diff(
                source.splitlines(True),
                patched.splitlines(True),
                "a/usi_engine/core/params.py",
                "b/usi_engine/core/params.py",
            )
            path = os.path.join(self.config.out_dir, "params.patch")
            with open(path, "w", encoding="utf-8") as f:
                f.writelines(diff)
            files["patch"] = path
        if self.config.plot:
            png = plot_history(spsa, os.path.join(self.config.out_dir, "spsa.png"))
            if png:
                files["plot"] = png
        return files


def plot_history(spsa: Spsa, path: str) -> Optional[str]:
    """A PNG of each parameter's trajectory (None if matplotlib is not installed)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    n = len(spsa.params)
    cols = min(3, n)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.5 * cols, 3 * rows), squeeze=False)
    pairs = list(range(len(spsa.history)))
    for i, p in enumerate(spsa.params):
        ax = axes[i // cols][i % cols]
        ax.plot(pairs, [h[i] for h in spsa.history], linewidth=1)
        ax.axhline(p.start, color="grey", linestyle="--", linewidth=0.8)
        ax.set_title(p.name, fontsize=10)
        ax.set_xlabel("pairs")
    for j in range(n, rows * cols):
        axes[j // cols][j % cols].axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path
