"""Bounds checks hoisted out of a loop: an index that is an affine function of the loop's counter
(``v[i - 1]``, ``x[n - 2 - k]``) into an array the loop only reads through is in range for every
iteration when it is at the first and the last one, which the loop's caller checks once per call.

Such indices are compiled without per-access bounds checks, which LLVM can then vectorize; a
call whose indices would leave an array runs as Python, and NumPy raises its own error. The
others (an index read from data, a while loop's) are checked where they are used
(`native_source`'s ``_at``), not by numba's ``boundscheck``, which checks every access of the
function, hoisted ones too.
"""

from __future__ import annotations

from dataclasses import dataclass

from tcompile.tracer.ir import operators
from tcompile.tracer.ir.cond_nodes import Cond
from tcompile.tracer.ir.loop_nodes import ForLoop
from tcompile.tracer.ir.node import Node


@dataclass(frozen=True)
class IndexCheck:
    """``args[param].shape[dim]`` must hold ``coefficient * k + offset`` for the first and the
    last counter ``k`` of a call (NumPy's range: ``-n <= index < n``)."""

    param: int
    dim: int
    coefficient: int
    offset: int


class IndexChecks:
    """The checks of one loop's indices made once per call, collected as its function is
    printed."""

    def __init__(self, loop):
        self.loop = loop
        self.checks: list[IndexCheck] = []
        self._grouped: tuple | None = None  # made at the first call, once all were added
        self.counted = isinstance(loop, ForLoop)  # a while loop has no counter
        inputs = loop.body.inputs
        # a body input the loop only reads -> its position among the function's parameters
        # (first and count come first, then the body's inputs after the counter)
        self.params = {id(n): i + 1 for i, n in enumerate(inputs) if i > loop.carried}
        # a cond node's side reads the body's values as inputs of its own: the input -> the value
        self.passed: dict[int, object] = {}
        self._sides(loop.body)

    def _sides(self, body) -> None:
        for node in body.nodes:
            if isinstance(node.target, Cond):
                for side in node.target.bodies:
                    self.passed.update((id(i), a) for i, a in zip(side.inputs, node.args[1:]))
                    self._sides(side)

    def _outer(self, value):
        """The loop body's value a cond side's input stands for (``value`` itself otherwise)."""
        while isinstance(value, Node) and id(value) in self.passed:
            value = self.passed[id(value)]
        return value

    def add(self, node: Node) -> tuple[int, ...]:
        """The index of a ``getitem`` or ``setitem`` node (of the body, or of a cond's side in
        it): its items checked once per call where they can be; the positions of the others
        (slices need no check)."""
        array, index = self._outer(node.args[0]), node.args[1]
        items = index if isinstance(index, tuple) else (index,)
        in_body = getattr(array, "graph", None) is self.loop.body
        param = self.params.get(id(array)) if in_body and self.counted else None
        forms = [None if param is None else self._affine(item) for item in items]
        if any(item is None or item is Ellipsis for item in items):  # positions are not dims
            forms = [None] * len(items)
        self.checks += [IndexCheck(param, dim, *form) for dim, form in enumerate(forms) if form]
        return tuple(
            p for p, (item, form) in enumerate(zip(items, forms))
            if form is None and not isinstance(item, slice)
        )  # fmt: skip

    def _affine(self, value) -> tuple[int, int] | None:
        """``(coefficient, offset)`` of ``value`` as ``coefficient * k + offset`` (``k`` the
        loop's counter); None where it is not one."""
        value = self._outer(value)
        if type(value) is int:
            return 0, value
        if not isinstance(value, Node):
            return None
        if value is self.loop.body.inputs[0]:
            return 1, 0
        op = operators.of_function(value.target) if value.op == "call" else None
        if op is None or op.name not in ("add", "sub", "mul", "neg") or len(value.args) != op.arity:
            return None
        forms = [self._affine(a) for a in value.args]
        if None in forms:
            return None
        if op.name == "neg":
            return -forms[0][0], -forms[0][1]
        (ca, oa), (cb, ob) = forms
        if op.name == "mul":  # affine only by a constant: one side has no k
            return (ca * ob + cb * oa, oa * ob) if ca == 0 or cb == 0 else None
        sign = 1 if op.name == "add" else -1
        return ca + sign * cb, oa + sign * ob

    def hold(self, args: tuple) -> bool:
        """Whether every index of a call with ``args`` (first, count, ...) is in range: per
        array dim and coefficient, the smallest and largest offset (it runs on every call)."""
        if self._grouped is None:
            self._grouped = _grouped(self.checks)
        first = args[0]
        last = first + args[1] - 1
        for param, dim, coefficient, low, high in self._grouped:
            size = args[param].shape[dim]
            a, b = coefficient * first, coefficient * last
            if a > b:
                a, b = b, a
            if a + low < -size or b + high >= size:
                return False
        return True


def _grouped(checks: list[IndexCheck]) -> tuple:
    """``(param, dim, coefficient, lowest offset, highest offset)`` per kind of check."""
    offsets: dict[tuple, list[int]] = {}
    for check in checks:
        offsets.setdefault((check.param, check.dim, check.coefficient), []).append(check.offset)
    return tuple((*key, min(found), max(found)) for key, found in offsets.items())
