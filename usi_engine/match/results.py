"""The results of a match: per-pair statistics, the progress line, the report,
``summary.json``, and the game records on disk."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

from .config import MatchConfig
from .records import GameRecord, to_csa, to_kif
from .referee import BLACK, RESIGNED_UNSEARCHED, WHITE, Reason
from .stats import Results, Summary, fmt_elo, summarize, summarize_results


@dataclass
class PairResult:
    """Results of engine ``a`` against engine ``b``: W-L-D and the pentanomial of
    finished game pairs (``pending`` holds ``a``'s score in a pair's first game)."""

    a: int
    b: int
    results: Results = field(default_factory=Results)
    pending: dict[int, float] = field(default_factory=dict)

    @property
    def wins(self) -> int:
        return self.results.wins

    @property
    def losses(self) -> int:
        return self.results.losses

    @property
    def draws(self) -> int:
        return self.results.draws

    def add(self, game: GameRecord) -> None:
        assert game.outcome is not None
        a_side = BLACK if game.black_engine == self.a else WHITE
        winner = game.outcome.winner
        score = 0.5 if winner is None else float(winner == a_side)
        self.results.add_game(score)
        if game.pair in self.pending:
            self.results.add_pair(self.pending.pop(game.pair) + score)
        else:
            self.pending[game.pair] = score

    def summary(self) -> Summary:
        return summarize_results(self.results)


@dataclass
class MatchResult:
    """Finished games and the statistics, updated as games come in."""

    config: MatchConfig
    planned: int
    games: list[GameRecord] = field(default_factory=list)
    pairs: dict[tuple[int, int], PairResult] = field(default_factory=dict)
    sprt_result: Optional[str] = None
    interrupted: bool = False
    not_started: Optional[str] = None  # why the match stopped: an engine that never started
    seconds: float = 0.0  # wall time of the match

    def add(self, game: GameRecord) -> None:
        self.games.append(game)
        key = (min(game.black_engine, game.white_engine), max(game.black_engine, game.white_engine))
        self.pairs.setdefault(key, PairResult(*key)).add(game)

    def first_engine(self) -> PairResult:
        """Engine 0's results against all others together (the SPRT input)."""
        total = PairResult(0, -1)
        for (a, _), pair in self.pairs.items():
            if a == 0:
                total.results += pair.results
        return total

    def progress_line(self) -> str:
        total = self.first_engine()
        s = total.summary()
        line = (
            f"games {len(self.games)}/{self.planned}  {self.config.engines[0].name}: "
            f"W-L-D {s.wins}-{s.losses}-{s.draws}  pairs {'-'.join(map(str, s.pentanomial))}  "
            f"Elo {fmt_elo(s.elo)} +- {fmt_elo(s.elo_error, sign=False)}"
        )
        if self.config.sprt is not None:
            line += f"  LLR {self.config.sprt.llr(s.pentanomial):.2f}"
            if any(self.config.sprt.prior):
                line += " (all runs)"
        return line

    def report(self) -> str:
        """The final human-readable report."""
        names = [e.name for e in self.config.engines]
        rate = (
            f" in {self.seconds:.1f} s ({len(self.games) / self.seconds:.2f} games/s)"
            if self.seconds > 0
            else ""
        )
        lines = [
            f"Finished {len(self.games)} of {self.planned} games{rate}"
            + (" (interrupted)" if self.interrupted else "")
        ]
        if self.not_started:
            lines.append(f"Stopped: {self.not_started} (its log is in logs/)")
        for (a, b), pair in sorted(self.pairs.items()):
            lines.append(f"{names[a]} vs {names[b]}: {pair.summary().line()}")
        if len(self.config.engines) > 2:
            lines.append("Points: " + ", ".join(f"{n} {p:g}" for n, p in self.points().items()))
        sprt = self.config.sprt
        if sprt is not None:
            t = self.first_engine().results
            lines.append(
                f"SPRT elo0={sprt.elo0:g} elo1={sprt.elo1:g} alpha={sprt.alpha:g} "
                f"beta={sprt.beta:g}: LLR {sprt.llr(t.penta):.2f} (pentanomial, "
                f"{t.pairs} pairs; trinomial "
                f"{sprt.llr_trinomial(t.wins, t.losses, t.draws):.2f}) "
                f"[{sprt.lower:.2f}, {sprt.upper:.2f}] -> "
                f"{self.sprt_result or 'no decision'}"
            )
            if any(sprt.prior):
                total = sprt.total(t.penta)
                both = summarize(0, 0, 0, total)  # pairs only: earlier W-L-D are not known
                lines.append(
                    f"  the pentanomial LLR counts the earlier runs' pairs "
                    f"{'-'.join(map(str, sprt.prior))} too: all runs together, pairs "
                    f"{'-'.join(map(str, total))}, Elo {fmt_elo(both.elo)} "
                    f"+- {fmt_elo(both.elo_error, sign=False)}"
                )
        reasons = Counter(g.outcome.reason.value for g in self.games if g.outcome)
        lines.append("Endings: " + ", ".join(f"{r} {n}" for r, n in reasons.most_common()))
        unsearched = self.resigned_unsearched()
        if unsearched:
            lines.append(
                "Resigned without a search: "
                + ", ".join(f"{name} {n}" for name, n in unsearched.items())
                + " (no info line before bestmove resign: could it search? its log is in logs/)"
            )
        return "\n".join(lines)

    def resigned_unsearched(self) -> dict[str, int]:
        """Per engine, the games it resigned without a search (RESIGNED_UNSEARCHED)."""
        names = [e.name for e in self.config.engines]
        counts: Counter[str] = Counter()
        for g in self.games:
            o = g.outcome
            if o and o.reason == Reason.RESIGN and o.detail == RESIGNED_UNSEARCHED:
                counts[names[g.white_engine if o.winner == BLACK else g.black_engine]] += 1
        return dict(counts)

    def points(self) -> dict[str, float]:
        names = [e.name for e in self.config.engines]
        points = {n: 0.0 for n in names}
        for g in self.games:
            assert g.outcome is not None
            for side, idx in ((BLACK, g.black_engine), (WHITE, g.white_engine)):
                w = g.outcome.winner
                points[names[idx]] += 0.5 if w is None else float(w == side)
        return points

    def to_json(self) -> dict:
        """The ``summary.json`` content."""
        cfg = self.config
        t = self.first_engine()
        data: dict = {
            "engines": [
                {
                    "name": e.name,
                    "cmd": e.cmd,
                    "options": e.options,
                    "time_control": e.tc.describe(),
                    "ponder": e.ponder,
                }
                for e in cfg.engines
            ],
            "planned_games": self.planned,
            "games": len(self.games),
            "interrupted": self.interrupted,
            "not_started": self.not_started,
            "seconds": round(self.seconds, 3),
            "pairs": [
                {"engine": cfg.engines[a].name, "opponent": cfg.engines[b].name, **p.summary().as_dict()}
                for (a, b), p in sorted(self.pairs.items())
            ],
            "first_engine": {"engine": cfg.engines[0].name, **t.summary().as_dict()},
            "points": self.points(),
            "results": [game_json(g) for g in sorted(self.games, key=lambda g: g.index)],
        }
        if cfg.sprt is not None:
            r = t.results
            data["sprt"] = {
                "elo0": cfg.sprt.elo0,
                "elo1": cfg.sprt.elo1,
                "alpha": cfg.sprt.alpha,
                "beta": cfg.sprt.beta,
                "model": "pentanomial",
                "llr": cfg.sprt.llr(r.penta),
                "llr_trinomial": cfg.sprt.llr_trinomial(r.wins, r.losses, r.draws),
                "lower": cfg.sprt.lower,
                "upper": cfg.sprt.upper,
                "result": self.sprt_result,
                "prior_pentanomial": list(cfg.sprt.prior),
                "total_pentanomial": cfg.sprt.total(r.penta),
            }
        return data


def game_json(game: GameRecord) -> dict:
    assert game.outcome is not None
    return {
        "index": game.index,
        "black": game.black,
        "white": game.white,
        "result": game.outcome.result_str,
        "reason": game.outcome.reason.value,
        "detail": game.outcome.detail,
        "plies": len(game.moves),
        "opening": game.opening,
        "pair": game.pair,
        "record": record_basename(game),
    }


def record_basename(game: GameRecord) -> str:
    safe = [re.sub(r"[^A-Za-z0-9_.+-]+", "_", n) for n in (game.black, game.white)]
    return f"games/{game.index:04d}-{safe[0]}-vs-{safe[1]}"


def save_game(out_dir: str, game: GameRecord) -> None:
    base = os.path.join(out_dir, record_basename(game))
    with open(base + ".csa", "w", encoding="utf-8") as f:
        f.write(to_csa(game))
    with open(base + ".kif", "w", encoding="utf-8") as f:
        f.write(to_kif(game))


def save_summary(out_dir: str, result: MatchResult) -> None:
    path = os.path.join(out_dir, "summary.json")
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(result.to_json(), f, indent=2, ensure_ascii=False)
    os.replace(path + ".tmp", path)
