"""Label positions with the hand-made evaluation, to pretrain a network before it learns
from search scores (usi_engine/training/data/distill.py says what the records hold).

    usi-engine distill runs/gen1 --out runs/distill1 --variants 3
    usi-engine train runs/distill1 --out nets/pre --arch halfkp_64x2-32-32 \\
        --factorize --lambda 1                                   # learn the hand-made evaluation
    usi-engine train runs/gen1 --out nets/h1 --arch halfkp_64x2-32-32 \\
        --factorize --init nets/pre/best/nn.bin                  # then the searches

One output file per input file (shards or folders of shards); a finished file is kept when
the command runs again.  See docs/training.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import time


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="usi-engine distill", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("data", nargs="+", help="PackedSfenValue files or folders of shards")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--variants", type=int, default=3, help="random continuations per position")
    p.add_argument("--max-random", type=int, default=4, help="most random moves in a continuation")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    a = p.parse_args(argv)
    from usi_engine.training.learn.dataset import shard_files
    from usi_engine.training.data.distill import DistillConfig, run

    try:
        files = shard_files(a.data)
        cfg = DistillConfig(tuple(files), a.out, a.variants, a.max_random, a.seed, a.workers)
        t0 = time.monotonic()
        run(cfg)
    except ValueError as exc:
        print(f"distill_data: {exc}", file=sys.stderr)
        return 2
    print(f"{time.monotonic() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
