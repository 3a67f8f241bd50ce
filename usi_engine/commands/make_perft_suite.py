"""Write tests/data/perft_suite.txt: the published perft figures plus random positions
counted by cshogi (an independent oracle).

    usi-engine make-perft-suite [--out tests/data/perft_suite.txt] [--seed 2024]

Random positions come from seeded random play that prefers captures, so both hands fill
up with pieces to drop; counts at D1..D3 are cshogi's (bulk counted, all non-promotions
included, the same convention as the published figures).
"""

from __future__ import annotations

import argparse
import random
import sys

import cshogi

from .perft import cshogi_perft  # the same oracle `usi-engine perft` compares with

# (sfen, figures from D1, comment) -- published figures
PUBLISHED = [
    ("startpos", [30, 900, 25470, 719731, 19861490, 547581517], "start position"),
    (
        "l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w RGgsn5p 1",
        [207, 28684, 4809015, 516925165],
        "matsuri (Shogi 'festival' position)",
    ),
    (
        "R8/2K1S1SSk/4B4/9/9/9/9/9/1L1L1L3 b RBGSNLP3g3n17p 1",
        [593, 105677, 53393368],
        "the most legal moves known (593)",
    ),
    ("7lk/9/8S/9/9/9/9/7L1/8K b P 1", [85, 639, 10786, 167089], "pawn-drop mate and pins"),
    ("4k4/9/9/9/9/9/9/9/9 b 16P 1", [72, 355], "pawns in hand only: nifu on every file after a drop"),
    ("r7k/6K2/7SP/4s2bb/9/9/9/9/9 b r4g2s4n4l17p 1", [4], "in check by several pieces"),
    ("8k/7G1/7P1/9/9/9/9/9/K8 w - 1", [0, 0], "checkmated: no legal move"),
]


def random_positions(rng: random.Random, count: int) -> list[str]:
    out: list[str] = []
    while len(out) < count:
        board = cshogi.Board()
        length = rng.randint(30, 220)
        capture_bias = rng.choice((0.6, 0.8, 0.95))
        ok = True
        for _ in range(length):
            moves = list(board.legal_moves)
            if not moves:
                ok = False
                break
            captures = [
                m for m in moves if board.piece(cshogi.move_to(m)) != 0 and not cshogi.move_is_drop(m)
            ]
            pool = captures if captures and rng.random() < capture_bias else moves
            board.push(rng.choice(pool))
        if not ok or not board.legal_moves:
            continue
        sfen = board.sfen().rsplit(" ", 1)[0] + " 1"
        if sfen not in out:
            out.append(sfen)
    return out


def _cshogi_version() -> str:
    from importlib.metadata import version

    return version("cshogi")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="usi-engine make-perft-suite",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--out", default="tests/data/perft_suite.txt")
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--count", type=int, default=20, help="random positions")
    ap.add_argument("--depth", type=int, default=3, help="depth of the cshogi counts")
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    lines = [
        "# Perft suite: <sfen> ;D1 <nodes> ;D2 <nodes> ...   ('startpos' allowed, '#' comments)",
        "# Made by scripts/make_perft_suite.py "
        f"--seed {args.seed} --count {args.count} --depth {args.depth}; verify with",
        "#   python scripts/perft.py --suite tests/data/perft_suite.txt [--max-depth N]",
        "# Counts include the legal non-promotions of pawn, lance, bishop and rook.",
        "",
        "# published figures",
    ]
    for sfen, figures, comment in PUBLISHED:
        lines.append(f"# {comment}")
        lines.append(sfen + "".join(f" ;D{d} {n}" for d, n in enumerate(figures, 1)))
    lines += [
        "",
        f"# random play biased to captures (seed {args.seed}); counts from cshogi {_cshogi_version()}",
    ]
    for sfen in random_positions(rng, args.count):
        board = cshogi.Board(sfen)
        figures = [cshogi_perft(board, d) for d in range(1, args.depth + 1)]
        lines.append(sfen + "".join(f" ;D{d} {n}" for d, n in enumerate(figures, 1)))
    with open(args.out, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {args.out}: {len(PUBLISHED)} published + {args.count} random positions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
