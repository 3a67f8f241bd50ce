"""``usi-engine-analyse RECORD``: analyse a game record and write the graph, the annotated
record, an HTML report and JSON next to it (or under ``--out``)."""

from __future__ import annotations

import argparse
import os
import sys
import unicodedata
from pathlib import Path

EPILOG = """outputs (PREFIX is --out, default: the record's path without its extension):
  PREFIX.analysis.png   evaluation graph          PREFIX.analysis.kif   annotated KIF (Shift-JIS)
  PREFIX.analysis.csa   annotated CSA             PREFIX.analysis.json  everything, for scripts
  PREFIX.analysis.html  interactive report: graph, board and moves (one file, works offline)

exit status: 0 all read and analysed, 1 the record had errors (what was read is analysed
and written), 2 nothing to analyse (a missing, empty or unreadable file, no start position,
no move: one line on stderr says which, and nothing is written)."""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="usi-engine-analyse",
        description=__doc__.split("\n\n")[0],
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("record", help="KIF/KIFU (Shift-JIS or UTF-8), KI2, CSA, or SFEN/USI moves file")
    ap.add_argument("--format", choices=("kif", "ki2", "csa", "usi"), help="default: from the extension")
    limit = ap.add_argument_group("limit per position (default --time 1)")
    limit.add_argument("--time", type=float, help="seconds")
    limit.add_argument("--depth", type=int, help="plies")
    limit.add_argument("--nodes", type=int)
    ap.add_argument(
        "--engine", metavar="CMD", help="a USI engine command line (default: this engine, in process)"
    )
    ap.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="engine option, repeatable (e.g. --option USI_Hash=256)",
    )
    ap.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help="engines working in parallel, one per core (default: %(default)s)",
    )
    ap.add_argument("--out", metavar="PREFIX", help="output path prefix")
    ap.add_argument("--no-png", action="store_true", help="do not draw the graph (no matplotlib needed)")
    ap.add_argument("--no-html", action="store_true", help="do not write the HTML report")
    ap.add_argument("--quiet", action="store_true", help="no progress bar and no summary")
    args = ap.parse_args(argv)
    if args.time is None and args.depth is None and args.nodes is None:
        args.time = 1.0
    if args.jobs < 1:
        ap.error("--jobs must be at least 1")
    return args


def engine_factory(args: argparse.Namespace):
    """A function that starts the engine: --engine, or this engine in process."""
    options: dict[str, str] = {}
    for item in args.option:
        name, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"usi-engine-analyse: --option {item!r}: expected NAME=VALUE")
        options[name.strip()] = value.strip()
    if args.engine:
        from ..usi import Client

        return lambda: Client.popen(args.engine, options)
    from ..api import Engine

    options.setdefault("USI_Hash", "16")
    return lambda: Engine(options)


def _looks_binary(data: bytes) -> bool:
    """Bytes that no record editor writes: NUL, other control characters, or bytes that are
    neither UTF-8 nor Shift-JIS."""
    from ..record import decode

    if b"\0" in data:
        return True
    text = decode(data)
    return any(
        ch == "\ufffd" or (unicodedata.category(ch) == "Cc" and ch not in "\t\n\r\f\v\x1a") for ch in text
    )


def not_a_game(path: Path, record) -> str | None:
    """Why a record read from ``path`` is nothing to analyse (one line), or None.  A record
    with moves is analysed even when a later line is broken."""
    if record.moves:
        return None
    data = path.read_bytes()
    if not data.strip():
        return "empty file, no game to analyse"
    if _looks_binary(data):
        return "not a game record (binary data, no moves found)"
    if record.errors:
        return f"not a game record: {record.errors[0]}"
    return "not a game record: no moves found"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from ..api import Limit
    from ..record import read_record
    from . import analyse_game, plot, text_summary, write_html, write_json, write_kif
    from .report import annotated_csa

    path = Path(args.record)
    try:
        record = read_record(path, args.format)
        refused = not_a_game(path, record)
    except OSError as exc:
        refused = f"cannot read it: {exc.strerror or exc}"
    except ValueError as exc:
        refused = str(exc)
    if refused:
        print(f"usi-engine-analyse: {path}: {refused}", file=sys.stderr)
        return 2
    for err in record.errors:
        print(f"usi-engine-analyse: {path}: {err}", file=sys.stderr)
    limit = Limit(time=args.time, depth=args.depth, nodes=args.nodes)
    analysis = analyse_game(
        record,
        limit,
        engine_factory(args),
        jobs=min(args.jobs, len(record.moves) + 1),
        progress=not args.quiet,
    )
    prefix = Path(args.out) if args.out else path.with_suffix("")
    prefix.parent.mkdir(parents=True, exist_ok=True)
    skipped = {"png"} if args.no_png else set()
    skipped |= {"html"} if args.no_html else set()
    out = {
        ext: Path(f"{prefix}.analysis.{ext}")
        for ext in ("png", "kif", "csa", "json", "html")
        if ext not in skipped
    }
    write_kif(analysis, out["kif"])
    out["csa"].write_text(annotated_csa(analysis), encoding="utf-8")
    write_json(analysis, out["json"])
    if "html" in out:
        write_html(analysis, out["html"])
    if "png" in out:
        plot(analysis, out["png"])
    if not args.quiet:
        print(text_summary(analysis))
        print("wrote " + ", ".join(str(p) for p in out.values()))
    return 1 if analysis.errors else 0


if __name__ == "__main__":
    sys.exit(main())
