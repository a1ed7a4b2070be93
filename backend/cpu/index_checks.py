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


@dataclass(frozen=True)
class SpanCheck:
    """In the function of a loop inside the loop: ``array.shape[dim]`` must hold
    ``coefficient * k + times * term + offset`` for its first and last counter ``k``, ``term``
    an int that loop reads and never changes (a row's start read from data) or None; checked
    before the loop runs (`native_prelude`'s ``_span_at``)."""

    array: Node
    dim: int
    coefficient: int
    times: int
    term: Node | None
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
        # the for loops inside the loop, by their body's id; the checks before each's loop
        self.nested: dict[int, ForLoop] = {}
        self.spans: dict[int, list[SpanCheck]] = {}
        self._nested(loop.body)

    def _nested(self, body) -> None:
        for node in body.nodes:
            inner = node.target.bodies if isinstance(node.target, Cond) else ()
            if isinstance(node.target, ForLoop):
                self.nested[id(node.target.body)] = node.target
                inner = (node.target.body,)
            for graph in inner:
                self._nested(graph)

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
        inner = self.nested.get(id(getattr(node, "graph", None)))
        if inner is not None and _reads_only(inner, array) and \
                not any(item is None or item is Ellipsis for item in items):  # fmt: skip
            return self._span(inner, array, items)
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

    def _span(self, loop: ForLoop, array: Node, items: tuple) -> tuple[int, ...]:
        """`add` for an index in the body of ``loop``, a loop inside the loop: checked before
        ``loop`` runs where it can be (`SpanCheck`)."""
        unchecked = []
        for dim, item in enumerate(items):
            form = _form_in(loop, item)
            if form is not None and max(abs(form[0]), abs(form[1])) <= _MOST_COEFFICIENT:
                self.spans.setdefault(id(loop), []).append(SpanCheck(array, dim, *form))
            elif not isinstance(item, slice):
                unchecked.append(dim)
        return tuple(unchecked)

    def _affine(self, value) -> tuple[int, int] | None:
        """``(coefficient, offset)`` of ``value`` as ``coefficient * k + offset`` (``k`` the
        loop's counter); None where it is not one."""
        form = _form_in(self.loop, value, self._outer)
        return None if form is None or form[2] is not None else (form[0], form[3])

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


def _reads_only(loop: ForLoop, array) -> bool:
    """``array`` is an input ``loop`` reads, not one it carries (its shape stays)."""
    inputs = loop.body.inputs
    return any(array is n for n in inputs[1 + loop.carried :])


_MOST_COEFFICIENT = 256  # (`_span_at` computes in int64 from values under 2**48)


def _form_in(loop: ForLoop, value, outer=lambda v: v) -> tuple[int, int, Node | None, int] | None:
    """``(coefficient, times, term, offset)`` of ``value`` as ``coefficient * k + times * term
    + offset``, ``k`` the counter of ``loop`` and ``term`` an int input it only reads (or
    None); None where it is not one. ``outer``: the body's value a cond side's input stands
    for."""
    value = outer(value)
    if type(value) is int:
        return 0, 0, None, value
    if not isinstance(value, Node):
        return None
    if value is loop.body.inputs[0]:
        return 1, 0, None, 0
    if value.op == "input":
        return (0, 1, value, 0) if value.meta == "int" and _reads_only(loop, value) else None
    op = operators.of_function(value.target) if value.op == "call" else None
    if op is None or op.name not in ("add", "sub", "mul", "neg") or len(value.args) != op.arity:
        return None
    forms = [_form_in(loop, v, outer) for v in value.args]
    if None in forms:
        return None
    if op.name == "neg":
        coefficient, times, term, offset = forms[0]
        return -coefficient, -times, term, -offset
    a, b = forms
    if a[2] is not None and b[2] is not None:
        return None
    if op.name == "mul":  # by a constant: a form with no counter and no term
        constant, other = (a, b) if (a[0], a[2]) == (0, None) else (b, a)
        if (constant[0], constant[2]) != (0, None):
            return None
        factor = constant[3]
        return other[0] * factor, other[1] * factor, other[2], other[3] * factor
    sign = 1 if op.name == "add" else -1
    (ca, ma, ta, oa), (cb, mb, tb, ob) = a, b
    return ca + sign * cb, ma + sign * mb, ta if ta is not None else tb, oa + sign * ob
