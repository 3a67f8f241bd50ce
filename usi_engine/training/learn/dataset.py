"""From PackedSfenValue files to training tensors.

`load_positions` decodes records (cshogi unpacks the packed SFEN) into plain arrays in
this project's piece codes (cshogi uses the same ones): boards int8[N, 81], hands
int8[N, 2, 8], side to move, score and result.  `feature_indices` turns them into the
active NNUE features of one perspective per row, vectorised over the batch with the
BonaPiece tables of `usi_engine.nnue.features` (the engine's own definition), padded to a
fixed width with the index ``FEATURE_SETS[feature_set]`` (a row the model keeps at zero).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import cshogi
import numpy as np

from ...nnue.features import (
    BOARD_BONA,
    HAND_BONA,
    FE_END,
    FEATURE_SETS,
    KING,
    NSQ,
    PAWN,
    LANCE,
    KNIGHT,
    SILVER,
    GOLD,
    BISHOP,
    ROOK,
    WHITE_BIT,
)
from ..data import psv

MAX_ACTIVE = 40  # 40 pieces in shogi: K+P counts the kings too
# cshogi's hand order (pieces_in_hand): pawn, lance, knight, silver, gold, bishop, rook
CSHOGI_HAND_TYPES = (PAWN, LANCE, KNIGHT, SILVER, GOLD, BISHOP, ROOK)
_MOST_IN_HAND = {PAWN: 18, LANCE: 4, KNIGHT: 4, SILVER: 4, GOLD: 4, BISHOP: 2, ROOK: 2}
# every (colour, type, k) hand slot: the (k+1)-th piece of that type in that colour's hand
_SLOTS = np.array(
    [(c, t, k) for c in (0, 1) for t in CSHOGI_HAND_TYPES for k in range(_MOST_IN_HAND[t])], np.int32
)


@dataclass
class Positions:
    """Decoded training positions (row i is record i)."""

    boards: np.ndarray  # int8[N, 81], this project's coloured piece codes
    hands: np.ndarray  # int8[N, 2, 8], counts by colour and base type
    side: np.ndarray  # int8[N], 0 black / 1 white to move
    score: np.ndarray  # int16[N], search score from the side to move's view
    result: np.ndarray  # int8[N], 1 win / 0 draw / -1 loss for the side to move

    def __len__(self) -> int:
        return len(self.side)

    def subset(self, rows: np.ndarray) -> "Positions":
        return Positions(
            self.boards[rows], self.hands[rows], self.side[rows], self.score[rows], self.result[rows]
        )


def decode(records: np.ndarray, source: str = "records") -> Positions:
    """Unpack PackedSfenValue records; ValueError names `source` and the first record that
    is bad."""
    psv.check_records(records, source)  # cshogi would crash on a bad one
    n = len(records)
    boards = np.zeros((n, NSQ), np.int8)
    hands = np.zeros((n, 2, 8), np.int8)
    side = np.zeros(n, np.int8)
    board = cshogi.Board()
    types = list(CSHOGI_HAND_TYPES)
    for i in range(n):
        try:
            board.set_psfen(np.ascontiguousarray(records[i]["sfen"]))
        except RuntimeError as exc:
            raise ValueError(f"{source}: record {i}: bad packed sfen ({exc})") from None
        boards[i] = board.pieces
        for color, counts in enumerate(board.pieces_in_hand):
            hands[i, color, types] = counts
        side[i] = board.turn
    return Positions(
        boards, hands, side, records["score"].astype(np.int16), records["game_result"].astype(np.int8)
    )


# MIRROR[sq]: the square with the file reversed (1 <-> 9, 2 <-> 8, ...); squares count
# (file - 1) * 9 + rank, as in cshogi
MIRROR = np.array([(8 - sq // 9) * 9 + sq % 9 for sq in range(NSQ)])


def with_mirrors(pos: Positions) -> Positions:
    """The positions followed by their mirror images (files reversed).  Shogi's moves are
    the same seen from either wing, so a mirrored position keeps its score and result;
    YaneuraOu's trainer offers the same augmentation (mirror_percentage)."""
    return Positions(
        np.concatenate([pos.boards, pos.boards[:, MIRROR]]),
        np.concatenate([pos.hands, pos.hands]),
        np.concatenate([pos.side, pos.side]),
        np.concatenate([pos.score, pos.score]),
        np.concatenate([pos.result, pos.result]),
    )


def shard_files(paths: list[str]) -> list[str]:
    """The .bin files named, or found (sorted) in the folders named."""
    out = []
    for p in paths:
        if os.path.isdir(p):
            out += sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(".bin"))
        elif os.path.exists(p):
            out.append(p)
        else:
            raise ValueError(f"{p}: no such file or folder")
    if not out:
        raise ValueError(f"no .bin shard in {', '.join(paths)}")
    return out


def load_positions(files: list[str]) -> Positions:
    """Decode every record of the files, in order; ValueError names a file that is empty,
    truncated or holds something else than PackedSfenValue records."""
    parts = [decode(psv.read_shard(f), f) for f in files] or [decode(np.zeros(0, psv.PSV_DTYPE))]
    return Positions(
        *(
            np.concatenate([getattr(p, name) for p in parts])
            for name in ("boards", "hands", "side", "score", "result")
        )
    )


def feature_indices(
    feature_set: str, boards: np.ndarray, hands: np.ndarray, perspective: np.ndarray
) -> np.ndarray:
    """int32[B, MAX_ACTIVE]: the active features of `perspective[b]` in position b, in no
    particular order, padded with FEATURE_SETS[feature_set]."""
    if feature_set not in FEATURE_SETS:
        raise ValueError(f"unknown feature set {feature_set!r}; known: {', '.join(FEATURE_SETS)}")
    pad = FEATURE_SETS[feature_set]
    halfkp = feature_set == "HalfKP(Friend)"
    boards = np.asarray(boards, np.int64)
    persp = np.asarray(perspective, np.int64)[:, None]
    b = len(boards)
    sq = np.arange(NSQ)[None, :]
    on_board = BOARD_BONA[persp, boards, sq]  # [B, 81], -1 on empty
    keep_board = boards != 0
    if halfkp:
        keep_board &= (boards & 15) != KING
    colors, types, ks = _SLOTS[:, 0], _SLOTS[:, 1], _SLOTS[:, 2]
    in_hand = HAND_BONA[persp, colors[None, :], types[None, :]] + ks[None, :]  # [B, 76]
    keep_hand = np.asarray(hands)[:, colors, types] > ks[None, :]
    idx = np.concatenate([on_board, in_hand], axis=1)
    keep = np.concatenate([keep_board, keep_hand], axis=1)
    if halfkp:
        own_king = KING | (persp * WHITE_BIT)
        ksq = np.argmax(boards == own_king, axis=1)
        if not np.all(boards[np.arange(b), ksq] == own_king[:, 0]):
            raise ValueError("HalfKP needs the perspective's king on the board in every position")
        rel = np.where(persp[:, 0] == 0, ksq, NSQ - 1 - ksq)
        idx = idx + rel[:, None] * FE_END
    counts = keep.sum(axis=1)
    if counts.max(initial=0) > MAX_ACTIVE:
        raise ValueError(f"a position has {counts.max()} active features, more than {MAX_ACTIVE}")
    # move the active entries to the front (stable), then cut to the fixed width
    order = np.argsort(~keep, axis=1, kind="stable")[:, :MAX_ACTIVE]
    out = np.take_along_axis(np.where(keep, idx, pad), order, axis=1)
    return out.astype(np.int32)
