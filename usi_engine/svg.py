"""Shogi boards as SVG, as ``chess.svg`` draws chess boards: for Jupyter (a ``Position``
shows itself through ``_repr_svg_``), HTML reports and documents.

>>> from usi_engine import Position
>>> from usi_engine import svg
>>> pos = Position()
>>> pos.push("7g7f")
>>> text = svg.board(pos, lastmove=pos.peek(), arrows=svg.pv_arrows(["3c3d", "8h2b+"], turn=1))
>>> text.startswith("<svg") and "歩" in text
True

The drawing follows the printed diagrams of shogi books: files 9..1 from left to right
across the top, ranks 一..九 (or a..i) down the right side, the opponent's pieces (white's,
or black's when ``flipped``) upside down, the hand of the player at the top in the left
column and the hand of the player at the bottom in the right column.  Only the standard
library is used (``xml.etree``); the text is plain SVG 1.1 without ids, so many boards can
share one HTML page.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Iterable, Mapping, Protocol, Sequence, Union

from .core.types import BLACK, KING, PIECE_LETTERS, WHITE, parse_square
from .move import Move
from .piece import Piece
from .sfen import Diagram

Square = Union[int, str]
"""A square: its index ``(file - 1) * 9 + (rank - 1)`` or its USI name (``"7g"``)."""


class BoardView(Protocol):
    """What a drawing reads of a position, and all it reads: a ``Position`` is one, and so
    is a ``usi_engine.sfen.Diagram`` (what an SFEN given to ``board`` becomes)."""

    def sfen(self) -> str: ...
    def piece_at(self, square: int) -> Piece | None: ...
    def hand(self, color: int) -> dict[str, int]: ...


class CheckView(BoardView, Protocol):
    """A position that knows whether the side to move is in check (a ``Position``)."""

    @property
    def turn(self) -> int: ...
    def is_check(self) -> bool: ...


# geometry, in SVG user units (the board keeps the 11:12 shape of a real one)
SQUARE_W, SQUARE_H = 40, 44
HAND_W = 40  # a hand column
COORD = 20  # the band of file numbers (top) and rank labels (right)
GAP = 6
BOARD_X = GAP + HAND_W + GAP
BOARD_Y = COORD
WIDTH = BOARD_X + 9 * SQUARE_W + COORD + GAP + HAND_W + GAP
HEIGHT = BOARD_Y + 9 * SQUARE_H + GAP
HAND_STEP = 40  # vertical distance between two kinds of pieces in a hand

# kanji as printed diagrams write them: one character per piece, by piece type 1..14
KANJI = ["", "歩", "香", "桂", "銀", "角", "飛", "金", "玉", "と", "杏", "圭", "全", "馬", "龍"]
ENGLISH = ["", "P", "L", "N", "S", "B", "R", "G", "K", "+P", "+L", "+N", "+S", "+B", "+R"]
RANK_KANJI = "一二三四五六七八九"
RANK_LETTERS = "abcdefghi"

DEFAULT_COLORS: dict[str, str] = {
    "board": "#eec27a",  # the wood
    "line": "#5a3d1b",
    "coord": "#5a3d1b",
    "piece": "#fbebc6",  # the face of a piece
    "piece_edge": "#8a6a3a",
    "text": "#111111",
    "promoted": "#c41a1a",
    "lastmove": "#f6e05e",
    "check": "#e0301e",
    "arrow_us": "#1565c0",  # moves of the side to move in a PV
    "arrow_them": "#c62828",  # the replies
    "hand": "#111111",
}

_KOMA = "M0-19 13-14 16 19H-16L-13-14Z"  # a piece's pentagon, centred on (0, 0)
_FONT = (
    "'Noto Serif CJK JP','Hiragino Mincho ProN','Yu Mincho','IPAMincho','IPAexMincho',"
    "'Noto Sans CJK JP','IPAGothic',serif"
)


@dataclass(frozen=True)
class Arrow:
    """An arrow on the board from ``tail`` to ``head`` (square indices), or, with ``tail``
    None, a drop of ``drop`` (``'P'`` ... ``'G'``) on ``head``, drawn as a ring around it.
    ``label`` (e.g. ``"1"``) is written at the head: the order of moves in a PV."""

    tail: int | None
    head: int
    color: str = DEFAULT_COLORS["arrow_us"]
    drop: str | None = None
    label: str | None = None
    opacity: float = 0.75

    @classmethod
    def from_move(
        cls,
        move: Move | str,
        color: str = DEFAULT_COLORS["arrow_us"],
        label: str | None = None,
        opacity: float = 0.75,
    ) -> "Arrow":
        """The arrow of a move in USI text (``7g7f``, ``8h2b+``, ``P*5e``)."""
        m = Move(move)
        if m.is_special:
            raise ValueError(f"{m.usi()!r} is not a move on the board")
        return cls(m.from_square, m.to_square, color, m.drop, label, opacity)


def pv_arrows(
    moves: Sequence[Move | str], turn: int = BLACK, plies: int = 3, colors: Mapping[str, str] | None = None
) -> list[Arrow]:
    """The first ``plies`` moves of a principal variation as numbered arrows: the moves of
    the side to move (``turn``: 0 black, 1 white) in one colour, the replies in another,
    each later one paler.  The colours are those of a side, not of a piece owner, so the
    arrows read the same on a flipped board."""
    c = {**DEFAULT_COLORS, **(colors or {})}
    out = []
    for k, m in enumerate(list(moves)[:plies]):
        if Move(m).is_special:
            break
        color = c["arrow_us"] if k % 2 == 0 else c["arrow_them"]
        out.append(Arrow.from_move(m, color, str(k + 1), round(0.8 - 0.15 * k, 2)))
    return out


def checked_king(position: CheckView) -> int | None:
    """The square of the side to move's king when it is in check, else None."""
    if not position.is_check():
        return None
    for sq in range(81):
        p = position.piece_at(sq)
        if p is not None and p.piece_type == KING and p.color == position.turn:
            return sq
    return None


def board(
    position: BoardView | str | None = None,
    *,
    pieces: str = "kanji",
    size: int | None = None,
    coordinates: bool = True,
    lastmove: Move | str | None = None,
    check: Square | None = None,
    arrows: Iterable[Arrow | Move | str | tuple[Square, Square]] = (),
    flipped: bool = False,
    colors: Mapping[str, str] | None = None,
) -> str:
    """A position as SVG text.

    :param position: a ``Position`` (or another ``BoardView``), an SFEN, or None for the
        start position.
    :param pieces: ``"kanji"`` (歩, 龍, ...) or ``"english"`` (P, +R, ...).  The rank labels
        follow: 一..九 with kanji, a..i with letters.
    :param size: width in pixels (the height follows); None: the natural 500 x 422.
    :param coordinates: draw the file numbers and rank labels.
    :param lastmove: a move to highlight (its origin and destination squares).
    :param check: a square to mark as a king in check (``checked_king(position)``).
    :param arrows: ``Arrow`` objects, moves in USI text (drops become rings), or
        ``(tail, head)`` pairs of squares.
    :param flipped: white's view: file 1 on the left, rank 九 at the top, black's pieces
        upside down.
    :param colors: overrides of ``DEFAULT_COLORS`` by key.
    :raises ValueError: on an unknown ``pieces`` style, a bad square or move text.
    """
    if pieces not in ("kanji", "english"):
        raise ValueError(f"pieces must be 'kanji' or 'english', got {pieces!r}")
    pos = _position(position)
    c = {**DEFAULT_COLORS, **(colors or {})}
    names = KANJI if pieces == "kanji" else ENGLISH
    root = ET.Element(
        "svg",
        {
            "xmlns": "http://www.w3.org/2000/svg",
            "version": "1.1",
            "class": "shogi-board",
            "viewBox": f"0 0 {WIDTH} {HEIGHT}",
            "width": str(size or WIDTH),
            "height": str(round((size or WIDTH) * HEIGHT / WIDTH)),
            # every text is centred on its point
            "font-family": _FONT,
            "text-anchor": "middle",
            "dominant-baseline": "central",
        },
    )
    ET.SubElement(root, "desc").text = pos.sfen()
    _grid(root, c)
    if coordinates:
        _coordinates(root, c, pieces == "kanji", flipped)
    top_color = BLACK if flipped else WHITE
    on_board = [(sq, p) for sq in range(81) if (p := pos.piece_at(sq)) is not None]
    for color in (BLACK, WHITE):
        _pieces(
            root,
            [(sq, p) for sq, p in on_board if p.color == color],
            color,
            color == top_color,
            flipped,
            names,
            c,
        )
    if lastmove is not None:  # over the pieces, translucent: a piece fills its square
        _highlight_move(root, Move(lastmove), c["lastmove"], flipped)
    if check is not None:
        _highlight(root, _square(check), c["check"], 0.45, flipped)
    for color in (BLACK, WHITE):
        _hand(root, pos.hand(color), color, at_top=(color == BLACK) == flipped, kanji=pieces == "kanji", c=c)
    for a in arrows:
        _arrow(root, _as_arrow(a, c), flipped)
    return ET.tostring(root, encoding="unicode")


# --- the parts ------------------------------------------------------------------------------
def _position(position: BoardView | str | None) -> BoardView:
    if position is None or isinstance(position, str):
        return Diagram(position)
    return position


def _square(square: Square) -> int:
    sq = parse_square(square) if isinstance(square, str) else int(square)
    if not 0 <= sq < 81:
        raise ValueError(f"square index {square} out of range 0..80")
    return sq


def _cell(sq: int, flipped: bool) -> tuple[int, int]:
    """(column from the left, row from the top) of a square."""
    f, r = sq // 9, sq % 9
    return (f, 8 - r) if flipped else (8 - f, r)


def _center(sq: int, flipped: bool) -> tuple[float, float]:
    col, row = _cell(sq, flipped)
    return BOARD_X + (col + 0.5) * SQUARE_W, BOARD_Y + (row + 0.5) * SQUARE_H


def _grid(root: ET.Element, c: dict[str, str]) -> None:
    w, h = 9 * SQUARE_W, 9 * SQUARE_H
    ET.SubElement(
        root,
        "rect",
        {
            "x": str(BOARD_X),
            "y": str(BOARD_Y),
            "width": str(w),
            "height": str(h),
            "fill": c["board"],
            "stroke": c["line"],
            "stroke-width": "2",
        },
    )
    lines = "".join(f"M{BOARD_X + k * SQUARE_W} {BOARD_Y}v{h}" for k in range(1, 9))
    lines += "".join(f"M{BOARD_X} {BOARD_Y + k * SQUARE_H}h{w}" for k in range(1, 9))
    ET.SubElement(root, "path", {"d": lines, "stroke": c["line"], "stroke-width": "1", "fill": "none"})
    for k in (3, 6):  # the four star points that mark the camps
        for j in (3, 6):
            ET.SubElement(
                root,
                "circle",
                {
                    "cx": str(BOARD_X + k * SQUARE_W),
                    "cy": str(BOARD_Y + j * SQUARE_H),
                    "r": "2.5",
                    "fill": c["line"],
                },
            )


def _highlight(root: ET.Element, sq: int, color: str, opacity: float, flipped: bool) -> None:
    col, row = _cell(sq, flipped)
    ET.SubElement(
        root,
        "rect",
        {
            "x": str(BOARD_X + col * SQUARE_W + 1),
            "y": str(BOARD_Y + row * SQUARE_H + 1),
            "width": str(SQUARE_W - 2),
            "height": str(SQUARE_H - 2),
            "fill": color,
            "fill-opacity": str(opacity),
            "class": "highlight",
        },
    )


def _highlight_move(root: ET.Element, move: Move, color: str, flipped: bool) -> None:
    if move.is_special:
        return
    for sq in (move.from_square, move.to_square):
        if sq is not None:
            _highlight(root, sq, color, 0.5, flipped)


def _coordinates(root: ET.Element, c: dict[str, str], kanji: bool, flipped: bool) -> None:
    g = ET.SubElement(root, "g", {"fill": c["coord"], "font-size": "13", "class": "coordinates"})
    for col in range(9):
        file_no = col + 1 if flipped else 9 - col
        ET.SubElement(
            g, "text", {"x": str(BOARD_X + col * SQUARE_W + SQUARE_W // 2), "y": str(BOARD_Y - COORD // 2)}
        ).text = str(file_no)
    labels = RANK_KANJI if kanji else RANK_LETTERS
    for row in range(9):
        rank = 8 - row if flipped else row
        ET.SubElement(
            g,
            "text",
            {
                "x": str(BOARD_X + 9 * SQUARE_W + COORD // 2),
                "y": str(BOARD_Y + row * SQUARE_H + SQUARE_H // 2),
            },
        ).text = labels[rank]


def _pieces(
    root: ET.Element,
    pieces: list[tuple[int, Piece]],
    color: int,
    upside_down: bool,
    flipped: bool,
    names: list[str],
    c: dict[str, str],
) -> None:
    """One side's pieces: their faces (pentagons pointing at the opponent), then their names.
    The player at the top is drawn as if at the bottom, on the mirrored squares, and the
    whole group is turned about the board's centre; with the shared attributes on the
    groups this keeps a board near 6 KB (an HTML report holds one per move)."""
    side = "black" if color == BLACK else "white"
    cx, cy = BOARD_X + 9 * SQUARE_W // 2, BOARD_Y + 9 * SQUARE_H // 2
    g = ET.SubElement(root, "g", {"class": f"pieces {side}"})
    if upside_down:
        g.set("transform", f"rotate(180 {cx} {cy})")
    faces = ET.SubElement(g, "g", {"fill": c["piece"], "stroke": c["piece_edge"], "stroke-width": "1"})
    names_g = ET.SubElement(g, "g", {"fill": c["text"], "font-size": "23"})
    for sq, piece in pieces:
        x, y = (round(v) for v in _center(sq, flipped))
        if upside_down:
            x, y = 2 * cx - x, 2 * cy - y
        ET.SubElement(faces, "path", {"d": f"M{x} {y - 19}l13 5 3 33h-32l3-33z"})
        name = names[piece.piece_type]
        attrs = {"x": str(x), "y": str(y + 2)}
        if piece.promoted:
            attrs["fill"] = c["promoted"]
        if len(name) > 1:
            attrs["font-size"] = "16"
        if name.isascii():
            attrs["font-weight"] = "bold"
        ET.SubElement(names_g, "text", attrs).text = name


def _hand(
    root: ET.Element, hand: dict[str, int], color: int, at_top: bool, kanji: bool, c: dict[str, str]
) -> None:
    """A hand as a column: the owner's mark (a black or a white piece shape), then each kind
    of piece, strongest first, with its count when more than one."""
    x = GAP + HAND_W / 2 if at_top else WIDTH - GAP - HAND_W / 2
    entries = [(letter, n) for letter, n in hand.items() if n]
    rows = 1 + max(1, len(entries))
    y0 = BOARD_Y + HAND_STEP / 2 if at_top else BOARD_Y + 9 * SQUARE_H - (rows - 0.5) * HAND_STEP
    g = ET.SubElement(
        root, "g", {"class": f"hand {'black' if color == BLACK else 'white'}", "fill": c["hand"]}
    )
    ET.SubElement(
        g,
        "path",
        {
            "d": _KOMA,
            "transform": f"translate({x:g} {y0:g}) scale(.7)",
            "fill": "#111111" if color == BLACK else "#ffffff",
            "stroke": "#111111",
        },
    )
    if not entries:
        ET.SubElement(g, "text", {"x": f"{x:g}", "y": f"{y0 + HAND_STEP:g}", "font-size": "14"}).text = (
            "なし" if kanji else "-"
        )
        return
    for k, (letter, n) in enumerate(entries, 1):
        y = y0 + k * HAND_STEP
        name = KANJI[PIECE_LETTERS.index(letter)] if kanji else letter
        ET.SubElement(
            g,
            "text",
            {"x": f"{x - (5 if n > 1 else 0):g}", "y": f"{y:g}", "font-size": "22", "class": "hand-piece"},
        ).text = name
        if n > 1:
            ET.SubElement(
                g, "text", {"x": f"{x + 13:g}", "y": f"{y + 8:g}", "font-size": "13", "class": "hand-count"}
            ).text = str(n)


def _num(v: float) -> str:
    """A coordinate, short: 152 rather than 152.0."""
    return f"{round(v, 1):g}"


def _as_arrow(a: Arrow | Move | str | tuple[Square, Square], c: dict[str, str]) -> Arrow:
    if isinstance(a, Arrow):
        return a
    if isinstance(a, str):
        return Arrow.from_move(a, c["arrow_us"])
    tail, head = a
    return Arrow(_square(tail), _square(head), c["arrow_us"])


def _arrow(root: ET.Element, a: Arrow, flipped: bool) -> None:
    hx, hy = _center(_square(a.head), flipped)
    g = ET.SubElement(
        root, "g", {"class": "arrow", "fill": a.color, "stroke": a.color, "opacity": f"{a.opacity:g}"}
    )
    if a.tail is None:  # a drop: a ring around the square, the piece inside
        ET.SubElement(
            g, "circle", {"cx": f"{hx:g}", "cy": f"{hy:g}", "r": "17", "fill": "none", "stroke-width": "4"}
        )
        if a.drop:
            ET.SubElement(
                g,
                "text",
                {
                    "x": f"{hx + 12:g}",
                    "y": f"{hy + 14:g}",
                    "font-size": "13",
                    "stroke": "none",
                    "font-weight": "bold",
                },
            ).text = a.drop + "*"
    else:
        tx, ty = _center(_square(a.tail), flipped)
        length = math.hypot(hx - tx, hy - ty)
        ux, uy = (hx - tx) / length, (hy - ty) / length
        bx, by = hx - ux * 16, hy - uy * 16  # the base of the head
        ET.SubElement(
            g,
            "line",
            {
                "x1": _num(tx),
                "y1": _num(ty),
                "x2": _num(bx),
                "y2": _num(by),
                "stroke-width": "6",
                "stroke-linecap": "round",
            },
        )
        px, py = -uy * 10, ux * 10
        ET.SubElement(
            g,
            "polygon",
            {
                "points": f"{_num(hx)},{_num(hy)} {_num(bx + px)},{_num(by + py)} "
                f"{_num(bx - px)},{_num(by - py)}",
                "stroke": "none",
            },
        )
    if a.label:
        ET.SubElement(g, "circle", {"cx": f"{hx - 13:g}", "cy": f"{hy - 14:g}", "r": "7", "stroke": "none"})
        ET.SubElement(
            g,
            "text",
            {
                "x": f"{hx - 13:g}",
                "y": f"{hy - 14:g}",
                "font-size": "10",
                "fill": "#ffffff",
                "stroke": "none",
                "font-weight": "bold",
            },
        ).text = a.label


__all__ = [
    "board",
    "Arrow",
    "pv_arrows",
    "checked_king",
    "DEFAULT_COLORS",
    "KANJI",
    "ENGLISH",
    "Square",
    "BoardView",
    "CheckView",
]
