"""Opening books in YaneuraOu's `.db` text format: read (whole or on the fly), choose a
move as YaneuraOu does, write, and build (`usi-engine makebook`, makebook.py).  Apery's
binary `.bin` books are read too (apery.py; `Book.open` takes either).

>>> from usi_engine.book import Book                         # doctest: +SKIP
>>> book = Book.open("book/user_book1.db")                   # doctest: +SKIP
>>> choice = book.probe(Position())                          # doctest: +SKIP
>>> choice.move, choice.value, choice.depth, choice.ponder   # doctest: +SKIP
('2g2f', 42, 20, '8c8d')

Importing this package is cheap (standard library only): the engine declares the book
options at `usi`, and a Position is built only when a move is chosen.  docs/book.md
describes the format, the options and how to build a book.
"""

from .apery import AperyBook, apery_key
from .book import Book, OnTheFlyBook
from .format import HEADER, BookError, BookMove, write_book
from .select import BookChoice, BookSettings
from .sfen import book_key, flip_key, flip_move, normalize_hand

__all__ = [
    "Book",
    "OnTheFlyBook",
    "AperyBook",
    "apery_key",
    "BookMove",
    "BookError",
    "BookChoice",
    "BookSettings",
    "HEADER",
    "write_book",
    "book_key",
    "flip_key",
    "flip_move",
    "normalize_hand",
]
