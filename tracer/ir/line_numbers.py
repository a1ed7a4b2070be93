"""Generated Python (the glue, a graph run as Python: the eager backend's, a loop body) compiled
under the user's file name with the user's line numbers, so its tracebacks and warnings show
the user's code."""

from __future__ import annotations

import ast


def place_at_user_lines(fn: ast.FunctionDef, statements: list[ast.stmt],
                        lines: list[int | None], first: int) -> None:  # fmt: skip
    """Give every node of ``fn`` line ``first``, then each statement's nodes its user line
    (``lines``, parallel to ``statements``; None for none: ``first``)."""
    for node in ast.walk(fn):
        if hasattr(node, "lineno"):
            node.lineno = node.end_lineno = first
    for stmt, line in zip(statements, lines):
        for node in ast.walk(stmt):
            if hasattr(node, "lineno"):
                node.lineno = node.end_lineno = line or first
    fn.end_lineno = max([first] + [line for line in lines if line])


def compile_at_user_lines(graph, source: str, plan=None, rewrite=None):
    """``source``, the graph printed as a Python function (with a backend's memory ``plan``),
    compiled under the user's file with each statement at the user's line its node came from:
    an error raised or a warning shown inside the graph points at the user's code.
    ``rewrite(function_def)`` may change the function's tree once its lines are placed."""
    filename, lines = _user_lines(graph, plan)
    tree = ast.parse(source)
    if filename is not None:
        fn = tree.body[0]
        first = min((line for line in lines if line), default=1)
        place_at_user_lines(fn, list(_flatten(fn.body)), lines, first)
    if rewrite is not None:
        tree.body[0] = ast.fix_missing_locations(rewrite(tree.body[0]))
    return compile(tree, filename or f"<tcompile graph {graph.name}>", "exec")


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
        if plan is not None and plan.released_after(node):
            lines.append(lines[-1])
    return filename, lines


def _flatten(body):
    """Statements in printing order, entering ``with np.errstate(...)`` blocks."""
    for stmt in body:
        if isinstance(stmt, ast.With):
            yield from _flatten(stmt.body)
        else:
            yield stmt
