"""What an analysis writes: JSON for scripts, the record annotated with comments (KIF and
CSA), and a plain-text summary for the terminal.

The comments follow ShogiHome's conventions, which ShogiGUI and Kakinoki-style readers
show as plain comments: after each move, ``#評価値=`` (black's view, centipawns; ShogiHome
draws its own graph from it), ``#読み筋=`` (the engine's line from there), ``#詰み=`` for a
mate, and a tag ``【悪手】`` (blunder), ``【疑問手】`` (mistake) or ``【緩手】`` (inaccuracy)
with the loss and the engine's move in English on the next line.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import cshogi
import cshogi.KI2

from ..move import Move
from ..record import csa_text, kif_text
from .game import BLUNDER_CP, CLIP_CP, INACCURACY_CP, MISTAKE_CP, GameAnalysis, MoveAnalysis, PositionEval

JAPANESE_LABELS = {"blunder": "悪手", "mistake": "疑問手", "inaccuracy": "緩手"}
PV_SHOWN = 8  # plies of a PV written into a comment


def ki2_line(sfen: str, moves: list[Move], limit: int = PV_SHOWN) -> str:
    """Moves in Japanese notation (▲７六歩△３四歩...) from a position given as SFEN."""
    board = cshogi.Board(sfen)
    out = []
    for m in moves[:limit]:
        cm = board.move_from_usi(m.usi())
        if not board.is_legal(cm):
            break  # an engine's PV can run into a repetition it treats as legal
        out.append(cshogi.KI2.move_to_ki2(cm, board).replace("\u3000", ""))
        board.push(cm)
    return "".join(out)


def position_comment(p: PositionEval, engine: str) -> list[str]:
    """ShogiHome-style lines about one position."""
    if p.checkmate:
        return ["#詰み=" + ("後手勝ち" if p.turn == 0 else "先手勝ち")]
    if p.score is None:
        return [f"#解析エラー={p.error}"] if p.error else []
    lines = []
    if p.score.is_mate:
        black_wins = (p.score.mate > 0) == (p.turn == 0)
        lines.append(f"#詰み={'先手勝ち' if black_wins else '後手勝ち'}:{abs(p.score.mate)}手")
    lines.append(f"#評価値={p.black_cp}")
    if p.pv:
        lines.append(f"#読み筋={ki2_line(p.sfen, p.pv)}")
    lines.append(f"#深さ={p.depth}")
    lines.append(f"#エンジン={engine}")
    return lines


def move_comment(m: MoveAnalysis, before: PositionEval, after: PositionEval, engine: str) -> list[str]:
    lines = []
    if m.label:
        best = ki2_line(before.sfen, [m.best]) if m.best else "?"
        lines.append(f"【{JAPANESE_LABELS[m.label]}】 最善手 {best}")
        lines.append(f"{m.label}: loses {m.loss} against the engine's {m.best}")
    return lines + position_comment(after, engine)


def comments(analysis: GameAnalysis) -> tuple[list[str], list[list[str]]]:
    """(header comment lines, comment lines after each move)."""
    ev = analysis.positions
    header = [
        f"解析 {analysis.engine} ({limit_text(analysis)}); "
        f"thresholds: inaccuracy {INACCURACY_CP}, mistake {MISTAKE_CP}, blunder {BLUNDER_CP} cp"
    ]
    header += position_comment(ev[0], analysis.engine)
    per_move = [move_comment(m, ev[i], ev[i + 1], analysis.engine) for i, m in enumerate(analysis.moves)]
    return header, per_move


def limit_text(analysis: GameAnalysis) -> str:
    lim = analysis.limit
    parts = [
        f"{lim.time:g} s" if lim.time else "",
        f"depth {lim.depth}" if lim.depth else "",
        f"{lim.nodes} nodes" if lim.nodes else "",
    ]
    return ", ".join(p for p in parts if p) + " per position"


def annotated_kif(analysis: GameAnalysis) -> str:
    header, per_move = comments(analysis)
    return kif_text(analysis.record, per_move, header)


def annotated_csa(analysis: GameAnalysis) -> str:
    header, per_move = comments(analysis)
    return csa_text(analysis.record, per_move, header)


def write_kif(analysis: GameAnalysis, path: str | Path) -> None:
    """Shift-JIS for .kif (what GUIs expect), UTF-8 for .kifu."""
    path = Path(path)
    encoding = "utf-8" if path.suffix.lower() == ".kifu" else "cp932"
    path.write_text(annotated_kif(analysis), encoding=encoding, errors="replace")


def to_json(analysis: GameAnalysis) -> dict:
    rec = analysis.record
    return {
        "engine": analysis.engine,
        "limit": asdict(analysis.limit),
        "thresholds_cp": {
            "inaccuracy": INACCURACY_CP,
            "mistake": MISTAKE_CP,
            "blunder": BLUNDER_CP,
            "clip": CLIP_CP,
        },
        "record": {
            "format": rec.format,
            "start_sfen": rec.start_sfen,
            "names": rec.names,
            "result": rec.result,
            "moves": [m.usi() for m in rec.moves],
        },
        "errors": analysis.errors,
        "summary": analysis.summary(),
        "positions": [
            {
                "ply": p.ply,
                "sfen": p.sfen,
                "black_cp": p.black_cp,
                "score": str(p.score) if p.score else None,
                "pv": [m.usi() for m in p.pv],
                "depth": p.depth,
                "nodes": p.nodes,
                "checkmate": p.checkmate,
                "error": p.error,
            }
            for p in analysis.positions
        ],
        "moves": [
            {
                "ply": m.ply,
                "move": m.move.usi(),
                "side": "black" if m.side == 0 else "white",
                "line": m.line,
                "eval_before": m.eval_before,
                "eval_after": m.eval_after,
                "best": m.best.usi() if m.best else None,
                "best_pv": [x.usi() for x in m.best_pv],
                "loss": m.loss,
                "class": m.label,
            }
            for m in analysis.moves
        ],
    }


def write_json(analysis: GameAnalysis, path: str | Path) -> None:
    Path(path).write_text(
        json.dumps(to_json(analysis), ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )


def text_summary(analysis: GameAnalysis) -> str:
    """The per-player summary and the labelled moves, for the terminal."""
    out = [f"{len(analysis.moves)} moves analysed by {analysis.engine} ({limit_text(analysis)})"]
    for key, s in analysis.summary().items():
        avg = "-" if s["average_loss"] is None else f"{s['average_loss']:.0f}"
        agree = "-" if s["best_move_agreement"] is None else f"{100 * s['best_move_agreement']:.0f}%"
        out.append(
            f"  {key:5} {s['name'] or '':20.20} average loss {avg:>4} cp, engine's move {agree:>4}, "
            f"blunders {s['blunder']}, mistakes {s['mistake']}, inaccuracies {s['inaccuracy']}"
        )
    for m in analysis.moves:
        if m.label:
            out.append(
                f"  move {m.ply:3d} {'black' if m.side == 0 else 'white'} {m.move.usi():6} "
                f"{m.label:10} loss {m.loss:5d}  best {m.best}"
            )
    out += [f"  error: {e}" for e in analysis.errors]
    return "\n".join(out)
