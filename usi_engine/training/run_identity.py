"""When a folder or a checkpoint belongs to the run asked for.

A generation folder (`gensfen.json`) and a training checkpoint each keep the settings that
decide what they hold. A run resumes one only when those settings are the same; otherwise it
stops rather than mix two runs. Settings added after the first runs are left out of the
comparison while unset, so that folders and checkpoints written before them still resume.
A path is the file it names: a teacher's network under `runs/` reached through another
checkout whose `runs` is a link to the same folder is the same setting.
"""

from __future__ import annotations

import os
from collections.abc import Iterable


def _unset(value: object) -> bool:
    return value is None or (isinstance(value, (tuple, list, dict)) and not value)


def without_unset(settings: dict, later: Iterable[str]) -> dict:
    """`settings` less those of `later` (the settings added after the first runs) left unset:
    None or empty."""
    later = frozenset(later)
    return {k: v for k, v in settings.items() if not (k in later and _unset(v))}


def _real_paths(value: object) -> object:
    """`value` with each absolute path in it that names an existing file or folder written as
    its real path (links resolved); lists and tuples alike as lists."""
    if isinstance(value, str):
        return os.path.realpath(value) if os.path.isabs(value) and os.path.exists(value) else value
    if isinstance(value, (list, tuple)):
        return [_real_paths(v) for v in value]
    if isinstance(value, dict):
        return {k: _real_paths(v) for k, v in value.items()}
    return value


def differing_settings(old: dict, new: dict) -> list[str]:
    """The names of the settings whose values differ between two runs, sorted; a setting one
    of them lacks differs. Two paths to one file are one value (`_real_paths`)."""
    return sorted(k for k in set(old) | set(new) if _real_paths(old.get(k)) != _real_paths(new.get(k)))
