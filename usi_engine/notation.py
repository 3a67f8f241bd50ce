"""Record text: KIF (Shift-JIS or UTF-8), KI2, CSA and SFEN/USI move lists, read and written.

The text side of a game record, with no position of its own, so that it imports neither
``position`` nor numba:

* reading walks a record line by line so that a broken line or an illegal move is reported
  with its line number and the moves before it are kept; python-shogi and cshogi read the
  headers and the single moves, and every move is checked on a board that the caller gives
  (a ``CheckedBoard``: ``usi_engine.position.Position`` is one);
* writing needs only the start SFEN and the USI moves: the public record API
  (``usi_engine.record``) and the match runner, which runs in processes that never load
  numba, write their .kif and .csa files with the same two functions, ``kif`` and ``csa``.

``usi_engine.record`` is the public face (``Record``, ``parse_record``, ``kif_text``, ...).

>>> print(kif("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1",
...           ["7g7f", "3c3d", "8h2b+", "3a2b"], ending="投了"), end="")
手合割：平手
手数----指手---------消費時間--
   1 ７六歩(77)
   2 ３四歩(33)
   3 ２二角成(88)
   4 同　銀(31)
   5 投了
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Protocol, Sequence

import cshogi
import cshogi.KI2
import cshogi.KIF
import shogi
import shogi.CSA
import shogi.KIF

FORMATS = ("kif", "ki2", "csa", "usi")
EXTENSIONS = {
    ".kif": "kif",
    ".kifu": "kif",
    ".ki2": "ki2",
    ".ki2u": "ki2",
    ".csa": "csa",
    ".sfen": "usi",
    ".usi": "usi",
    ".txt": "usi",
}

# end-of-game words: KIF text <-> CSA special move
KIF_TO_CSA = {
    "投了": "%TORYO",
    "詰み": "%TSUMI",
    "千日手": "%SENNICHITE",
    "持将棋": "%JISHOGI",
    "中断": "%CHUDAN",
    "切れ負け": "%TIME_UP",
    "反則負け": "%ILLEGAL_MOVE",
    "入玉勝ち": "%KACHI",
    "反則勝ち": "%+ILLEGAL_ACTION",
    "不詰": "%FUZUMI",
}
CSA_TO_KIF = {v: k for k, v in KIF_TO_CSA.items()}
CSA_TO_KIF["%-ILLEGAL_ACTION"] = "反則勝ち"

KIF_MOVES_HEADER = "手数----指手---------消費時間--"


@dataclass
class RecordError:
    """A line that could not be read: where, what it said, and why."""

    line: int
    text: str
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}: {self.text[:60]!r}"


class CheckedBoard(Protocol):
    """What reading needs of a position: made from an SFEN (ValueError if it is not one),
    it plays a move or refuses it with ValueError, and tells the last move (as the record
    keeps it), how many moves were played, the side to move and its SFEN."""

    def push(self, move: str) -> None: ...
    def peek(self) -> str | None: ...
    def ply(self) -> int: ...
    def side_to_move(self) -> int: ...
    def sfen(self) -> str: ...


class RecordFields(Protocol):
    """What reading fills in: ``usi_engine.record.Record`` has these fields."""

    start_sfen: str
    moves: list
    move_lines: list[int]
    names: list[str | None]
    result: str | None
    errors: list[RecordError]
    format: str


NewBoard = Callable[[str], CheckedBoard]


# --- reading -------------------------------------------------------------------------------
def decode(data: bytes) -> str:
    """Record bytes as text: UTF-8 (with or without BOM) if valid, else Shift-JIS (cp932),
    as Japanese GUIs write .kif files."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp932", errors="replace")


def read_file(path: str | Path, fmt: str | None = None) -> tuple[str, str | None]:
    """The text of a record file and its format: ``fmt``, else the one of its extension
    (None when the extension says nothing: the text will tell)."""
    path = Path(path)
    return decode(path.read_bytes()), fmt or EXTENSIONS.get(path.suffix.lower())


def detect_format(text: str) -> str:
    """Guess the format of a record from its lines."""
    for raw in text.splitlines():
        s = raw.strip()
        if not s or s[0] in "*#'&":
            continue
        if re.match(r"^[0-9]+\s+\S", s):
            return "kif"
        if s[0] in "▲△☗☖":
            return "ki2"
        if re.match(r"^(V2|PI|P[1-9+-]|N[+-]|[+-][0-9]{4}[A-Z]{2})", s):
            return "csa"
        if s.split()[0].count("/") == 8:
            return "usi"  # a bare SFEN
        if s.split()[0] in ("position", "startpos", "sfen") or re.match(
            r"^([1-9][a-i][1-9][a-i]\+?|[PLNSBRG]\*[1-9][a-i])\b", s
        ):
            return "usi"
    return "kif"


def read_into(rec: RecordFields, text: str, fmt: str | None, new_board: NewBoard) -> None:
    """Read a record from text into ``rec``, each move checked on a board made by
    ``new_board(start_sfen)``.  Problems are collected in ``rec.errors`` (the moves before
    the first bad one are kept); ValueError only for an unknown format."""
    fmt = (fmt or detect_format(text)).lower()
    if fmt not in FORMATS:
        raise ValueError(f"unknown record format {fmt!r}; known: {', '.join(FORMATS)}")
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    reader = {"kif": _read_kif, "ki2": _read_ki2, "csa": _read_csa, "usi": _read_usi}[fmt]
    rec.format = fmt
    reader(lines, _Reading(rec, new_board))


class _Reading:
    """A record being read: where its moves go, and how its boards are made."""

    __slots__ = ("rec", "new_board")

    def __init__(self, rec: RecordFields, new_board: NewBoard) -> None:
        self.rec, self.new_board = rec, new_board

    def error(self, line: int, text: str, message: str) -> None:
        self.rec.errors.append(RecordError(line, text, message))

    def start(self, sfen: str, line: int) -> CheckedBoard | None:
        try:
            pos = self.new_board(sfen)
        except ValueError as e:
            self.error(line, sfen, f"bad start position ({e})")
            return None
        self.rec.start_sfen = pos.sfen()
        return pos

    def play(self, pos: CheckedBoard, usi: str, line: int, text: str) -> bool:
        """Push one move; on an illegal one record the error and answer False."""
        try:
            pos.push(usi)
        except ValueError:
            self.error(line, text, f"illegal move {usi} at move {pos.ply() + 1}")
            return False
        self.rec.moves.append(pos.peek())
        self.rec.move_lines.append(line)
        return True

    def header_position(self, header: list[str], line: int) -> CheckedBoard | None:
        """Start position and names from KIF/KI2 header lines (python-shogi reads them:
        手合割, a board diagram, 後手番)."""
        try:
            summary = shogi.KIF.Parser.parse_str("\n".join(header))[0]
        except Exception as e:  # python-shogi raises several types on a bad header
            self.error(line, "", f"cannot read the header ({e})")
            return None
        self.rec.names = list(summary["names"])
        return self.start(summary["sfen"], line)

    def other_line(self, pos: CheckedBoard | None, header: list[str], raw: str, s: str, no: int) -> bool:
        """A KIF/KI2 line that is not a move: header before the first move, the end, or an
        error.  True when reading stops (the end, or variations, which are not analysed)."""
        if pos is None and not self.rec.errors:
            header.append(raw)
        elif s.startswith(("まで", "変化：")):
            return True
        else:
            self.error(no, s, "not a move line, ignored")
        return False


_KIF_MOVE = re.compile(r"^\s*([0-9]+)\s+(\S+)")  # ASCII digits: a board diagram has ９ ８ ...


def _read_kif(lines: list[str], r: _Reading) -> None:
    rec = r.rec
    header: list[str] = []
    pos: CheckedBoard | None = None
    last_to = None
    first: int | None = None
    for no, raw in enumerate(lines, 1):
        s = raw.strip()
        if not s or s[0] in "*#&":
            continue
        m = _KIF_MOVE.match(raw)
        if m is None:
            if r.other_line(pos, header, raw, s, no):
                break
            continue
        if pos is None:
            pos = r.header_position(header, no)
            if pos is None:
                return
        if m.group(2) in KIF_TO_CSA or m.group(2) == "先日手":
            rec.result = KIF_TO_CSA.get(m.group(2), "%SENNICHITE")
            break
        if first is None:
            first = int(m.group(1))  # a record from a set-up position may not start at 1
        if int(m.group(1)) != first + pos.ply():
            r.error(no, s, f"move number {m.group(1)}, expected {first + pos.ply()}")
            break
        body = re.sub(r"同[ 　]*", "同　", raw.rstrip().rstrip("+"))
        if "同" in body and last_to is None:
            r.error(no, s, f"move {pos.ply() + 1} says 同 (same square) but no move precedes it")
            break
        usi, new_to, special = shogi.KIF.Parser.parse_move_str(body, last_to)
        if special:
            rec.result = KIF_TO_CSA.get(special)
            break
        if usi is None:
            r.error(no, s, f"cannot read move {pos.ply() + 1}")
            break
        if not r.play(pos, usi, no, s):
            break
        last_to = new_to
    if pos is None and not rec.errors:
        r.header_position(header, len(lines))


_KI2_MOVE = re.compile(r"[▲△][^▲△]*")


def _read_ki2(lines: list[str], r: _Reading) -> None:
    header: list[str] = []
    pos: CheckedBoard | None = None
    board: cshogi.Board | None = None
    for no, raw in enumerate(lines, 1):
        s = raw.strip().replace("☗", "▲").replace("☖", "△")
        if not s or s[0] in "*#&":
            continue
        if s[0] not in "▲△":
            if r.other_line(pos, header, raw, s, no):
                break
            continue
        if pos is None:
            pos = r.header_position(header, no)
            if pos is None:
                return
            board = cshogi.Board(r.rec.start_sfen)
        for token in _KI2_MOVE.findall(s):
            token = token.strip()
            side = 0 if token[0] == "▲" else 1
            if side != pos.side_to_move():
                r.error(no, token, f"move {pos.ply() + 1} is not for the side to move")
                return
            try:
                found = cshogi.KI2.Parser.parse_move_str(token, board)
            except (IndexError, AssertionError, ValueError):
                found = []  # no such legal move, or an ambiguous one
            if len(found) != 1:
                r.error(no, token, f"cannot read move {pos.ply() + 1} (illegal or ambiguous)")
                return
            if not r.play(pos, cshogi.move_to_usi(found[0]), no, token):
                return
    if pos is None and not r.rec.errors:
        r.header_position(header, len(lines))


def _read_csa(lines: list[str], r: _Reading) -> None:
    rec = r.rec
    position_lines: list[str] = []
    pos: CheckedBoard | None = None
    board: shogi.Board | None = None
    for no, raw in enumerate(lines, 1):
        for stmt in raw.strip().split(","):
            s = stmt.strip()
            if not s or s[0] in "'VT$" or s[:2] in ("N+", "N-"):
                if s[:2] in ("N+", "N-"):
                    rec.names["+-".index(s[1])] = s[2:]
                continue
            if s[0] == "P" and pos is None:
                # a board rank is 9 cells of 3 characters: editors strip the last blank
                position_lines.append(s.ljust(29) if s[1:2] in tuple("123456789") else s)
            elif s in ("+", "-") and pos is None:
                try:
                    p = shogi.CSA.Parser.parse_position(position_lines)
                    sfen = shogi.CSA.Exporter.sfen(p["pieces"], p["pieces_in_hand"], s, 1)
                except Exception as e:
                    r.error(no, s, f"cannot read the start position ({e})")
                    return
                pos = r.start(sfen, no)
                if pos is None:
                    return
                board = shogi.Board(rec.start_sfen)
            elif s[0] in "+-" and pos is not None:
                if "+-".index(s[0]) != pos.side_to_move():
                    r.error(no, s, f"move {pos.ply() + 1} is not for the side to move")
                    return
                try:
                    _, usi = shogi.CSA.Parser.parse_move_str(s, board)
                except (ValueError, IndexError, KeyError):
                    r.error(no, s, f"cannot read move {pos.ply() + 1}")
                    return
                if not r.play(pos, usi, no, s):
                    return
                board.push_usi(usi)
            elif s[0] == "%":
                rec.result = s
                return
            elif s == "/":
                return  # a second game follows: read the first only
            else:
                r.error(no, s, "not a CSA statement")
                if pos is not None:
                    return
    if pos is None and not rec.errors:
        r.error(len(lines), "", "no start position (PI or P1-P9 and + / -)")


def _read_usi(lines: list[str], r: _Reading) -> None:
    tokens = [(no, t) for no, raw in enumerate(lines, 1) for t in raw.split()]
    i = 0
    if tokens and tokens[0][1] == "position":
        i = 1
    sfen = shogi.STARTING_SFEN
    if i < len(tokens) and tokens[i][1] == "startpos":
        i += 1
    elif i < len(tokens) and (tokens[i][1] == "sfen" or "/" in tokens[i][1]):
        i += tokens[i][1] == "sfen"
        fields = [t for _, t in tokens[i : i + 4]]
        n = 4 if len(fields) == 4 and fields[3].isdigit() else 3
        sfen = " ".join(fields[:n])
        i += n
    if i < len(tokens) and tokens[i][1] == "moves":
        i += 1
    pos = r.start(sfen, tokens[0][0] if tokens else 1)
    if pos is None:
        return
    for no, t in tokens[i:]:
        if not r.play(pos, t, no, t):
            return


# --- writing -------------------------------------------------------------------------------
# cshogi names a promoted lance, knight and silver as the board diagram does (杏 圭 全); a KIF
# move line names them 成香 成桂 成銀, as Kakinoki's format and the GUIs write them
_KIF_PIECE_NAMES = str.maketrans({"杏": "成香", "圭": "成桂", "全": "成銀"})


def _cshogi_moves(start_sfen: str, moves: Sequence[str]) -> list[int]:
    board = cshogi.Board(start_sfen)
    out = []
    for m in moves:
        cm = board.move_from_usi(str(m))
        out.append(cm)
        board.push(cm)
    return out


def _comments(prefix: str, lines: Sequence[str] | None) -> list[str]:
    return [prefix + line for line in (lines or [])]


def _per_move(comments: Sequence[Sequence[str]] | None, i: int) -> Sequence[str] | None:
    return comments[i] if comments and i < len(comments) else None


def _seconds(ms: float) -> int:
    return max(0, int(ms // 1000))  # clock jitter can make a time slightly negative


def _clock(ms: float) -> str:
    seconds = _seconds(ms)
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def kif(
    start_sfen: str,
    moves: Sequence[str],
    *,
    names: Sequence[str | None] = (None, None),
    head: Sequence[str] = (),
    header_comments: Sequence[str] | None = None,
    comments: Sequence[Sequence[str]] | None = None,
    times_ms: Sequence[float] | None = None,
    ending: str | None = None,
    footer: Sequence[str] = (),
) -> str:
    """KIF text of a game.

    :param start_sfen: the start position: ``手合割：平手`` for the standard one, else a
        board diagram (with ``後手番`` when white moves first).
    :param moves: the moves in USI text, all legal.
    :param names: black's and white's names (``先手：``, ``後手：``), None for none.
    :param head: lines written first, as they are (``#`` comments, ``開始日時：...``).
    :param header_comments: ``*`` comment lines before the moves.
    :param comments: ``comments[i]``: the ``*`` comment lines after move i+1 (as ShogiHome,
        ShogiGUI and Kakinoki read them).
    :param times_ms: the thinking time of each move: ``( m:ss/hh:mm:ss)`` after it, the
        second figure the mover's total.
    :param ending: the end-of-game word written as the last move (``投了``, ``千日手``...).
    :param footer: lines written last, as they are (``まで...``).
    """
    board, played = cshogi.Board(start_sfen), _cshogi_moves(start_sfen, moves)
    out = list(head)
    if board.sfen() == cshogi.STARTING_SFEN:
        out.append("手合割：平手")
    else:
        out.append(cshogi.KIF.board_to_bod(board).rstrip("\n"))
    for key, name in zip(("先手", "後手"), names):
        if name:
            out.append(f"{key}：{name}")
    out += _comments("*", header_comments)
    out.append(KIF_MOVES_HEADER)
    side = board.turn
    totals = [0.0, 0.0]
    prev = None
    for i, cm in enumerate(played):
        text = cshogi.KIF.move_to_kif(cm, prev).translate(_KIF_PIECE_NAMES)
        if times_ms is None:
            out.append(f"{i + 1:>4} {text}")
        else:
            totals[side] += times_ms[i]
            per = _seconds(times_ms[i])
            out.append(f"{i + 1:>4} {text:<12}({per // 60:2d}:{per % 60:02d}/{_clock(totals[side])})")
        out += _comments("*", _per_move(comments, i))
        prev = cm
        side ^= 1
    if ending:
        out.append(f"{len(played) + 1:>4} {ending}")
    out += footer
    return "\n".join(out) + "\n"


def csa(
    start_sfen: str,
    moves: Sequence[str],
    *,
    names: Sequence[str | None] = (None, None),
    head: Sequence[str] = (),
    header_comments: Sequence[str] | None = None,
    comments: Sequence[Sequence[str]] | None = None,
    times_ms: Sequence[float] | None = None,
    ending: str | None = None,
    footer: Sequence[str] = (),
) -> str:
    """CSA V2.2 text of a game.

    :param start_sfen: the start position, written as its P1..P9 lines, hands and side.
    :param moves: the moves in USI text, all legal.
    :param names: black's and white's names (``N+``, ``N-``), None for none.
    :param head: lines written after the names, as they are (``$EVENT:...``).
    :param header_comments: ``'`` comment lines before the position.
    :param comments: ``comments[i]``: the comment lines after move i+1, each written
        ``'*`` + line.
    :param times_ms: the thinking time of each move: ``,T<seconds>`` after it.
    :param ending: the ``%`` line that ends the game (``%TORYO``, ...).
    :param footer: lines written last, as they are.
    """
    board, played = cshogi.Board(start_sfen), _cshogi_moves(start_sfen, moves)
    out = ["V2.2"]
    for sign, name in zip("+-", names):
        if name:
            out.append(f"N{sign}{name}")
    out += head
    out += _comments("'", header_comments)
    out.append(board.csa_pos().rstrip("\n"))
    side = board.turn
    for i, cm in enumerate(played):
        time = "" if times_ms is None else f",T{_seconds(times_ms[i])}"
        out.append("+-"[side] + cshogi.move_to_csa(cm) + time)
        out += _comments("'*", _per_move(comments, i))
        side ^= 1
    if ending:
        out.append(ending)
    out += footer
    return "\n".join(out) + "\n"
