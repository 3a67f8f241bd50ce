"""Game analysis: every position of a record evaluated, every move judged, and the result
as a graph (PNG), an annotated record (KIF, CSA), an interactive HTML page and JSON.
See docs/analysis.md.

    from usi_engine import Engine, Limit, read_record
    from usi_engine.analysis import analyse_game, plot, write_html, write_kif

    record = read_record("game.kif")
    analysis = analyse_game(record, Limit(time=1), lambda: Engine({"USI_Hash": 16}))
"""

from .game import (
    BLUNDER_CP,
    CLIP_CP,
    INACCURACY_CP,
    MISTAKE_CP,
    GameAnalysis,
    MoveAnalysis,
    PositionEval,
    analyse_game,
    classify,
    evaluate_positions,
    judge,
)
from .graph import plot
from .html import html_report, write_html
from .report import annotated_csa, annotated_kif, text_summary, to_json, write_json, write_kif

__all__ = [
    "analyse_game",
    "evaluate_positions",
    "judge",
    "classify",
    "GameAnalysis",
    "MoveAnalysis",
    "PositionEval",
    "plot",
    "annotated_kif",
    "annotated_csa",
    "write_kif",
    "write_json",
    "to_json",
    "text_summary",
    "html_report",
    "write_html",
    "INACCURACY_CP",
    "MISTAKE_CP",
    "BLUNDER_CP",
    "CLIP_CP",
]
