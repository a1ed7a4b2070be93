"""Generated Python (the glue, the eager backend's graph) compiled under the user's file name
with the user's line numbers, so its tracebacks show the user's code."""

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
