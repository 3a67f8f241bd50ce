"""Make a suite of balanced openings for matches (`usi-engine match --openings FILE`).

Each opening plays `--plies` moves from the start position, each chosen at random among the
moves a MultiPV search of the judge rates within `--spread` cp of its best; the final
position is searched to `--check-depth` and kept if its score is within `--balance` cp of
zero and it is new (usi_engine/match/openings.py).  The judge is this engine, or with
`--engine` any USI engine: the held-out suite for headline matches is made by another
engine (docs/match.md#opening-suites).

    usi-engine make-openings --count 300 --out my_openings.txt            # our search
    usi-engine make-openings --engine ../shared/opponents/fairy-stockfish-2026 \\
        --engine-option USI_Hash=64 --depth 8 --check-depth 14 --seed 2026 \\
        --count 200 --out usi_engine/data/openings_heldout.txt

The same judge, settings and seed make the same file; lines are `startpos moves ...`.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time

from usi_engine.match.openings import OwnJudge, SuiteSettings, UsiJudge, make_suite
from usi_engine.training.data.labeler import parse_teacher_options


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="usi-engine make-openings",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    d = SuiteSettings()
    ap.add_argument("--count", type=int, default=d.count, help="openings to write")
    ap.add_argument("--plies", type=int, default=d.plies, help="moves in each opening")
    ap.add_argument("--depth", type=int, default=5, help="depth of the move-choice search")
    ap.add_argument("--multipv", type=int, default=d.multipv, help="candidate moves per ply")
    ap.add_argument("--spread", type=int, default=d.spread, help="cp below the best still chosen")
    ap.add_argument("--check-depth", type=int, default=9, help="depth of the balance check")
    ap.add_argument("--balance", type=int, default=d.balance, help="keep |score| <= this cp")
    ap.add_argument("--seed", type=int, default=d.seed)
    ap.add_argument("--engine", metavar="CMD", help="a USI engine as the judge (default: this engine)")
    ap.add_argument(
        "--engine-option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an option of --engine, repeatable",
    )
    ap.add_argument("--out", required=True)
    return ap.parse_args(argv)


def header(args: argparse.Namespace) -> list[str]:
    judge = ""
    if args.engine:
        judge = f"--engine {shlex.quote(args.engine)} " + "".join(
            f"--engine-option {o} " for o in args.engine_option
        )
    return [
        f"# {args.count} balanced openings: {args.plies} plies from the start position, each "
        f"within {args.balance} cp at depth {args.check_depth} of the judge",
        f"# made by: python scripts/make_openings.py {judge}--count {args.count} --plies "
        f"{args.plies} --depth {args.depth} --multipv {args.multipv} --spread {args.spread} "
        f"--check-depth {args.check_depth} --balance {args.balance} --seed {args.seed} "
        f"--out ...",
    ]


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        options = dict(parse_teacher_options(args.engine_option))
    except ValueError as exc:
        print(f"make_openings: {exc}", file=sys.stderr)
        return 2
    settings = SuiteSettings(args.count, args.plies, args.multipv, args.spread, args.balance, args.seed)
    judge = (
        UsiJudge(args.engine, args.depth, args.check_depth, options)
        if args.engine
        else OwnJudge(args.depth, args.check_depth)
    )
    start = time.monotonic()
    tmp = args.out + ".tmp"
    try:
        with open(tmp, "w", encoding="ascii") as fh:
            fh.write("\n".join(header(args)) + "\n")
            for kept in make_suite(judge, settings):
                fh.write(kept.line() + "\n")
                print(
                    f"\r{kept.index + 1}/{args.count} kept (score {kept.score:+d}, "
                    f"{kept.attempts} tried), {time.monotonic() - start:.0f} s",
                    end="",
                    file=sys.stderr,
                )
    except RuntimeError as exc:
        print(f"\nmake_openings: {exc}", file=sys.stderr)
        return 1
    finally:
        judge.close()
    os.replace(tmp, args.out)  # a whole suite or none
    print(file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
