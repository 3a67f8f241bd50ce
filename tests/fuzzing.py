"""What the fuzz tests share: the example budget, a tally of cases tried, and the mutations
applied to real inputs.

The default budget keeps every fuzz test together well under a minute; ``scripts/fuzz.py``
sets USI_ENGINE_FUZZ_EXAMPLES to run the same properties with many more cases and reads
``CASES`` to print how many each reader was given.
"""

from __future__ import annotations

import os
from collections import Counter

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("USI_ENGINE_FUZZ_EXAMPLES", "40"))
CASES: Counter = Counter()  # reader -> cases tried in this process


def fuzz_settings(scale: float = 1.0):
    """Hypothesis settings for one fuzz property: `scale` times the budget, no deadline (a
    shared machine's timing is no property of the reader), nothing stored between runs."""
    return settings(
        max_examples=max(1, int(EXAMPLES * scale)),
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        derandomize=False,
    )


def text_mutation(text: str, draw) -> str:
    """`text` with one to four edits of the kinds a damaged or hand-edited file shows."""
    lines = text.split("\n")
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(
            st.sampled_from(["drop", "dup", "swap", "cut", "insert", "replace", "truncate", "junkline"])
        )
        i = draw(st.integers(0, max(0, len(lines) - 1)))
        line = lines[i] if lines else ""
        if kind == "drop" and lines:
            del lines[i]
        elif kind == "dup" and lines:
            lines.insert(i, line)
        elif kind == "swap" and len(lines) > 1:
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "cut" and lines:
            k = draw(st.integers(0, len(line)))
            lines[i] = line[:k]
        elif kind == "insert" and lines:
            k = draw(st.integers(0, len(line)))
            lines[i] = line[:k] + draw(st.text(max_size=8)) + line[k:]
        elif kind == "replace" and lines and line:
            k = draw(st.integers(0, len(line) - 1))
            lines[i] = line[:k] + draw(st.characters()) + line[k + 1 :]
        elif kind == "truncate":
            lines = lines[:i]
        else:
            lines.insert(i, draw(st.text(max_size=40)))
    return "\n".join(lines)


def byte_mutation(data: bytes, draw) -> bytes:
    """`data` truncated, or with one to eight bits flipped, or bytes overwritten."""
    kind = draw(st.sampled_from(["truncate", "flip", "overwrite"]))
    if kind == "truncate" or not data:
        return data[: draw(st.integers(0, max(0, len(data) - 1)))]
    buf = bytearray(data)
    if kind == "flip":
        for _ in range(draw(st.integers(1, 8))):
            bit = draw(st.integers(0, 8 * len(buf) - 1))
            buf[bit // 8] ^= 1 << (bit % 8)
    else:
        at = draw(st.integers(0, len(buf) - 1))
        junk = draw(st.binary(min_size=1, max_size=16))
        buf[at : at + len(junk)] = junk
    return bytes(buf)
