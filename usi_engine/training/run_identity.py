"""When a folder or a checkpoint belongs to the run asked for.

A generation folder (`gensfen.json`) and a training checkpoint each keep the settings that
decide what they hold. A run resumes one only when those settings are the same; otherwise it
stops rather than mix two runs. Settings added after the first runs are left out of the
comparison while unset, so that folders and checkpoints written before them still resume.
"""

from __future__ import annotations

from collections.abc import Iterable


def _unset(value: object) -> bool:
    return value is None or (isinstance(value, (tuple, list, dict)) and not value)


def without_unset(settings: dict, later: Iterable[str]) -> dict:
    """`settings` less those of `later` (the settings added after the first runs) left unset:
    None or empty."""
    later = frozenset(later)
    return {k: v for k, v in settings.items() if not (k in later and _unset(v))}


def differing_settings(old: dict, new: dict) -> list[str]:
    """The names of the settings whose values differ between two runs, sorted; a setting one
    of them lacks differs."""
    return sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
