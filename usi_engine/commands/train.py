"""Train an NNUE network on PackedSfenValue shards and export it as YaneuraOu's nn.bin.

    usi-engine train data/gen1 --out nets/kp1                  # K+P 256x2-32-32, CPU
    usi-engine train data/gen1 --out nets/hkp --arch halfkp_256x2-32-32 --device cuda
    usi-engine train data/gen1 --out nets/kp1 --epochs 20   # again: goes on from
                                                            # nets/kp1/checkpoint.pt (epochs 11-20)
    usi-engine train data/gen2 --out nets/kp2 --init nets/kp1/nn.bin   # next round
    usi-engine train data/gen2 --out nets/h128 --init nets/h64/nn.bin \\
        --arch halfkp_128x2-32-32                   # wider, starting from h64's evaluation

The last shard is held out for validation unless --val names files or folders.  Outputs:
nn.bin (use the folder as EvalDir), checkpoint.pt, history.json, loss.png.  See docs/training.md.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time

_ARCH = re.compile(r"^(halfkp|kp)_(\d+)x2-(\d+)-(\d+)$")
_FEATURE_SET = {"halfkp": "HalfKP(Friend)", "kp": "K+P"}


def parse_arch(text: str) -> tuple[str, int, int, int]:
    m = _ARCH.match(text)
    if not m:
        raise SystemExit(f"--arch {text!r}: expected e.g. kp_256x2-32-32 or halfkp_256x2-32-32")
    return _FEATURE_SET[m[1]], int(m[2]), int(m[3]), int(m[4])


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="usi-engine train", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("data", nargs="+", help="shard files or folders of shards")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--val", nargs="+", default=[], help="validation shards (default: the last data shard)")
    p.add_argument(
        "--arch",
        default=None,
        help="kp_256x2-32-32 (default; with --init, the init network's) or halfkp_256x2-32-32; "
        "wider than --init's network: it is widened, evaluating the same to start from",
    )
    p.add_argument(
        "--factorize",
        action="store_true",
        help="HalfKP: train with the shared piece factor, folded into the file on export",
    )
    p.add_argument(
        "--mirror",
        action="store_true",
        help="add the mirror image (files reversed) of every training position",
    )
    from usi_engine.training.learn.trainer import TrainConfig

    d = TrainConfig(data=[], out="")
    p.add_argument("--epochs", type=int, default=d.epochs)
    p.add_argument("--batch-size", type=int, default=d.batch_size)
    p.add_argument("--lr", type=float, default=d.lr)
    p.add_argument("--lr-decay", type=float, default=d.lr_decay, help="learning rate factor per epoch")
    p.add_argument(
        "--lambda",
        dest="lam",
        type=float,
        default=d.lam,
        help="weight of the search score against the game result (1: scores only)",
    )
    p.add_argument("--scale", type=float, default=d.scale, help="sigmoid scale in centipawns")
    p.add_argument("--score-limit", type=int, default=d.score_limit)
    p.add_argument(
        "--score-factor",
        type=float,
        default=d.score_factor,
        help="multiply every score by this first (a teacher's centipawns in ours)",
    )
    p.add_argument(
        "--score-factor-for",
        metavar="PATH=FACTOR",
        action="append",
        default=[],
        type=_path_factor,
        help="the shards named by PATH, or found under it, use FACTOR instead of --score-factor "
        "(two teachers' labels in one run); may be given more than once",
    )
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument("--device", default=d.device, help="auto (CUDA when present), cpu, cuda")
    p.add_argument("--threads", type=int, default=None, help="CPU threads for torch")
    p.add_argument(
        "--resume",
        default="auto",
        help="go on from a checkpoint.pt (default: the --out folder's own, when it "
        "was made by the same settings and data; a run killed midway goes on)",
    )
    p.add_argument(
        "--fresh", action="store_true", help="start over even if the --out folder holds a checkpoint"
    )
    p.add_argument("--init", default=None, help="start from the weights of an nn.bin")
    p.add_argument("--no-progress", action="store_true")
    return p.parse_args(argv)


def _path_factor(text: str) -> tuple[str, float]:
    path, sep, factor = text.rpartition("=")
    try:
        value = float(factor)
    except ValueError:
        value = None
    if not sep or not path or value is None or value <= 0:
        raise argparse.ArgumentTypeError(f"expected PATH=FACTOR with a positive FACTOR, got {text!r}")
    return path, value


def default_arch(init: str | None) -> str:
    """The architecture of the --init network (the next round of the same shape), else
    K+P 256x2-32-32."""
    if init is None:
        return "kp_256x2-32-32"
    from usi_engine.nnue.format import read_network

    try:
        return read_network(init).name
    except (OSError, ValueError) as exc:
        raise SystemExit(f"train_nnue: --init {init}: {exc}") from None


def main(argv=None) -> int:
    a = parse_args(argv)
    arch = a.arch or default_arch(a.init)
    fs, half, l1, l2 = parse_arch(arch)
    import torch
    from usi_engine.training.learn.trainer import TrainConfig, train

    if a.threads:
        torch.set_num_threads(a.threads)
    cfg = TrainConfig(
        data=a.data,
        out=a.out,
        val=a.val,
        feature_set=fs,
        half=half,
        l1=l1,
        l2=l2,
        factorized=a.factorize,
        mirror=a.mirror,
        epochs=a.epochs,
        batch_size=a.batch_size,
        lr=a.lr,
        lr_decay=a.lr_decay,
        lam=a.lam,
        scale=a.scale,
        score_limit=a.score_limit,
        score_factor=a.score_factor,
        score_factors=tuple(a.score_factor_for),
        seed=a.seed,
        device=a.device,
        resume=None if a.fresh else a.resume,
        init=a.init,
    )
    t0 = time.monotonic()
    try:
        summary = train(cfg, show_progress=not a.no_progress)
    except ValueError as exc:
        print(f"train_nnue: {exc}", file=sys.stderr)
        return 2
    last = summary["history"][-1]
    print(
        f"wrote {os.path.join(a.out, 'nn.bin')} ({arch}): val loss {summary['history'][0]['val_loss']:.5f}"
        f" -> {last['val_loss']:.5f} in {time.monotonic() - t0:.1f} s; curve {os.path.join(a.out, 'loss.png')}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
