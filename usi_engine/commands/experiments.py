"""The classic search techniques of the Japanese computer-shogi texts, each measured on against off.

    usi-engine experiments run --technique yss --depth 10           # one technique
    usi-engine experiments run --technique all --depth 10 --jobs 14 # every one, 14 processes
    usi-engine experiments run --technique osl --param OslDepth=3   # another constant
    usi-engine experiments yss-table                                # YSS's Table 1, computed
    usi-engine experiments make-problems                            # rebuild the problem set

`run` searches every position of the problem set (usi_engine/data/problems_classic.sfen) to a fixed
depth twice, with the technique's switch off and on (everything else at its default), one
thread, a fresh TT and history per search, and prints per depth: the nodes and the seconds
to finish that depth (summed over the positions), the deepest seldepth and the deepest
full-width ply, how often the chosen move and the score differ between off and on, and how
often the problem's reference move is chosen (a mate found, for mate problems).  Iterative
deepening reports every depth of one search, so a depth's figures are those of the search
when it finished that iteration.  --jobs N spreads the positions over N processes (each pair
of on/off searches runs in one process, so both see the same load).  The results and their
reading are in docs/EXPERIMENTS.md.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import sys
import time
from dataclasses import dataclass, field, asdict

import numpy as np

from usi_engine.position import Position
from usi_engine.core.params import INDEX, defaults

from . import REPO, data_file
from .bench import DEFAULT_HASH_MB, load_positions, make_position, fresh

DEFAULT_PROBLEMS = data_file("problems_classic.sfen")

# technique -> (switches turned on, core/params.py constants changed, switches of both runs)
TECHNIQUES: dict[str, tuple[dict[str, int], dict[str, int], dict[str, int]]] = {
    "mid": ({"MultiIterativeDeepening": 1}, {}, {}),
    "mid-noiir": ({"MultiIterativeDeepening": 1}, {}, {"IIR": 0}),
    "yss": ({"HalfPlyExtension": 1}, {}, {}),
    "yss-full": ({"HalfPlyExtensionFull": 1}, {}, {}),
    "yss-nocheck": ({"HalfPlyExtension": 1}, {}, {"CheckExtension": 0}),
    "osl": ({"OneSideLimitedPVS": 1}, {"OslSide": 0}, {}),
    "osl-approx": ({"OneSideLimitedPVS": 1}, {"OslSide": 1}, {}),
    "shallow": ({"ShallowSearchOrdering": 1}, {}, {}),
}
TITLES = {
    "mid": "multi-iterative deepening (MultiIterativeDeepening)",
    "mid-noiir": "multi-iterative deepening, both runs without internal iterative reduction (IIR off)",
    "yss": "YSS half-ply extension of the TT move (HalfPlyExtension)",
    "yss-full": "YSS full half-ply extension (HalfPlyExtensionFull)",
    "yss-nocheck": "YSS half-ply extension, both runs without check extensions (CheckExtension off)",
    "osl": "one-side-limited PVS, refuting side limited, exact (OneSideLimitedPVS, OslSide=0)",
    "osl-approx": "one-side-limited PVS, PV side limited, approximate (OneSideLimitedPVS, OslSide=1)",
    "shallow": "ordering by a shallow search (ShallowSearchOrdering)",
}
# ctx.stats counters reported per technique (name in core/search.py)
COUNTERS = {
    "mid": ("S_MID_NODES", "S_MID_ITERS"),
    "mid-noiir": ("S_MID_NODES", "S_MID_ITERS"),
    "yss": (),
    "yss-full": (),
    "yss-nocheck": (),
    "osl": ("S_OSL_SCOUTS", "S_OSL_RESEARCHES", "S_OSL_RESTRICTED", "S_OSL_UNPROVEN"),
    "osl-approx": ("S_OSL_SCOUTS", "S_OSL_RESEARCHES", "S_OSL_RESTRICTED", "S_OSL_UNPROVEN"),
    "shallow": ("S_SHALLOW_NODES",),
}


# --- the problem set ---------------------------------------------------------------------
@dataclass
class Problem:
    sfen: str
    kind: str  # quiet, tactical, mate
    source: str
    ref: str | None  # reference move (a deep search's choice), or None
    mate: int | None  # plies to mate for mate problems


def parse_problem(sfen: str, comment: str) -> Problem:
    """'<kind>; <source>; ref <move> [cp N | mate N]' -> Problem."""
    parts = [p.strip() for p in comment.split(";")]
    kind = parts[0] if parts else "?"
    source = parts[1] if len(parts) > 1 else ""
    ref, mate = None, None
    for p in parts[2:]:
        words = p.split()
        if words and words[0] == "ref" and len(words) >= 2:
            ref = words[1] if words[1] != "-" else None
            if "mate" in words:
                mate = int(words[words.index("mate") + 1])
    return Problem(sfen, kind, source, ref, mate)


def load_problems(path: str) -> list[Problem]:
    return [parse_problem(sfen, comment) for sfen, comment in load_positions(path)]


# --- one search, per-depth records -------------------------------------------------------
@dataclass
class DepthRecord:
    depth: int
    nodes: int
    seconds: float
    seldepth: int
    full_ply: int  # deepest full-width node so far (ctx.stats S_FULL_PLY)
    best: str
    cp: int | None
    mate: int | None


@dataclass
class SearchRecord:
    depths: list[DepthRecord] = field(default_factory=list)
    counters: dict[str, int] = field(default_factory=dict)

    def at(self, depth: int) -> DepthRecord | None:
        """The record of `depth`, or the last one before it when the search ended early
        (a proven mate): that search had finished by then."""
        found = None
        for r in self.depths:
            if r.depth <= depth:
                found = r
        return found


_SEARCHER = None


def _searcher(hash_mb: int):
    global _SEARCHER
    if _SEARCHER is None:
        from usi_engine.search.factory import SearchSettings, make_searcher

        _SEARCHER = make_searcher(SearchSettings(hash_mb=hash_mb), warmup=True)
    return _SEARCHER


def search_record(
    sfen: str,
    depth: int,
    switches: dict[str, int],
    params: dict[str, int],
    counters: tuple[str, ...],
    hash_mb: int,
) -> SearchRecord:
    from usi_engine.search.factory import SearchSettings, configure
    from usi_engine.core import search as cs

    s = _searcher(hash_mb)
    sp = defaults()
    for name, value in params.items():
        sp[INDEX[name]] = int(value)
    configure(s, SearchSettings(switches=switches, search_params=sp))
    fresh(s)
    rec = SearchRecord()
    ctx = s._contexts[0]
    t0 = time.perf_counter()

    def on_iteration(info) -> None:
        if info.bound is not None or info.multipv != 1:
            return
        rec.depths.append(
            DepthRecord(
                info.depth,
                info.nodes,
                time.perf_counter() - t0,
                info.seldepth,
                int(ctx.stats[cs.S_FULL_PLY]),
                info.pv[0] if info.pv else "-",
                info.score_cp,
                info.score_mate,
            )
        )

    s.think(
        make_position(sfen),
        depth=depth,
        nodes=None,
        multipv=1,
        stop=np.zeros(1, np.int32),
        on_iteration=on_iteration,
    )
    rec.counters = {c: int(ctx.stats[getattr(cs, c)]) for c in counters}
    return rec


def _pair_job(job):
    """(index, sfen, depth, on switches, on params, switches of both, params of both,
    counters, hash) -> (index, off record, on record)."""
    i, sfen, depth, switches, params, base_switches, base_params, counters, hash_mb = job
    off = search_record(sfen, depth, base_switches, base_params, counters, hash_mb)
    on = search_record(
        sfen, depth, {**base_switches, **switches}, {**base_params, **params}, counters, hash_mb
    )
    return i, off, on


def run_pairs(
    problems: list[Problem], depth: int, technique: str, base_params: dict[str, int], jobs: int, hash_mb: int
) -> list[tuple[SearchRecord, SearchRecord]]:
    switches, params, base_switches = TECHNIQUES[technique]
    work = [
        (i, p.sfen, depth, switches, params, base_switches, base_params, COUNTERS[technique], hash_mb)
        for i, p in enumerate(problems)
    ]
    out: list = [None] * len(problems)
    if jobs <= 1:
        for job in work:
            i, off, on = _pair_job(job)
            out[i] = (off, on)
    else:
        ctx = multiprocessing.get_context("spawn")  # numba and threads: no fork
        with ctx.Pool(jobs) as pool:
            for i, off, on in pool.imap_unordered(_pair_job, work):
                out[i] = (off, on)
    return out


# --- tables ------------------------------------------------------------------------------
def _score(r: DepthRecord) -> tuple:
    return ("mate", r.mate) if r.mate is not None else ("cp", r.cp)


def _found(p: Problem, r: DepthRecord | None) -> bool:
    if r is None:
        return False
    if p.mate is not None:
        return r.mate is not None and r.mate > 0
    return p.ref is not None and r.best == p.ref


def depth_rows(problems: list[Problem], pairs, depth: int) -> list[dict]:
    rows = []
    with_ref = sum(1 for p in problems if p.ref is not None or p.mate is not None)
    for d in range(1, depth + 1):
        row = {
            "depth": d,
            "nodes_off": 0,
            "nodes_on": 0,
            "sec_off": 0.0,
            "sec_on": 0.0,
            "seldepth_off": 0,
            "seldepth_on": 0,
            "full_ply_off": 0,
            "full_ply_on": 0,
            "move_changed": 0,
            "score_changed": 0,
            "score_diff_sum": 0,
            "compared": 0,
            "found_off": 0,
            "found_on": 0,
            "with_ref": with_ref,
        }
        for p, (off, on) in zip(problems, pairs):
            a, b = off.at(d), on.at(d)
            if a is None or b is None:
                continue
            row["nodes_off"] += a.nodes
            row["nodes_on"] += b.nodes
            row["sec_off"] += a.seconds
            row["sec_on"] += b.seconds
            row["seldepth_off"] = max(row["seldepth_off"], a.seldepth)
            row["seldepth_on"] = max(row["seldepth_on"], b.seldepth)
            row["full_ply_off"] = max(row["full_ply_off"], a.full_ply)
            row["full_ply_on"] = max(row["full_ply_on"], b.full_ply)
            row["compared"] += 1
            row["move_changed"] += a.best != b.best
            row["score_changed"] += _score(a) != _score(b)
            if a.cp is not None and b.cp is not None:
                row["score_diff_sum"] += abs(a.cp - b.cp)
            row["found_off"] += _found(p, a)
            row["found_on"] += _found(p, b)
        rows.append(row)
    return rows


def print_table(technique: str, problems: list[Problem], pairs, depth: int, extra: str) -> list[dict]:
    rows = depth_rows(problems, pairs, depth)
    print(f"\n### {TITLES[technique]}{extra}\n")
    print(
        f"{len(problems)} positions; nodes and seconds to finish each depth, summed; "
        "on/off ratios; max seldepth and max full-width ply over the positions; "
        "positions where the move / the score differ; reference moves (or mates) found.\n"
    )
    print(
        "| depth | nodes off | nodes on | on/off | s off | s on | on/off | seldepth off/on "
        "| full-width ply off/on | move differs | score differs | mean abs cp diff "
        "| found off/on |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        n = max(1, r["compared"])
        ratio_n = r["nodes_on"] / r["nodes_off"] if r["nodes_off"] else 0.0
        ratio_t = r["sec_on"] / r["sec_off"] if r["sec_off"] else 0.0
        print(
            f"| {r['depth']} | {r['nodes_off']:,} | {r['nodes_on']:,} | {ratio_n:.2f} "
            f"| {r['sec_off']:.2f} | {r['sec_on']:.2f} | {ratio_t:.2f} "
            f"| {r['seldepth_off']}/{r['seldepth_on']} | {r['full_ply_off']}/{r['full_ply_on']} "
            f"| {r['move_changed']}/{n} | {r['score_changed']}/{n} | {r['score_diff_sum'] / n:.0f} "
            f"| {r['found_off']}/{r['found_on']} of {r['with_ref']} |"
        )
    counters = {}
    for _off, on in pairs:
        for k, v in on.counters.items():
            counters[k] = counters.get(k, 0) + v
    if counters:
        print(
            "\nCounters of the 'on' searches, summed: "
            + ", ".join(f"{k[2:].lower()} {v:,}" for k, v in counters.items())
        )
    by_kind: dict[str, list[int]] = {}
    for p, (off, on) in zip(problems, pairs):
        a, b = off.at(depth), on.at(depth)
        if a and b:
            k = by_kind.setdefault(p.kind, [0, 0, 0, 0, 0])
            k[0] += a.nodes
            k[1] += b.nodes
            k[2] += 1
            k[3] += _found(p, a)
            k[4] += _found(p, b)
    print(
        "By kind at depth %d: " % depth
        + "; ".join(
            f"{kind} ({c}) nodes on/off {on_n / off_n:.2f}, found {f_off}/{f_on}"
            for kind, (off_n, on_n, c, f_off, f_on) in by_kind.items()
            if off_n
        )
    )
    return rows


def cmd_run(args) -> int:
    problems = load_problems(args.problems)
    if args.limit:
        problems = problems[: args.limit]
    base_params = {}
    for text in args.param or []:
        name, _, value = text.partition("=")
        if name not in INDEX:
            print(f"unknown constant {name!r}; known: {', '.join(INDEX)}", file=sys.stderr)
            return 2
        base_params[name] = int(value)
    names = list(TECHNIQUES) if args.technique == "all" else args.technique.split(",")
    for name in names:
        if name not in TECHNIQUES:
            print(f"unknown technique {name!r}; known: {', '.join(TECHNIQUES)}, all", file=sys.stderr)
            return 2
    print(
        f"# depth {args.depth}, hash {args.hash} MB, {len(problems)} positions from "
        f"{os.path.relpath(args.problems)}, jobs {args.jobs}, constants {base_params or 'default'}"
    )
    results = {}
    for name in names:
        t0 = time.perf_counter()
        pairs = run_pairs(problems, args.depth, name, base_params, args.jobs, args.hash)
        rows = print_table(name, problems, pairs, args.depth, "")
        print(f"(wall {time.perf_counter() - t0:.0f} s; load average {os.getloadavg()[0]:.2f})", flush=True)
        results[name] = {
            "rows": rows,
            "positions": [{"off": asdict(off), "on": asdict(on)} for off, on in pairs],
        }
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(
                {"depth": args.depth, "problems": [asdict(p) for p in problems], "results": results}, fh
            )
    return 0


# --- YSS Table 1 -------------------------------------------------------------------------
def yss_leaves(b: int, n: int) -> tuple[int, int]:
    """Leaves of a uniform full-width tree of branching factor b and nominal depth n plies,
    without and with the half-ply extension of one move per node (the TT move's line costs
    half a ply a move): L(h) = L(h-1) + (b-1) L(h-2) over h half plies."""
    leaves = [1, 1]
    for h in range(2, 2 * n + 1):
        leaves.append(leaves[h - 1] + (b - 1) * leaves[h - 2])
    return b**n, leaves[2 * n]


def cmd_yss_table(args) -> int:
    print(f"| depth | leaves without | leaves with | ratio | max depth |  (branching factor {args.b})")
    print("|---|---|---|---|---|")
    for n in range(1, args.max_depth + 1):
        plain, ext = yss_leaves(args.b, n)
        print(f"| {n} | {plain:,} | {ext:,} | {ext / plain:.2f} | {2 * n - 1} |")
    return 0


# --- making the problem set --------------------------------------------------------------
def _think(searcher, pos: Position, depth: int | None = None, nodes: int | None = None):
    fresh(searcher)
    return searcher.think(
        pos, depth=depth, nodes=nodes, multipv=1, stop=np.zeros(1, np.int32), on_iteration=lambda info: None
    )


def _cp(result) -> int | None:
    return None if result.info is None else result.info.score_cp


def cmd_make_problems(args) -> int:
    """Self-play from balanced openings; positions classified by searches at two depths."""
    searcher = _searcher(args.hash)
    rng = random.Random(args.seed)
    openings = [
        line.strip()
        for line in open(data_file("openings_balanced.txt"), encoding="utf-8")
        if line.strip() and not line.startswith("#")
    ]
    picked = rng.sample(range(len(openings)), args.games)
    quiet, tactical = [], []
    for g, index in enumerate(picked, 1):
        moves = openings[index].split()[2:]  # 'startpos moves ...'
        pos = Position()
        for m in moves:
            pos.push(m)
        for ply in range(len(moves), args.max_ply):
            if pos.is_game_over():
                break
            if ply >= args.min_ply and ply % args.every == 0:
                shallow, deep = (
                    _think(searcher, pos, depth=1),
                    _think(searcher, pos, depth=args.classify_depth),
                )
                s1, s8 = _cp(shallow), _cp(deep)
                src = f"self-play (usi_engine, {args.nodes} nodes a move) from openings_balanced.txt line {index + 3}, ply {ply}"
                if s1 is not None and s8 is not None and abs(s8) <= 2500:
                    capture = pos.piece_at(deep.best[2:4]) is not None if deep.best[1] != "*" else False
                    if s8 - s1 >= args.gain:
                        tactical.append((pos.sfen(), src, g))
                    elif abs(s8) <= 300 and abs(s8 - s1) < 60 and not capture:
                        quiet.append((pos.sfen(), src, g))
            r = _think(searcher, pos, nodes=args.nodes)
            if r.best is None or r.best in ("resign", "win"):
                break
            pos.push(r.best)
        print(f"# game {g}/{args.games}: {len(quiet)} quiet, {len(tactical)} tactical so far", flush=True)

    def spread(items, count):
        """At most count, taken round-robin over the games."""
        by_game: dict[int, list] = {}
        for sfen, src, g in items:
            by_game.setdefault(g, []).append((sfen, src))
        out = []
        while len(out) < count and any(by_game.values()):
            for g in sorted(by_game):
                if by_game[g] and len(out) < count:
                    out.append(by_game[g].pop(rng.randrange(len(by_game[g]))))
        return out

    lines = [
        "# Problem set of scripts/experiments.py: '<sfen>  # <kind>; <source>; ref <move> <score>'.",
        f"# Made by: python scripts/experiments.py make-problems --games {args.games} --seed {args.seed} "
        f"--nodes {args.nodes} --ref-depth {args.ref_depth}",
        "# quiet: |score| <= 300 cp at depth %d, within 60 cp of depth 1, best move no capture;"
        % args.classify_depth,
        "# tactical: the side to move gains >= %d cp between depth 1 and depth %d."
        % (args.gain, args.classify_depth),
        f"# ref: the move and score of a depth-{args.ref_depth} search with the default switches (an engine's choice,",
        "# not ground truth); mate problems: ref is one first move of a mate of the given length.",
    ]
    for kind, items, count in (("quiet", quiet, args.quiet), ("tactical", tactical, args.tactical)):
        for sfen, src in spread(items, count):
            r = _think(searcher, Position(sfen), depth=args.ref_depth)
            score = f"mate {r.info.score_mate}" if r.info.score_mate is not None else f"cp {r.info.score_cp}"
            lines.append(f"{sfen}  # {kind}; {src}; ref {r.best} {score}")
            print(lines[-1], flush=True)
    lines += _mate_problems()
    with open(args.out, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    print(f"# wrote {args.out}: {len(lines) - 6} positions")
    return 0


def _mate_problems() -> list[str]:
    """Mate problems copied from the repository's own verified sets: the mating attacks of
    usi_engine/data/bench_positions.txt and tsume of 5-11 plies from tests/data/tsume.txt."""
    out = []
    for sfen, comment in load_positions(data_file("bench_positions.txt")):
        if comment.startswith("mating attack"):
            n = int(comment.rsplit("mate in", 1)[1].split()[0])
            out.append(f"{sfen}  # mate; scripts/bench_positions.txt ({comment}); ref - mate {n}")
    tsume = os.path.join(REPO, "tests", "data", "tsume.txt")
    taken: dict[int, int] = {}
    for line in open(tsume, encoding="utf-8"):
        if line.startswith("#") or not line.strip():
            continue
        sfen, length, source = (x.strip() for x in line.split(";", 2))
        if length == "nomate" or not 5 <= int(length) <= 11 or taken.get(int(length), 0) >= 2:
            continue
        taken[int(length)] = taken.get(int(length), 0) + 1
        first = source.rsplit("e.g.", 1)[1].split()[0]
        out.append(
            f"{sfen}  # mate; tests/data/tsume.txt ({source.split(',')[0]}, verified by brute force "
            f"and cshogi.DfPn); ref {first} mate {length}"
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="usi-engine experiments",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run", help="on vs off at fixed depths")
    run.add_argument("--technique", default="all", help=f"{', '.join(TECHNIQUES)}, a comma list, or all")
    run.add_argument("--depth", type=int, default=10)
    run.add_argument("--jobs", type=int, default=1, help="processes over the positions")
    run.add_argument("--problems", default=DEFAULT_PROBLEMS)
    run.add_argument("--limit", type=int, help="only the first N positions")
    run.add_argument("--hash", type=int, default=DEFAULT_HASH_MB)
    run.add_argument(
        "--param",
        action="append",
        metavar="NAME=VALUE",
        help="a core/params.py constant for both searches (repeatable)",
    )
    run.add_argument("--json", help="write every record to this file")
    yss = sub.add_parser("yss-table", help="YSS's Table 1: leaves with the half-ply extension")
    yss.add_argument("--b", type=int, default=20, help="branching factor")
    yss.add_argument("--max-depth", type=int, default=8)
    mk = sub.add_parser("make-problems", help="rebuild the problem set by self-play")
    mk.add_argument("--out", default=DEFAULT_PROBLEMS)
    mk.add_argument("--games", type=int, default=14)
    mk.add_argument("--seed", type=int, default=13)
    mk.add_argument("--nodes", type=int, default=20000, help="self-play nodes a move")
    mk.add_argument("--min-ply", type=int, default=30)
    mk.add_argument("--max-ply", type=int, default=110)
    mk.add_argument("--every", type=int, default=3, help="classify every N-th ply")
    mk.add_argument("--classify-depth", type=int, default=8)
    mk.add_argument("--gain", type=int, default=250, help="tactical: cp gained from depth 1")
    mk.add_argument("--ref-depth", type=int, default=13)
    mk.add_argument("--quiet", type=int, default=20)
    mk.add_argument("--tactical", type=int, default=16)
    mk.add_argument("--hash", type=int, default=DEFAULT_HASH_MB)
    args = ap.parse_args(argv)
    return {"run": cmd_run, "yss-table": cmd_yss_table, "make-problems": cmd_make_problems}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
