"""Min-max propagation of values through a book graph (YaneuraOu's "peta_shock" idea).

A book's positions and moves form a graph: a move whose resulting position is in the book
is an edge to it; any other move is a leaf, valued by the search that added it.  The value
of a position is its best move's value, and a move into the book is worth minus the value
of the position it leads to (each value is from the side to move's view).  The values are
computed by repeated sweeps from every move-into-the-book valued as a draw: a book of depth
d settles after d sweeps, and a repetition loop that neither side wants to leave keeps the
draw value, as sennichite would give (a loop a side can leave for better takes the exit).

>>> graph = {"a": [("b", None), (None, -50)], "b": [("a", None), (None, 100)]}
>>> result = minimax(graph)
>>> result.values, result.converged
({'a': -50, 'b': 100}, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable, Mapping, Sequence

# node -> its moves: (child node, None) for a move into the book, (None, value) for a leaf
Graph = Mapping[Hashable, Sequence[tuple[Hashable | None, int | None]]]
MAX_ITERATIONS = 1000
# A repetition is worth 0 to both sides: the one value that negamax can give a loop (a
# nonzero draw value would have to be from one side's view, and flip at each ply)
DRAW = 0


@dataclass
class MinimaxResult:
    values: dict  # node -> value for its side to move
    move_values: dict  # node -> [value of each move, in the graph's order]
    iterations: int
    converged: bool  # False: values still changed at the last sweep (reported)


def minimax(graph: Graph, max_iterations: int = MAX_ITERATIONS) -> MinimaxResult:
    """Negamax values of every node of `graph` (see the module's docstring).  Sweeps are Jacobi-style (each
    reads the previous sweep's values), so the result does not depend on the order of the
    nodes."""
    values: dict = {}
    move_values: dict = {}
    previous: dict = {}
    iterations = 0
    converged = False
    while iterations < max_iterations:
        iterations += 1
        for node, moves in graph.items():
            row = []
            for child, leaf in moves:
                if child is None:
                    row.append(int(leaf))
                elif child in previous:
                    row.append(-previous[child])
                else:
                    row.append(DRAW)
            move_values[node] = row
            values[node] = max(row) if row else DRAW
        if values == previous:
            converged = True
            break
        previous = dict(values)
    return MinimaxResult(values, move_values, iterations, converged)
