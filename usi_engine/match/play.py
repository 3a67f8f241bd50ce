"""Playing a match where its configuration says: in this process's threads
(:class:`~.runner.Match`) or on a Ray cluster (:mod:`.raycluster`, imported only then).

The choice lives here, above both runners, so that neither imports the other's caller."""

from __future__ import annotations

from typing import Callable, Optional

from .records import GameRecord
from .config import MatchConfig
from .results import MatchResult
from .runner import Match


def run_match(
    config: MatchConfig, on_game: Optional[Callable[[MatchResult, GameRecord], None]] = None
) -> MatchResult:
    """Play ``config``: ``Match(config).run(on_game)``, or on a Ray cluster if
    ``config.ray_address`` is set (only then is ``ray`` imported)."""
    if config.ray_address:
        from .raycluster import run_match_ray

        return run_match_ray(
            config, config.ray_address, on_game, config.ray_working_dir, config.ray_cpus_per_game
        )
    return Match(config).run(on_game)
