"""Training loop: PackedSfenValue shards in, checkpoints, a loss curve and nn.bin out.

Loss: the model's evaluation e (centipawns) is read as a winning probability
``sigmoid(e / scale)`` and compared by cross-entropy with the target
``lam * sigmoid(teacher score / scale) + (1 - lam) * (result + 1) / 2``: lam = 1 learns the
search's scores only, lam = 0 the game results only.

The output folder holds ``nn.bin`` (the latest epoch, for ``EvalDir``), ``best/nn.bin``
(the epoch of the lowest validation loss), ``checkpoint.pt``
(model, optimiser and history: ``--resume`` goes on from it), ``history.json`` and
``loss.png``.  Every file is written under a temporary name and renamed: a run killed at any
moment leaves the last finished epoch's files whole, and the same command run again
(``resume="auto"``) goes on from that epoch, equal to a run never stopped.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, asdict, field

import numpy as np
import torch
import torch.nn.functional as F

from . import dataset as ds
from ..data import psv
from ...nnue.format import read_network
from .export import export, from_network, widen
from .model import NNUE
from ...progress import progress_bar
from ..run_identity import differing_settings, without_unset


@dataclass
class TrainConfig:
    data: list[str]
    out: str
    val: list[str] = field(default_factory=list)  # empty: hold out the last shard
    feature_set: str = "K+P"
    half: int = 256
    l1: int = 32
    l2: int = 32
    factorized: bool = False  # HalfKP: train with the shared piece factor (model.py)
    mirror: bool = False  # add the mirror image of every training position
    epochs: int = 10
    batch_size: int = 4096
    lr: float = 1e-3
    lr_decay: float = 0.9  # learning rate multiplier per epoch
    lam: float = 0.5  # weight of the search score against the game result
    scale: float = 600.0  # centipawns per unit of the sigmoid's argument
    score_limit: int = 3000  # drop positions with |score| beyond this
    score_factor: float = 1.0  # scores times this first: a teacher's centipawns in ours
    # (path, factor): the shards named by path, or found under it, use this factor instead,
    # so that two teachers' labels train together, each on our scale
    score_factors: tuple[tuple[str, float], ...] = ()
    seed: int = 1
    device: str = "auto"  # auto: CUDA when present, else CPU
    resume: str | None = None  # a checkpoint.pt to go on from; "auto": out's own, if any
    init: str | None = None  # an nn.bin to start from


@dataclass
class Tensors:
    us: torch.Tensor
    them: torch.Tensor
    score: torch.Tensor
    result: torch.Tensor

    def __len__(self) -> int:
        return int(self.score.shape[0])


def to_tensors(pos: ds.Positions, feature_set: str, device: torch.device) -> Tensors:
    us = ds.feature_indices(feature_set, pos.boards, pos.hands, pos.side)
    them = ds.feature_indices(feature_set, pos.boards, pos.hands, 1 - pos.side)
    return Tensors(
        torch.from_numpy(us).to(device),
        torch.from_numpy(them).to(device),
        torch.from_numpy(pos.score.astype(np.float32)).to(device),
        torch.from_numpy(pos.result.astype(np.float32)).to(device),
    )


def target(score: torch.Tensor, result: torch.Tensor, lam: float, scale: float) -> torch.Tensor:
    return lam * torch.sigmoid(score / scale) + (1.0 - lam) * (result + 1.0) / 2.0


def loss_fn(
    pred: torch.Tensor, score: torch.Tensor, result: torch.Tensor, lam: float, scale: float
) -> torch.Tensor:
    """Cross-entropy between sigmoid(pred / scale) and the lambda-mixed target."""
    return F.binary_cross_entropy_with_logits(pred / scale, target(score, result, lam, scale))


def split_files(cfg: TrainConfig) -> tuple[list[str], list[str]]:
    """(training files, validation files): the last shard is held out unless --val names some."""
    files = ds.shard_files(cfg.data)
    if cfg.val:
        val = ds.shard_files(cfg.val)
        return [f for f in files if f not in val], val
    if len(files) < 2:
        raise ValueError("need at least two shards (the last is held out for validation) or --val")
    return files[:-1], files[-1:]


def _names(path: str, shard: str) -> bool:
    """Whether `path` is the shard itself or a folder above it."""
    path, shard = os.path.abspath(path), os.path.abspath(shard)
    return shard == path or shard.startswith(path.rstrip(os.sep) + os.sep)


def score_factor_of(shard: str, cfg: TrainConfig) -> float:
    """The factor for one shard's scores: that of the last `score_factors` entry naming the
    shard or a folder above it, else `cfg.score_factor`."""
    factor = cfg.score_factor
    for path, f in cfg.score_factors:
        if _names(path, shard):
            factor = f
    return factor


def load_split(files: list[str], cfg: TrainConfig) -> ds.Positions:
    """The positions of `files`, in order, each shard's scores times its factor, then those
    beyond the score limit dropped."""
    pos = ds.load_positions(files)
    factors = [score_factor_of(f, cfg) for f in files]
    if any(f != 1.0 for f in factors):
        counts = [len(psv.read_records(f, mmap=True)) for f in files]
        per_row = np.repeat(np.asarray(factors, np.float64), counts)
        scaled = np.rint(pos.score.astype(np.float64) * per_row)
        pos.score = np.clip(scaled, -psv.SCORE_LIMIT, psv.SCORE_LIMIT).astype(pos.score.dtype)
    keep = np.abs(pos.score.astype(np.int32)) <= cfg.score_limit
    return pos.subset(np.flatnonzero(keep))


@torch.no_grad()
def evaluate_loss(model: NNUE, data: Tensors, cfg: TrainConfig, batch: int = 16384) -> float:
    model.eval()
    total = 0.0
    for i in range(0, len(data), batch):
        s = slice(i, i + batch)
        pred = model(data.us[s], data.them[s])
        total += float(loss_fn(pred, data.score[s], data.result[s], cfg.lam, cfg.scale)) * pred.shape[0]
    model.train()
    return total / max(1, len(data))


def pick_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def train(cfg: TrainConfig, show_progress: bool = True, log=print) -> dict:
    """Run the training; returns the history (one entry per epoch)."""
    device = pick_device(cfg.device)
    torch.manual_seed(cfg.seed)
    train_files, val_files = split_files(cfg)
    for path, _ in cfg.score_factors:  # a mistyped path would leave its teacher unscaled
        if not any(_names(path, f) for f in train_files + val_files):
            raise ValueError(f"score factor for {path}: names no shard of the training or validation data")
    resume = find_checkpoint(cfg, train_files + val_files) if cfg.resume == "auto" else cfg.resume
    ckpt = load_checkpoint(resume, device) if resume else None
    t0 = time.monotonic()
    train_pos, val_pos = load_split(train_files, cfg), load_split(val_files, cfg)
    if cfg.mirror:
        train_pos = ds.with_mirrors(train_pos)  # validation stays as played
    if len(train_pos) == 0 or len(val_pos) == 0:
        raise ValueError("no training or no validation position left after the score limit")
    os.makedirs(cfg.out, exist_ok=True)  # only once the data is known to be good
    remove_torn_files(cfg.out)
    train_t = to_tensors(train_pos, cfg.feature_set, device)
    val_t = to_tensors(val_pos, cfg.feature_set, device)
    log(
        f"data: {len(train_t)} training positions from {len(train_files)} files, {len(val_t)} "
        f"validation positions from {', '.join(os.path.basename(f) for f in val_files)} "
        f"({time.monotonic() - t0:.1f} s to decode); device {device}"
    )

    if cfg.init:
        net = read_network(cfg.init)  # NNUEFormatError (a ValueError) says why not
        if net.feature_set != cfg.feature_set:
            raise ValueError(f"{cfg.init} is a {net.feature_set} network, not {cfg.feature_set}")
        model = from_network(net, factorized=cfg.factorized)
        if (model.l1_size, model.l2_size) != (cfg.l1, cfg.l2):
            raise ValueError(
                f"{cfg.init} is {net.name}, whose hidden layers are not {cfg.l1}-{cfg.l2}: only "
                f"the feature transformer can be widened"
            )
        if model.half != cfg.half:
            model = widen(model, cfg.half, cfg.seed)  # ValueError for a narrower one
            log(f"init: {net.name} widened to {cfg.half}x2, the same evaluation to start from")
    else:
        model = NNUE(cfg.feature_set, cfg.half, cfg.l1, cfg.l2, factorized=cfg.factorized)
    model.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=cfg.lr_decay)
    history: list[dict] = []
    first_epoch = 0
    if ckpt is not None:
        log(f"resuming from {resume} (epoch {ckpt['epoch']} done)")
        if ckpt["model_config"] != model.config():
            raise ValueError(f"{resume} holds a {ckpt['model_config']} model, not {model.config()}")
        model.load_state_dict(ckpt["model"])
        opt.load_state_dict(ckpt["optimizer"])
        sched.load_state_dict(ckpt["scheduler"])
        history, first_epoch = ckpt["history"], ckpt["epoch"]
    if not history:
        history.append(
            {
                "epoch": 0,
                "train_loss": evaluate_loss(model, train_t, cfg),
                "val_loss": evaluate_loss(model, val_t, cfg),
                "seconds": 0.0,
            }
        )

    gen = torch.Generator().manual_seed(cfg.seed)
    for _ in range(first_epoch):
        torch.randperm(len(train_t), generator=gen)  # the same shuffles as an unbroken run
    for epoch in range(first_epoch + 1, cfg.epochs + 1):
        t_epoch = time.monotonic()
        perm = torch.randperm(len(train_t), generator=gen).to(device)
        total, seen = 0.0, 0
        bar = progress_bar(len(train_t), show_progress, desc=f"epoch {epoch}/{cfg.epochs}", leave=False)
        for i in range(0, len(train_t), cfg.batch_size):
            rows = perm[i : i + cfg.batch_size]
            pred = model(train_t.us[rows], train_t.them[rows])
            loss = loss_fn(pred, train_t.score[rows], train_t.result[rows], cfg.lam, cfg.scale)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            model.clip_()
            total += loss.item() * len(rows)
            seen += len(rows)
            bar.update(len(rows))
        bar.close()
        sched.step()
        entry = {
            "epoch": epoch,
            "train_loss": total / seen,
            "val_loss": evaluate_loss(model, val_t, cfg),
            "seconds": round(time.monotonic() - t_epoch, 2),
            "lr": opt.param_groups[0]["lr"],
        }
        history.append(entry)
        log(
            f"epoch {epoch}: train loss {entry['train_loss']:.5f}  val loss {entry['val_loss']:.5f}  "
            f"{entry['seconds']:.1f} s ({seen / max(entry['seconds'], 1e-9):.0f} positions/s)"
        )
        export(model, os.path.join(cfg.out, "nn.bin"))
        if entry["val_loss"] <= min(h["val_loss"] for h in history[1:]):
            export(model, os.path.join(cfg.out, "best", "nn.bin"))
        _save(cfg, model, opt, sched, history, epoch, train_files + val_files)
    if first_epoch >= cfg.epochs:
        export(model, os.path.join(cfg.out, "nn.bin"))
    summary = {
        "config": asdict(cfg),
        "model": model.config(),
        "train_positions": len(train_t),
        "val_positions": len(val_t),
        "train_files": train_files,
        "val_files": val_files,
        "device": str(device),
        "history": history,
        "seconds": round(time.monotonic() - t0, 1),
    }
    path = os.path.join(cfg.out, "history.json")
    with open(path + ".tmp", "w", encoding="utf-8") as fh:
        json.dump(summary, fh, indent=1)
    os.replace(path + ".tmp", path)
    plot_history(history, os.path.join(cfg.out, "loss.png"), model.config())
    return summary


# --- checkpoints: written whole (a temporary name, then a rename), so that a run killed at
# any moment goes on from its last finished epoch -----------------------------------------
CHECKPOINT = "checkpoint.pt"
# settings a resumed run may change: how long it trains, where, and how it was started
_FREE_SETTINGS = ("epochs", "device", "resume")
_LATER_SETTINGS = ("score_factors",)  # added since the first checkpoints (run_identity.py)


def remove_torn_files(out: str) -> None:
    """Delete what a run killed while writing left under temporary names (``*.tmp``):
    the finished files beside them are whole, and a resumed run may never write the same
    name again (``best/nn.bin`` only when the validation loss improves)."""
    for folder in (out, os.path.join(out, "best")):
        if os.path.isdir(folder):
            for name in os.listdir(folder):
                if name.endswith(".tmp"):
                    os.remove(os.path.join(folder, name))


def data_identity(files: list[str]) -> list[list]:
    """The data files as a checkpoint records them: name and size (records are appended only
    by whole shards, so a changed folder shows in this list)."""
    return [[os.path.abspath(f), os.path.getsize(f)] for f in files]


def load_checkpoint(path: str, device: torch.device | str = "cpu") -> dict:
    """A checkpoint.pt; ValueError names the file when it is missing or not a checkpoint."""
    try:
        ckpt = torch.load(path, map_location=device, weights_only=False)
    except FileNotFoundError:
        raise ValueError(f"{path}: no such checkpoint") from None
    except Exception as exc:  # torch/pickle raise many types on a foreign file
        raise ValueError(
            f"{path}: not a training checkpoint ({type(exc).__name__}: {str(exc)[:120]})"
        ) from None
    if not isinstance(ckpt, dict) or not {"model", "optimizer", "epoch"} <= set(ckpt):
        raise ValueError(f"{path}: not a training checkpoint (no model, optimizer, epoch)")
    return ckpt


def find_checkpoint(cfg: TrainConfig, files: list[str]) -> str | None:
    """`resume="auto"`: the output folder's checkpoint when it was made by this run (same
    settings but the epochs, same data files), None when there is none; ValueError when it
    belongs to another run, rather than train over it."""
    path = os.path.join(cfg.out, CHECKPOINT)
    if not os.path.exists(path):
        return None
    ckpt = load_checkpoint(path)
    old, new = (
        without_unset({k: v for k, v in settings.items() if k not in _FREE_SETTINGS}, _LATER_SETTINGS)
        for settings in (dict(ckpt.get("train_config") or {}), asdict(cfg))
    )
    diff = differing_settings(old, new)
    if ckpt.get("data_files") != data_identity(files):
        diff.append("data files")
    if diff:
        raise ValueError(
            f"{path} is from a run with other settings ({', '.join(diff)}): "
            f"use another --out, --resume it explicitly, or --fresh to start over"
        )
    return path


def _save(cfg, model, opt, sched, history, epoch, files) -> None:
    path = os.path.join(cfg.out, CHECKPOINT)
    torch.save(
        {
            "model": model.state_dict(),
            "model_config": model.config(),
            "optimizer": opt.state_dict(),
            "scheduler": sched.state_dict(),
            "history": history,
            "epoch": epoch,
            "train_config": asdict(cfg),
            "data_files": data_identity(files),
        },
        path + ".tmp",
    )
    os.replace(path + ".tmp", path)


def plot_history(history: list[dict], path: str, model_config: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    epochs = [h["epoch"] for h in history]
    fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
    ax.plot(epochs[1:], [h["train_loss"] for h in history[1:]], "o-", label="training (mean over the epoch)")
    ax.plot(epochs, [h["val_loss"] for h in history], "s-", label="validation (end of epoch)")
    ax.set_xlabel("epoch")
    ax.set_ylabel("cross-entropy")
    arch = f"{model_config['feature_set']} {model_config['half']}x2-{model_config['l1']}-{model_config['l2']}"
    ax.set_title(f"NNUE training: {arch}")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path + ".tmp", format="png")
    plt.close(fig)
    os.replace(path + ".tmp", path)


__all__ = ["TrainConfig", "train", "loss_fn", "target", "plot_history"]
