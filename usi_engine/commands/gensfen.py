"""Generate training positions by self-play, as YaneuraOu PackedSfenValue shards.

    usi-engine gensfen --out data/gen1 --positions 100000          # all cores, depth 6
    usi-engine gensfen --out data/gen1 --positions 100000          # again: resumes
    usi-engine gensfen --out data/t --positions 20000 --workers 2 --nodes 20000
    usi-engine gensfen --out data/gen2 --positions 100000 --evaldir nets/h64   # labelled
                                                                   # by a network (next round)
    usi-engine gensfen --out data/gps --positions 10000 \\
        --teacher /usr/games/gpsusi --teacher-go "byoyomi 10000" \\
        --teacher-option LimitDepth=5                              # distil another engine
    usi-engine gensfen --out data/gen1 --positions 1000000 --minutes 8   # stop starting
                                                                         # shards after 8 min

Ctrl-C or SIGTERM stops a run at once: the workers and their teachers end with it, every
finished shard is kept, and the same command goes on from them.

Every option and the file layout: docs/training.md.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time

from usi_engine.cluster import ClusterError
from usi_engine.interrupt import stop_on_signals
from usi_engine.training.data.gensfen import GenConfig, run, format_summary
from usi_engine.training.data.selfplay import PlayConfig
from usi_engine.training.data.labeler import absolute_command, parse_teacher_options
from usi_engine.training.data.workers import ENDED_EARLY, ended_early
from usi_engine.match.cli import command_problem
from usi_engine.server.options import ascii_clean
from usi_engine.position import Position, START_SFEN
from usi_engine.textfile import read_text_lines


def read_openings(path: str) -> tuple[str, ...]:
    """SFEN lines ('startpos' allowed, '#' comments) of an opening file.  A file that is
    missing, not text, empty, or holds a line that is not a legal position stops the run
    before anything is written, with one line naming the file (and the line)."""
    try:
        lines = read_text_lines(path, "SFEN lines")
    except ValueError as exc:
        raise SystemExit(f"gensfen: {exc}") from None
    out = []
    for number, line in enumerate(lines, 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        sfen = START_SFEN if text == "startpos" else text.removeprefix("sfen ")
        try:
            Position(sfen)
        except ValueError as exc:
            raise SystemExit(
                f"gensfen: {path}: line {number}: not a position "
                f"({ascii_clean(exc, 120)}): {ascii_clean(text, 60)}"
            ) from None
        out.append(sfen)
    if not out:
        raise SystemExit(f"gensfen: {path}: no opening position in the file")
    return tuple(out)


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="usi-engine gensfen", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--out", required=True, help="output folder (created; resumed if it exists)")
    p.add_argument(
        "--positions", type=int, required=True, help="positions wanted (rounded up to whole shards)"
    )
    p.add_argument("--shard-size", type=int, default=10000, help="records per shard (default 10000)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="processes (default: all cores)")
    p.add_argument(
        "--minutes",
        type=float,
        default=None,
        help="start no new shard after this many minutes; the shards in progress are "
        "finished first (a later run resumes)",
    )
    p.add_argument("--depth", type=int, default=6, help="search depth per position (default 6)")
    p.add_argument(
        "--nodes", type=int, default=None, help="node limit per position (with or instead of --depth)"
    )
    p.add_argument("--hash", type=int, default=16, help="transposition table MB per worker")
    p.add_argument(
        "--evaldir",
        default=None,
        metavar="DIR",
        help="our search evaluates with DIR/nn.bin (EvalDir; default: hand-made)",
    )
    p.add_argument(
        "--teacher", default=None, help="a USI engine command that labels and plays instead of our search"
    )
    p.add_argument("--teacher-go", default="depth 8", help="the teacher's go arguments (default 'depth 8')")
    p.add_argument(
        "--teacher-opening-go",
        default=None,
        metavar="ARGS",
        help="the teacher's go arguments for the opening's plies, which are played but not written "
        "(default: --teacher-go; a shallower search there leaves more time for the kept positions)",
    )
    p.add_argument(
        "--teacher-timeout",
        type=float,
        default=GenConfig.teacher_timeout,
        metavar="SECONDS",
        help="a teacher search that takes longer is a failure: the teacher is restarted and the "
        "game replayed, then left out (default %(default)g; set it well above the longest search)",
    )
    p.add_argument("--teacher-option", action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("--openings", default=None, help="file of start SFENs (default: the start position)")
    d = PlayConfig()
    p.add_argument("--random-moves", type=int, default=d.random_moves)
    p.add_argument("--random-max-ply", type=int, default=d.random_max_ply)
    p.add_argument("--multipv", type=int, default=d.multipv)
    p.add_argument("--multipv-plies", type=int, default=d.multipv_plies)
    p.add_argument("--multipv-margin", type=int, default=d.multipv_margin)
    p.add_argument("--opening-limit", type=int, default=d.opening_limit)
    p.add_argument("--write-min-ply", type=int, default=d.write_min_ply)
    p.add_argument("--max-ply", type=int, default=d.max_ply)
    p.add_argument("--eval-limit", type=int, default=d.eval_limit)
    p.add_argument(
        "--ray",
        default=None,
        metavar="ADDRESS",
        help="make the shards as Ray tasks on the cluster at ADDRESS ('local': start "
        "a local Ray on 127.0.0.1 with --workers CPUs)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p.parse_args(argv)


def config_from_args(a: argparse.Namespace) -> GenConfig:
    if a.positions < 1 or a.shard_size < 1:
        raise SystemExit("--positions and --shard-size must be positive")
    if a.teacher_timeout <= 0:
        raise SystemExit("--teacher-timeout must be positive seconds")
    if a.evaldir and a.teacher:
        raise SystemExit(
            "--evaldir sets our own search's network; give a --teacher its "
            "network with --teacher-option EvalDir=DIR"
        )
    if a.teacher_opening_go and not a.teacher:
        raise SystemExit(
            "--teacher-opening-go is the limit of a --teacher: give one (our own search "
            "plays the opening at --depth)"
        )
    try:
        options = parse_teacher_options(a.teacher_option)
    except ValueError as exc:
        raise SystemExit(str(exc)) from None
    play = PlayConfig(
        a.random_moves,
        a.random_max_ply,
        a.multipv,
        a.multipv_plies,
        a.multipv_margin,
        a.opening_limit,
        a.write_min_ply,
        a.max_ply,
        a.eval_limit,
    )
    return GenConfig(
        out=a.out,
        positions=a.positions,
        shard_size=a.shard_size,
        seed=a.seed,
        depth=a.depth if a.depth > 0 else None,
        nodes=a.nodes,
        hash_mb=a.hash,
        evaldir=a.evaldir,
        teacher=absolute_command(a.teacher) if a.teacher else None,
        teacher_go=a.teacher_go,
        teacher_opening_go=a.teacher_opening_go,
        teacher_options=options,
        teacher_timeout=a.teacher_timeout,
        openings=read_openings(a.openings) if a.openings else (START_SFEN,),
        play=play,
        workers=max(1, a.workers),
        max_seconds=a.minutes * 60 if a.minutes else None,
        ray_address=a.ray,
    )


def main(argv=None) -> int:
    args = parse_args(argv)
    cfg = config_from_args(args)
    if cfg.teacher:
        problem = command_problem(shlex.split(cfg.teacher))
        if problem is not None:
            raise SystemExit(f"gensfen: --teacher: {problem}")
    t0 = time.monotonic()
    try:
        with stop_on_signals():
            summary = run(cfg, show_progress=not args.no_progress)
    except (ValueError, ClusterError) as exc:
        print(f"gensfen: {exc}", file=sys.stderr)
        return 2
    except ENDED_EARLY as exc:
        line, code = ended_early("gensfen", exc, "shards", cfg.out)
        print(line, file=sys.stderr)
        return code
    print(format_summary(summary))
    print(f"total {time.monotonic() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
