"""USI `info` lines from the searcher's IterationInfo records."""

from __future__ import annotations

MATE_SCORE_CP = 100000  # a mate score, in centipawns, where one number is needed


def format_info(info, multipv_total: int = 1) -> str:
    """An IterationInfo as a USI `info` line (`multipv k` only when several lines are shown)."""
    parts = ["info", "depth", str(int(info.depth)), "seldepth", str(int(max(info.seldepth, info.depth)))]
    if multipv_total > 1:
        parts += ["multipv", str(int(info.multipv))]
    if info.score_mate is not None:
        parts += ["score", "mate", str(int(info.score_mate))]
    else:
        parts += ["score", "cp", str(int(info.score_cp or 0))]
    if info.bound in ("lowerbound", "upperbound"):
        parts.append(info.bound)
    parts += [
        "nodes",
        str(int(info.nodes)),
        "nps",
        str(int(info.nps)),
        "time",
        str(int(info.time_ms)),
        "hashfull",
        str(int(info.hashfull)),
    ]
    if info.pv:
        parts += ["pv"] + [str(m) for m in info.pv]
    return " ".join(parts)


def empty_info(best: str, time_ms: int) -> str:
    """The final info line when no iteration finished (the move is a fallback)."""
    return f"info depth 0 seldepth 0 score cp 0 nodes 0 nps 0 time {int(time_ms)} hashfull 0 pv {best}"


def score_as_cp(info) -> int | None:
    """The score of an IterationInfo in centipawns, a mate as +-MATE_SCORE_CP; None without one."""
    if info is None:
        return None
    if info.score_mate is not None:
        return MATE_SCORE_CP if info.score_mate > 0 else -MATE_SCORE_CP
    return info.score_cp
