"""A book as a graph of positions (keyed by SFEN without the ply: transpositions meet),
and the min-max propagation of its values (propagate.py) written back into the book."""

from __future__ import annotations

from dataclasses import dataclass, field

from .book import Book
from .format import BookMove, merge_move, sort_moves
from .propagate import MAX_ITERATIONS, MinimaxResult, minimax


@dataclass
class Node:
    ply: int  # the lowest ply the book has the position at
    moves: list[BookMove]
    children: list[str | None] = field(default_factory=list)  # book key after each move


@dataclass
class BookGraph:
    nodes: dict[str, Node]
    illegal: list[str]  # what was dropped: illegal moves, impossible positions

    @classmethod
    def from_book(cls, book: Book) -> "BookGraph":
        """The book's positions merged over their plies, and where each move leads."""
        from ..position import Position
        from .sfen import book_key

        nodes: dict[str, Node] = {}
        for key, ply, moves in book.entries():
            node = nodes.setdefault(key, Node(ply or 1, []))
            node.ply = min(node.ply, ply or 1)
            for m in moves:
                merge_move(node.moves, m)
        illegal = []
        positions = {}
        for key, node in list(nodes.items()):
            try:
                positions[key] = Position(f"{key} {node.ply}")
            except ValueError as exc:
                illegal.append(f"{key} {node.ply}: not a legal position ({exc})")
                del nodes[key]
        for key, node in nodes.items():
            pos = positions[key]
            kept = []
            for m in node.moves:
                after = pos.copy()
                try:
                    after.push(m.move)
                except ValueError:
                    illegal.append(f"{key} {node.ply}: illegal move {m.move}")
                    continue
                child = book_key(after.sfen())[0]
                kept.append(m)
                node.children.append(child if child in nodes else None)
            node.moves = kept
        return cls(nodes, illegal)

    def minimax(self, max_iterations: int = MAX_ITERATIONS) -> MinimaxResult:
        graph = {
            key: [(child, None if child else m.value) for m, child in zip(node.moves, node.children)]
            for key, node in self.nodes.items()
        }
        return minimax(graph, max_iterations)

    def to_book(self, result: MinimaxResult | None = None) -> Book:
        """A book of the graph; with `result`, each move carries its propagated value, a
        move into the book takes the best reply there as its ponder move, and the moves are
        sorted best first."""
        book = Book(ignore_ply=True, flipped=False)  # transpositions at any ply meet
        best: dict[str, BookMove] = {}
        rows: dict[str, list[BookMove]] = {}
        for key, node in self.nodes.items():
            moves = node.moves
            if result is not None:
                moves = [
                    BookMove(m.move, m.ponder, v, m.depth, m.count)
                    for m, v in zip(node.moves, result.move_values[key])
                ]
            rows[key] = sort_moves(moves)
            if rows[key]:
                best[key] = rows[key][0]
        for key, node in self.nodes.items():
            child_of = {m.move: child for m, child in zip(node.moves, node.children)}
            out = []
            for m in rows[key]:
                child = child_of[m.move]
                reply = best.get(child) if child else None
                if result is not None and reply is not None:
                    m = BookMove(m.move, reply.move, m.value, max(m.depth, reply.depth), m.count)
                out.append(m)
            book.set_moves(f"{key} {node.ply}", out)
        return book


def propagate_book(book: Book, max_iterations: int = MAX_ITERATIONS) -> tuple[Book, MinimaxResult, list[str]]:
    """(the book with min-max values, the propagation's result, what was dropped: illegal
    moves and positions no game can reach)."""
    graph = BookGraph.from_book(book)
    result = graph.minimax(max_iterations)
    return graph.to_book(result), result, graph.illegal
