"""The eager backend: the graph's printed Python text, compiled and run as is.

The text is compiled with each statement's line number set to the user's line it came from,
under the user's file name, so an error raised inside a graph (a shape mismatch, a
``FloatingPointError`` under ``np.errstate(all="raise")``) shows the user's code in its
traceback.
"""

from __future__ import annotations

import ast
from types import MappingProxyType

from tcompile.tracer.compiled_graph import CompiledGraph
from tcompile.tracer.line_numbers import place_at_user_lines

from .memory_plan import plan_memory


def eager_backend(graph, example_inputs):
    """Compile ``graph.python_code()`` with a memory plan (``del`` after last uses, ``out=`` into
    dead operands, see `memory_plan`); what the user sees printed is exactly what runs."""
    del example_inputs
    namespace: dict = {}
    plan = plan_memory(graph)
    source = graph.python_code(namespace, plan=plan)
    filename, lines = _user_lines(graph, plan)
    tree = ast.parse(source)
    if filename is not None:
        fn = tree.body[0]
        first = min((line for line in lines if line), default=1)
        place_at_user_lines(fn, list(_flatten(fn.body)), lines, first)
    exec(compile(tree, filename or f"<tcompile graph {graph.name}>", "exec"), namespace)  # noqa: S102
    return CompiledGraph(namespace[graph.name], "eager", MappingProxyType({"python": source}))


def _user_lines(graph, plan) -> tuple[str | None, list[int | None]]:
    """The user's file, and per printed statement the closest line of that file (a ``del``
    after a node's statement gets the node's line)."""
    nodes = [n for n in graph.nodes if n.op != "input"]
    roots = [n.stack[0].filename for n in nodes if n.stack]
    if not roots:
        return None, []
    filename = roots[0]
    lines = []
    for node in nodes:
        same_file = [loc.lineno for loc in node.stack if loc.filename == filename]
        lines.append(same_file[-1] if same_file else None)
        if plan.released_after(node):
            lines.append(lines[-1])
    return filename, lines


def _flatten(body):
    """Statements in printing order, entering ``with np.errstate(...)`` blocks."""
    for stmt in body:
        if isinstance(stmt, ast.With):
            yield from _flatten(stmt.body)
        else:
            yield stmt
