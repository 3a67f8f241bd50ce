"""The analysis as one self-contained HTML page: the evaluation graph, the board at the
selected move with the engine's line drawn as arrows, and the move list with each move's
class.  A click on the graph or on a move, or the keys Left / Right / Home / End, select a
position; ``#ply=N`` in the address opens the page at move N.

Everything is inline (SVG, CSS and a short script, no font or library from the network),
so the file works offline and as an e-mail attachment.  The boards are drawn here, one per
position, by ``usi_engine.svg`` (about 6 KB each, in inert ``<template>`` elements), and
the script only swaps them: the page shows exactly what the Python API draws.

Hooks for tools: every entry of the move list is an element with ``data-ply="N"`` (N = 1
for the first move); ``#board`` holds the board shown and says which in ``data-show``.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

from .. import svg
from ..core.types import BLACK
from .game import CLIP_CP, GameAnalysis, PositionEval
from .graph import GRAPH_CLIP_CP, MARKERS, axis_top
from .report import JAPANESE_LABELS, ki2_line, limit_text

# the graph's drawing area, in SVG user units (it scales with the page)
GRAPH_W, GRAPH_H = 640, 200
GRAPH_LEFT, GRAPH_RIGHT, GRAPH_TOP, GRAPH_BOTTOM = 44, 8, 8, 22
PV_ARROWS = 3  # plies of the engine's line drawn on the board
# the move list's marks, as in chess annotation (and lichess)
GLYPHS = {"blunder": "??", "mistake": "?", "inaccuracy": "?!"}


def html_report(analysis: GameAnalysis, title: str | None = None) -> str:
    """The page as text (UTF-8 when written)."""
    names = [n or side for n, side in zip(analysis.record.names, ("black", "white"))]
    title = title or f"{names[0]} vs {names[1]}: analysis by {analysis.engine}"
    boards = [_board(analysis, k) for k in range(len(analysis.positions))]
    data = {
        "plies": [_ply_info(analysis, k) for k in range(len(analysis.positions))],
        "graph": {"x0": GRAPH_LEFT, "dx": _dx(analysis)},
    }
    # "</" would end the script element early; "<\/" is the same JSON string
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
    return _PAGE.format(
        title=html.escape(title),
        css=_CSS,
        script=_SCRIPT,
        payload=payload,
        heading=html.escape(title),
        about=html.escape(_about(analysis)),
        summary=_summary_table(analysis),
        graph=_graph(analysis),
        moves=_move_list(analysis),
        first_board=boards[-1],
        last=len(boards) - 1,
        # inert templates, one per position: SVG text as it is (no escaping, as JSON would need)
        boards="".join(f"<template>{b}</template>" for b in boards),
    )


def write_html(analysis: GameAnalysis, path: str | Path, title: str | None = None) -> None:
    Path(path).write_text(html_report(analysis, title), encoding="utf-8")


# --- per position ---------------------------------------------------------------------------
def _board(analysis: GameAnalysis, k: int) -> str:
    """Position k (after k moves): the move that led there, a check, and the engine's line."""
    from ..position import Position

    p = analysis.positions[k]
    pos = Position(p.sfen)
    last = analysis.record.moves[k - 1] if k else None
    return svg.board(
        pos, lastmove=last, check=svg.checked_king(pos), arrows=svg.pv_arrows(p.pv, p.turn, PV_ARROWS)
    )


def _side_mark(turn: int) -> str:
    return "▲" if turn == BLACK else "△"


def _eval_text(p: PositionEval) -> str:
    if p.checkmate:
        return f"checkmate: {'white' if p.turn == BLACK else 'black'} wins"
    if p.score is None:
        return f"not evaluated ({p.error})" if p.error else "not evaluated"
    if p.score.is_mate:
        winner = "black" if (p.score.mate > 0) == (p.turn == BLACK) else "white"
        return f"{winner} mates in {abs(p.score.mate)} (depth {p.depth})"
    cp = p.black_cp
    clipped = " (clipped)" if abs(cp) == CLIP_CP else ""
    return f"{cp:+d} for black{clipped}, depth {p.depth}"


def _ply_info(analysis: GameAnalysis, k: int) -> dict:
    """What the panel beside the board says about position k."""
    p = analysis.positions[k]
    info = {"eval": _eval_text(p), "pv": ki2_line(p.sfen, p.pv) if p.pv else "", "cp": p.black_cp}
    if k:
        m = analysis.moves[k - 1]
        before = analysis.positions[k - 1]
        info.update(
            move=_move_text(analysis, k),
            usi=m.move.usi(),
            label=m.label,
            loss=m.loss,
            best=ki2_line(before.sfen, [m.best]) if m.best else None,
        )
    return info


def _move_text(analysis: GameAnalysis, k: int) -> str:
    """Move k in Japanese notation (▲７六歩), or its USI text where cshogi cannot say."""
    m = analysis.moves[k - 1]
    return ki2_line(analysis.positions[k - 1].sfen, [m.move]) or _side_mark(m.side) + m.move.usi()


# --- the static parts -----------------------------------------------------------------------
def _about(analysis: GameAnalysis) -> str:
    rec = analysis.record
    result = f", result {rec.result}" if rec.result else ""
    return (
        f"{len(analysis.moves)} moves{result}; analysed by {analysis.engine} ({limit_text(analysis)}). "
        f"Evaluations are centipawns from black's view."
    )


def _summary_table(analysis: GameAnalysis) -> str:
    rows = []
    for key, s in analysis.summary().items():
        avg = "-" if s["average_loss"] is None else f"{s['average_loss']:.0f}"
        agree = "-" if s["best_move_agreement"] is None else f"{100 * s['best_move_agreement']:.0f}%"
        rows.append(
            f"<tr><th>{_side_mark(0 if key == 'black' else 1)} {html.escape(s['name'] or key)}</th>"
            f"<td>{avg}</td><td>{agree}</td><td class='blunder'>{s['blunder']}</td>"
            f"<td class='mistake'>{s['mistake']}</td><td class='inaccuracy'>{s['inaccuracy']}</td></tr>"
        )
    head = (
        "<tr><th></th><th>average loss</th><th>engine's move</th><th>blunders ??</th>"
        "<th>mistakes ?</th><th>inaccuracies ?!</th></tr>"
    )
    return f"<table class='summary'>{head}{''.join(rows)}</table>"


def _move_list(analysis: GameAnalysis) -> str:
    items = []
    for m in analysis.moves:
        label = m.label or ""
        glyph = f"<span class='glyph'>{GLYPHS[label]}</span>" if label else ""
        tip = f"{m.move.usi()}" + (f": {label} ({JAPANESE_LABELS[label]}), loss {m.loss}" if label else "")
        items.append(
            f"<li data-ply='{m.ply}' class='move {label}' title='{html.escape(tip, True)}'>"
            f"<span class='no'>{m.ply}</span>{html.escape(_move_text(analysis, m.ply))}{glyph}</li>"
        )
    return "".join(items)


def _dx(analysis: GameAnalysis) -> float:
    return (GRAPH_W - GRAPH_LEFT - GRAPH_RIGHT) / max(1, len(analysis.positions) - 1)


def _graph(analysis: GameAnalysis) -> str:
    """Black's evaluation over the game, the same scale and marks as the PNG graph."""
    dx = _dx(analysis)
    values = [
        (p.ply, max(-GRAPH_CLIP_CP, min(GRAPH_CLIP_CP, p.black_cp)))
        for p in analysis.positions
        if p.black_cp is not None
    ]
    top = axis_top([v for _, v in values])
    mid = GRAPH_TOP + (GRAPH_H - GRAPH_TOP - GRAPH_BOTTOM) / 2
    scale = (GRAPH_H - GRAPH_TOP - GRAPH_BOTTOM) / 2 / (top * 1.04)  # the PNG's margin too

    def x(ply):
        return GRAPH_LEFT + ply * dx

    def y(cp):
        return mid - cp * scale

    right = GRAPH_W - GRAPH_RIGHT
    parts = [
        f"<rect x='{GRAPH_LEFT}' y='{GRAPH_TOP}' width='{right - GRAPH_LEFT}' "
        f"height='{GRAPH_H - GRAPH_TOP - GRAPH_BOTTOM}' class='plot'/>"
    ]
    if values:
        line = " ".join(f"{x(ply):.1f},{y(v):.1f}" for ply, v in values)
        area = f"{x(values[0][0]):.1f},{mid:.1f} {line} {x(values[-1][0]):.1f},{mid:.1f}"
        parts.append(
            f"<clipPath id='above'><rect x='0' y='0' width='{GRAPH_W}' height='{mid:.1f}'/></clipPath>"
            f"<clipPath id='below'><rect x='0' y='{mid:.1f}' width='{GRAPH_W}' height='{GRAPH_H}'/></clipPath>"
            f"<polygon points='{area}' class='black-ahead' clip-path='url(#above)'/>"
            f"<polygon points='{area}' class='white-ahead' clip-path='url(#below)'/>"
            f"<polyline points='{line}' class='eval'/>"
        )
    parts.append(f"<line x1='{GRAPH_LEFT}' x2='{right}' y1='{mid:.1f}' y2='{mid:.1f}' class='zero'/>")
    for cp in (top, 0, -top):
        parts.append(
            f"<text x='{GRAPH_LEFT - 4}' y='{y(cp):.1f}' class='axis' text-anchor='end' "
            f"dominant-baseline='central'>{cp:+.0f}</text>"
        )
    step = 10 if len(analysis.moves) <= 150 else 20
    for ply in range(0, len(analysis.positions), step):
        parts.append(
            f"<text x='{x(ply):.1f}' y='{GRAPH_H - 6}' class='axis' text-anchor='middle'>{ply}</text>"
        )
    for m in analysis.moves:
        if m.label and m.eval_after is not None:
            color, _, _ = MARKERS[m.label]
            cp = max(-GRAPH_CLIP_CP, min(GRAPH_CLIP_CP, m.eval_after))
            parts.append(
                f"<circle cx='{x(m.ply):.1f}' cy='{y(cp):.1f}' r='{5 if m.label == 'blunder' else 4}' "
                f"fill='{color}' class='marker'><title>{m.ply}: {m.label}, loss {m.loss}</title></circle>"
            )
    parts.append(
        f"<line id='cursor' x1='{x(len(analysis.moves)):.1f}' x2='{x(len(analysis.moves)):.1f}' "
        f"y1='{GRAPH_TOP}' y2='{GRAPH_H - GRAPH_BOTTOM}'/>"
    )
    return (
        f"<svg id='graph' xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {GRAPH_W} {GRAPH_H}' "
        f"role='img' aria-label='evaluation graph'>{''.join(parts)}</svg>"
    )


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>{css}</style>
</head>
<body>
<header><h1>{heading}</h1><p class="about">{about}</p>{summary}</header>
<main>
<section class="left">
<div id="board" data-show="{last}">{first_board}</div>
<nav class="controls">
<button type="button" data-go="first" title="first (Home)">|&#x25C0;</button>
<button type="button" data-go="prev" title="previous (Left)">&#x25C0;</button>
<button type="button" data-go="next" title="next (Right)">&#x25B6;</button>
<button type="button" data-go="last" title="last (End)">&#x25B6;|</button>
</nav>
</section>
<section class="right">
{graph}
<div id="info"><h2 id="info-move"></h2><p id="info-label"></p><p id="info-eval"></p><p id="info-pv"></p></div>
<ol id="moves">{moves}</ol>
</section>
</main>
<footer>Keys: &larr; &rarr; Home End. A click on the graph or a move shows that position. Arrows on the
board: the engine's line from the position shown (1 its move, 2 the reply, ...).</footer>
<div id="boards">{boards}</div>
<script type="application/json" id="report-data">{payload}</script>
<script>{script}</script>
</body>
</html>
"""

_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI','Noto Sans CJK JP','IPAGothic',sans-serif;margin:16px;
color:#1d1d1f;background:#fafaf7}
h1{font-size:1.25em;margin:0 0 4px}
.about{margin:0 0 8px;color:#555}
table.summary{border-collapse:collapse;font-size:.9em;margin-bottom:10px}
table.summary th,table.summary td{padding:2px 10px;text-align:right}
table.summary th:first-child{text-align:left}
main{display:flex;flex-wrap:wrap;gap:20px;align-items:flex-start}
.left{flex:0 0 auto}
#board svg{width:484px;height:auto;display:block}
.controls{display:flex;gap:6px;justify-content:center;margin-top:6px}
.controls button{font-size:1.1em;padding:2px 14px;cursor:pointer}
.right{flex:1 1 420px;min-width:360px;max-width:720px}
#graph{width:100%;height:auto;cursor:pointer;background:#fff;border:1px solid #ddd;display:block}
#graph .plot{fill:#fff}
#graph .black-ahead{fill:#9ecae1;opacity:.6}
#graph .white-ahead{fill:#fdae6b;opacity:.6}
#graph .eval{fill:none;stroke:#08306b;stroke-width:1.4}
#graph .zero{stroke:#444;stroke-width:.8}
#graph .axis{font-size:10px;fill:#555}
#graph #cursor{stroke:#d62728;stroke-width:1.5}
#info{min-height:6.2em;margin:8px 0}
#info h2{font-size:1.1em;margin:0}
#info p{margin:2px 0}
#moves{list-style:none;padding:0;margin:0;display:grid;grid-template-columns:repeat(2,1fr);gap:1px 8px;
max-height:300px;overflow-y:auto;border:1px solid #ddd;background:#fff}
#moves li{padding:2px 6px;cursor:pointer;white-space:nowrap}
#moves li:hover{background:#eef}
#moves li.selected{background:#cfe0ff}
#moves .no{display:inline-block;min-width:2.4em;color:#888;font-size:.85em}
.glyph{margin-left:4px;font-weight:bold}
.blunder,.blunder .glyph{color:#d62728}
.mistake,.mistake .glyph{color:#e6550d}
.inaccuracy,.inaccuracy .glyph{color:#8c8c00}
footer{margin-top:12px;color:#777;font-size:.85em}
"""

# Vanilla JavaScript: the boards are ready-made, the script only picks one
_SCRIPT = """
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var boards = document.querySelectorAll("#boards > template");
  var last = boards.length - 1;
  var board = document.getElementById("board");
  var graph = document.getElementById("graph");
  var cursor = document.getElementById("cursor");
  var entries = document.querySelectorAll("#moves [data-ply]");
  var current = -1;
  function text(id, value) { document.getElementById(id).textContent = value || ""; }
  function select(ply) {
    ply = Math.max(0, Math.min(last, Math.round(ply) || 0));
    if (ply === current) { return; }
    if (current > 0) { entries[current - 1].classList.remove("selected"); }
    current = ply;
    board.textContent = "";
    board.appendChild(boards[ply].content.cloneNode(true));
    board.setAttribute("data-show", String(ply));
    var x = data.graph.x0 + ply * data.graph.dx;
    cursor.setAttribute("x1", x); cursor.setAttribute("x2", x);
    var info = data.plies[ply];
    text("info-move", ply ? ply + ". " + info.move : "Start position");
    text("info-label", info.label ? info.label + ": loses " + info.loss + " cp; the engine preferred " +
         (info.best || "?") : "");
    text("info-eval", "Evaluation: " + info.eval);
    text("info-pv", info.pv ? "Engine's line: " + info.pv : "");
    if (ply > 0) {
      var entry = entries[ply - 1];
      entry.classList.add("selected");
      entry.scrollIntoView({block: "nearest"});
    }
    if (history.replaceState) { history.replaceState(null, "", "#ply=" + ply); }
  }
  graph.addEventListener("click", function (e) {
    var pt = graph.createSVGPoint();
    pt.x = e.clientX; pt.y = e.clientY;
    var p = pt.matrixTransform(graph.getScreenCTM().inverse());
    select((p.x - data.graph.x0) / data.graph.dx);
  });
  document.getElementById("moves").addEventListener("click", function (e) {
    var entry = e.target.closest("[data-ply]");
    if (entry) { select(Number(entry.getAttribute("data-ply"))); }
  });
  var go = {first: function () { return 0; }, prev: function () { return current - 1; },
            next: function () { return current + 1; }, last: function () { return last; }};
  document.querySelector(".controls").addEventListener("click", function (e) {
    var button = e.target.closest("[data-go]");
    if (button) { select(go[button.getAttribute("data-go")]()); }
  });
  var keys = {ArrowLeft: "prev", ArrowRight: "next", Home: "first", End: "last"};
  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey || !keys[e.key]) { return; }
    e.preventDefault();
    select(go[keys[e.key]]());
  });
  var asked = /^#ply=(\\d+)$/.exec(location.hash);
  select(asked ? Number(asked[1]) : last);
})();
"""
