"""Progress on stderr, one way for every command.

* :func:`progress_bar` -- a tqdm bar counting items (positions by default), or a silent
  :class:`NoBar` when none is wanted (``--no-progress``, tests) or tqdm is not installed;
* :class:`StatusLine` -- a line of text (a match's score, a tuner's values) redrawn in
  place on a terminal, and written as lines of their own elsewhere (a log, a pipe).

Standard library only: tqdm is imported when a bar is shown.
"""

from __future__ import annotations

import sys
from typing import Any, Optional


class NoBar:
    """What :func:`progress_bar` returns when nothing is shown: ``update`` and ``close``
    do nothing."""

    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def progress_bar(total: int, show: bool = True, **kwargs: Any) -> Any:
    """A tqdm bar on stderr over ``total`` items, or :class:`NoBar` when ``show`` is false
    or tqdm is missing.  The defaults (``unit="pos"``, ``unit_scale=True``: 12.3kpos,
    ``dynamic_ncols=True``) give way to ``kwargs`` (``desc``, ``leave``, ``smoothing``...)."""
    if not show:
        return NoBar()
    try:
        from tqdm import tqdm
    except ImportError:
        return NoBar()
    options = {"unit": "pos", "unit_scale": True, "dynamic_ncols": True, **kwargs}
    return tqdm(total=total, **options)


class StatusLine:
    """A progress line on stderr: on a terminal each :meth:`show` redraws it in place and
    :meth:`done` ends it with a newline; elsewhere each shown line is a line of its own.
    ``quiet`` shows nothing.  The stream is ``sys.stderr`` as it is at each write."""

    def __init__(self, quiet: bool = False) -> None:
        self.quiet = quiet
        self.tty = sys.stderr.isatty()

    def show(self, line: str, plain: Optional[str] = None, log: bool = True) -> None:
        """Redraw ``line`` on a terminal; elsewhere write ``plain`` (``line`` when None) as a
        line, or nothing when ``log`` is false (a caller that thins its log)."""
        if self.quiet:
            return
        if self.tty:
            sys.stderr.write("\r\033[K" + line)
        elif log:
            sys.stderr.write((line if plain is None else plain) + "\n")
        sys.stderr.flush()

    def done(self) -> None:
        """End the redrawn line (a terminal only), before anything else is printed."""
        if self.tty and not self.quiet:
            sys.stderr.write("\n")
