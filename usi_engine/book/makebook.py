"""`usi-engine makebook`: build a YaneuraOu `.db` book (docs/book.md).

    usi-engine makebook records OUT.db RECORD|DIR ... [--max-ply 32] [--min-count 2] [--winner-only]
    usi-engine makebook search OUT.db [--root SFEN ...] [--depth 8 | --nodes N] [--multipv 4]
                                      [--positions 100] [--max-ply 24] [--expand-diff 40]
                                      [--workers N] [--ray ADDRESS]
    usi-engine makebook propagate IN.db OUT.db

`records` counts the moves of game records; `search` grows a book with our own MultiPV
search where its good lines end and propagates the values min-max (it continues from OUT.db
when that exists, so a stopped run is resumed by running it again; `--from IN.db` starts
from another book; `--workers` and `--ray` search the positions of a round at once, and
the book is the same); `propagate` only propagates the values of a book.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

from ..progress import progress_bar

PROG = "usi-engine makebook"


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quiet", action="store_true", help="no progress bar and no summary")


def _workers(text: str) -> int:
    """--workers: a count of 0 (every core) or more; argparse names the option on error."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value}: give 0 (every core) or a positive count")
    return value


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog=PROG, description="Build an opening book in YaneuraOu's .db format")
    sub = ap.add_subparsers(dest="command", required=True)

    rec = sub.add_parser("records", help="count the moves of game records")
    rec.add_argument("out", help="the .db file to write")
    rec.add_argument("records", nargs="+", help="KIF/KI2/CSA files, SFEN lists (one game a line), folders")
    rec.add_argument("--max-ply", type=int, default=32, help="positions up to this ply (default 32)")
    rec.add_argument("--min-count", type=int, default=1, help="keep moves played at least this often")
    rec.add_argument("--winner-only", action="store_true", help="only the moves of the side that won")
    _common(rec)

    srch = sub.add_parser("search", help="grow a book with our own MultiPV search, min-max values")
    srch.add_argument("out", help="the .db file to write (continued from when it exists)")
    srch.add_argument("--from", dest="source", metavar="IN.db", help="start from this book instead")
    srch.add_argument(
        "--root",
        action="append",
        default=[],
        metavar="POSITION",
        help="'startpos', an SFEN or 'startpos moves ...' (repeatable; default startpos)",
    )
    srch.add_argument("--depth", type=int, help="search depth per position (default 8)")
    srch.add_argument("--nodes", type=int, help="nodes per position instead of a depth")
    srch.add_argument("--multipv", type=int, default=4, help="moves added per position (default 4)")
    srch.add_argument("--positions", type=int, default=100, help="positions to search in this run")
    srch.add_argument("--max-ply", type=int, default=24, help="deepest ply searched (default 24)")
    srch.add_argument(
        "--expand-diff",
        type=int,
        default=40,
        help="follow moves within this many cp of the best (default 40)",
    )
    srch.add_argument(
        "--batch",
        type=int,
        default=8,
        help="positions between two propagations (default 8; at least --workers)",
    )
    srch.add_argument(
        "--workers",
        type=_workers,
        default=1,
        metavar="N",
        help="engines searching at once, each in its own process (default 1: in this "
        "process; 0: as many as the cores hold at Threads cores each; with --ray, actors, "
        "0: as many as the cluster's CPUs hold)",
    )
    srch.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="search on the Ray cluster at ADDRESS, one actor per worker ('local': a "
        "private cluster on 127.0.0.1; 'auto': the one `ray start` made here)",
    )
    srch.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an engine option, e.g. Threads=4, USI_Hash=256, EvalDir=DIR",
    )
    _common(srch)

    prop = sub.add_parser("propagate", help="min-max the values of a book")
    prop.add_argument("book", help="the .db file to read")
    prop.add_argument("out", help="the .db file to write")
    _common(prop)
    args = ap.parse_args(argv)
    if getattr(args, "depth", None) is not None and getattr(args, "nodes", None) is not None:
        ap.error("give --depth or --nodes, not both")
    return args


def _say(args, text: str) -> None:
    if not args.quiet:
        print(text)


def _warn(text: str) -> None:
    print(f"{PROG}: {text}", file=sys.stderr)


def _progress(total: int, quiet: bool):
    if not quiet and importlib.util.find_spec("tqdm") is None:
        _warn("tqdm is not installed (pip install tqdm): no progress bar")
    return progress_bar(total, not quiet, unit_scale=False)


SHOWN_ERRORS = 5  # bad lines reported one by one; the rest are counted


def _open_book(path: Path):
    """The book at `path`, its bad lines reported (ASCII, the first few); ValueError when
    nothing in the file is a book entry, so that no command writes a book from it."""
    from ..server.options import ascii_clean
    from .book import Book

    book = Book.open(path, ignore_ply=True)
    book.flipped = False
    if len(book) == 0:  # one line for a file that is no book at all
        headerless = any(e.line == 1 and "header" in e.message for e in book.errors)
        why = "no .db header and no position" if headerless else "no position read"
        raise ValueError(f"{path}: not a .db book ({why}, {len(book.errors)} bad lines): nothing written")
    for err in book.errors[:SHOWN_ERRORS]:
        _warn(ascii_clean(str(err), 200))
    if len(book.errors) > SHOWN_ERRORS:
        _warn(f"{path}: {len(book.errors) - SHOWN_ERRORS} more bad lines")
    return book


def cmd_records(args) -> int:
    from .records import RecordStats, book_from_games, read_games

    stats = RecordStats()
    book = book_from_games(
        read_games(args.records, stats), args.max_ply, args.min_count, args.winner_only, stats
    )
    for note in stats.skipped:
        _warn(note)
    if len(book) == 0:
        named = ", ".join(args.records[:3]) + (", ..." if len(args.records) > 3 else "")
        _warn(f"no position from {stats.games} game(s) in {named}: nothing written")
        return 1
    written = book.write(args.out)
    _say(args, f"{args.out}: {written} positions from {stats.games} games")
    return 0


def _roots(texts: list[str]) -> list[str]:
    from ..api import as_position

    return [as_position(t).sfen() for t in (texts or ["startpos"])]


def _engine_options(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise ValueError(f"--option {pair!r}: expected NAME=VALUE")
        out[name.strip()] = value.strip()
    return out


def cmd_search(args) -> int:
    from .book import Book
    from .expand import ExpandSettings, expand, save_to

    out = Path(args.out)
    source = Path(args.source) if args.source else (out if out.exists() else None)
    try:
        roots = _roots(args.root)
        options = _engine_options(args.option)
        book = _open_book(source) if source else Book(ignore_ply=True, flipped=False)
    except (OSError, ValueError) as exc:
        _warn(str(exc))
        return 2
    if source:
        _say(args, f"continuing from {source}: {len(book)} positions")
    settings = ExpandSettings(
        depth=args.depth if args.nodes is None else None,
        nodes=args.nodes,
        multipv=args.multipv,
        max_ply=args.max_ply,
        expand_diff=args.expand_diff,
        positions=args.positions,
        batch=args.batch,
    )
    if settings.depth is None and settings.nodes is None:
        settings.depth = 8
    from ..cluster import ClusterError
    from .searchers import SearchFailed, make_searcher

    bar = None
    try:
        # every engine compiles or loads the search (numba) first: the bar starts after
        with make_searcher(options, settings.limits(), args.workers, args.ray) as searcher:
            bar = _progress(settings.positions, args.quiet)
            book, report = expand(book, roots, searcher, settings, save_to(out), bar)
    except (ValueError, ClusterError, SearchFailed) as exc:
        _warn(str(exc))
        return 2
    finally:
        if bar is not None:
            bar.close()
    for note in report.notes:
        _warn(note)
    if report.failed:
        _warn(f"{report.failed}; the book so far is saved in {out}")
        return 1
    state = "no frontier left" if report.complete else "run again to continue"
    _say(
        args, f"{out}: {len(book)} positions, {report.searched} searched in {report.rounds} rounds ({state})"
    )
    return 0


def cmd_propagate(args) -> int:
    from .graph import propagate_book

    try:
        book = _open_book(Path(args.book))
    except OSError as exc:
        _warn(f"{args.book}: {exc.strerror or exc}")
        return 2
    except ValueError as exc:
        _warn(str(exc))
        return 2
    result_book, result, illegal = propagate_book(book)
    for text in illegal:
        _warn(f"dropped: {text}")
    if not result.converged:
        _warn(
            f"values still changing after {result.iterations} sweeps (a repetition loop); written as they are"
        )
    written = result_book.write(args.out)
    _say(args, f"{args.out}: {written} positions, values settled after {result.iterations} sweeps")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if str(args.out).lower().endswith(".bin"):
        _warn(
            f"{args.out}: makebook writes YaneuraOu's .db text format; name the output "
            f"*.db (Apery .bin books are read, not written)"
        )
        return 2
    return {"records": cmd_records, "search": cmd_search, "propagate": cmd_propagate}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
