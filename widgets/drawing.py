"""What the Graphs tab shows of one graph: its drawing when it is small enough to draw within a
time budget, else a summary that scales to any size (ops by kind and by source line) next to
the graph's code.

Graphviz's layout grows much faster than the graph (60 ops: 30 ms; 200 ops: 5 s; 9,000 ops:
not in 16 minutes), so a graph of more than `DRAW_LIMIT` ops is not drawn with the report;
the widget draws it on request, with a longer budget (`draw(..., on_request=True)`). Each graph is
drawn once per process (the widget's tabs and its static HTML share it), and the time it took
is kept for the Timings tab.
"""

from __future__ import annotations

import time
import weakref
from collections import Counter
from dataclasses import dataclass

from tcompile.tracer.ir import operators
from tcompile.tracer.ir.graph import Graph
from tcompile.tracer.ir.node import Node

from .dot import graph_to_dot
from .svg import DRAW_BUDGET_S, DrawingTooSlow, GraphvizError, render_svg

DRAW_LIMIT = 120  # ops drawn with the report; larger graphs get a summary and a Draw button
ON_DEMAND_BUDGET_S = 15.0  # what drawing a large graph on request may take
CODE_LINES = 200  # lines of a large graph's code shown with its summary


@dataclass(frozen=True)
class Drawing:
    """One graph's picture: ``svg``, or None with ``note`` saying why not; ``seconds`` the time
    spent drawing it."""

    svg: str | None
    note: str = ""
    seconds: float = 0.0


_drawn: weakref.WeakKeyDictionary[Graph, Drawing] = weakref.WeakKeyDictionary()


def draw(graph: Graph, title: str, labels, *, on_request: bool = False) -> Drawing:
    """``graph`` drawn (``labels`` names files, as in `graph_to_dot`) within `DRAW_BUDGET_S`,
    unless it has more than `DRAW_LIMIT` ops; ``on_request``: any size, within
    `ON_DEMAND_BUDGET_S` (a graph that ran out of the short budget gets the long one)."""
    known = _drawn.get(graph)
    if known is not None and (known.svg is not None or not on_request):
        return known
    ops = graph.op_count()
    if not on_request and ops > DRAW_LIMIT:
        return Drawing(None, f"not drawn: {ops} ops is more than {DRAW_LIMIT}, and Graphviz's "
                             "time grows much faster than the graph")  # fmt: skip
    budget_s = ON_DEMAND_BUDGET_S if on_request else DRAW_BUDGET_S
    start = time.perf_counter()
    try:
        svg, note = render_svg(graph_to_dot(graph, title=title, labels=labels), budget_s), ""
    except DrawingTooSlow as error:
        svg, note = None, f"not drawn: {error}"
    except GraphvizError as error:  # no Graphviz, say: told every time, never kept
        return Drawing(None, str(error), time.perf_counter() - start)
    # kept: a graph's drawing (or its overrun of the budget) is not made twice
    drawing = _drawn[graph] = Drawing(svg, note, time.perf_counter() - start)
    return drawing


def forget() -> None:
    """Draw every graph anew (benchmarks time the drawing itself)."""
    _drawn.clear()
    render_svg.cache_clear()


def drawing_seconds(graphs: list[Graph]) -> float:
    """The time spent drawing these graphs (those drawn so far)."""
    return sum(_drawn[g].seconds for g in graphs if g in _drawn)


def op_kinds(graph: Graph) -> list[tuple[str, int]]:
    """How many ops of each kind (``np.add``, ``.sum()``, ``[]``...), most frequent first."""
    return Counter(_kind(n) for n in _ops(graph)).most_common()


def ops_by_line(graph: Graph, labels) -> list[tuple[str, int, str]]:
    """(where, ops, their kinds) per source line, in the order the lines first appear."""
    lines: dict[str, Counter] = {}
    for node in _ops(graph):
        loc = node.stack[-1] if node.stack else None
        where = f"{labels(loc.filename) or loc.filename.rsplit('/', 1)[-1]}:{loc.lineno}" \
            if loc else "(no line)"  # fmt: skip
        lines.setdefault(where, Counter())[_kind(node)] += 1
    return [(where, sum(kinds.values()), ", ".join(f"{k} x{n}" if n > 1 else k
                                                   for k, n in kinds.most_common()))
            for where, kinds in lines.items()]  # fmt: skip


def _ops(graph: Graph) -> list[Node]:
    return [n for n in graph.nodes if n.op not in ("input", "output")]


def _kind(node: Node) -> str:
    if node.op == "call":
        operator_ = operators.of_function(node.target)
        if operator_ is not None:
            return operator_.symbol
        name = getattr(node.target, "__name__", None) or type(node.target).__name__
        module = getattr(node.target, "__module__", None) or ""
        return f"np.{name}" if module.startswith("numpy") or hasattr(node.target, "nin") \
            else name  # fmt: skip
    if node.op == "method":
        return f".{node.target}()"
    if node.op in ("getitem", "setitem"):
        return "[]" if node.op == "getitem" else "[] ="
    if node.op == "inplace":
        return f"{operators.of_function(node.target).symbol}="
    if node.op == "attr":
        return f".{node.target}"
    return node.op
