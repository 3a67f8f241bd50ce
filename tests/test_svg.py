"""usi_engine.svg: boards as SVG, read back with xml.etree: the pieces and their owners,
hands, coordinates, orientation, highlights and arrows."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from usi_engine import Position, svg

NS = "{http://www.w3.org/2000/svg}"
# black's bishop took on 2b (a bishop in each hand's... black's hand), then white's silver
# went to 2b and black dropped the bishop on 4e: black has two pawns and white a bishop
MIDGAME = "startpos moves 7g7f 3c3d 8h2b+ 3a2b B*4e 8b7b 4e3d 2b3c 3d4c+"
# white's king on 5a checked by black's rook on 1a
CHECK_SFEN = "4k3R/9/9/9/9/9/9/9/4K4 w - 1"


def parse(text: str) -> ET.Element:
    root = ET.fromstring(text)
    assert root.tag == NS + "svg"
    return root


def group(root: ET.Element, cls: str) -> ET.Element:
    found = [g for g in root.iter(NS + "g") if g.get("class") == cls]
    assert len(found) == 1, cls
    return found[0]


def texts(el: ET.Element) -> list[str]:
    return [t.text for t in el.iter(NS + "text")]


def is_upside_down(root: ET.Element, side: str) -> bool:
    """Is a side's group of pieces turned half a turn about the board's centre?"""
    cx, cy = svg.BOARD_X + 9 * svg.SQUARE_W / 2, svg.BOARD_Y + 9 * svg.SQUARE_H / 2
    transform = group(root, f"pieces {side}").get("transform")
    assert transform in (None, f"rotate(180 {cx:g} {cy:g})"), transform
    return transform is not None


def face_ys(root: ET.Element, side: str) -> list[float]:
    """Where each piece of a side is drawn (the y of its face's tip, 'M<x> <y>...'), after
    its group's half turn if it has one."""
    cy = svg.BOARD_Y + 9 * svg.SQUARE_H / 2
    ys = [
        int(re.match(r"M\d+ (\d+)", p.get("d")).group(1))
        for p in group(root, f"pieces {side}").iter(NS + "path")
    ]
    return [2 * cy - y for y in ys] if is_upside_down(root, side) else ys


def rects_of_color(root: ET.Element, color: str) -> list[ET.Element]:
    return [r for r in root.iter(NS + "rect") if r.get("fill") == color]


def test_start_position_in_kanji_is_valid_svg_with_forty_pieces():
    root = parse(svg.board())
    black, white = group(root, "pieces black"), group(root, "pieces white")
    assert sorted(texts(black)) == sorted(
        ["歩"] * 9 + ["香", "桂", "銀", "金", "玉", "金", "銀", "桂", "香", "飛", "角"]
    )
    assert sorted(texts(white)) == sorted(texts(black))
    assert root.find(NS + "desc").text == Position().sfen()
    # shogi's coordinates: files 9..1 left to right, ranks 一..九 top to bottom
    assert texts(group(root, "coordinates")) == list("987654321") + list("一二三四五六七八九")


def test_english_letters_and_promoted_pieces():
    pos = Position.from_usi(MIDGAME)
    kanji = parse(svg.board(pos))
    english = parse(svg.board(pos, pieces="english"))
    assert "馬" in texts(group(kanji, "pieces black"))
    assert "+B" in texts(group(english, "pieces black"))
    assert set(texts(group(english, "pieces white"))) == {"P", "L", "N", "S", "G", "K", "R"}
    assert all(t.isascii() for t in texts(english))
    assert texts(group(english, "coordinates"))[9:] == list("abcdefghi")
    horse = [t for t in group(kanji, "pieces black").iter(NS + "text") if t.text == "馬"][0]
    assert horse.get("fill") == svg.DEFAULT_COLORS["promoted"]


def test_hands_show_each_piece_with_its_count():
    pos = Position.from_usi(MIDGAME)
    assert pos.hand(0) == {"P": 2} and pos.hand(1) == {"B": 1}
    root = parse(svg.board(pos))
    assert texts(group(root, "hand black")) == ["歩", "2"]
    assert texts(group(root, "hand white")) == ["角"]  # one: no count
    assert texts(group(parse(svg.board()), "hand black")) == ["なし"]
    assert texts(group(parse(svg.board(pos, pieces="english")), "hand black")) == ["P", "2"]


def test_opponent_pieces_are_upside_down_and_flipped_swaps_the_sides():
    normal = parse(svg.board())
    assert max(face_ys(normal, "white")) < min(face_ys(normal, "black"))  # black at the bottom
    assert is_upside_down(normal, "white") and not is_upside_down(normal, "black")
    flipped = parse(svg.board(flipped=True))
    assert max(face_ys(flipped, "black")) < min(face_ys(flipped, "white"))  # black at the top
    assert is_upside_down(flipped, "black") and not is_upside_down(flipped, "white")
    assert texts(group(flipped, "coordinates")) == list("123456789") + list("九八七六五四三二一")
    # the hand of the player at the top is in the left column
    pos = Position.from_usi(MIDGAME)

    def x_of(root, side):
        return float(group(root, f"hand {side}").find(NS + "text").get("x"))

    assert x_of(parse(svg.board(pos)), "white") < x_of(parse(svg.board(pos)), "black")
    assert x_of(parse(svg.board(pos, flipped=True)), "black") < x_of(
        parse(svg.board(pos, flipped=True)), "white"
    )


def test_last_move_and_check_are_highlighted():
    pos = Position.from_usi("startpos moves 7g7f")
    root = parse(pos._repr_svg_())
    marked = rects_of_color(root, svg.DEFAULT_COLORS["lastmove"])
    assert len(marked) == 2
    assert not rects_of_color(root, svg.DEFAULT_COLORS["check"])
    assert len(rects_of_color(parse(svg.board(pos, lastmove="P*5e")), svg.DEFAULT_COLORS["lastmove"])) == 1

    checked = Position(CHECK_SFEN)
    assert svg.checked_king(checked) == 4 * 9 + 0 and svg.checked_king(pos) is None  # 5a
    root = parse(checked._repr_svg_())
    (rect,) = rects_of_color(root, svg.DEFAULT_COLORS["check"])
    x, y = float(rect.get("x")), float(rect.get("y"))
    assert svg.BOARD_X + 4 * svg.SQUARE_W < x < svg.BOARD_X + 5 * svg.SQUARE_W  # the 5th column
    assert svg.BOARD_Y <= y < svg.BOARD_Y + svg.SQUARE_H  # the first rank


def test_arrows_for_moves_drops_and_a_pv():
    pos = Position.from_usi(MIDGAME)
    root = parse(svg.board(pos, arrows=["7i7h", ("2c", "2d"), "P*4d"]))
    arrows = [g for g in root.iter(NS + "g") if g.get("class") == "arrow"]
    assert len(arrows) == 3
    assert [len(list(a.iter(NS + "polygon"))) for a in arrows] == [1, 1, 0]  # a drop is a ring
    assert texts(arrows[2]) == ["P*"]

    pv = svg.pv_arrows(["5a4b", "P*4d", "4c5c", "4b5c"], turn=1)
    assert [a.label for a in pv] == ["1", "2", "3"]
    assert [a.color for a in pv] == [
        svg.DEFAULT_COLORS["arrow_us"],
        svg.DEFAULT_COLORS["arrow_them"],
        svg.DEFAULT_COLORS["arrow_us"],
    ]
    assert pv[1] == svg.Arrow(None, 3 * 9 + 3, svg.DEFAULT_COLORS["arrow_them"], "P", "2", pv[1].opacity)
    assert pv[0].opacity > pv[1].opacity > pv[2].opacity
    root = parse(svg.board(pos, arrows=pv))
    assert sum(g.get("class") == "arrow" for g in root.iter(NS + "g")) == 3

    # an arrow ends where the square is drawn, flipped or not
    def line(root):
        return next(root.iter(NS + "line"))

    def x2(root):
        return float(line(root).get("x2"))

    assert x2(parse(svg.board(arrows=["9g9f"]))) < svg.BOARD_X + svg.SQUARE_W
    assert x2(parse(svg.board(arrows=["9g9f"], flipped=True))) > svg.BOARD_X + 8 * svg.SQUARE_W


def test_size_colors_and_sfen_input():
    root = parse(svg.board(Position.from_usi(MIDGAME).sfen(), size=250, colors={"board": "#abcdef"}))
    assert root.get("width") == "250" and int(root.get("height")) == round(250 * svg.HEIGHT / svg.WIDTH)
    assert rects_of_color(root, "#abcdef")


def test_an_sfen_draws_as_its_position_does():
    """An SFEN is drawn from a read-only Diagram, a Position from itself: the same SVG."""
    from usi_engine.sfen import Diagram

    pos = Position.from_usi(MIDGAME)
    for flipped in (False, True):
        assert svg.board(pos.sfen(), flipped=flipped) == svg.board(pos, flipped=flipped)
    assert svg.board(Diagram(pos.sfen()), pieces="english") == svg.board(pos, pieces="english")
    assert svg.board() == svg.board(Position()) == svg.board("startpos")
    with pytest.raises(ValueError, match="nifu"):
        svg.board("4k4/9/9/9/9/9/P8/P8/4K4 b - 1")


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"pieces": "western"}, "pieces must be 'kanji' or 'english'"),
        ({"arrows": ["7g7z"]}, "unparseable move"),
        ({"arrows": [("7g", "0a")]}, "bad square"),
        ({"check": 81}, "out of range"),
        ({"lastmove": "resign", "arrows": ["resign"]}, "not a move on the board"),
    ],
)
def test_bad_arguments_say_what_is_wrong(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        svg.board(**kwargs)


def test_module_example_runs():
    import doctest

    result = doctest.testmod(svg)
    assert result.attempted > 0 and result.failed == 0, result
