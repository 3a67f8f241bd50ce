"""Tests that run a search with some of its constants (core/params.py) set otherwise."""

import contextlib

from usi_engine.core.params import INDEX, defaults


@contextlib.contextmanager
def search_constants(searcher, **values):
    """The searcher's constants at their defaults but for `values` for the block (yielding
    the whole list), and at their defaults again after it, whatever the block raised."""
    sp = defaults()
    for name, value in values.items():
        sp[INDEX[name]] = value
    searcher.configure(search_params=sp)
    try:
        yield sp
    finally:
        searcher.configure(search_params=defaults())
