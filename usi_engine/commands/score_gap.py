"""How an engine lost its games: collapses of its own score, and where the opponent disagreed.

    usi-engine score-gap runs/gps                  # the folder `usi-engine match` wrote
    usi-engine score-gap runs/gps --engine r6 --ahead 150 --behind -300 --high 1000

Reads the CSA records of a match folder (`games/*.csa`, with the `'** score ...` comment that
`usi-engine match` writes after each move) and prints, for the engine named:

* collapses: games where its score stood at `--ahead` or more and later at `--behind` or
  less, and how many of its own moves lay between the last such high and the first such low;
* disagreement: on the moves where its score was `--high` or more, the opponent's score on
  its next move, turned to the engine's side. An opponent that shows about 0 where the engine
  shows +1,500 judges the position very differently; the result says which one was right.

* walked into a mate: games where the opponent announced a mate (a mate score, or
  centipawns past a mate's) on the move right after one of the engine's that it scored
  above `--behind`: the mates its search did not see coming, the ones the mate guard is
  for (switch MateGuard, docs/mate.md).

* `--prove NODES`: df-pn for the opponent after every move of the engine, at most NODES
  nodes each (the mate guard's budget for a 1 s move is 27,000): how often a mate by
  checks is proven, what a probe costs, and the games where a proven mate followed a move
  the engine scored above `--behind`. Slow on long matches: about a second a game.

A collapse within a move or two is a tactic the engine did not see coming; a large
disagreement that ends in a loss is an evaluation that believes in the wrong thing.
"""

from __future__ import annotations

import argparse
import glob
import os
import statistics
import sys
from dataclasses import dataclass, field

from usi_engine.api import MATE_CP, Score
from usi_engine.usi import parse_info_line


@dataclass
class GameScores:
    """One game's scores, each from the side that printed it, in move order (a mate in
    centipawns as Score.to_cp gives it)."""

    ours: list[int] = field(default_factory=list)
    depths: list[int] = field(default_factory=list)
    # (our score, the opponent's score on its next move, turned to our side)
    pairs: list[tuple[int, Score]] = field(default_factory=list)
    # one entry per move of ours, None where it printed no score (a book move)
    per_move: list[int | None] = field(default_factory=list)


def read_game(path: str, engine: str) -> GameScores | None:
    """The scores of `engine` and of its opponent in one CSA record; None when the record
    does not name `engine` as a player. The match runner's `'** score ... depth ... pv ...`
    comments are the engines' last info lines, read as such."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        lines = fh.read().splitlines()
    if f"N+{engine}" in lines:
        side = "+"
    elif f"N-{engine}" in lines:
        side = "-"
    else:
        return None
    game = GameScores()
    mover = None
    ours = None
    for line in lines:
        if len(line) > 1 and line[0] in "+-" and line[1].isdigit():
            mover = line[0]
            if mover == side:
                game.per_move.append(None)
            continue
        info = parse_info_line("info " + line[3:]) if line.startswith("'**") else None
        if info is None or mover is None:
            continue
        if mover == side:
            ours = info.score.to_cp()
            game.ours.append(ours)
            game.per_move[-1] = ours
            game.depths.append(info.depth)
        elif ours is not None:
            game.pairs.append((ours, -info.score))
    return game


def collapse_gap(scores: list[int], ahead: int, behind: int) -> int | None:
    """Own moves from the last score >= ahead to the first later score <= behind, or None."""
    last_high = None
    for i, v in enumerate(scores):
        if v >= ahead:
            last_high = i
        elif v <= behind and last_high is not None:
            return i - last_high
    return None


def report(folder: str, engine: str, ahead: int, behind: int, high: int) -> str:
    paths = sorted(glob.glob(os.path.join(folder, "games", "*.csa")))
    games = [g for g in (read_game(p, engine) for p in paths) if g is not None]
    if not games:
        raise SystemExit(f"{folder}: no CSA record in games/ names {engine!r} as a player")
    gaps = [g for g in (collapse_gap(x.ours, ahead, behind) for x in games) if g is not None]
    depths = [d for x in games for d in x.depths]
    out = [f"{len(games)} games of {engine} in {folder}"]
    line = f"collapses: {len(gaps)} games went from >= {ahead:+d} to <= {behind:+d}"
    if gaps:
        line += f", a median of {statistics.median(gaps):g} own moves apart"
    if depths:
        line += f" (median depth {statistics.median(depths):g})"
    out.append(line)
    # the opponent's mate scores are left out (they say who wins, not by how much), and so
    # are centipawns past a mate's (GPS Shogi prints a won game as cp 868501)
    per_game = [
        [(o, t.cp) for o, t in x.pairs if o >= high and not t.is_mate and abs(t.cp) < MATE_CP] for x in games
    ]
    high_pairs = [pair for pairs in per_game for pair in pairs]
    n_games = sum(1 for pairs in per_game if pairs)
    if high_pairs:
        theirs = [t for _, t in high_pairs]
        q = statistics.quantiles(theirs, n=4) if len(theirs) > 1 else [theirs[0]] * 3
        out.append(
            f"disagreement: {len(high_pairs)} moves in {n_games} games at >= {high:+d} "
            f"(ours: median {statistics.median(o for o, _ in high_pairs):+g}); the opponent's "
            f"next score from our side: median {statistics.median(theirs):+g}, "
            f"quartiles {q[0]:+g} and {q[2]:+g}"
        )
    else:
        out.append(f"disagreement: no move with our score >= {high:+d}")
    out.append(_walked_into_mates(games, behind))
    return "\n".join(out)


def _announces_our_mate(theirs: Score) -> bool:
    """The opponent's score, from our side, says it mates us."""
    return theirs.mate < 0 if theirs.is_mate else theirs.cp <= -MATE_CP


def _walked_into_mates(games: list[GameScores], behind: int) -> str:
    ours = []  # per game, our score at the first move the opponent answered with a mate
    for game in games:
        unseen = [o for o, t in game.pairs if o > behind and _announces_our_mate(t)]
        if unseen:
            ours.append(unseen[0])
    line = f"walked into a mate: {len(ours)} games where the opponent announced a mate right after a move we scored > {behind:+d}"
    if ours:
        line += f" (ours: median {statistics.median(ours):+g})"
    return line


def prove_mates(folder: str, engine: str, nodes: int, behind: int) -> str:
    """df-pn for the opponent after each move of `engine` in the match's CSA records."""
    import cshogi
    import cshogi.CSA

    from usi_engine.position import Position
    from usi_engine.search.tsume import MateSolver

    solver = MateSolver(64)
    outcomes = {"mate": 0, "nomate": 0, "timeout": 0}
    spent: list[int] = []
    unseen = 0
    for path in sorted(glob.glob(os.path.join(folder, "games", "*.csa"))):
        scores = read_game(path, engine)
        if scores is None:
            continue
        record = cshogi.CSA.Parser.parse_file(path)[0]
        pos = Position(record.sfen)
        black_first = record.sfen.split()[1] == "b"
        ours = 0 if (record.names[0] == engine) == black_first else 1  # the parity of our plies
        solver.clear()
        counted = False
        for ply, move in enumerate(record.moves):
            pos.push(cshogi.move_to_usi(move))
            if ply % 2 != ours:
                continue
            status = solver.prove(pos, nodes=nodes)
            outcomes[status] += 1
            spent.append(solver.nodes)
            own = scores.per_move[ply // 2] if ply // 2 < len(scores.per_move) else None
            if status == "mate" and not counted and own is not None and own > behind:
                unseen += 1
                counted = True
    if not spent:
        return "prove: no move of the engine"
    return (
        f"prove: {len(spent)} moves, df-pn at most {nodes} nodes each: {outcomes['mate']} mates, "
        f"{outcomes['nomate']} no mate, {outcomes['timeout']} undecided; nodes a probe: mean "
        f"{statistics.mean(spent):.0f}, median {statistics.median(spent):g}; {unseen} games with a "
        f"proven mate after a move we scored > {behind:+d}"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="usi-engine score-gap", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("folder", help="a match folder written by usi-engine match")
    p.add_argument(
        "--engine", default="usi_engine", help="the engine's name in the match (default usi_engine)"
    )
    p.add_argument("--ahead", type=int, default=150, help="a score that counts as ahead (cp)")
    p.add_argument("--behind", type=int, default=-300, help="a score that counts as lost (cp)")
    p.add_argument(
        "--high", type=int, default=1000, help="the score above which to compare with the opponent"
    )
    p.add_argument(
        "--prove", type=int, metavar="NODES", help="df-pn for the opponent after every move, NODES each"
    )
    a = p.parse_args(argv)
    print(report(a.folder, a.engine, a.ahead, a.behind, a.high))
    if a.prove:
        print(prove_mates(a.folder, a.engine, a.prove, a.behind))
    return 0


if __name__ == "__main__":
    sys.exit(main())
