"""YaneuraOu's material build as the referee of our book files: the move it plays from a book
in each position.  Used by the .db and the Apery .bin compatibility tests."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
YANEURAOU = REPO.parent / "shared" / "opponents" / "yaneuraou" / "YaneuraOu-material9"

# every book move is eligible, whatever its value, up to any ply
OPEN_BOOK = {
    "BookEvalDiff": 0,
    "BookEvalBlackLimit": -99999,
    "BookEvalWhiteLimit": -99999,
    "BookMoves": 1000,
    "USI_Hash": 16,
    "Threads": 1,
    "NetworkDelay": 0,
    "NetworkDelay2": 0,
}


def require_yaneuraou() -> None:
    """Fail in CI (which has the build), skip elsewhere, when the build is missing."""
    if not YANEURAOU.exists():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{YANEURAOU} is missing")
        pytest.skip(f"{YANEURAOU} is not here")


def yaneuraou_book_moves(book_path: Path, sfens: list[str], **options: object) -> list[str]:
    """The `bestmove` YaneuraOu gives in each position with `book_path` as its book."""
    settings = {"BookDir": book_path.parent, "BookFile": book_path.name, **OPEN_BOOK, **options}
    lines = ["usi"] + [f"setoption name {k} value {v}" for k, v in settings.items()] + ["isready"]
    for sfen in sfens:
        lines += [f"position sfen {sfen}", "go btime 0 wtime 0 byoyomi 1000"]
    proc = subprocess.Popen([str(YANEURAOU)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    moves = []
    try:
        proc.stdin.write("\n".join(lines) + "\n")
        proc.stdin.flush()
        for line in proc.stdout:
            if line.startswith("bestmove"):
                moves.append(line.split()[1])
                if len(moves) == len(sfens):
                    break
    finally:
        proc.stdin.write("quit\n")
        proc.stdin.close()
        proc.wait(10)
    return moves
