"""Reading a text file that a user names on a command line (an opening list, a list of
SFENs): one place that turns "missing", "unreadable" and "not text" into a ValueError
naming the file, so that every command refuses such a file the same way."""

from __future__ import annotations


def read_text_lines(path: str, what: str) -> list[str]:
    """The lines of the UTF-8 text file `path`; ValueError `"{path}: ..."` when it cannot
    be read or is not text (`what` says what the file should hold, e.g. "openings")."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise ValueError(f"{path}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a text file of {what} (not UTF-8)") from None
