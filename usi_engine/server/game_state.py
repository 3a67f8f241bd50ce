"""The game as the GUI sent it: the current position from the last good `position` line.

GUIs resend the whole game before every move; when the new line extends the previous
one, only the new moves are played (a game of hundreds of moves costs no more per move).
"""

from __future__ import annotations

from .options import ascii_clean


class GameState:
    def __init__(self, position_cls_loader) -> None:
        self._load_position_cls = position_cls_loader  # imports usi_engine.position lazily
        self._pos = None  # current position (None = start position)
        self._cache: tuple[str, object] | None = None  # (last `position` arguments, position)
        # why the last `position` was refused: until a good one arrives, `go` must not
        # search the previous position (the GUI believes another one is on the board)
        self.rejected: str | None = None

    def position(self):
        """The current position (the start position until a `position` line arrived)."""
        if self._pos is None:
            self._pos = self._load_position_cls()()
        return self._pos

    def set_position(self, text: str):
        """`position ...`: the new position; ValueError (position unchanged) for anything
        malformed or illegal."""
        try:
            pos = self._parse(" ".join(text.split()))
        except ValueError as exc:
            self.rejected = str(exc)
            raise
        self.rejected = None
        return pos

    def _parse(self, text: str):
        _check_head(text)
        pos = self._extend_cached(text)
        if pos is None:
            pos = self._load_position_cls().from_usi(text)
        self._pos = pos
        self._cache = (text, pos.copy())
        return pos

    def _extend_cached(self, text: str):
        """The cached position with the new moves pushed, or None if `text` does not
        extend the previous `position` line."""
        cached = self._cache
        if cached is None or not text.startswith(cached[0] + " "):
            return None
        rest = text[len(cached[0]) + 1 :].split(" ")
        has_moves = " moves " in cached[0] + " " or cached[0].endswith(" moves")
        if not has_moves and rest and rest[0] == "moves":
            rest = rest[1:]
            has_moves = True
        if not has_moves or "moves" in rest:
            return None
        pos = cached[1].copy()
        for mv in rest:
            try:
                pos.push(mv)
            except ValueError as exc:
                raise ValueError(
                    f"position: illegal or unparseable move '{ascii_clean(mv, 20)}' ({ascii_clean(exc, 80)})"
                ) from None
        return pos


def _check_head(text: str) -> None:
    if not text:
        raise ValueError("position: missing 'startpos' or 'sfen'")
    head = text.split(" ", 1)[0]
    if head not in ("startpos", "sfen"):
        raise ValueError(f"position: expected 'startpos' or 'sfen', got '{ascii_clean(head, 40)}'")
