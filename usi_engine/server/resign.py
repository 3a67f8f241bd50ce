"""The resign rule: resign once the score stayed at or below -ResignValue for a few searches.

One bad score is not enough: a single search can misjudge a position (a horizon effect),
so the rule waits for RESIGN_STREAK searches in a row.
"""

from __future__ import annotations

from .info import score_as_cp

NEVER_RESIGN = 99999  # ResignValue at this value: never resign
RESIGN_STREAK = 2  # resign when this many searches in a row end below -ResignValue


class ResignRule:
    def __init__(self) -> None:
        self.streak = 0

    def reset(self) -> None:
        """A new game (usinewgame, gameover)."""
        self.streak = 0

    def should_resign(self, info, resign_value: int) -> bool:
        """Record the final IterationInfo of a search; True when it is time to resign."""
        score = score_as_cp(info)
        if resign_value >= NEVER_RESIGN or score is None:
            return False
        self.streak = self.streak + 1 if score <= -resign_value else 0
        return self.streak >= RESIGN_STREAK
