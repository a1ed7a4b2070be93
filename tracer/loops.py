"""Loops as loops: a ``for`` loop whose body traces the same way on every iteration becomes one
``loop`` node, instead of one copy of the body per iteration.

At the loop's first ``FOR_ITER`` the body is traced once, into a graph of its own
(`loop_body.BodyTrace`), with the iteration's position as a symbolic int (``k``): the item is
made from ``k`` (``range``: the number, an array: its row ``a[k]``, ``enumerate``/``zip`` of
those, of each other), and the locals the body reads and writes (the carried values: arrays,
NumPy scalars, and Python ints and floats as numbers of the graph) enter as the body's inputs.
The loop is captured when the body ends where it began: the carried values keep their kind,
dtype and shape, the body changed no list, object, iterator or cell made before the loop
(writes into arrays are fine: the loop node writes them), used ``k`` only as a graph value
(never as a Python int: no branch, size or slice bound follows it) and did not leave the loop
(``break``, ``return``). The outer graph then gets one node, ``loop(k0, count, *carried,
*read)``, that runs the body's Python once per iteration (`loop_runners.ForRunner`), and the
trace goes on after the loop with its results (an int counter moved by a constant step is a
Python int again, computed from the trip count). The count is a graph input when the range's
stop is a dynamic int argument. Anything else unrolls the loop as before, and `LoopRecord`
says why.

A backend opts in with a ``loop_nodes`` attribute (eager: the loop's Python; triton: the body's
kernels launched per iteration); for the others loops are unrolled.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

from . import operations as ops
from .bytecode import analysis
from .loop_body import (
    BodyTrace,
    KindChanges,
    LoopRecord,
    NotCaptured,
    Snapshot,
    carriable,
    check_instructions,
    check_restart,
    check_written_carries,
    python_number,
    run_on_examples,
)
from .loop_runners import ForRunner
from .values.arrays import ArrayValue, NumpyValue, SymInt
from .values.containers import Iterator, RangeValue, TupleValue
from .values.core import UNBOUND, Const, Value

MIN_TRIP_COUNT = 2  # a loop of one iteration gains nothing from a loop node


# -- how the k-th item of an iterator is made ----------------------------------------------


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

    @property
    def may_be_empty(self) -> bool:
        """A bound follows an enclosing loop's index: some iterations of that loop run this
        one zero times (it must give back no values). A stop that is an input's dynamic dim is
        at least 2 (its shape guard)."""
        if self.start is not None:
            return True
        stop = self.stop
        return stop is not None and stop.source is None and stop.at_least <= self.numbers.start

    def count_value(self, state) -> Value:
        """The trip count: a constant, or computed in the graph from the symbolic bounds. A
        stop from an argument is guarded to give at least one iteration (zero iterations
        recompile: the loop's values after it would be those from before it); bounds from an
        enclosing loop's index may give none (`may_be_empty`)."""
        if not self.symbolic:
            return Const(self.count)
        first, step = self.start or Const(self.numbers.start), self.numbers.step
        stop = self.stop or Const(self.numbers.stop)
        if not self.may_be_empty and self.stop.source is not None:
            state.guards.add(self.stop.source, "at_least", self.numbers.start + 1)
        span = ops.symint_op(state, operator.sub, stop, first, "span")
        ahead = ops.symint_op(state, operator.add, span, Const(step - 1), "span")
        return ops.symint_op(state, operator.floordiv, ahead, Const(step), "trip_count")

    def values(self) -> list[Value]:
        return []

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


class _FromInner:
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
class EnumerateItems(_FromInner):
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
            else ops.symint_op(state, operator.add, k, Const(self.start), "add")
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
            least = ops.symint_op(state, min, least, count, "count")
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
class TakenItems(_FromInner):
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


def _exhaust_taken(origin) -> None:
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
        rows = ops.array_dims(state, value)[0]
        if isinstance(rows, SymInt) and rows.at_least:  # a dynamic dim: counted in the graph
            return RowItems(value, rows.hint, rows)
        return RowItems(value, ops.python_int(state, rows))
    return None


def iterator(state, origin, make_items) -> Iterator:
    """An iterator for a loop: with an ``origin`` (and a backend that takes loop nodes) its
    items are made only if the loop is unrolled after all."""
    if origin is None or not state.loop_nodes:
        return Iterator(make_items())
    return Iterator([], origin=origin, pending=make_items)


# -- capturing a loop ------------------------------------------------------------------------


def capture(tx, inst, it: Iterator) -> bool:
    """At a loop's ``FOR_ITER``: make the rest of the loop one node if its body allows; False
    to unroll it (the iterator's items are made, and ``origin`` dropped: no second try)."""
    origin, it.origin = it.origin, None
    count = origin.count - it.position
    head, exit_index = tx.ip - 1, inst.target
    where = inst.line or 0
    dynamic = getattr(origin, "symbolic", False) and it.position == 0
    if count < (0 if origin.may_be_empty else 1 if dynamic else MIN_TRIP_COUNT):
        return False
    try:
        check_instructions(tx, head + 1, exit_index, head, exit_index)
        with Snapshot(tx) as snapshot:
            runner = _capture(tx, origin, it.position, count, head, exit_index, snapshot)
            snapshot.keep()
    except KindChanges as why:
        if it.position == 0 and count > MIN_TRIP_COUNT and _least_count(origin) >= 2:
            # Peel: the first iteration unrolls (its item only is made), the rest is tried again.
            it.origin, it.peeled = origin, str(why)
            it.items = [origin.item(tx.state, Const(0))]
            return False
        tx.state.loops.append(LoopRecord(tx.code.co_filename, where, count, False,
                                         reason=_reason(it, why)))  # fmt: skip
        return False
    except NotCaptured as why:
        tx.state.loops.append(LoopRecord(tx.code.co_filename, where, count, False,
                                         reason=_reason(it, why)))  # fmt: skip
        return False
    tx.state.loops.append(LoopRecord(tx.code.co_filename, where, count, True,
                                     runner.body.op_count(), body=runner.source,
                                     count_from=_count_from(origin) if dynamic else "",
                                     peeled=it.peeled))  # fmt: skip
    tx.pop()
    it.items, it.pending, it.position = [], None, 0
    _exhaust_taken(origin)
    tx.ip = exit_index
    return True


def _reason(it: Iterator, why: NotCaptured) -> str:
    if it.peeled:
        return f"{why} (and before its first iteration: {it.peeled})"
    return str(why)


def _count_from(origin) -> str:
    if origin.may_be_empty:
        return "an enclosing loop's index"
    sizes = [_size_text(size) for size in _sizes(origin)]
    return sizes[0] if len(sizes) == 1 else f"the least of {', '.join(sizes)}"


def _least_count(origin) -> int:
    """The fewest iterations the loop can run when the entry is reused (its guards assure
    them): a peeled first iteration needs at least one more to follow."""
    if isinstance(origin, ZipItems):
        return min(_least_count(inner) for inner in origin.inners)
    if isinstance(origin, RowItems):
        return origin.rows.at_least if origin.rows is not None else origin.count
    if isinstance(origin, RangeItems):
        if not origin.symbolic:
            return origin.count
        stop = origin.stop  # a guarded argument gives one iteration at least, a dim two
        return 0 if origin.may_be_empty else 1 if stop.source is not None else stop.at_least
    return _least_count(origin.inner)


def _over_rows(origin) -> bool:
    """The items are an array's rows (alone, or numbered by ``enumerate``)."""
    if isinstance(origin, RowItems):
        return True
    return isinstance(origin, _FromInner) and _over_rows(origin.inner)


def _sizes(origin) -> list[SymInt]:
    """The dynamic sizes a symbolic trip count is made of."""
    if isinstance(origin, ZipItems):
        return [size for inner in origin.inners for size in _sizes(inner)]
    if isinstance(origin, RowItems):
        return [origin.rows] if origin.rows is not None else []
    if isinstance(origin, RangeItems):
        return [origin.stop] if isinstance(origin.stop, SymInt) else []
    return _sizes(origin.inner)


def _size_text(size: SymInt) -> str:
    if size.source is not None:
        return f"{size.source.name()} (a graph input)"
    (name, dim), *_ = size.deps
    return f"{name}.shape[{dim}] (a dynamic dim)"


def _capture(tx, origin, first: int, count: int, head: int, exit_index: int,
             snapshot: Snapshot) -> ForRunner:  # fmt: skip
    """Trace the body once into its own graph and put the loop node into the trace. Raises
    NotCaptured (``snapshot`` puts everything back)."""
    state = tx.state
    body = BodyTrace(tx, head + 1, exit_index, snapshot, "loop")
    targets = _targets(body.instrs)
    # Locals the body may read before writing them (the loop's targets are written first).
    loaded = body.loaded - set(targets)
    entry = body.read_inputs()

    def used_as_int():
        raise NotCaptured("the body uses the loop index as a Python int (a branch, size or key)")

    k = SymInt(body.input("k", first), first, frozenset(), on_concrete=(used_as_int,))
    carried = {
        name: v
        for name, v in entry.items()
        if name in loaded and (carriable(v) or python_number(v))
    }
    placeholders = body.carry(carried)
    if body.run(head, lambda: [origin.item(state, k)], index_callback=used_as_int):
        raise NotCaptured("the body leaves values on the stack")
    steps = _counter_steps(tx, placeholders)
    live_after = analysis.live_locals_at(tx.code, tx.instrs[exit_index].offset)
    # Targets no statement of the body writes again: after the loop, they hold the last item.
    after = {name for name in targets if name in live_after and body.stores.count(name) == 1}
    outputs = _outputs(tx, [n for n in body.stored if n not in after], loaded, entry,
                       placeholders, live_after)  # fmt: skip
    if origin.may_be_empty and (outputs or after):
        raise NotCaptured("its trip count follows an enclosing loop's index (it may run zero "
                          "times), and it gives back values")  # fmt: skip
    read = body.finish([v for _, v in outputs], origin.values())
    check_written_carries(tx, snapshot.watch, placeholders, read)
    runner = ForRunner(body.graph, len(carried), over_rows=_over_rows(origin))
    # The examples went through the first iteration as the body was traced: put back what it
    # wrote and run the whole loop on them, so that the trace goes on with the loop's real
    # results (which the graph's first call takes instead of running the loop again).
    snapshot.watch.undo_writes()
    example = run_on_examples(runner, state, (first, count), (*carried.values(), *read))
    count_value = origin.count_value(state)
    if first and not isinstance(count_value, Const):  # after a peeled first iteration
        count_value = ops.symint_op(state, operator.sub, count_value, Const(first), "rest")
    elif first:
        count_value = Const(count)
    args = (Const(first), count_value, *carried.values(), *read)
    body.add_node(
        runner,
        args,
        example,
        [name for name, _ in outputs],
        "loop",
        counted=not isinstance(count_value, Const),
    )
    for name, step in steps.items():  # known from the trip count, as unrolling would know it
        tx.locals[name] = _counter_after(state, carried[name].value, step, count_value)
    if after:  # the targets keep the last item, as after any loop
        position = (
            Const(first + count - 1)
            if isinstance(count_value, Const)
            else ops.symint_op(state, operator.sub, count_value, Const(1), "last")
        )
        last = _unpack(origin.item(state, position), targets)
        tx.locals.update({name: last[name] for name in after})
    return runner


def _counter_steps(tx, placeholders: dict[str, Value]) -> dict[str, int]:
    """The int counters the body moves by a constant step in every iteration (``n += 2``,
    ``n = n - 1``), by name."""
    steps = {}
    for name, placeholder in placeholders.items():
        end = tx.locals.get(name)
        if not isinstance(placeholder, SymInt) or not isinstance(end, SymInt):
            continue
        node = end.node
        if node.op != "call" or node.target not in (operator.add, operator.sub):
            continue
        a, b = node.args
        if a is placeholder.node and type(b) is int:
            steps[name] = b if node.target is operator.add else -b
        elif b is placeholder.node and type(a) is int and node.target is operator.add:
            steps[name] = a
    return steps


def _counter_after(state, start: int, step: int, count: Value) -> Value:
    """A counter's value after the loop: ``start + step * count``, a Python int when the trip
    count is one (else an int of the graph, computed from the count)."""
    if isinstance(count, Const):
        return Const(start + step * count.value)
    moved = ops.symint_op(state, operator.mul, count, Const(step), "moved")
    return ops.symint_op(state, operator.add, moved, Const(start), "counter")


def _targets(body_instrs) -> list[str]:
    """The loop's target names, written first in each iteration: ``for x in`` or
    ``for a, b in`` (a nested unpacking has no names here: it is written later)."""
    first = body_instrs[0] if body_instrs else None
    if first is not None and first.opname == "STORE_FAST":
        return [first.arg]
    if first is not None and first.opname == "UNPACK_SEQUENCE":
        stores = body_instrs[1 : 1 + first.arg]
        if all(ins.opname == "STORE_FAST" for ins in stores):
            return [ins.arg for ins in stores]
    return []


def _unpack(item: Value, targets: list[str]) -> dict[str, Value]:
    if len(targets) == 1:
        return {targets[0]: item}
    return dict(zip(targets, item.items, strict=True))


def _outputs(tx, stored, loaded, entry, placeholders, live_after) -> list[tuple[str, Value]]:
    """The locals the loop node gives back, checking that each iteration starts as the first
    did: carried values keep their kind, dtype and shape, other locals read in the body keep
    their value."""
    carried, extra = [], []
    for name in stored:
        end = tx.locals.get(name, UNBOUND)
        if check_restart(name, end, placeholders, entry, loaded):
            carried.append((name, end))
        elif name in live_after and isinstance(end, NumpyValue):
            extra.append((name, end))
        elif name in live_after and not isinstance(end, Const):
            raise NotCaptured(f"{name} ({end.describe()}) is used after the loop")
    return carried + extra  # carried first, in the order the body takes them
