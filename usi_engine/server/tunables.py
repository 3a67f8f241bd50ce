"""The search's tunable constants as a tuner sees them (core/params.py's ``PARAMS``).

In tuning mode the engine declares each constant as a USI spin option named
``Tune_<Name>`` (options.py: tunable_options, a clearly marked group; ``setoption``
checks the value against the table's range there) and answers shogiarena's
``usi_tunables`` command with the table as JSON (protocol.py). match/tune.py writes a
tuning run's result back into core/params.py's text (``with_defaults``).
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

PREFIX = "Tune_"  # option names of the tunables: Tune_RazorMargin
R_END = 0.002  # fishtest's and shogiarena's default SPSA learning rate at the end
SCHEMA = "shogiarena.usi_tunables.v1"
MANIFEST_TAG = "shogiarena_tunables_json"
USI_DONE = "usi_tunablesok"


def option_name(param: Param) -> str:
    """The USI option name of ``param`` in tuning mode."""
    return PREFIX + param.name


def manifest(params: Sequence[Param] = PARAMS, r_end: float = R_END) -> dict:
    """The ``shogiarena.usi_tunables.v1`` manifest of the table (c_end = ``step``)."""
    return {
        "schema_version": SCHEMA,
        "tunables": [
            {
                "id": p.name,
                "option": option_name(p),
                "value_type": "int",
                "encoding": "integer",
                "default": p.default,
                "min": p.lo,
                "max": p.hi,
                "schedule": {"c_end": p.step, "r_end": r_end},
            }
            for p in params
        ],
    }


def usi_tunables_lines(params: Sequence[Param] = PARAMS) -> list[str]:
    """The answer to ``usi_tunables``: the manifest on one ASCII line, then ``usi_tunablesok``."""
    text = json.dumps(manifest(params), separators=(",", ":"), ensure_ascii=True)
    return [f"info string {MANIFEST_TAG} {text}", USI_DONE]


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
