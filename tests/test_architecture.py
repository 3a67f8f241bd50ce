"""The rules of ARCHITECTURE.md, checked on the source: which layer may import which, and no
import circles.  Imports inside functions count: a lazy import is still a dependency."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "usi_engine"

# module prefix -> prefixes it must never import (ARCHITECTURE.md, "The rules")
OUTSIDE_CORE = "everything but usi_engine.core and the nn.bin format below it (usi_engine.nnue)"
FRONT = (
    "usi_engine.api",
    "usi_engine.usi",
    "usi_engine.usiproc",
    "usi_engine.cluster",
    "usi_engine.cli",
    "usi_engine.commands",
    "usi_engine.match",
    "usi_engine.training",
    "usi_engine.analysis",
)
MODEL = (
    "usi_engine.move",
    "usi_engine.piece",
    "usi_engine.position",
    "usi_engine.record",
    "usi_engine.sfen",
    "usi_engine.notation",
    "usi_engine.svg",
    "usi_engine.book.sfen",
    "usi_engine.book.format",
    "usi_engine.book.book",
    "usi_engine.book.propagate",
    "usi_engine.book.apery",
)
FORBIDDEN: dict[str, tuple[str, ...] | str] = {
    "usi_engine.core": OUTSIDE_CORE,
    "usi_engine.nnue": ("usi_engine.core", "usi_engine.search", "usi_engine.server") + MODEL + FRONT,
    **{m: ("usi_engine.search", "usi_engine.server") + FRONT for m in MODEL},
    "usi_engine.search": ("usi_engine.server", "usi_engine.book") + FRONT,
    "usi_engine.server": FRONT[1:],  # the server may use the API's Options only through options.py
    "usi_engine.match": (
        "usi_engine.server.protocol",
        "usi_engine.server.engine",
        "usi_engine.cli",
        "usi_engine.commands",
        "usi_engine.training",
        "usi_engine.analysis",
    ),
    "usi_engine.training": (
        "usi_engine.server",
        "usi_engine.cli",
        "usi_engine.commands",
        "usi_engine.match",
        "usi_engine.analysis",
    ),
    "usi_engine.analysis": (
        "usi_engine.server",
        "usi_engine.cli",
        "usi_engine.commands",
        "usi_engine.match",
        "usi_engine.training",
    ),
    "usi_engine.book": (
        "usi_engine.cli",
        "usi_engine.commands",
        "usi_engine.match",
        "usi_engine.training",
        "usi_engine.analysis",
    ),
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}


def imports_of(name: str) -> set[str]:
    """The package's modules that `name` imports (an import of a package is one of its
    __init__; `from pkg import mod` is one of `mod`)."""
    path = MODULES[name]
    here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = here[: len(here) - (node.level - 1)]
                base = ".".join(up + ([node.module] if node.module else []))
            subs = [f"{base}.{alias.name}" for alias in node.names]
            targets = [t for t in subs if t in MODULES] or [base]
        else:
            continue
        for target in targets:
            parts = target.split(".")
            for k in range(len(parts), 0, -1):
                if ".".join(parts[:k]) in MODULES:
                    found.add(".".join(parts[:k]))
                    break
    found.discard(name)
    return found


GRAPH = {name: imports_of(name) for name in MODULES}


def under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def test_the_graph_is_read():
    assert "usi_engine.server.protocol" in MODULES and len(MODULES) > 90
    assert "usi_engine.server.engine" in GRAPH["usi_engine.server.protocol"]
    assert "usi_engine.core.board" in GRAPH["usi_engine.position"]
    # `from . import psv` inside usi_engine.training.data counts as an import of psv
    assert "usi_engine.training.data.psv" in GRAPH["usi_engine.training.data.gensfen"]


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_arrows_point_down(layer):
    rule = FORBIDDEN[layer]
    wrong = []
    for name, targets in GRAPH.items():
        if not under(name, layer):
            continue
        for target in sorted(targets):
            if rule == OUTSIDE_CORE:
                bad = not (under(target, "usi_engine.core") or under(target, "usi_engine.nnue"))
            else:
                bad = any(under(target, p) for p in rule)
            if bad:
                wrong.append(f"{name} imports {target}")
    assert not wrong, "\n".join(wrong)


def test_nothing_imports_the_package_root():
    """The root only re-exports the public API: a module that imports it depends on all of it."""
    wrong = [
        name for name, targets in GRAPH.items() if "usi_engine" in targets and name != "usi_engine.__main__"
    ]
    assert not wrong, wrong


def test_only_the_command_line_imports_the_commands():
    wrong = [
        f"{name} imports {t}"
        for name, targets in GRAPH.items()
        for t in targets
        if under(t, "usi_engine.commands")
        and not (name == "usi_engine.cli" or under(name, "usi_engine.commands"))
    ]
    assert not wrong, wrong


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_circle_finder_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circles():
    assert circles(GRAPH) == []
