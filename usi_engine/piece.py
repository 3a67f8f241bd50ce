"""`Piece`: a coloured piece as returned by ``Position.piece_at``.

>>> p = Piece.from_symbol("+r")
>>> p.symbol(), p.color, p.promoted, p.japanese()
('+r', 1, True, '龍')
"""

from __future__ import annotations

from dataclasses import dataclass

from .core.types import BLACK, WHITE, KING, PROMOTED, PIECE_LETTERS

# by piece type 1..14 (core.types numbering)
_JAPANESE = ["", "歩", "香", "桂", "銀", "角", "飛", "金", "玉", "と", "成香", "成桂", "成銀", "馬", "龍"]


@dataclass(frozen=True)
class Piece:
    """piece_type: 1..14 as in ``usi_engine.core.types`` (PAWN=1 ... KING=8, promoted =
    base + 8); color: 0 black (sente), 1 white (gote)."""

    piece_type: int
    color: int

    def __post_init__(self) -> None:
        if not 1 <= self.piece_type <= 14:
            raise ValueError(f"bad piece type {self.piece_type} (1..14)")
        if self.color not in (BLACK, WHITE):
            raise ValueError(f"bad color {self.color} (0 black, 1 white)")

    @classmethod
    def from_symbol(cls, symbol: str) -> "Piece":
        """SFEN letter: upper case black, lower case white, '+' for promoted ('+p')."""
        promoted = symbol.startswith("+")
        letter = symbol[1:] if promoted else symbol
        if len(letter) != 1 or letter.upper() not in PIECE_LETTERS[1:]:
            raise ValueError(f"bad piece symbol {symbol!r}")
        t = PIECE_LETTERS.index(letter.upper())
        if promoted and t in (PIECE_LETTERS.index("G"), KING):
            raise ValueError(f"piece {symbol!r} cannot be promoted")
        return cls(t + (PROMOTED if promoted else 0), WHITE if letter.islower() else BLACK)

    @property
    def promoted(self) -> bool:
        return self.piece_type > KING

    @property
    def base_type(self) -> int:
        return self.piece_type - PROMOTED if self.promoted else self.piece_type

    def symbol(self) -> str:
        letter = PIECE_LETTERS[self.base_type]
        letter = letter if self.color == BLACK else letter.lower()
        return ("+" if self.promoted else "") + letter

    def japanese(self) -> str:
        """Kanji name as KIF writes it (歩, 成銀, 龍, ...)."""
        return _JAPANESE[self.piece_type]

    def __str__(self) -> str:
        return self.symbol()
