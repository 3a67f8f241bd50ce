"""The evaluation graph: black's score over the game, clipped to +-GRAPH_CLIP_CP (the axis
shrinks to the game's range, down to +-MIN_RANGE_CP), with the blunders, mistakes and
inaccuracies marked where they were played.  matplotlib (the ``analysis`` extra) draws it
without pyplot, so no GUI backend is touched.
"""

from __future__ import annotations

from pathlib import Path

from .game import GameAnalysis

GRAPH_CLIP_CP = 2000
MIN_RANGE_CP = 600  # the y axis spans at least +-600
WIDTH_PX, HEIGHT_PX, DPI = 1000, 450, 100
MARKERS = {
    "blunder": ("#d62728", "X", 90),
    "mistake": ("#ff7f0e", "v", 60),
    "inaccuracy": ("#bcbd22", "o", 30),
}


def _clip(cp: int) -> int:
    return max(-GRAPH_CLIP_CP, min(GRAPH_CLIP_CP, cp))


def axis_top(values: list[int]) -> float:
    """The top of the y axis for clipped values: as tall as the game needs (a quiet game is
    not a flat line), never beyond the clip.  The PNG and the HTML report share it."""
    return min(GRAPH_CLIP_CP, max([MIN_RANGE_CP] + [abs(y) * 1.15 for y in values]))


def plot(
    analysis: GameAnalysis,
    path: str | Path,
    width_px: int = WIDTH_PX,
    height_px: int = HEIGHT_PX,
    dpi: int = DPI,
) -> None:
    """Write the graph as PNG of exactly width_px x height_px pixels."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_px / dpi, height_px / dpi), dpi=dpi)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    points = [(p.ply, _clip(p.black_cp)) for p in analysis.positions if p.black_cp is not None]
    xs, ys = [x for x, _ in points], [y for _, y in points]
    ax.fill_between(xs, ys, 0, where=[y >= 0 for y in ys], interpolate=True, color="#9ecae1", alpha=0.6)
    ax.fill_between(xs, ys, 0, where=[y <= 0 for y in ys], interpolate=True, color="#fdae6b", alpha=0.6)
    ax.plot(xs, ys, color="#08306b", linewidth=1.4)
    ax.axhline(0, color="#444444", linewidth=0.8)
    for label, (color, marker, size) in MARKERS.items():
        marked = [
            (m.ply, _clip(m.eval_after))
            for m in analysis.moves
            if m.label == label and m.eval_after is not None
        ]
        if marked:
            ax.scatter(
                [x for x, _ in marked],
                [y for _, y in marked],
                c=color,
                marker=marker,
                s=size,
                zorder=3,
                label=f"{label} ({len(marked)})",
            )
    ax.set_xlim(0, max(1, len(analysis.positions) - 1))
    top = axis_top(ys)
    ax.set_ylim(-top * 1.04, top * 1.04)
    ax.set_xlabel("move")
    ax.set_ylabel("evaluation, black's view (cp)")
    ax.grid(True, alpha=0.3)
    names = analysis.record.names
    ax.set_title(
        f"{names[0] or 'black'} (black) vs {names[1] or 'white'} (white): "
        f"{analysis.engine}, clipped at +-{GRAPH_CLIP_CP}",
        fontsize=10,
    )
    if any(m.label for m in analysis.moves):
        ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(str(path), dpi=dpi, format="png")
