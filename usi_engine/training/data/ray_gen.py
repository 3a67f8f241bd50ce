"""gensfen on a Ray cluster: one actor per CPU, each holding a warmed labeler, makes whole
shards and returns them; the driver writes them, so the nodes need no shared folder.

A shard's bytes depend only on the settings and its index (gensfen.py), so a shard made by
Ray equals the one a local run makes.  gensfen hands this module its shard functions
(`ShardFunctions`), so the dependency runs one way: gensfen -> ray_gen.
"""

from __future__ import annotations

import time
from typing import Any, Callable, NamedTuple


class ShardFunctions(NamedTuple):
    """What a node needs of gensfen: make a labeler, make a shard; and the driver's save."""

    make_labeler: Callable[[Any], Any]
    generate_shard: Callable[..., tuple[Any, dict]]
    save_shard: Callable[[Any, int, Any, dict], None]


class ShardMaker:
    """A Ray actor: builds the labeler once, then makes shards on request."""

    def __init__(self, cfg, functions: ShardFunctions) -> None:
        self.cfg = cfg
        self.generate_shard = functions.generate_shard
        self.labeler = functions.make_labeler(cfg)

    def make(self, index: int, deadline: float | None):
        if deadline is not None and time.time() >= deadline:
            return index, None, None
        data, stats = self.generate_shard(self.cfg, index, self.labeler)
        return index, data, stats


def connect(address: str, workers: int) -> None:
    """Join the cluster at `address`, or start a private local one for "local"."""
    from ...cluster import LOCAL, connect, package_path_env

    connect(address, num_cpus=workers if address == LOCAL else None, runtime_env=package_path_env())


def run_ray(cfg, todo: list[int], deadline: float | None, bar, functions: ShardFunctions) -> int:
    """Make the shards `todo` on Ray; returns how many were made."""
    import ray
    from ray.util import ActorPool

    connect(cfg.ray_address, cfg.workers)
    actors = [
        ray.remote(num_cpus=1)(ShardMaker).remote(cfg, functions) for _ in range(min(cfg.workers, len(todo)))
    ]
    made = 0
    try:
        for index, data, stats in ActorPool(actors).map_unordered(
            lambda actor, i: actor.make.remote(i, deadline), todo
        ):
            if data is None:
                continue
            functions.save_shard(cfg, index, data, stats)
            made += 1
            bar.update(len(data))
    finally:
        for actor in actors:
            ray.kill(actor)
    return made
