"""scripts/score_gap.py on small match folders in the match runner's CSA form."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "score_gap.py"


def write_game(folder: Path, name: str, black: str, white: str, moves: list[tuple[str, str]]) -> None:
    """moves: (CSA move, score comment) pairs, black first."""
    lines = ["V2.2", f"N+{black}", f"N-{white}", "PI", "+"]
    for move, comment in moves:
        lines += [move + ",T1", "'** " + comment]
    (folder / "games").mkdir(parents=True, exist_ok=True)
    (folder / "games" / name).write_text("\n".join(lines) + "\n")


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True)


def test_collapse_and_disagreement_are_counted_from_our_side(tmp_path):
    # we are black: +200, +1500 (they say -50 for themselves: +50 from our side), +1200
    # (they say +100: -100 for us), then -400 on our next move
    write_game(
        tmp_path,
        "0001.csa",
        "eng",
        "opp",
        [
            ("+7776FU", "score cp 200 depth 10 pv 7g7f"),
            ("-3334FU", "score cp -30 depth 9 pv 3c3d"),
            ("+2726FU", "score cp 1500 depth 12 pv 2g2f"),
            ("-8384FU", "score cp -50 depth 9 pv 8c8d"),
            ("+2625FU", "score cp 1200 depth 14 pv 2f2e"),
            ("-8485FU", "score cp 100 depth 9 pv 8d8e"),
            ("+6978KI", "score cp -400 depth 16 pv 6i7h"),
            ("-4132KI", "score mate 5 depth 9 pv 4a3b"),
        ],
    )
    # we are white here and never ahead: no collapse, no high score
    write_game(
        tmp_path,
        "0002.csa",
        "opp",
        "eng",
        [
            ("+7776FU", "score cp 90 depth 9 pv 7g7f"),
            ("-3334FU", "score cp -20 depth 10 pv 3c3d"),
        ],
    )
    r = run(tmp_path, "--engine", "eng")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == f"2 games of eng in {tmp_path}"
    # depths 10, 12, 14, 16 here and 10 in the second game
    assert lines[1] == (
        "collapses: 1 games went from >= +150 to <= -300, a median of 1 own moves apart (median depth 12)"
    )
    assert lines[2].startswith("disagreement: 2 moves in 1 games at >= +1000 (ours: median +1350)")
    assert "median -25" in lines[2]


def test_a_folder_without_the_engine_says_so(tmp_path):
    write_game(tmp_path, "0001.csa", "a", "b", [("+7776FU", "score cp 0 depth 1 pv 7g7f")])
    r = run(tmp_path, "--engine", "eng")
    assert r.returncode != 0
    assert "no CSA record in games/ names 'eng' as a player" in r.stderr


def test_a_mate_announced_after_a_move_we_scored_well_is_counted_once_a_game(tmp_path):
    # we are white: +120, then the opponent shows a mate (GPS Shogi's way: centipawns past a
    # mate's), again after our +40, and once more after our -2000 (seen: not counted)
    write_game(
        tmp_path,
        "0001.csa",
        "opp",
        "eng",
        [
            ("+7776FU", "score cp 30 depth 9 pv 7g7f"),
            ("-3334FU", "score cp 120 depth 10 pv 3c3d"),
            ("+2726FU", "score cp 1148897 depth 2 pv 2g2f"),
            ("-8384FU", "score cp 40 depth 11 pv 8c8d"),
            ("+2625FU", "score mate 7 depth 9 pv 2f2e"),
        ],
    )
    write_game(
        tmp_path,
        "0002.csa",
        "eng",
        "opp",
        [
            ("+7776FU", "score cp -2000 depth 10 pv 7g7f"),
            ("-3334FU", "score mate 5 depth 9 pv 3c3d"),
        ],
    )
    r = run(tmp_path, "--engine", "eng")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == (
        "walked into a mate: 1 games where the opponent announced a mate right after a move we"
        " scored > -300 (ours: median +120)"
    )


def test_prove_finds_the_mate_a_move_walked_into(tmp_path):
    # we are black, king on 1i; white has a silver on 2g and a gold in hand: after our 9g9f
    # (scored +100) white mates with G*1h, which df-pn proves
    board = [
        "P1 *  *  *  * -OU *  *  *  * ",
        *[f"P{r} *  *  *  *  *  *  *  *  * " for r in range(2, 7)],
        "P7+FU *  *  *  *  *  * -GI * ",
        "P8 *  *  *  *  *  *  *  *  * ",
        "P9 *  *  *  *  *  *  *  * +OU",
        "P-00KI",
    ]
    moves = [
        "+9796FU,T1",
        "'** score cp 100 depth 5 pv 9g9f",
        "-0018KI,T1",
        "'** score mate 1 depth 1 pv G*1h",
    ]
    (tmp_path / "games").mkdir()
    (tmp_path / "games" / "0001.csa").write_text(
        "\n".join(["V2.2", "N+eng", "N-opp", *board, "+", *moves]) + "\n"
    )
    r = run(tmp_path, "--engine", "eng", "--prove", "5000")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[-2].startswith("walked into a mate: 1 games")
    assert lines[-1].startswith(
        "prove: 1 moves, df-pn at most 5000 nodes each: 1 mates, 0 no mate, 0 undecided;"
    )
    assert lines[-1].endswith("1 games with a proven mate after a move we scored > -300")
