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


def compile_at_user_lines(name: str, lines: list):
    """A graph's Python (``lines``: `Graph.code_lines`, each line with the node it was printed
    for) compiled under the user's file, each line at the user's line its node came from: an
    error raised or a warning shown inside the graph points at the user's code. ``name`` names
    the code where no node has a place in a file."""
    source = "\n".join(text for text, _ in lines) + "\n"
    filename, user_lines = _user_lines([node for _, node in lines])
    tree = ast.parse(source)
    if filename is not None:
        first = min((line for line in user_lines if line), default=1)
        for node in ast.walk(tree):
            if hasattr(node, "lineno"):
                line = user_lines[node.lineno - 1] or first
                node.lineno = node.end_lineno = line
                node.end_col_offset = max(node.col_offset, node.end_col_offset or 0)
    return compile(tree, filename or f"<tcompile graph {name}>", "exec")


def _user_lines(nodes: list) -> tuple[str | None, list[int | None]]:
    """The user's file (the outermost frame's), and per node the closest line of that file."""
    roots = [n.stack[0].filename for n in nodes if n is not None and n.stack]
    if not roots:
        return None, []
    filename = roots[0]
    lines = []
    for node in nodes:
        same_file = [loc.lineno for loc in node.stack if loc.filename == filename] if node else []
        lines.append(same_file[-1] if same_file else None)
    return filename, lines
