"""Loops as loops: a ``for`` loop whose body traces the same way on every iteration becomes one
``loop`` node, instead of one copy of the body per iteration.

At the loop's first ``FOR_ITER`` the body is traced once, into a graph of its own, with the
iteration's position as a symbolic int (``k``): the item is made from ``k`` (``range``: the
number, an array: its row ``a[k]``, ``enumerate``/``zip`` of those), and the locals the body
reads and writes (the carried values) enter as the body's inputs. The loop is captured when
the body ends where it began: the carried values keep their kind, dtype and shape, the body
changed nothing made before the loop (no list, object, iterator or cell; no write into an
array, no side effect), used ``k`` only as a graph value (never as a Python int: no branch,
size or slice bound follows it) and did not leave the loop (``break``, ``return``). The
outer graph then gets one node, ``loop(k0, count, *carried, *read)``, that runs the body's
Python once per iteration (`LoopRunner`), and the trace goes on after the loop with its
results. Anything else unrolls the loop as before, and `LoopRecord` says why.

A backend opts in with a ``loop_nodes`` attribute (the eager backend); for the others loops
are unrolled.
"""

from __future__ import annotations

import ast
import operator
from dataclasses import dataclass

from . import graph_calls, quiet
from . import operations as ops
from .bytecode import analysis
from .errors import GraphBreak, RestartTrace, StopTrace, UserErrorInTrace
from .examples import as_example
from .graph import Graph, Node, TensorMeta, describe_value, nodes_in, substitute
from .line_numbers import compile_at_user_lines
from .values.arrays import ArrayValue, NumpyValue, ScalarValue, SymInt
from .values.containers import DictValue, Iterator, ListValue, RangeValue, SliceValue, TupleValue
from .values.core import UNBOUND, Const, Value, birth
from .values.functions import Cell, ContextManager, UserFunction
from .values.objects import BoundMethod, UserObject

MIN_TRIP_COUNT = 2  # a loop of one iteration gains nothing from a loop node
# Instructions a captured body may not run: they leave the loop, or change state the body
# does not own (cells, globals, attributes, locals deleted).
_LEAVES = {"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE", "YIELD_VALUE"}
_FORBIDDEN = {"STORE_DEREF", "DELETE_DEREF", "STORE_GLOBAL", "DELETE_GLOBAL", "DELETE_FAST",
              "STORE_NAME", "DELETE_NAME", "IMPORT_NAME", "SETUP_WITH", "BEFORE_WITH"}  # fmt: skip


class NotCaptured(Exception):
    """The body cannot be a loop node (the message says why); the loop is unrolled."""


class _Watch:
    """Told of what the body does to the trace's state, while it is traced."""

    def __init__(self, born_before: int):
        self.born_before = born_before
        self.written: list[tuple] = []  # (example array, its contents before the loop)

    def mutation(self, value: Value) -> None:
        if value.born < self.born_before:
            raise NotCaptured(f"the body changes {value.describe()}, made before the loop")

    def layout_read(self) -> None:
        raise NotCaptured("the body reads a memory layout (strides or flags)")

    def before_write(self, example) -> None:
        """An example array is about to be written: keep what it held before the loop."""
        if not any(saved is example for saved, _ in self.written):
            self.written.append((example, example.copy()))

    def restore_examples(self) -> None:
        for example, before in self.written:
            example[...] = before


@dataclass(frozen=True)
class LoopRecord:
    """What became of one loop: captured (with its trip count and body size) or unrolled."""

    filename: str
    lineno: int
    trip_count: int
    captured: bool
    body_ops: int = 0
    reason: str = ""  # why it was unrolled
    body: str = ""  # the body graph's code, for a captured loop
    count_from: str = ""  # the argument the trip count follows (a graph input), if any

    def describe(self) -> str:
        where = f"{self.filename.rsplit('/', 1)[-1]}:{self.lineno}"
        if self.captured:
            count = f"{self.trip_count} iterations"
            if self.count_from:
                count += f" here, count from {self.count_from} (a graph input)"
            return f"{where}: loop node, {count}, body of {self.body_ops} ops"
        return f"{where}: unrolled ({self.trip_count} iterations): {self.reason}"


# -- how the k-th item of an iterator is made ----------------------------------------------


@dataclass(frozen=True)
class RangeItems:
    numbers: range  # at trace time
    stop: Value | None = None  # a dynamic int argument: the trip count is a graph input

    @property
    def count(self) -> int:
        return len(self.numbers)

    def count_value(self, state) -> Value:
        """The trip count: a constant, or computed in the graph from the dynamic stop, which
        is guarded to give at least one iteration (zero iterations recompile: the loop's
        values after it would be those from before it)."""
        if self.stop is None:
            return Const(self.count)
        start, step = self.numbers.start, self.numbers.step
        state.guards.add(self.stop.source, "at_least", start + 1)
        ahead = ops.symint_op(state, operator.sub, self.stop, Const(start - step + 1), "sub")
        return ops.symint_op(state, operator.floordiv, ahead, Const(step), "trip_count")

    def values(self) -> list[Value]:
        return []

    def item(self, state, k: Value) -> Value:
        if isinstance(k, Const):
            return Const(self.numbers[k.value])
        start, step = self.numbers.start, self.numbers.step
        scaled = k if step == 1 else ops.symint_op(state, operator.mul, k, Const(step), "mul")
        return (
            scaled
            if start == 0
            else ops.symint_op(state, operator.add, scaled, Const(start), "add")
        )


@dataclass(frozen=True)
class RowItems:
    array: ArrayValue
    count: int

    def count_value(self, state) -> Value:
        return Const(self.count)

    def values(self) -> list[Value]:
        return [self.array]

    def item(self, state, k: Value) -> Value:
        return ops.get_item(state, self.array, k, None)


@dataclass(frozen=True)
class EnumerateItems:
    start: int
    inner: object

    @property
    def count(self) -> int:
        return self.inner.count

    def count_value(self, state) -> Value:
        return self.inner.count_value(state)

    def values(self) -> list[Value]:
        return self.inner.values()

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

    def count_value(self, state) -> Value:
        """The shortest count: each inner count is needed as a number (pinned)."""
        return Const(min(ops.python_int(state, i.count_value(state)) for i in self.inners))

    def values(self) -> list[Value]:
        return [v for i in self.inners for v in i.values()]

    def item(self, state, k: Value) -> Value:
        return TupleValue([i.item(state, k) for i in self.inners])


def items_of(state, value: Value):
    """How the items of a loop over ``value`` are made from their position, if it is one a
    loop node can take: a range or an array's first axis."""
    if isinstance(value, Const) and type(value.value) is range:
        return RangeItems(value.value)
    if isinstance(value, RangeValue):
        return RangeItems(value.numbers, value.stop)
    if isinstance(value, ArrayValue) and value.example.ndim >= 1:
        return RowItems(value, ops.python_int(state, ops.array_dims(state, value)[0]))
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
    dynamic = getattr(origin, "stop", None) is not None and it.position == 0
    if count < (1 if dynamic else MIN_TRIP_COUNT):
        return False
    try:
        _check_instructions(tx, head, exit_index)
        with _Snapshot(tx) as snapshot:
            runner = _capture(tx, origin, it.position, count, head, exit_index, snapshot)
            snapshot.keep()
    except NotCaptured as why:
        tx.state.loops.append(LoopRecord(tx.code.co_filename, where, count, False,
                                         reason=str(why)))  # fmt: skip
        return False
    tx.state.loops.append(LoopRecord(tx.code.co_filename, where, count, True,
                                     runner.body.op_count(), body=runner.source,
                                     count_from=origin.stop.source.name() if dynamic else ""))  # fmt: skip
    tx.pop()
    it.items, it.pending, it.position = [], None, 0
    tx.ip = exit_index
    return True


def _check_instructions(tx, head: int, exit_index: int) -> None:
    for ins in tx.instrs[head + 1 : exit_index]:
        if ins.opname in _LEAVES:
            raise NotCaptured("the body can leave the loop (return, raise, yield)")
        if ins.opname in _FORBIDDEN:
            raise NotCaptured(f"the body runs {ins.opname}")
        if ins.target is not None and not head <= ins.target <= exit_index:
            raise NotCaptured("the body can jump out of the loop (break)")
        if ins.target == exit_index and ins.opname != "FOR_ITER":
            raise NotCaptured("the body can leave the loop early (break)")


def _capture(tx, origin, first: int, count: int, head: int, exit_index: int,
             snapshot: _Snapshot) -> LoopRunner:  # fmt: skip
    """Trace the body once into its own graph and put the loop node into the trace. Raises
    NotCaptured (``snapshot`` puts everything back)."""
    state, outer = tx.state, tx.state.graph
    body_instrs = tx.instrs[head + 1 : exit_index]
    stored = sorted({ins.arg for ins in body_instrs if ins.opname == "STORE_FAST"})
    targets = _targets(body_instrs)
    # Locals the body may read before writing them (the loop's targets are written first).
    loaded = {ins.arg for ins in body_instrs if ins.opname == "LOAD_FAST"} - set(targets)
    for name in sorted(loaded | set(stored)):
        if name in tx.lazy_locals:  # an argument first read in the body: read it now
            tx.locals[name] = tx.load_lazy(name)
    for ins in body_instrs:  # globals and cells the body reads, read now (graph inputs)
        if ins.opname == "LOAD_GLOBAL" and ins.arg in tx.f_globals:
            tx.load_global(ins.arg)
        elif ins.opname == "LOAD_DEREF" and ins.arg in tx.cells:
            tx._cell(ins.arg)
    entry = {name: tx.locals.get(name, UNBOUND) for name in stored}
    body = Graph(f"{outer.name}_loop")

    def used_as_int():
        raise NotCaptured("the body uses the loop index as a Python int (a branch, size or key)")

    k = SymInt(_body_input(body, "k", first), first, frozenset(), on_concrete=(used_as_int,))
    carried = {name: v for name, v in entry.items() if name in loaded and isinstance(v, NumpyValue)}
    placeholders = {name: _placeholder(state, body, name, v) for name, v in carried.items()}
    tx.locals.update(placeholders)
    watch = snapshot.watch = _Watch(birth())  # what exists now was made before the loop
    state.graph = body
    depth = len(tx.stack)
    saved_stop, tx.stop_at = tx.stop_at, head
    saved_watch, state.loop_watch = state.loop_watch, watch
    try:
        tx.push(origin.item(state, k))
        tx.ip = head + 1
        tx._run()
        raise NotCaptured("the body returns")
    except StopTrace as stop:
        if stop.tx is not tx:
            raise
    except (GraphBreak, UserErrorInTrace, RestartTrace) as error:
        raise NotCaptured(f"tracing the body stopped: {_why(error)}") from None
    finally:
        tx.stop_at, state.loop_watch = saved_stop, saved_watch
        state.graph = outer
    if len(tx.stack) != depth:
        raise NotCaptured("the body leaves values on the stack")
    live_after = analysis.live_locals_at(tx.code, tx.instrs[exit_index].offset)
    stores = [ins.arg for ins in body_instrs if ins.opname == "STORE_FAST"]
    # Targets no statement of the body writes again: after the loop, they hold the last item.
    after = {name for name in targets if name in live_after and stores.count(name) == 1}
    outputs = _outputs(tx, [n for n in stored if n not in after], loaded, entry, placeholders,
                       live_after)  # fmt: skip
    body.add("output", None, (tuple(v.node for _, v in outputs),), name="output")
    read = _lift_free_values(tx, body, origin.values())
    body.eliminate_dead_code()
    body.lint()
    _check_body(body)
    runner = LoopRunner(body, len(carried))
    # The examples went through the first iteration as the body was traced: run the others on
    # them, so that the trace goes on with the loop's real results.
    after_first = [end for _, end in outputs[: len(carried)]]
    try:
        with quiet.silenced():  # the warnings belong to the real run
            example = (
                runner(first + 1, count - 1, *as_example((*after_first, *read)))
                if count > 1
                else as_example(tuple(end for _, end in outputs))
            )
    except Exception as error:  # noqa: BLE001 - any error: unrolling meets it where it is
        raise NotCaptured(f"the loop raises {type(error).__name__} on the traced values") from None
    writers = [node for node in body.nodes if node.mutates]
    count_value = origin.count_value(state) if first == 0 else Const(count)
    args = (Const(first), count_value, *carried.values(), *read)
    result = graph_calls.opaque_call(state, runner, args, example, name="loop",
                                     writes_inputs=_union(n.writes_inputs for n in writers),
                                     mutates=bool(writers))  # fmt: skip
    for (name, _), value in zip(outputs, result.items, strict=True):
        graph_calls.name_value(state, value, name)
        tx.locals[name] = value
    for name in stored:
        if name not in dict(outputs) and not isinstance(tx.locals.get(name), Const):
            tx.locals[name] = UNBOUND  # a body temporary no one reads after the loop
    if after:  # the targets keep the last item, as after any loop
        position = (
            Const(first + count - 1)
            if isinstance(count_value, Const)
            else ops.symint_op(state, operator.sub, count_value, Const(1), "last")
        )
        last = _unpack(origin.item(state, position), targets)
        tx.locals.update({name: last[name] for name in after})
    return runner


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


def _why(error: Exception) -> str:
    if isinstance(error, GraphBreak):
        return error.record.explanation
    if isinstance(error, UserErrorInTrace):
        return f"the body raises {type(error.error).__name__}"
    return str(error)


def _body_input(body: Graph, name: str, example) -> Node:
    node = Node(body, body.fresh_name(name), "input", f"loop {name}", meta=describe_value(example),
                tensor=TensorMeta.of(example))  # fmt: skip
    body.nodes.insert(len(body.inputs), node)
    return node


def _placeholder(state, body: Graph, name: str, value: NumpyValue) -> NumpyValue:
    """A carried value inside the body: an input with the meta and the example of its value
    before the loop (the first iteration works on that very array, as eager code does)."""
    node = _body_input(body, name, value.example)
    if isinstance(value, ScalarValue):
        return ScalarValue(node, value.example)
    placeholder = ArrayValue(node, value.example)
    state.memory.add(placeholder)  # a write re-points it with the others (`ExampleMemory`)
    return placeholder


def _union(groups) -> tuple:
    found: list = []
    for group in groups:
        found += [item for item in group if not any(item is f for f in found)]
    return tuple(found)


def _same_kind(a: Value, b: Value) -> bool:
    if not (isinstance(a, NumpyValue) and isinstance(b, NumpyValue)):
        return False
    return type(a) is type(b) and type(a.example) is type(b.example) and \
        a.example.dtype == b.example.dtype and a.example.shape == b.example.shape  # fmt: skip


def _same_constant(a: Value, b: Value) -> bool:
    if a is b:
        return True
    if not (isinstance(a, Const) and isinstance(b, Const)) or type(a.value) is not type(b.value):
        return False
    try:
        return bool(a.value == b.value)
    except Exception:  # noqa: BLE001 - a comparison that fails is no equality
        return False


def _outputs(tx, stored, loaded, entry, placeholders, live_after) -> list[tuple[str, Value]]:
    """The locals the loop node gives back, checking that each iteration starts as the first
    did: carried values keep their kind, dtype and shape, other locals read in the body keep
    their value."""
    carried, extra = [], []
    for name in stored:
        end = tx.locals.get(name, UNBOUND)
        if name in placeholders:
            if not _same_kind(placeholders[name], end):
                raise NotCaptured(f"{name} changes from {placeholders[name].describe()} to "
                                  f"{end.describe()} in the body")  # fmt: skip
            carried.append((name, end))
        elif name in loaded and entry[name] is not UNBOUND and not _same_constant(entry[name], end):
            raise NotCaptured(f"{name} changes from {entry[name].describe()} to {end.describe()}")
        elif name in live_after and isinstance(end, NumpyValue):
            extra.append((name, end))
        elif name in live_after and not isinstance(end, Const):
            raise NotCaptured(f"{name} ({end.describe()}) is used after the loop")
    return carried + extra  # carried first, in the order the body takes them


def _check_body(body: Graph) -> None:
    for node in body.nodes:
        if node.op in ("getitem", "setitem") and any(
            isinstance(part, slice) and nodes_in(part) for part in _index_parts(node.args[1])
        ):
            raise NotCaptured("a slice bound in the body is computed in the loop")


def _index_parts(index) -> tuple:
    return index if isinstance(index, tuple) else (index,)


# -- the values the body reads from before the loop ------------------------------------------


def _lift_free_values(tx, body: Graph, iterated: list[Value]) -> list[Value]:
    """Nodes of the outer graph the body uses become body inputs; the values they stand for
    (reachable from the frames, or the ``iterated`` arrays) are the loop node's last
    arguments."""
    inside = {id(n) for n in body.nodes}
    free: dict[int, Node] = {}
    for node in body.nodes:
        for used in nodes_in((node.args, node.kwargs)):
            if id(used) not in inside:
                free.setdefault(id(used), used)
    if not free:
        return []
    known = _values_by_node(tx, iterated)
    values, renamed = [], {}
    for key, node in free.items():
        value = known.get(key)
        if value is None:
            raise NotCaptured(f"the body reads {node.name}, which cannot be passed to a loop node")
        values.append(value)
        renamed[key] = _body_input(body, node.name, as_example(value))
    for node in body.nodes:
        node.args, node.kwargs = substitute((node.args, node.kwargs), renamed)
    return values


def _values_by_node(tx, roots: list[Value]) -> dict[int, Value]:
    """Every graph value the frames (locals, stack, cells, containers, objects) or ``roots``
    can reach, by the id of its node."""
    found: dict[int, Value] = {}
    seen: set[int] = set()
    todo: list = list(roots)
    frame = tx
    while frame is not None:
        todo += [*frame.locals.values(), *frame.stack, *frame.cells.values()]
        frame = frame.parent
    todo += tx.state.inputs.wrapped_values()
    while todo:
        value = todo.pop()
        if id(value) in seen or not isinstance(value, Value):
            continue
        seen.add(id(value))
        node = getattr(value, "node", None)
        if isinstance(node, Node):
            found.setdefault(id(node), value)
        todo += _inside(value)
    return found


def _inside(value: Value) -> list:
    if isinstance(value, (TupleValue, ListValue, Iterator)):
        return list(value.items) + (value.origin.values() if getattr(value, "origin", None) else [])
    if isinstance(value, DictValue):
        return list(value.items.values())
    if isinstance(value, SliceValue):
        return list(value.parts())
    if isinstance(value, UserObject):
        return list(value.overlay.values())
    if isinstance(value, Cell):
        return [value.contents]
    if isinstance(value, UserFunction):
        return [*value.closure, *value.defaults, *value.kwdefaults.values()]
    if isinstance(value, BoundMethod):
        return [value.func, value.self_value]
    if isinstance(value, ContextManager):
        return [*value.args, *value.kwargs.values()]
    return [
        getattr(value, name) for name in ("self_value", "array", "manager") if hasattr(value, name)
    ]


# -- running a loop node ------------------------------------------------------------------------


def _name(name: str, ctx=None) -> ast.Name:
    return ast.Name(name, ctx or ast.Load())


class LoopRunner:
    """A loop node's target: runs the body graph's Python once per iteration, the carried
    values of one iteration being the next one's inputs; returns the last iteration's outputs."""

    __name__ = "loop"

    def __init__(self, body: Graph, carried: int):
        self.body = body
        self.carried = carried
        self.compile()

    def compile(self, plan=None) -> None:
        """Make the loop's Python from the body's code (with a backend's memory ``plan``): the
        body's statements inside ``for k in range(first, first + count)``, as eager code runs
        them (a call per iteration would cost more than a small body)."""
        namespace: dict = {}
        self.source = self.body.python_code(namespace, plan=plan)
        exec(compile_at_user_lines(self.body, self.source, plan, self._as_loop), namespace)  # noqa: S102
        self._run = namespace[self.body.name]

    def _as_loop(self, fn: ast.FunctionDef) -> ast.FunctionDef:
        """``def body(k, *carried, *read): ...; return outputs`` as ``def body(first, count,
        *carried, *read)`` running the statements for each k, the carried outputs becoming the
        carried names again; it returns the last iteration's outputs."""
        index, *params = [a.arg for a in fn.args.args]
        *statements, returned = fn.body
        last = returned
        step = [*statements, ast.copy_location(ast.Assign([_name("__tc_out", ast.Store())],
                                                          returned.value), last)]  # fmt: skip
        if self.carried:
            names = [_name(p, ast.Store()) for p in params[: self.carried]]
            again = ast.Subscript(
                _name("__tc_out"), ast.Slice(None, ast.Constant(self.carried)), ast.Load()
            )
            step.append(ast.copy_location(ast.Assign([ast.Tuple(names, ast.Store())], again), last))
        count = ast.BinOp(_name("__tc_first"), ast.Add(), _name("__tc_count"))
        loop = ast.For(_name(index, ast.Store()),
                       ast.Call(_name("range"), [_name("__tc_first"), count], []), step, [])  # fmt: skip
        fn.args.args = [ast.arg("__tc_first"), ast.arg("__tc_count"), *map(ast.arg, params)]
        fn.body = [ast.copy_location(ast.Assign([_name("__tc_out", ast.Store())], ast.Tuple([], ast.Load())), last),
                   ast.copy_location(loop, last), ast.copy_location(ast.Return(_name("__tc_out")), last)]  # fmt: skip
        return fn

    def __call__(self, first: int, count: int, *args):
        """Iterations ``first`` to ``first + count - 1``."""
        return self._run(first, count, *args)

    def __repr__(self) -> str:
        return f"<loop over {self.body.name}>"


# -- putting things back when a body is not captured ---------------------------------------------


class _Snapshot:
    """The translator's frame and the trace's break region before the body was traced, and
    the examples the body's first iteration wrote into (`_Watch`), put back unless `keep` was
    called."""

    def __init__(self, tx):
        self.tx = tx
        self.kept = False
        self.watch: _Watch | None = None

    def keep(self) -> None:
        self.kept = True

    def __enter__(self):
        tx = self.tx
        self.saved = (list(tx.stack), dict(tx.locals), dict(tx.lazy_locals), tx.ip, tx.current,
                      tx.user_with_depth, tx.state.breaks.region)  # fmt: skip
        return self

    def __exit__(self, *exc) -> None:
        if self.kept:
            return
        if self.watch is not None:
            self.watch.restore_examples()
        tx = self.tx
        stack, locals_, lazy, tx.ip, tx.current, tx.user_with_depth, tx.state.breaks.region = (
            self.saved
        )
        tx.stack[:] = stack
        tx.locals.clear()
        tx.locals.update(locals_)
        tx.lazy_locals.clear()
        tx.lazy_locals.update(lazy)
