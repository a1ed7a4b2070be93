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
*read)``, that runs the body's Python once per iteration (`loop_nodes.ForLoop`, printed as a ``for`` statement), and the
trace goes on after the loop with its results (an int counter moved by a constant step is a
Python int again, computed from the trip count). The count is a graph input when the range's
stop is a dynamic int argument. Anything else unrolls the loop as before, and `LoopRecord`
says why.

A backend opts in with a ``loop_nodes`` attribute (eager: the loop's Python; triton: the body's
kernels launched per iteration); for the others loops are unrolled.
"""

from __future__ import annotations

import operator

import numpy as np

from ..bytecode import analysis
from ..ir.loop_nodes import ForLoop
from ..semantics import iteration, numbers
from ..values.arrays import FloatOrFloat64, NumpyValue, SymInt
from ..values.containers import Iterator
from ..values.core import UNBOUND, Const, Value
from . import either_float
from .loop_body import (
    BodyTrace,
    KindChanges,
    NotCaptured,
    Snapshot,
    capture_once,
    carriable,
    check_restart,
    python_number,
)
from .loop_record import LoopRecord

MIN_TRIP_COUNT = 2  # a loop of one iteration gains nothing from a loop node


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
    widen: frozenset = frozenset()  # floats carried as float64s (`either_float`)
    try:
        while True:
            try:
                loop = capture_once(tx, head + 1, exit_index, head, exit_index, lambda snapshot: _capture(
                    tx, origin, it.position, count, head, exit_index, snapshot, widen))  # fmt: skip
                break
            except KindChanges as why:
                name = None if _may_peel(it, origin, count) else either_float.widened(
                    tx, why, head, exit_index, _least_count(origin) < 1)  # fmt: skip
                if name is None or name in widen:
                    raise
                widen |= {name}
    except KindChanges as why:
        if _may_peel(it, origin, count):
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
                                     loop.body.op_count(), body=loop.body.python_code(),
                                     count_from=_count_from(origin) if dynamic else "",
                                     peeled=it.peeled))  # fmt: skip
    tx.pop()
    it.items, it.pending, it.position = [], None, 0
    iteration.exhaust_taken(origin)
    tx.ip = exit_index
    return True


def _may_peel(it: Iterator, origin, count: int) -> bool:
    return it.position == 0 and count > MIN_TRIP_COUNT and _least_count(origin) >= 2


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
    if isinstance(origin, iteration.ZipItems):
        return min(_least_count(inner) for inner in origin.inners)
    if isinstance(origin, iteration.RowItems):
        return origin.rows.at_least if origin.rows is not None else origin.count
    if isinstance(origin, iteration.IndexItems):
        return origin.count
    if isinstance(origin, iteration.RangeItems):
        return origin.least_count
    return _least_count(origin.inner)


def _over_rows(origin) -> bool:
    """The items are an array's rows (alone, or numbered by ``enumerate``)."""
    if isinstance(origin, iteration.RowItems):
        return True
    return isinstance(origin, iteration.FromInner) and _over_rows(origin.inner)


def _sizes(origin) -> list[SymInt]:
    """The dynamic sizes a symbolic trip count is made of."""
    if isinstance(origin, iteration.ZipItems):
        return [size for inner in origin.inners for size in _sizes(inner)]
    if isinstance(origin, iteration.RowItems):
        return [origin.rows] if origin.rows is not None else []
    if isinstance(origin, iteration.RangeItems):
        upper = origin.bounds()[1]
        return [upper] if isinstance(upper, SymInt) else []
    return [] if isinstance(origin, iteration.IndexItems) else _sizes(origin.inner)


def _size_text(size: SymInt) -> str:
    if size.source is not None:
        return f"{size.source.name()} (a graph input)"
    (name, dim), *_ = size.deps
    return f"{name}.shape[{dim}] (a dynamic dim)"


def _capture(tx, origin, first: int, count: int, head: int, exit_index: int,
             snapshot: Snapshot, widen: frozenset) -> ForLoop:  # fmt: skip
    """Trace the body once into its own graph and put the loop node into the trace. Raises
    NotCaptured (``snapshot`` puts everything back). ``widen``: the floats it carries as
    float64s."""
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
    placeholders = body.carry(carried, widen)
    if body.run(
        head, lambda: [origin.item(state, k)], index_callback=used_as_int, unreached=count == 0
    ):
        raise NotCaptured("the body leaves values on the stack")
    steps = _counter_steps(tx, placeholders)
    live_after = analysis.live_locals_at(tx.code, tx.instrs[exit_index].offset)
    # Targets no statement of the body writes again: after the loop, they hold the last item.
    after = {name for name in targets if name in live_after and body.stores.count(name) == 1}
    outputs = _outputs(tx, [n for n in body.stored if n not in after], loaded, entry,
                       placeholders, live_after)  # fmt: skip
    if origin.may_be_empty and (len(outputs) > len(carried) or after):
        # (the values it carries are its arguments again after no iteration)
        raise NotCaptured("its trip count follows an enclosing loop's index (it may run zero "
                          "times), and it gives back values made in its body")  # fmt: skip
    read = body.finish([v for _, v in outputs], origin.values())
    loop = ForLoop(body.graph, len(carried), over_rows=_over_rows(origin))
    example = body.run_on_examples(loop, placeholders, read, (first, count),
                                   (*carried.values(), *read))  # fmt: skip
    names = [name for name, _ in outputs]
    example = tuple(np.float64(e) if n in widen else e for n, e in zip(names, example, strict=True))
    count_value = origin.count_value(state)
    if first and not isinstance(count_value, Const):  # after a peeled first iteration
        count_value = numbers.symint_op(state, operator.sub, count_value, Const(first), "rest")
    elif first:
        count_value = Const(count)
    args = (Const(first), count_value, *carried.values(), *read)
    body.add_node(loop, args, example, names, "loop", counted=not isinstance(count_value, Const))
    if _least_count(origin) < 1:  # after no iteration, a float it carries is a float again
        for name in widen:
            value = tx.locals[name]
            tx.locals[name] = FloatOrFloat64(value.node, value.example, value.source)
    for name, step in steps.items():  # known from the trip count, as unrolling would know it
        tx.locals[name] = _counter_after(state, carried[name], step, count_value)
    if after:  # the targets keep the last item, as after any loop
        position = (
            Const(first + count - 1)
            if isinstance(count_value, Const)
            else numbers.symint_op(state, operator.sub, count_value, Const(1), "last")
        )
        last = _unpack(origin.item(state, position), targets)
        tx.locals.update({name: last[name] for name in after})
    return loop


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


def _counter_after(state, start: Value, step: int, count: Value) -> Value:
    """A counter's value after the loop: ``start + step * count``, a Python int where both are
    (else an int of the graph: a count known at run time, or a start a cond node made)."""
    if isinstance(count, Const) and isinstance(start, Const):
        return Const(start.value + step * count.value)
    if isinstance(count, Const):
        return numbers.symint_op(state, operator.add, start, Const(step * count.value), "counter")
    moved = numbers.symint_op(state, operator.mul, count, Const(step), "moved")
    return numbers.symint_op(state, operator.add, moved, start, "counter")


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
