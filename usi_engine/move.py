"""`Move`: a shogi move as a small value type.

A Move *is* its USI text (a ``str`` subclass): it compares equal to ``"7g7f"``, hashes
the same, and can be passed wherever the engine takes move text.  On top it offers typed
accessors, as python-chess's ``Move`` does:

>>> m = Move.from_usi("8h2b+")
>>> m.from_square, m.to_square, m.promotion, m.drop
(70, 10, True, None)
>>> Move.drop_at("P", "5e"), Move.drop_at("P", "5e").is_drop
(Move('P*5e'), True)
>>> m == "8h2b+"
True

Squares are integers ``(file - 1) * 9 + (rank - 1)`` (``"7g"`` is 60), as in
``usi_engine.core.types`` and cshogi.  The USI answers ``resign`` and ``win``
(entering-king declaration) are Moves too, so that ``play`` can return them.
"""

from __future__ import annotations

from .core.types import PIECE_LETTERS, parse_square, square_name

_DROP_LETTERS = PIECE_LETTERS[1:8]  # P L N S B R G: the pieces a hand holds
_SPECIAL = ("resign", "win")


class Move(str):
    """A move in USI notation: ``7g7f``, ``8h2b+`` (promotion), ``P*5e`` (drop).

    Only the syntax is checked here; whether the move is legal depends on a position
    (``Position.push`` checks it).
    """

    __slots__ = ()

    def __new__(cls, text: str) -> "Move":
        if isinstance(text, Move):
            return text
        if not isinstance(text, str):
            raise TypeError(f"Move takes USI text, got {type(text).__name__}")
        t = text.strip()
        _check_syntax(t)
        return super().__new__(cls, t)

    # --- construction ---------------------------------------------------------------
    @classmethod
    def from_usi(cls, text: str) -> "Move":
        """Parse USI text; ValueError names what is wrong."""
        return cls(text)

    @classmethod
    def make(cls, from_square: int | str, to_square: int | str, promotion: bool = False) -> "Move":
        """A board move between two squares (indices or names such as ``"7g"``)."""
        return cls(f"{_name(from_square)}{_name(to_square)}{'+' if promotion else ''}")

    @classmethod
    def drop_at(cls, piece: str, to_square: int | str) -> "Move":
        """A drop of a piece from the hand: ``piece`` is one of P L N S B R G."""
        return cls(f"{piece.upper()}*{_name(to_square)}")

    # --- accessors ------------------------------------------------------------------
    def usi(self) -> str:
        """The USI text as a plain str."""
        return str.__str__(self)

    @property
    def is_drop(self) -> bool:
        return len(self) == 4 and self[1] == "*"

    @property
    def is_special(self) -> bool:
        """``resign`` or ``win``: an answer of the engine, not a move on the board."""
        return self.usi() in _SPECIAL

    @property
    def from_square(self) -> int | None:
        """Square the piece leaves; None for a drop or a special answer."""
        if self.is_drop or self.is_special:
            return None
        return parse_square(self[:2])

    @property
    def to_square(self) -> int | None:
        if self.is_special:
            return None
        return parse_square(self[2:4])

    @property
    def promotion(self) -> bool:
        return len(self) == 5 and self[4] == "+"

    @property
    def drop(self) -> str | None:
        """Letter of the dropped piece (``'P'`` ... ``'G'``), None for a board move."""
        return self[0] if self.is_drop else None

    def __repr__(self) -> str:
        return f"Move({self.usi()!r})"

    def __str__(self) -> str:
        return self.usi()


def trusted_move(text: str) -> Move:
    """A Move from text the engine produced itself (no syntax check: hot in legal_moves)."""
    return str.__new__(Move, text)


def _name(square: int | str) -> str:
    if isinstance(square, str):
        parse_square(square)  # validates
        return square
    if not 0 <= int(square) < 81:
        raise ValueError(f"square index {square} out of range 0..80")
    return square_name(int(square))


def _check_syntax(t: str) -> None:
    if t in _SPECIAL:
        return
    if len(t) == 4 and t[1] == "*":
        if t[0] not in _DROP_LETTERS:
            raise ValueError(f"bad drop piece in {t!r}: use one of {_DROP_LETTERS} (upper case)")
        parse_square(t[2:])
        return
    if len(t) in (4, 5) and (len(t) == 4 or t[4] == "+"):
        try:
            frm, to = parse_square(t[:2]), parse_square(t[2:4])
        except ValueError:
            raise ValueError(
                f"unparseable move {t[:16]!r}: squares are a file 1-9 and a rank a-i, as in 7g7f"
            ) from None
        if frm == to:
            raise ValueError(f"move {t!r} does not move")
        return
    raise ValueError(f"unparseable move {t[:16]!r}: expected USI text such as 7g7f, 8h2b+ or P*5e")
