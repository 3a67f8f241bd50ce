"""Mate-solver benchmark and the independent oracle for tests/data/tsume.txt.

    usi-engine mate                 # solve the shipped set, table per length
    usi-engine mate --verify        # re-check every shipped answer with the
                                    # cshogi-based brute force and cshogi.DfPn
    usi-engine mate --generate 2000 # random tsume candidates (for new problems)

The brute force (`oracle_length`) uses only cshogi's legal move generator: iterative
deepening over "attacker checks / defender any legal move" with a memo, so it is exact and
shares no code with usi_engine.  The last line of the benchmark is
`total nodes <N> seconds <S> nps <X>`.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections import defaultdict

from . import REPO

DATA = os.path.join(REPO, "tests", "data", "tsume.txt")  # in a checkout of the repository


def load_problems(path: str = DATA) -> list[tuple[str, str, str]]:
    """[(sfen, length-or-'nomate', source)] from the shipped file."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            sfen, length, source = (part.strip() for part in line.split(";", 2))
            out.append((sfen, length, source))
    return out


# ------------------------------------------------------------------------------------------
# independent oracle (cshogi only)
# ------------------------------------------------------------------------------------------


class _Budget(Exception):
    pass


def oracle_length(sfen: str, max_len: int, node_limit: int = 5_000_000) -> int | None:
    """Exact minimax mate length (attacker shortest, defender longest, every interposition
    counted) if it is at most max_len, else None.  Raises RuntimeError past node_limit."""
    import cshogi

    board = cshogi.Board(sfen)
    memo: dict[tuple[int, int], int | None] = {}
    path: set[int] = set()
    count = [0]

    def or_node(budget: int):
        """Shortest mate <= budget, or None; second value True if a repetition cut."""
        count[0] += 1
        if count[0] > node_limit:
            raise _Budget
        key = board.zobrist_hash()
        if key in path:
            return None, True
        if (key, budget) in memo:
            return memo[(key, budget)], False
        path.add(key)
        best, rep, b = None, False, budget
        for m in list(board.legal_moves):
            if b < 1:
                break
            board.push(m)
            if board.is_check():
                v, r = and_node(b - 1)
                rep |= r
                if v is not None:
                    best, b = v + 1, v - 1
            board.pop()
        path.discard(key)
        if not rep:
            memo[(key, budget)] = best
        return best, rep

    def and_node(budget: int):
        count[0] += 1
        key = board.zobrist_hash()
        if key in path:
            return None, True
        replies = list(board.legal_moves)
        if not replies:
            return 0, False
        if budget < 2:
            return None, False
        if (key, budget) in memo:
            return memo[(key, budget)], False
        path.add(key)
        worst, rep = 0, False
        for m in replies:
            board.push(m)
            v, r = or_node(budget - 1)
            board.pop()
            rep |= r
            if v is None:
                worst = None
                break
            worst = max(worst, v + 1)
        path.discard(key)
        if not rep:
            memo[(key, budget)] = worst
        return worst, rep

    try:
        for budget in range(1, max_len + 1, 2):
            v, _ = or_node(budget)
            if v is not None:
                return v
    except _Budget:
        raise RuntimeError(f"oracle node limit {node_limit} reached") from None
    return None


def dfpn_oracle(sfen: str, nodes: int = 2_000_000) -> bool:
    """cshogi's own df-pn: True if it finds a mate."""
    import cshogi

    board = cshogi.Board(sfen)
    solver = cshogi.DfPn()
    solver.set_max_search_node(nodes)
    return bool(solver.search(board))


def verify(problems, max_oracle_len: int) -> int:
    bad = 0
    for sfen, length, source in problems:
        t0 = time.perf_counter()
        mate = dfpn_oracle(sfen)
        note = ""
        if length == "nomate":
            ok = not mate
            try:
                v = oracle_length(sfen, max_oracle_len)
                ok = ok and v is None
                note = f"brute force: no mate <= {max_oracle_len}"
            except RuntimeError as e:
                note = f"brute force: {e}"
        else:
            n = int(length)
            ok = mate
            if n <= max_oracle_len:
                try:
                    v = oracle_length(sfen, n)
                    ok = ok and v == n
                    note = f"brute force length {v}"
                except RuntimeError as e:
                    ok = False
                    note = f"brute force: {e}"
            else:
                note = "brute force skipped (too long)"
        bad += not ok
        print(
            f"{'ok ' if ok else 'BAD'} {length:>6} dfpn={'mate' if mate else 'nomate':6} "
            f"{note:34} {time.perf_counter() - t0:6.1f}s  {sfen}",
            flush=True,
        )
    print(f"{len(problems) - bad} passed, {bad} failed")
    return bad


# ------------------------------------------------------------------------------------------
# random candidates
# ------------------------------------------------------------------------------------------

_FULL = {"R": 2, "B": 2, "G": 4, "S": 4, "N": 4, "L": 4, "P": 18}


def random_tsume(rng: random.Random) -> str | None:
    """A random position: white king near the top, a few black and white pieces around it,
    one to three pieces in black's hand, every other piece in white's hand."""
    import cshogi

    board = [[""] * 9 for _ in range(9)]  # board[rank][file_index_from_left]
    used = defaultdict(int)
    kf, kr = rng.randrange(9), rng.choice((0, 0, 0, 1, 1, 2))
    board[kr][kf] = "k"

    def place(letter, black):
        base = letter.lstrip("+")
        if used[base] >= _FULL[base]:
            return
        for _ in range(20):
            f = min(8, max(0, kf + rng.randint(-3, 3)))
            r = min(8, max(0, kr + rng.randint(-1, 4)))
            if board[r][f]:
                continue
            board[r][f] = letter if black else letter.lower()
            used[base] += 1
            return

    for _ in range(rng.randint(1, 4)):
        place(rng.choice(["R", "B", "G", "S", "N", "L", "P", "+R", "+B", "+P"]), True)
    for _ in range(rng.randint(0, 4)):
        place(rng.choice("GSNLPPP"), False)
    hand_b = ""
    for _ in range(rng.randint(1, 3)):
        p = rng.choice("RBGGSSNLP")
        if used[p] < _FULL[p]:
            used[p] += 1
            hand_b += p
    rows = []
    for r in range(9):
        row, empty = "", 0
        for f in range(9):
            cell = board[r][f]
            if not cell:
                empty += 1
                continue
            if empty:
                row, empty = row + str(empty), 0
            row += cell
        rows.append(row + (str(empty) if empty else ""))
    hand_w = "".join(
        f"{_FULL[p] - used[p] if _FULL[p] - used[p] > 1 else ''}{p.lower()}"
        for p in "RBGSNLP"
        if _FULL[p] - used[p] > 0
    )
    counts = defaultdict(int)
    for p in hand_b:
        counts[p] += 1
    hb = "".join(f"{counts[p] if counts[p] > 1 else ''}{p}" for p in "RBGSNLP" if counts[p])
    sfen = f"{'/'.join(rows)} b {hb}{hand_w} 1"
    try:
        b = cshogi.Board(sfen)
    except Exception:
        return None
    if not b.is_ok():
        return None
    try:
        from usi_engine.position import Position

        Position(sfen)
    except ValueError:
        return None
    return sfen


def generate(count: int, seed: int) -> None:
    from usi_engine.search.tsume import MateSolver
    from usi_engine.position import Position

    rng = random.Random(seed)
    solver = MateSolver(64)
    for _ in range(count):
        sfen = random_tsume(rng)
        if sfen is None or not dfpn_oracle(sfen, 200_000):
            continue
        t0 = time.perf_counter()
        status, moves = solver.solve(Position(sfen), time_limit_ms=5000)
        print(
            f"{len(moves) if status == 'mate' else status} ; {sfen} ; "
            f"{time.perf_counter() - t0:.2f}s ; {' '.join(moves)}",
            flush=True,
        )


# ------------------------------------------------------------------------------------------
# benchmark
# ------------------------------------------------------------------------------------------


def bench(problems, time_limit_ms: int, table_mb: int) -> int:
    from usi_engine.search.tsume import MateSolver
    from usi_engine.position import Position

    solver = MateSolver(table_mb)
    solver.solve(Position(problems[0][0]), time_limit_ms=time_limit_ms)  # compile / load
    groups: dict[str, list] = defaultdict(list)
    total_nodes, total_s, failures = 0, 0.0, 0
    for sfen, length, _source in problems:
        t0 = time.perf_counter()
        status, moves = solver.solve(Position(sfen), time_limit_ms=time_limit_ms)
        dt = time.perf_counter() - t0
        got = str(len(moves)) if status == "mate" else status
        ok = got == length
        failures += not ok
        total_nodes += solver.nodes
        total_s += dt
        key = length if length == "nomate" else f"{int(length):>2}"
        groups[key].append((ok, dt, solver.nodes))
        if not ok:
            print(f"FAIL expected {length} got {got}: {sfen}")
    print(f"{'length':>7} {'solved':>8} {'mean s':>8} {'max s':>8} {'nodes':>10} {'nps':>9}")
    for key in sorted(groups, key=lambda k: (k == "nomate", k)):
        rows = groups[key]
        solved = sum(r[0] for r in rows)
        secs = [r[1] for r in rows]
        nodes = sum(r[2] for r in rows)
        print(
            f"{key.strip():>7} {solved:>4}/{len(rows):<3} {sum(secs) / len(secs):8.3f} "
            f"{max(secs):8.3f} {nodes:>10} {int(nodes / max(sum(secs), 1e-9)):>9}"
        )
    print(f"total nodes {total_nodes} seconds {total_s:.2f} nps {int(total_nodes / max(total_s, 1e-9))}")
    return failures


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="usi-engine mate",
        description=__doc__.splitlines()[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--verify", action="store_true", help="check the shipped answers with the oracle")
    ap.add_argument(
        "--max-oracle-len", type=int, default=11, help="longest mate the brute force re-checks (default 11)"
    )
    ap.add_argument("--generate", type=int, metavar="N", help="print candidates from N random positions")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--time", type=int, default=10000, help="time limit per problem, ms")
    ap.add_argument("--hash", type=int, default=64, help="table size, MiB")
    ap.add_argument("--file", default=DATA)
    args = ap.parse_args(argv)
    if args.generate:
        generate(args.generate, args.seed)
        return 0
    problems = load_problems(args.file)
    if args.verify:
        return 1 if verify(problems, args.max_oracle_len) else 0
    return 1 if bench(problems, args.time, args.hash) else 0


if __name__ == "__main__":
    sys.exit(main())
