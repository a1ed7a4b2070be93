"""What a for loop iterates over, as items made from their position ``k``: a range, an array's
rows, ``enumerate`` and ``zip`` of those, an untouched iterator over them. A loop node
(`loops.for_loops`) makes the k-th item inside its body; a loop that is unrolled after all makes
them all (`iterator`'s pending items).
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass

import numpy as np

from ..values.arrays import ArrayValue, SymInt
from ..values.containers import Iterator, RangeValue, TupleValue
from ..values.core import Const, Value
from . import arrays, folding, numbers
from . import operations as ops


@dataclass(frozen=True)
class RangeItems:
    numbers: range  # at trace time
    start: Value | None = None  # made from an enclosing loop's index (``range(i, n)``)
    stop: Value | None = None  # that too, or a dynamic int argument (a graph input)

    @property
    def count(self) -> int:
        return len(self.numbers)

    @property
    def symbolic(self) -> bool:
        """Its count is computed in the graph."""
        return self.start is not None or self.stop is not None

    def bounds(self) -> tuple[Value | None, Value | None, int]:
        """``(lower, upper, lower's number)``: ``start`` and ``stop`` for an increasing range,
        ``stop`` and ``start`` for a decreasing one (``range(n - 1, -1, -1)``); it is empty
        unless the upper bound passes the lower."""
        if self.numbers.step > 0:
            return self.start, self.stop, self.numbers.start
        return self.stop, self.start, self.numbers.stop

    @property
    def may_be_empty(self) -> bool:
        """The lower bound follows an enclosing loop's index, or the upper one may not pass it:
        some iterations of that loop run this one zero times (it must give back no values). An
        upper bound that is an input's dynamic dim is at least 2 (its shape guard)."""
        lower, upper, lower_number = self.bounds()
        if lower is not None:
            return True
        return upper is not None and upper.source is None and upper.at_least <= lower_number

    @property
    def least_count(self) -> int:
        """The fewest iterations its guards assure when the entry is reused."""
        if not self.symbolic:
            return self.count
        _, upper, lower_number = self.bounds()
        if self.may_be_empty:
            return 0
        if upper.source is not None:  # an argument: guarded to give one iteration at least
            return 1
        return len(range(lower_number, upper.at_least, abs(self.numbers.step)))

    def count_value(self, state) -> Value:
        """The trip count: a constant, or computed in the graph from the symbolic bounds. An
        upper bound from an argument is guarded to give at least one iteration (zero iterations
        recompile: the loop's values after it would be those from before it); bounds from an
        enclosing loop's index may give none (`may_be_empty`)."""
        if not self.symbolic:
            return Const(self.count)
        first, step = self.start or Const(self.numbers.start), self.numbers.step
        stop = self.stop or Const(self.numbers.stop)
        _, upper, lower_number = self.bounds()
        if not self.may_be_empty and upper.source is not None:
            state.guards.add(upper.source, "at_least", lower_number + 1)
        if abs(step) == 1:  # the distance between the bounds
            ends = (stop, first) if step == 1 else (first, stop)
            return numbers.symint_op(state, operator.sub, *ends, "trip_count")
        span = numbers.symint_op(state, operator.sub, stop, first, "span")
        # ceil(span / step), for either sign of the step
        rounding = Const(step - 1 if step > 0 else step + 1)
        ahead = numbers.symint_op(state, operator.add, span, rounding, "span")
        return numbers.symint_op(state, operator.floordiv, ahead, Const(step), "trip_count")

    def values(self) -> list[Value]:
        """Its symbolic bounds (one read from an array, ``int(indptr[i])``, is in no local)."""
        return [v for v in (self.start, self.stop) if v is not None]

    def taken(self) -> tuple:
        """The iterators whose items these are (`TakenItems`)."""
        return ()

    def iterable_text(self, rb) -> str:
        """Python text making the iterable again (the glue's `glue.rebuild.Rebuilder` ``rb``)."""
        start = rb.expr(self.start) if self.start is not None else str(self.numbers.start)
        stop = rb.expr(self.stop) if self.stop is not None else str(self.numbers.stop)
        return f"{rb.bind(range)}({start}, {stop}, {self.numbers.step})"

    def item(self, state, k: Value) -> Value:
        if isinstance(k, Const) and self.start is None:
            return Const(self.numbers[k.value])
        step = self.numbers.step
        scaled = k if step == 1 else ops.binary_op(state, operator.mul, k, Const(step), "mul")
        if self.start is None and self.numbers.start == 0:
            return scaled
        first = self.start or Const(self.numbers.start)
        return ops.binary_op(state, operator.add, scaled, first, "add")


@dataclass(frozen=True)
class RowItems:
    array: ArrayValue
    count: int
    rows: SymInt | None = None  # the number of rows, when it is an input's dynamic dim
    may_be_empty = False

    @property
    def symbolic(self) -> bool:
        """Its count is computed in the graph."""
        return self.rows is not None

    def count_value(self, state) -> Value:
        return self.rows if self.rows is not None else Const(self.count)

    def values(self) -> list[Value]:
        return [self.array]

    def taken(self) -> tuple:
        return ()

    def iterable_text(self, rb) -> str:
        return rb.expr(self.array)

    def item(self, state, k: Value) -> Value:
        return ops.get_item(state, self.array, k, None)


@dataclass(frozen=True)
class IndexItems:
    """``np.ndindex(*shape)`` over a shape known at trace time: the k-th item is ``k``'s
    position in C order, a tuple of ints made from ``k`` (``(k // 3 % 2, k % 3)`` for a
    (2, 3) shape)."""

    shape: tuple[int, ...]
    may_be_empty = False
    symbolic = False

    @property
    def count(self) -> int:
        return math.prod(self.shape)

    def count_value(self, state) -> Value:
        return Const(self.count)

    def values(self) -> list[Value]:
        return []

    def taken(self) -> tuple:
        return ()

    def iterable_text(self, rb) -> str:
        return f"{rb.bind(np.ndindex)}{self.shape!r}"

    def item(self, state, k: Value) -> Value:
        if isinstance(k, Const):
            return TupleValue([Const(int(i)) for i in np.unravel_index(k.value, self.shape)])
        indices, stride = [], 1
        for size in reversed(self.shape):
            part = k if stride == 1 else ops.binary_op(state, operator.floordiv, k, Const(stride),
                                                       "floordiv")  # fmt: skip
            indices.append(ops.binary_op(state, operator.mod, part, Const(size), "mod"))
            stride *= size
        return TupleValue(indices[::-1])


@dataclass(frozen=True)
class EnumeratedItems(IndexItems):
    """``np.ndenumerate(x)`` over an array of a shape known at trace time: the k-th item is
    ``(position, x[position])``, the element read when the iteration runs (the loop's writes
    to ``x`` show, as through NumPy's flat iterator)."""

    array: ArrayValue | None = None

    def values(self) -> list[Value]:
        return [self.array]

    def iterable_text(self, rb) -> str:
        return f"{rb.bind(np.ndenumerate)}({rb.expr(self.array)})"

    def item(self, state, k: Value) -> Value:
        position = super().item(state, k)
        return TupleValue([position, ops.get_item(state, self.array, position, None)])


class FromInner:
    """Items made by those of ``inner``: its count, arguments and taken iterators."""

    inner: object

    @property
    def count(self) -> int:
        return self.inner.count

    @property
    def symbolic(self) -> bool:
        return getattr(self.inner, "symbolic", False)

    @property
    def may_be_empty(self) -> bool:
        return self.inner.may_be_empty

    def count_value(self, state) -> Value:
        return self.inner.count_value(state)

    def values(self) -> list[Value]:
        return self.inner.values()

    def taken(self) -> tuple:
        return self.inner.taken()


@dataclass(frozen=True)
class EnumerateItems(FromInner):
    start: int
    inner: object

    def iterable_text(self, rb) -> str:
        return f"{rb.bind(enumerate)}({self.inner.iterable_text(rb)}, {self.start})"

    def item(self, state, k: Value) -> Value:
        if isinstance(k, Const):
            return TupleValue([Const(self.start + k.value), self.inner.item(state, k)])
        number = (
            k
            if self.start == 0
            else numbers.symint_op(state, operator.add, k, Const(self.start), "add")
        )
        return TupleValue([number, self.inner.item(state, k)])


@dataclass(frozen=True)
class ZipItems:
    inners: tuple

    @property
    def count(self) -> int:
        return min(i.count for i in self.inners)

    @property
    def symbolic(self) -> bool:
        return any(getattr(i, "symbolic", False) for i in self.inners)

    @property
    def may_be_empty(self) -> bool:
        return any(i.may_be_empty for i in self.inners)

    def count_value(self, state) -> Value:
        """The shortest count: a constant, or the least of the inner counts in the graph."""
        counts = [i.count_value(state) for i in self.inners]
        if all(isinstance(c, Const) for c in counts):
            return Const(min(c.value for c in counts))
        least = counts[0]
        for count in counts[1:]:
            least = numbers.symint_op(state, min, least, count, "count")
        return least

    def values(self) -> list[Value]:
        return [v for i in self.inners for v in i.values()]

    def taken(self) -> tuple:
        return tuple(it for i in self.inners for it in i.taken())

    def iterable_text(self, rb) -> str:
        return f"{rb.bind(zip)}({', '.join(i.iterable_text(rb) for i in self.inners)})"

    def item(self, state, k: Value) -> Value:
        return TupleValue([i.item(state, k) for i in self.inners])


@dataclass(frozen=True)
class TakenItems(FromInner):
    """The items of an untouched iterator that ``enumerate`` or ``zip`` took
    (``enumerate(zip(a, b))``), made as its own origin (``inner``) makes them: it is theirs
    from then on (`Iterator.taken`). A loop node over the taker leaves it exhausted
    (`_exhaust_taken`)."""

    iterator: Iterator
    inner: object

    def taken(self) -> tuple:
        return (self.iterator, *self.inner.taken())

    def iterable_text(self, rb) -> str:
        return self.inner.iterable_text(rb)

    def item(self, state, k: Value) -> Value:
        return self.inner.item(state, k)


def exhaust_taken(origin) -> None:
    """The iterators a loop node's items were taken from are used up, as the loop's would be."""
    for it in origin.taken():
        it.items, it.pending, it.position = [], None, 0


def items_of(state, value: Value):
    """How the items of a loop over ``value`` are made from their position, if it is one a
    loop node can take: a range, an array's first axis, or an untouched iterator over those
    (``zip`` inside ``enumerate``)."""
    if isinstance(value, Iterator) and value.origin is not None and value.untouched():
        return TakenItems(value, value.origin)
    if isinstance(value, Const) and type(value.value) is range:
        return RangeItems(value.value)
    if isinstance(value, RangeValue):
        return RangeItems(value.numbers, value.start, value.stop)
    if isinstance(value, ArrayValue) and value.example.ndim >= 1:
        rows = arrays.array_dims(state, value)[0]
        if isinstance(rows, SymInt) and rows.at_least:  # a dynamic dim: counted in the graph
            return RowItems(value, rows.hint, rows)
        return RowItems(value, folding.python_int(state, rows))
    return None


def iterator(state, origin, make_items) -> Iterator:
    """An iterator for a loop: with an ``origin`` (and a backend that takes loop nodes) its
    items are made only if the loop is unrolled after all."""
    if origin is None or not state.loop_nodes:
        return Iterator(make_items())
    return Iterator([], origin=origin, pending=make_items)
