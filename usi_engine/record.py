"""Game records in and out: KIF (Shift-JIS or UTF-8), KI2, CSA, and SFEN/USI move lists.

python-shogi and cshogi read the single moves and the headers; this module walks the record
line by line so that a broken line or an illegal move is reported with its line number, and
the moves before it are kept (``Record.errors``).  Every move is checked by ``Position``.

>>> rec = parse_record("position startpos moves 7g7f 3c3d 8h2b+")
>>> rec.format, rec.moves, rec.errors
('usi', [Move('7g7f'), Move('3c3d'), Move('8h2b+')], [])
>>> print(kif_text(rec).splitlines()[-1])
   3 ２二角成(88)
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import cshogi
import cshogi.KI2
import cshogi.KIF
import shogi
import shogi.CSA
import shogi.KIF

from .move import Move
from .position import Position, START_SFEN

FORMATS = ("kif", "ki2", "csa", "usi")
_EXTENSIONS = {".kif": "kif", ".kifu": "kif", ".ki2": "ki2", ".ki2u": "ki2", ".csa": "csa",
               ".sfen": "usi", ".usi": "usi", ".txt": "usi"}

# end-of-game words: KIF text <-> CSA special move
_KIF_TO_CSA = {"投了": "%TORYO", "詰み": "%TSUMI", "千日手": "%SENNICHITE", "持将棋": "%JISHOGI",
               "中断": "%CHUDAN", "切れ負け": "%TIME_UP", "反則負け": "%ILLEGAL_MOVE",
               "入玉勝ち": "%KACHI", "反則勝ち": "%+ILLEGAL_ACTION", "不詰": "%FUZUMI"}
_CSA_TO_KIF = {v: k for k, v in _KIF_TO_CSA.items()}
_CSA_TO_KIF["%-ILLEGAL_ACTION"] = "反則勝ち"


@dataclass
class RecordError:
    """A line that could not be read: where, what it said, and why."""
    line: int
    text: str
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}: {self.text[:60]!r}"


@dataclass
class Record:
    """A game: the start position, the moves read (all legal), and what went wrong.

    ``move_lines[i]`` is the line number of ``moves[i]`` in the source; ``result`` is the
    CSA name of how the game ended (``%TORYO``, ``%SENNICHITE``, ...) when the record says.
    """
    start_sfen: str = START_SFEN
    moves: list[Move] = field(default_factory=list)
    move_lines: list[int] = field(default_factory=list)
    names: list[str | None] = field(default_factory=lambda: [None, None])
    result: str | None = None
    errors: list[RecordError] = field(default_factory=list)
    format: str = "usi"

    def position(self, ply: int | None = None) -> Position:
        """The position after ``ply`` moves (all of them by default), with its history."""
        pos = Position(self.start_sfen)
        for m in self.moves[:len(self.moves) if ply is None else ply]:
            pos.push(m)
        return pos

    def positions(self) -> list[Position]:
        """Every position of the game: before move 1, ..., after the last move."""
        pos = Position(self.start_sfen)
        out = [pos.copy()]
        for m in self.moves:
            pos.push(m)
            out.append(pos.copy())
        return out

    def usi(self) -> str:
        """The game as the arguments of a USI ``position`` command."""
        head = "startpos" if self.start_sfen == START_SFEN else f"sfen {self.start_sfen}"
        return head + (" moves " + " ".join(self.moves) if self.moves else "")


# --- reading -------------------------------------------------------------------------------
def decode(data: bytes) -> str:
    """Record bytes as text: UTF-8 (with or without BOM) if valid, else Shift-JIS (cp932),
    as Japanese GUIs write .kif files."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp932", errors="replace")


def read_record(path: str | Path, fmt: str | None = None) -> Record:
    """Read a record file; the format comes from ``fmt``, the extension, or the content."""
    path = Path(path)
    text = decode(path.read_bytes())
    return parse_record(text, fmt or _EXTENSIONS.get(path.suffix.lower()))


def parse_record(text: str, fmt: str | None = None) -> Record:
    """Read a record from text.  Problems are collected in ``Record.errors`` (the moves
    before the first bad one are kept); ValueError only when no start position is found."""
    fmt = (fmt or detect_format(text)).lower()
    if fmt not in FORMATS:
        raise ValueError(f"unknown record format {fmt!r}; known: {', '.join(FORMATS)}")
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    reader = {"kif": _read_kif, "ki2": _read_ki2, "csa": _read_csa, "usi": _read_usi}[fmt]
    rec = Record(format=fmt)
    reader(lines, rec)
    return rec


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
            return "usi"                     # a bare SFEN
        if s.split()[0] in ("position", "startpos", "sfen") or re.match(r"^([1-9][a-i][1-9][a-i]\+?|[PLNSBRG]\*[1-9][a-i])\b", s):
            return "usi"
    return "kif"


def _start(rec: Record, sfen: str, line: int) -> Position | None:
    try:
        pos = Position(sfen)
    except ValueError as e:
        rec.errors.append(RecordError(line, sfen, f"bad start position ({e})"))
        return None
    rec.start_sfen = pos.sfen()
    return pos


def _play(rec: Record, pos: Position, usi: str, line: int, text: str) -> bool:
    """Push one move; on an illegal one record the error and answer False."""
    try:
        pos.push(usi)
    except ValueError:
        rec.errors.append(RecordError(line, text, f"illegal move {usi} at move {pos.ply() + 1}"))
        return False
    rec.moves.append(Move(usi))
    rec.move_lines.append(line)
    return True


def _header_position(rec: Record, header: list[str], line: int) -> Position | None:
    """Start position and names from KIF/KI2 header lines (python-shogi reads them:
    手合割, a board diagram, 後手番)."""
    try:
        summary = shogi.KIF.Parser.parse_str("\n".join(header))[0]
    except Exception as e:          # python-shogi raises several types on a bad header
        rec.errors.append(RecordError(line, "", f"cannot read the header ({e})"))
        return None
    rec.names = list(summary["names"])
    return _start(rec, summary["sfen"], line)


def _other_line(rec: Record, pos: Position | None, header: list[str], raw: str, s: str,
                no: int) -> bool:
    """A KIF/KI2 line that is not a move: header before the first move, the end, or an
    error.  True when reading stops (the end, or variations, which are not analysed)."""
    if pos is None and not rec.errors:
        header.append(raw)
    elif s.startswith(("まで", "変化：")):
        return True
    else:
        rec.errors.append(RecordError(no, s, "not a move line, ignored"))
    return False


_KIF_MOVE = re.compile(r"^\s*([0-9]+)\s+(\S+)")      # ASCII digits: a board diagram has ９ ８ ...


def _read_kif(lines: list[str], rec: Record) -> None:
    header: list[str] = []
    pos: Position | None = None
    last_to = None
    first: int | None = None
    for no, raw in enumerate(lines, 1):
        s = raw.strip()
        if not s or s[0] in "*#&":
            continue
        m = _KIF_MOVE.match(raw)
        if m is None:
            if _other_line(rec, pos, header, raw, s, no):
                break
            continue
        if pos is None:
            pos = _header_position(rec, header, no)
            if pos is None:
                return
        if m.group(2) in _KIF_TO_CSA or m.group(2) == "先日手":
            rec.result = _KIF_TO_CSA.get(m.group(2), "%SENNICHITE")
            break
        if first is None:
            first = int(m.group(1))          # a record from a set-up position may not start at 1
        if int(m.group(1)) != first + pos.ply():
            rec.errors.append(RecordError(no, s, f"move number {m.group(1)}, expected {first + pos.ply()}"))
            break
        body = re.sub(r"同[ 　]*", "同　", raw.rstrip().rstrip("+"))
        if "同" in body and last_to is None:
            rec.errors.append(RecordError(no, s, f"move {pos.ply() + 1} says 同 (same square) "
                                                 "but no move precedes it"))
            break
        usi, new_to, special = shogi.KIF.Parser.parse_move_str(body, last_to)
        if special:
            rec.result = _KIF_TO_CSA.get(special)
            break
        if usi is None:
            rec.errors.append(RecordError(no, s, f"cannot read move {pos.ply() + 1}"))
            break
        if not _play(rec, pos, usi, no, s):
            break
        last_to = new_to
    if pos is None and not rec.errors:
        _header_position(rec, header, len(lines))


_KI2_MOVE = re.compile(r"[▲△][^▲△]*")


def _read_ki2(lines: list[str], rec: Record) -> None:
    header: list[str] = []
    pos: Position | None = None
    board: cshogi.Board | None = None
    for no, raw in enumerate(lines, 1):
        s = raw.strip().replace("☗", "▲").replace("☖", "△")
        if not s or s[0] in "*#&":
            continue
        if s[0] not in "▲△":
            if _other_line(rec, pos, header, raw, s, no):
                break
            continue
        if pos is None:
            pos = _header_position(rec, header, no)
            if pos is None:
                return
            board = cshogi.Board(rec.start_sfen)
        for token in _KI2_MOVE.findall(s):
            token = token.strip()
            side = 0 if token[0] == "▲" else 1
            if side != pos.side_to_move():
                rec.errors.append(RecordError(no, token, f"move {pos.ply() + 1} is not for the side to move"))
                return
            try:
                found = cshogi.KI2.Parser.parse_move_str(token, board)
            except (IndexError, AssertionError, ValueError):
                found = []                   # no such legal move, or an ambiguous one
            if len(found) != 1:
                rec.errors.append(RecordError(no, token, f"cannot read move {pos.ply() + 1} (illegal or ambiguous)"))
                return
            if not _play(rec, pos, cshogi.move_to_usi(found[0]), no, token):
                return
    if pos is None and not rec.errors:
        _header_position(rec, header, len(lines))


def _read_csa(lines: list[str], rec: Record) -> None:
    position_lines: list[str] = []
    pos: Position | None = None
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
                    rec.errors.append(RecordError(no, s, f"cannot read the start position ({e})"))
                    return
                pos = _start(rec, sfen, no)
                if pos is None:
                    return
                board = shogi.Board(rec.start_sfen)
            elif s[0] in "+-" and pos is not None:
                if "+-".index(s[0]) != pos.side_to_move():
                    rec.errors.append(RecordError(no, s, f"move {pos.ply() + 1} is not for the side to move"))
                    return
                try:
                    _, usi = shogi.CSA.Parser.parse_move_str(s, board)
                except (ValueError, IndexError, KeyError):
                    rec.errors.append(RecordError(no, s, f"cannot read move {pos.ply() + 1}"))
                    return
                if not _play(rec, pos, usi, no, s):
                    return
                board.push_usi(usi)
            elif s[0] == "%":
                rec.result = s
                return
            elif s == "/":
                return                       # a second game follows: read the first only
            else:
                rec.errors.append(RecordError(no, s, "not a CSA statement"))
                if pos is not None:
                    return
    if pos is None and not rec.errors:
        rec.errors.append(RecordError(len(lines), "", "no start position (PI or P1-P9 and + / -)"))


def _read_usi(lines: list[str], rec: Record) -> None:
    tokens = [(no, t) for no, raw in enumerate(lines, 1) for t in raw.split()]
    i = 0
    if tokens and tokens[0][1] == "position":
        i = 1
    sfen = START_SFEN
    if i < len(tokens) and tokens[i][1] == "startpos":
        i += 1
    elif i < len(tokens) and (tokens[i][1] == "sfen" or "/" in tokens[i][1]):
        i += tokens[i][1] == "sfen"
        fields = [t for _, t in tokens[i:i + 4]]
        n = 4 if len(fields) == 4 and fields[3].isdigit() else 3
        sfen = " ".join(fields[:n])
        i += n
    if i < len(tokens) and tokens[i][1] == "moves":
        i += 1
    pos = _start(rec, sfen, tokens[0][0] if tokens else 1)
    if pos is None:
        return
    for no, t in tokens[i:]:
        if not _play(rec, pos, t, no, t):
            return


# --- writing -------------------------------------------------------------------------------
def _cshogi_moves(rec: Record) -> list[int]:
    board = cshogi.Board(rec.start_sfen)
    out = []
    for m in rec.moves:
        cm = board.move_from_usi(m.usi())
        out.append(cm)
        board.push(cm)
    return out


def _comment_lines(prefix: str, lines: Iterable[str] | None) -> list[str]:
    return [prefix + line for line in (lines or [])]


def kif_text(rec: Record, comments: Sequence[Sequence[str]] | None = None,
             header_comments: Sequence[str] | None = None) -> str:
    """KIF text of a record; ``comments[i]`` are the comment lines written after move i+1
    (``*`` lines, as ShogiHome, ShogiGUI and Kakinoki read them)."""
    out = []
    if rec.start_sfen == START_SFEN:
        out.append("手合割：平手")
    else:
        out.append(cshogi.KIF.board_to_bod(cshogi.Board(rec.start_sfen)).rstrip("\n"))
    for key, name in zip(("先手", "後手"), rec.names):
        if name:
            out.append(f"{key}：{name}")
    out += _comment_lines("*", header_comments)
    out.append("手数----指手---------消費時間--")
    prev = None
    for i, cm in enumerate(_cshogi_moves(rec)):
        out.append(f"{i + 1:>4} {cshogi.KIF.move_to_kif(cm, prev)}")
        out += _comment_lines("*", comments[i] if comments and i < len(comments) else None)
        prev = cm
    if rec.result in _CSA_TO_KIF:
        out.append(f"{len(rec.moves) + 1:>4} {_CSA_TO_KIF[rec.result]}")
    return "\n".join(out) + "\n"


def csa_text(rec: Record, comments: Sequence[Sequence[str]] | None = None,
             header_comments: Sequence[str] | None = None) -> str:
    """CSA V2.2 text of a record; ``comments[i]`` follow move i+1 as ``'*`` lines."""
    out = ["V2.2"]
    for sign, name in zip("+-", rec.names):
        if name:
            out.append(f"N{sign}{name}")
    out += _comment_lines("'", header_comments)
    board = cshogi.Board(rec.start_sfen)
    out.append(board.csa_pos().rstrip("\n"))
    side = board.turn
    for i, cm in enumerate(_cshogi_moves(rec)):
        out.append("+-"[side] + cshogi.move_to_csa(cm))
        out += _comment_lines("'*", comments[i] if comments and i < len(comments) else None)
        side ^= 1
    if rec.result:
        out.append(rec.result)
    return "\n".join(out) + "\n"
