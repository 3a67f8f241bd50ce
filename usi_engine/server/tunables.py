"""The search's tunable constants as a tuner sees them (core/params.py's ``PARAMS``).

In tuning mode the engine declares each constant as a USI spin option named
``Tune_<Name>`` (a clearly marked group), answers shogiarena's ``usi_tunables``
command with the table as JSON, and maps a ``setoption`` back to the table's index.
This module only formats and parses; protocol.py and options.py wire it in.
Pure Python: importing it must not import numba.

shogiarena's form (``shogiarena.usi_tunables.v1``): one line
``info string shogiarena_tunables_json {"schema_version": ..., "tunables": [...]}``,
each tunable ``{"id", "option", "value_type": "int", "encoding": "integer",
"default", "min", "max", "schedule": {"c_end", "r_end"}}``, then ``usi_tunablesok``.
"""

from __future__ import annotations

import json
import re
from typing import Mapping, Sequence

from ..core.params import PARAMS, Param

PREFIX = "Tune_"          # option names of the tunables: Tune_RazorMargin
R_END = 0.002             # fishtest's and shogiarena's default SPSA learning rate at the end
SCHEMA = "shogiarena.usi_tunables.v1"
MANIFEST_TAG = "shogiarena_tunables_json"
USI_COMMAND = "usi_tunables"
USI_DONE = "usi_tunablesok"


def option_name(param: Param) -> str:
    """The USI option name of ``param`` in tuning mode."""
    return PREFIX + param.name


def usi_option_lines(params: Sequence[Param] = PARAMS) -> list[str]:
    """``option name Tune_X type spin default D min LO max HI`` for each tunable."""
    return [f"option name {option_name(p)} type spin default {p.default} min {p.lo} max {p.hi}"
            for p in params]


def manifest(params: Sequence[Param] = PARAMS, r_end: float = R_END) -> dict:
    """The ``shogiarena.usi_tunables.v1`` manifest of the table (c_end = ``step``)."""
    return {"schema_version": SCHEMA,
            "tunables": [{"id": p.name, "option": option_name(p), "value_type": "int",
                          "encoding": "integer", "default": p.default, "min": p.lo, "max": p.hi,
                          "schedule": {"c_end": p.step, "r_end": r_end}} for p in params]}


def usi_tunables_lines(params: Sequence[Param] = PARAMS) -> list[str]:
    """The answer to ``usi_tunables``: the manifest on one ASCII line, then ``usi_tunablesok``."""
    text = json.dumps(manifest(params), separators=(",", ":"), ensure_ascii=True)
    return [f"info string {MANIFEST_TAG} {text}", USI_DONE]


_INDEX = {option_name(p).lower(): i for i, p in enumerate(PARAMS)}


def is_tunable(name: str) -> bool:
    """True if ``name`` (any case) is a tunable's option name."""
    return name.strip().lower() in _INDEX


def parse_setoption(name: str, value: str, params: Sequence[Param] = PARAMS) -> tuple[int, int]:
    """``(index in the table, value)`` of ``setoption name NAME value VALUE``.

    Names are case-insensitive.  ValueError names what is wrong: an unknown name, a
    value that is not an integer, or one outside ``[lo, hi]``.
    """
    index = {option_name(p).lower(): i for i, p in enumerate(params)}.get(name.strip().lower())
    if index is None:
        raise ValueError(f"{name}: not a tunable (they are named {PREFIX}<Name>)")
    p = params[index]
    try:
        number = int(value.strip())
    except ValueError:
        raise ValueError(f"{option_name(p)}: {value.strip()!r} is not an integer") from None
    if not p.lo <= number <= p.hi:
        raise ValueError(f"{option_name(p)}: {number} is outside {p.lo}..{p.hi}")
    return index, number


def apply_setoption(values: list[int], name: str, value: str,
                    params: Sequence[Param] = PARAMS) -> int:
    """Set ``values[index]`` from a ``setoption``; returns the index.  On ValueError
    ``values`` is unchanged (the last good value stays)."""
    index, number = parse_setoption(name, value, params)
    values[index] = number
    return index


def cfg_text(values: Mapping[str, int], comment: str = "") -> str:
    """An engine.cfg ``[options]`` section setting the tunables ``values`` (by Param name)."""
    known = {p.name for p in PARAMS}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(f"not in core/params.py: {', '.join(unknown)}")
    lines = [f"; {line}" for line in comment.splitlines()] + ["[options]"]
    lines += [f"{PREFIX}{name} = {value}" for name, value in values.items()]
    return "\n".join(lines) + "\n"


_PARAM_LINE = re.compile(r'(Param\(\s*"(?P<name>\w+)"\s*,\s*)(?P<default>-?\d+)')


def with_defaults(source: str, values: Mapping[str, int]) -> str:
    """core/params.py's text with the defaults of ``values`` replaced (for a patch)."""
    missing = set(values)

    def replace(match: re.Match) -> str:
        name = match.group("name")
        if name not in values:
            return match.group(0)
        missing.discard(name)
        return f"{match.group(1)}{int(values[name])}"

    text = _PARAM_LINE.sub(replace, source)
    if missing:
        raise ValueError(f"no Param(...) line for: {', '.join(sorted(missing))}")
    return text
