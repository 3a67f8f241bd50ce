"""A tqdm progress bar, or a silent stand-in when none is wanted (tests, logs)."""
from __future__ import annotations


class NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def progress_bar(total: int, show: bool = True, **kwargs):
    """tqdm counting positions (its rate column is positions/s), or NoBar."""
    if not show:
        return NoBar()
    from tqdm import tqdm
    return tqdm(total=total, unit="pos", unit_scale=True, dynamic_ncols=True, **kwargs)
