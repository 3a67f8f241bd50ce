"""Command line of ``usi-engine tune``: SPSA tuning of an engine's spin options."""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shlex
import sys
from typing import Optional, Sequence

from ..cluster import ClusterError
from ..interrupt import stop_on_signals
from ..progress import StatusLine
from . import tune
from .cli import engine_from_fields, make_openings, parse_engine_tokens
from .spsa import SpsaParam

DESCRIPTION = """\
Tune an engine's constants by SPSA (fishtest's form): each iteration is a game pair,
theta + c*flip against theta - c*flip, one opening with colours swapped; the pair's
result moves theta.  Local (--concurrency pairs at once) or on a Ray cluster (--ray).
The state is saved after every pair (--resume continues it); tuned.cfg, params.patch and
spsa.png go to --out.  Check the result with an SPRT (usi-engine match) before keeping it.
"""

EPILOG = """\
parameters: by default every constant of usi_engine/core/params.py, as the options
Tune_<Name> the engine declares in tuning mode (--params NAME,NAME picks some).  Any
other spin option: --param NAME START MIN MAX C_END [R_END] (repeatable; replaces the
table).

examples:
  usi-engine tune --engine cmd="python -m usi_engine" --params RazorMargin,FutilityMargin \\
                  --pairs 2000 --nodes 20000 --random-openings 8 --out tune/razor
  usi-engine tune ... --ray auto --pairs 20000            # on the cluster 'ray start' made
  usi-engine tune ... --out tune/razor --resume           # continue a stopped run
"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="usi-engine tune",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--engine",
        nargs="+",
        metavar="KEY=VALUE",
        required=True,
        help="the engine: cmd=CMD [dir=DIR] [option.NAME=VALUE ...] (as usi-engine match)",
    )
    p.add_argument(
        "--params", metavar="NAMES", help="comma-separated names from core/params.py (default: all)"
    )
    p.add_argument(
        "--param",
        nargs="+",
        action="append",
        default=[],
        metavar="X",
        help="NAME START MIN MAX C_END [R_END]: tune this spin option instead",
    )
    p.add_argument(
        "--r-end",
        type=float,
        default=tune.tunables.R_END,
        help="learning rate at the end for the table's parameters (default 0.002)",
    )
    p.add_argument("--pairs", type=int, default=1000, help="SPSA iterations = game pairs (default 1000)")
    p.add_argument("--A", dest="big_a", type=float, help="SPSA's A (default 10%% of --pairs)")
    p.add_argument("--alpha", type=float, default=0.602, help="a_k decay exponent (default 0.602)")
    p.add_argument("--gamma", type=float, default=0.101, help="c_k decay exponent (default 0.101)")
    for flag, what in (
        ("byoyomi", "byoyomi per move in ms"),
        ("time", "main time in ms"),
        ("inc", "Fischer increment in ms"),
        ("nodes", "node limit per move"),
        ("depth", "depth limit per move"),
    ):
        p.add_argument(f"--{flag}", type=int, help=what)
    p.add_argument("--openings", metavar="FILE", help="openings file (as usi-engine match)")
    p.add_argument("--random-openings", type=int, metavar="PLIES", help="random balanced openings")
    p.add_argument("--seed", type=int, help="seed of the openings and of SPSA's flips")
    p.add_argument(
        "--concurrency", type=int, help="pairs at once (default: cores; with --ray: the cluster's CPUs)"
    )
    p.add_argument("--max-moves", type=int, default=256, help="draw after N plies (default 256)")
    p.add_argument("--margin", type=int, default=300, help="time-loss margin in ms (default 300)")
    p.add_argument("--hang-timeout", type=int, default=5000, help="ms after stop (default 5000)")
    p.add_argument("--ready-timeout", type=float, default=120.0, help="s for readyok (default 120)")
    p.add_argument("--ray", metavar="ADDRESS", help="run on a Ray cluster: host:port, auto or local")
    p.add_argument("--ray-working-dir", metavar="DIR", help="with --ray: ship DIR to the nodes")
    p.add_argument("--ray-cpus-per-game", type=float, default=1.0, help="with --ray (default 1)")
    p.add_argument("--out", metavar="DIR", help="output directory (default tune-results/<date-time>)")
    p.add_argument("--resume", action="store_true", help="continue the run saved in --out")
    p.add_argument("--no-plot", action="store_true", help="no spsa.png")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    return p


def parse_param(values: Sequence[str]) -> SpsaParam:
    if len(values) not in (5, 6):
        raise ValueError(f"--param takes NAME START MIN MAX C_END [R_END], not {' '.join(values)}")
    name, *numbers = values
    try:
        floats = [float(x) for x in numbers]
    except ValueError:
        raise ValueError(f"--param {name}: START MIN MAX C_END [R_END] must be numbers") from None
    start, lo, hi, c_end, *rest = floats
    return SpsaParam(name, start, lo, hi, c_end, *rest)


def build_config(args: argparse.Namespace) -> tune.TuneConfig:
    flags = {k: getattr(args, k) for k in ("byoyomi", "time", "inc", "nodes", "depth")}
    if not any(flags.values()):
        flags["byoyomi"] = 1000
    engine = engine_from_fields(parse_engine_tokens(args.engine), flags)
    if args.param:
        params = [parse_param(v) for v in args.param]
    else:
        params = tune.table_params(args.params.split(",") if args.params else None, args.r_end)
    openings = make_openings(
        {
            "games": 2 * args.pairs,
            "openings": args.openings,
            "random_openings": args.random_openings,
            "seed": args.seed,
        }
    )
    concurrency = args.concurrency or (0 if args.ray else (os.cpu_count() or 1))
    out_dir = args.out or os.path.join("tune-results", dt.datetime.now().strftime("%Y%m%d-%H%M%S"))
    return tune.TuneConfig(
        engine,
        params,
        args.pairs,
        openings,
        out_dir,
        concurrency,
        args.max_moves,
        args.margin,
        args.hang_timeout,
        args.ready_timeout,
        args.big_a,
        args.alpha,
        args.gamma,
        args.seed,
        args.ray,
        args.ray_working_dir,
        args.ray_cpus_per_game,
        not args.no_plot,
    )


class Progress(StatusLine):
    """A progress line per pair on a terminal (redrawn), else about 200 lines a run."""

    def __init__(self, quiet: bool, pairs: int) -> None:
        super().__init__(quiet)
        self.every = max(1, pairs // 200)

    def __call__(self, tuner: tune.Tuner) -> None:
        if self.quiet:
            return
        spsa = tuner.spsa
        self.show(tuner.progress_line(), log=spsa.done % self.every == 0 or spsa.finished)


def verify_command(config: tune.TuneConfig, values: dict[str, int]) -> str:
    """The usi-engine match SPRT of the tuned values against the defaults."""
    cmd = shlex.quote(" ".join(config.engine.cmd))
    opts = " ".join(f"option.{k}={v}" for k, v in values.items())
    return (
        f"usi-engine match --engine cmd={cmd} name=tuned {opts} "
        f"--engine cmd={cmd} name=default --random-openings 8 --games 2000 --sprt 0 5"
    )


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        config = build_config(args)
        tuner = tune.Tuner(config, resume=args.resume)
    except (ValueError, OSError) as exc:
        parser.error(str(exc))
    spsa = tuner.spsa
    where = f"Ray at {config.ray_address}" if config.ray_address else f"{config.concurrency} at once"
    print(
        f"SPSA: {len(spsa.params)} parameters, {spsa.done}/{spsa.iterations} pairs done, "
        f"pairs {where}, {config.engine.tc.describe()}",
        flush=True,
    )
    for p, t in zip(spsa.params, spsa.theta):
        print(f"  {p.name}: {t:g} in [{p.lo:g}, {p.hi:g}], c_end {p.c_end:g}, r_end {p.r_end:g}")
    progress = Progress(args.quiet, spsa.iterations)
    try:
        with stop_on_signals():  # Ctrl-C and SIGTERM stop the run, keeping the pairs played
            result = tuner.run(progress)
    except ClusterError as exc:
        progress.done()
        print(f"tune: {exc}", file=sys.stderr)
        return 2
    progress.done()
    r = result
    print(
        f"{'Stopped' if r.interrupted else 'Finished'}: {spsa.done}/{spsa.iterations} pairs; "
        f"+side W-L-D {r.wins}-{r.losses}-{r.draws} in {r.seconds:.0f} s "
        f"({r.pairs_played / r.seconds if r.seconds else 0:.2f} pairs/s)"
    )
    values = spsa.rounded()
    print("Tuned: " + ", ".join(f"{k}={v}" for k, v in values.items()))
    for what, path in r.files.items():
        print(f"  {what}: {path}")
    print(
        "Keep it only if it passes an SPRT against the defaults, e.g.:\n  " + verify_command(config, values)
    )
    return 130 if r.interrupted else 0
