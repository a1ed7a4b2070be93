"""Named values inside one Triton expression.

A ufunc rule that needs a value twice (floor division's remainder, frexp's exponent) names it
with `let`, which writes a Python expression: a tuple of walruses, evaluated left to right, then
the body. Python, and so Triton's interpreter, runs that text as it is. Triton's compiler takes
no walrus (3.6 rejects it: ``unsupported AST node type: NamedExpr``), so the code generator
writes each kernel statement through `assignments`, which makes every binding a statement.
"""

from __future__ import annotations

import ast


def let(bindings: list[tuple[str, str]], body: str) -> str:
    """``body`` after binding each name in turn: a tuple of walruses, evaluated left to right,
    then ``body``. Python (and so Triton's interpreter) runs that as it is; Triton's compiler
    takes no walrus (3.6 rejects it), so kernels are written through `assignments`."""
    items = [f"({name} := {expr})" for name, expr in bindings]
    return f"({', '.join(items + [body])})[{len(bindings)}]"


def assignments(name: str, text: str) -> list[str]:
    """``name = text`` as statements Triton compiles: each binding `let` made becomes an
    assignment before it, in the order Python evaluates them (the rules' expressions have no
    side effects, so evaluating a binding first changes nothing).

    >>> assignments("v", "((_t := a - b), _t * _t)[1] + 1")
    ['_t = a - b', 'v = _t * _t + 1']
    """
    if ":=" not in text:
        return [f"{name} = {text}"]
    lines: list[str] = []
    expr = _Unlet(lines).visit(ast.parse(text, mode="eval").body)
    return [*lines, f"{name} = {ast.unparse(expr)}"]


class _Unlet(ast.NodeTransformer):
    """Moves each walrus out of an expression into ``lines``, leaving its name, and reduces what
    is left of a `let`, ``(name, ..., body)[n]``, to ``body``."""

    def __init__(self, lines: list[str]):
        self.lines = lines

    def visit_NamedExpr(self, node: ast.NamedExpr) -> ast.Name:
        value = self.visit(node.value)
        self.lines.append(f"{node.target.id} = {ast.unparse(value)}")
        return ast.Name(node.target.id, ast.Load())

    def visit_Subscript(self, node: ast.Subscript) -> ast.expr:
        node = self.generic_visit(node)
        items = node.value.elts if isinstance(node.value, ast.Tuple) else []
        last = isinstance(node.slice, ast.Constant) and node.slice.value == len(items) - 1
        if items and last and all(isinstance(item, ast.Name) for item in items[:-1]):
            return items[-1]
        return node
