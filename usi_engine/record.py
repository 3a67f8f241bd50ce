"""Game records in and out: KIF (Shift-JIS or UTF-8), KI2, CSA, and SFEN/USI move lists.

The public record API.  ``usi_engine.notation`` does the text (python-shogi and cshogi read
the single moves and the headers; reading walks a record line by line so that a broken line
or an illegal move is reported with its line number, and the moves before it are kept:
``Record.errors``).  Every move is checked by ``Position``.  ``Record`` is defined beside
``Position`` (each makes the other) and is exported here.

>>> rec = parse_record("position startpos moves 7g7f 3c3d 8h2b+")
>>> rec.format, rec.moves, rec.errors
('usi', [Move('7g7f'), Move('3c3d'), Move('8h2b+')], [])
>>> print(kif_text(rec).splitlines()[-1])
   3 ２二角成(88)
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from .notation import CSA_TO_KIF, FORMATS, RecordError, csa, decode, detect_format, kif, read_file, read_into
from .position import Position, Record

__all__ = [
    "FORMATS",
    "Record",
    "RecordError",
    "csa_text",
    "decode",
    "detect_format",
    "kif_text",
    "parse_record",
    "read_record",
]


def read_record(path: str | Path, fmt: str | None = None) -> Record:
    """Read a record file; the format comes from ``fmt``, the extension, or the content."""
    text, fmt = read_file(path, fmt)
    return parse_record(text, fmt)


def parse_record(text: str, fmt: str | None = None) -> Record:
    """Read a record from text.  Problems are collected in ``Record.errors`` (the moves
    before the first bad one are kept); ValueError for an unknown format."""
    rec = Record()
    read_into(rec, text, fmt, Position)
    return rec


def kif_text(
    rec: Record, comments: Sequence[Sequence[str]] | None = None, header_comments: Sequence[str] | None = None
) -> str:
    """KIF text of a record; ``comments[i]`` are the comment lines written after move i+1
    (``*`` lines, as ShogiHome, ShogiGUI and Kakinoki read them)."""
    return kif(
        rec.start_sfen,
        rec.moves,
        names=rec.names,
        header_comments=header_comments,
        comments=comments,
        ending=CSA_TO_KIF.get(rec.result),
    )


def csa_text(
    rec: Record, comments: Sequence[Sequence[str]] | None = None, header_comments: Sequence[str] | None = None
) -> str:
    """CSA V2.2 text of a record; ``comments[i]`` follow move i+1 as ``'*`` lines."""
    return csa(
        rec.start_sfen,
        rec.moves,
        names=rec.names,
        header_comments=header_comments,
        comments=comments,
        ending=rec.result,
    )
