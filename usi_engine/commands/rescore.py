"""Score positions again with another USI engine (usi_engine/training/data/rescore.py says why).

    usi-engine rescore runs/gen8 --out runs/gps8 --every 12 --workers 2 --minutes 50 \\
        --teacher /usr/games/gpsusi --teacher-go "byoyomi 10000" \\
        --teacher-option Thread=1 --teacher-option BookDepth=0 --teacher-option LimitDepth=4
    usi-engine rescore runs/gen8 --out runs/gps8 --every 12 --compare    # its scale to ours
    usi-engine train runs/gps8 --out nets/r7 --init usi_engine/eval/nn.bin \\
        --score-factor 0.81 ...                      # the factor --compare printed

GPS Shogi has no `go depth`: its LimitDepth option bounds the search, and a long byoyomi lets
it reach that depth.  One output file per input file; a finished file is kept when the command
runs again.  See docs/training.md.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time

from usi_engine.interrupt import stop_on_signals
from usi_engine.training.data.workers import ENDED_EARLY, ended_early


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="usi-engine rescore", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("data", nargs="+", help="PackedSfenValue files or folders of shards")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--teacher", help="the USI engine's command (not needed with --compare)")
    p.add_argument("--teacher-go", default="depth 8", help="its go arguments (default 'depth 8')")
    p.add_argument("--teacher-option", action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("--every", type=int, default=1, help="score about one record in this many")
    p.add_argument("--eval-limit", type=int, default=3000, help="drop scores beyond this (cp)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    p.add_argument("--minutes", type=float, default=None, help="start no new file after this long")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument(
        "--compare",
        action="store_true",
        help="ask nothing: compare our scores with the teacher's in the files already "
        "made (the same data, --every and --seed), and print --score-factor",
    )
    a = p.parse_args(argv)
    if not a.teacher and not a.compare:
        p.error("--teacher is needed (only --compare asks no engine)")
    from usi_engine.training.learn.dataset import shard_files
    from usi_engine.training.data.rescore import RescoreConfig, compare, format_comparison, run
    from usi_engine.training.data.labeler import parse_teacher_options

    try:
        options = parse_teacher_options(a.teacher_option)
    except ValueError as exc:
        p.error(str(exc))
    if a.teacher and not a.compare:
        from usi_engine.match.cli import command_problem

        problem = command_problem(shlex.split(a.teacher))
        if problem is not None:
            print(f"rescore: --teacher: {problem}", file=sys.stderr)
            return 2
    try:
        cfg = RescoreConfig(
            tuple(shard_files(a.data)),
            a.out,
            a.teacher or "",
            a.teacher_go,
            options,
            a.every,
            a.eval_limit,
            a.seed,
            a.workers,
            a.minutes,
        )
        if a.compare:
            print(format_comparison(compare(cfg)))
            return 0
        t0 = time.monotonic()
        with stop_on_signals():
            run(cfg, show_progress=not a.no_progress)
    except ValueError as exc:
        print(f"rescore: {exc}", file=sys.stderr)
        return 2
    except ENDED_EARLY as exc:
        line, code = ended_early("rescore", exc, "files", a.out)
        print(line, file=sys.stderr)
        return code
    print(f"{time.monotonic() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
