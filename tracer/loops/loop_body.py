"""What ``for`` and ``while`` loop nodes share: a loop's body traced once into a graph of its
own (`BodyTrace`), with the locals it carries from one iteration to the next as the body's
inputs, the values it reads from before the loop lifted into inputs, and the trace's state put
back if the body turns out not to be capturable (`Snapshot`, `NotCaptured`).
"""

from __future__ import annotations

import numpy as np

from ..errors import GraphBreak, RestartTrace, StopTrace, UserErrorInTrace
from ..ir.cond_nodes import SideNotTraced
from ..ir.first_run import FirstRun, run_keeping
from ..ir.graph import Graph, loop_function
from ..ir.loop_nodes import LoopSpec
from ..ir.node import FP, RAISE, SILENT, Node, TensorMeta, describe_value, nodes_in, substitute
from ..state import graph_calls
from ..state.examples import as_example
from ..values.arrays import ArrayValue, FloatOrFloat64, NumpyValue, ScalarValue, SymFloat, SymInt
from ..values.containers import DictValue, Iterator, ListValue, SliceValue, TupleValue
from ..values.core import UNBOUND, Const, Value, birth
from ..values.functions import Cell, ContextManager, UserFunction
from ..values.objects import BoundMethod, UserObject
from . import either_float
from .not_captured import KindChanges, NotCaptured, RaisesOnExamples

# Instructions a captured body may not run: they leave the loop, or change state the body
# does not own (cells, globals, attributes, locals deleted). A ``raise`` may stay: the trace
# stops at it (the body is not captured), unless it is a side of a cond node that is not traced
# (``assert`` on data: if taken, the frame runs eagerly and raises there).
_LEAVES = {"RETURN_VALUE", "RETURN_CONST", "RERAISE", "YIELD_VALUE"}
_FORBIDDEN = {"STORE_DEREF", "DELETE_DEREF", "STORE_GLOBAL", "DELETE_GLOBAL", "DELETE_FAST",
              "STORE_NAME", "DELETE_NAME", "IMPORT_NAME"}  # fmt: skip


class Watch:
    """Told of what the body does to the trace's state, while it is traced; knows the values
    whose shapes follow the loop's index (``a[:k]``: `varies`)."""

    def __init__(self, born_before: int, index_callback=None, outer: Watch | None = None,
                 unreached: bool = False):  # fmt: skip
        self.born_before = born_before
        # the body is traced on an iteration the loop never runs (``for j in range(i, n)`` at
        # ``i == n``), or inside such a body: its examples are stand-ins, its errors not real
        self.unreached = unreached or (outer is not None and outer.unreached)
        self.written: list[tuple] = []  # (example array, its contents before the loop)
        self.index_callback = index_callback  # in the on_concrete of ints made from the index
        self.outer = outer  # the watch of the loop whose body holds this loop, if any
        self.varying: set[int] = set()  # ids of body nodes whose shape follows the index

    def follows_index(self, value) -> bool:
        """An int made from this loop's index or an enclosing loop's (constant during this
        loop, but not from one of its runs to the next)."""
        if isinstance(value, SymInt) and self.index_callback in value.on_concrete:
            return True
        return self.outer is not None and self.outer.follows_index(value)

    def varies(self, value) -> bool:
        """An array of the body whose shape follows the index (it changes every iteration)."""
        return id(getattr(value, "node", None)) in self.varying

    def mutation(self, value: Value) -> None:
        """The body may change only what it made: a node runs its body once per iteration,
        but the trace's changes to what existed before are replayed once, after the graph. A
        value first read inside the body (``o.log``, a global, a cell only a callee uses) is
        new to the trace, not to the program: its source says it existed before the call."""
        if value.born < self.born_before or _preexisting(value):
            raise NotCaptured(f"the body changes {value.describe()}, made before the loop")

    def global_write(self, name: str) -> None:
        raise NotCaptured(f"the body writes global {name}")

    def layout_read(self) -> None:
        raise NotCaptured("the body reads a memory layout (strides or flags)")

    def before_write(self, example) -> None:
        """An example array is about to be written: keep what it held before the loop (and
        before the loops around it: an inner loop's writes are the outer body's too). The whole
        memory the example views is kept: an inner loop's run writes other views of it."""
        while isinstance(example.base, np.ndarray) and example.base.flags.writeable:
            example = example.base
        if not any(saved is example for saved, _ in self.written):
            self.written.append((example, example.copy()))
        if self.outer is not None:
            self.outer.before_write(example)

    def undo_writes(self) -> None:
        """Put back what the examples held before the body was traced (again, if the loop's
        run on them fails after)."""
        for example, before in self.written:
            example[...] = before


def _preexisting(value: Value) -> bool:
    """Read from the program's state (an argument, attribute, item, global or real cell)."""
    return value.source is not None or getattr(value, "real", False)


def check_instructions(tx, start: int, stop: int, lowest: int, end: int,
                       exits: frozenset = frozenset(), what: str = "the loop",
                       condition: frozenset = frozenset()) -> None:  # fmt: skip
    """The body ``instrs[start:stop]`` stays in ``what``: no return, raise or yield, no jump
    outside ``[lowest, end)`` (``end``: the loop's exit; a jump there is a ``break``) but to
    one of ``exits`` (instructions that end the body: its trace stops there) or from one of
    ``condition`` (the tests of a while loop's ``a and b``: a cond node computes their value).
    Code reached only when an exception propagates (a with-block's cleanup, placed inside the
    loop on 3.11) is left out: a body that raises makes the frame run again eagerly."""
    tests = {id(tx.instrs[at]) for at in condition}
    for ins in (i for i in _reached(tx.instrs, start, stop, exits) if id(i) not in tests):
        if ins.opname in _LEAVES:
            raise NotCaptured(f"the body can leave {what} (break, return or yield)")
        if ins.opname in _FORBIDDEN:
            raise NotCaptured(f"the body runs {ins.opname}")
        if ins.target is not None and not (lowest <= ins.target < end or ins.target in exits):
            raise NotCaptured(f"the body can leave {what} (break)")


def _reached(instrs, start: int, stop: int, exits: frozenset = frozenset()) -> list:
    """The instructions of ``instrs[start:stop]`` that normal control flow reaches from
    ``start`` (jumps and fall-through; not exception handlers), up to ``exits``."""
    seen, todo = set(), [start]
    while todo:
        at = todo.pop()
        if at in seen or not start <= at < stop or at in exits:
            continue
        seen.add(at)
        ins = instrs[at]
        if ins.target is not None:
            todo.append(ins.target)
        if ins.opname not in _NO_FALLTHROUGH:
            todo.append(at + 1)
    return [instrs[at] for at in sorted(seen)]


_NO_FALLTHROUGH = {"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE", "JUMP"}


class BodyTrace:
    """A loop body, ``instrs[start:stop]``, traced once into a graph of its own."""

    def __init__(self, tx, start: int, stop: int, snapshot: Snapshot, name: str):
        self.tx, self.state = tx, tx.state
        self.start, self.stop = start, stop
        self.instrs = tx.instrs[start:stop]
        self.snapshot = snapshot
        self.stores = [ins.arg for ins in self.instrs if ins.opname == "STORE_FAST"]
        self.stored = sorted(set(self.stores))
        self.loaded = {ins.arg for ins in self.instrs if ins.opname == "LOAD_FAST"}
        self.graph = Graph(f"{tx.state.graph.name}_{name}", module=tx.state.graph.module)
        self.first_run: FirstRun | None = None  # the loop's run on the examples, if exact

    def read_inputs(self) -> dict[str, Value]:
        """Read now what the body reads from outside the frame's locals (arguments first read
        in the body, globals, cells: graph inputs of the frame); the body's locals on entry."""
        tx = self.tx
        for name in sorted(self.loaded | set(self.stored)):
            if name in tx.lazy_locals:
                tx.locals[name] = tx.load_lazy(name)
        for ins in self.instrs:
            if ins.opname == "LOAD_GLOBAL" and ins.arg in tx.f_globals:
                tx.load_global(ins.arg)
            elif ins.opname == "LOAD_DEREF" and ins.arg in tx.cells:
                tx._cell(ins.arg)
        return {name: tx.locals.get(name, UNBOUND) for name in self.stored}

    def input(self, name: str, example) -> Node:
        return _body_input(self.graph, name, example)

    def carry(self, carried: dict[str, Value], widened=frozenset()) -> dict[str, Value]:
        """Each carried value (`carriable`, or a `python_number`) inside the body: an
        input with the meta and the example of its value before the loop (the first iteration
        works on that very array, as eager code does); the frame's locals now hold them.
        ``widened``: floats carried as float64s (`either_float`)."""
        placeholders = {}
        for name, value in carried.items():
            example = as_example(value)
            if name in widened:
                example = np.float64(example)
            node = self.input(name, example)
            if name in widened:
                placeholders[name] = FloatOrFloat64(node, example)
            elif type(example) in (int, float):  # a Python number of the graph

                def used_as_number(name=name):
                    raise NotCaptured(f"the body uses {name} as a Python number")

                if type(example) is int:
                    placeholders[name] = SymInt(node, example, frozenset(),
                                                on_concrete=(used_as_number,))  # fmt: skip
                else:
                    placeholders[name] = SymFloat.leaf(node, example, used_as_number)
            elif not isinstance(value, ArrayValue):
                placeholders[name] = ScalarValue(node, example)
            else:
                placeholders[name] = ArrayValue(node, example)
                self.state.memory.add(placeholders[name])  # writes re-point it (ExampleMemory)
        self.tx.locals.update(placeholders)
        return placeholders

    def run(self, stop_at: int, pushed=lambda: [], index_callback=None,
            exits: frozenset = frozenset(), stack_base: int | None = None,
            unreached: bool = False) -> list[Value]:  # fmt: skip
        """Trace the body from ``start`` until the translator reaches ``stop_at`` (a for loop's
        ``FOR_ITER``, a while loop's condition jump) or one of ``exits``, with the values
        ``pushed()`` makes in the body's graph on the stack; the values the body left on the
        stack above ``stack_base`` (by default, what was on it: the body may not touch those).
        ``index_callback``: the loop index's ``on_concrete`` (shapes that follow it are
        allowed, `Watch.varies`). ``unreached``: the examples are of an iteration the loop
        never runs (`Watch.unreached`)."""
        tx, state = self.tx, self.state
        outer = state.graph
        # What exists now was made before the loop.
        self.snapshot.watch = watch = Watch(birth(), index_callback, state.loop_watch, unreached)
        state.graph = self.graph
        depth = len(tx.stack) if stack_base is None else stack_base
        below, open_blocks = tx.stack[:depth], (len(state.contexts.exits), tx.user_with_depth)
        saved_stop, tx.stop_at = tx.stop_at, frozenset({stop_at, *exits})
        saved_watch, state.loop_watch = state.loop_watch, watch
        effects = len(state.effects.writes)
        try:
            for value in pushed():
                tx.push(value)
            tx.ip = self.start
            tx._run()
            raise NotCaptured("the body returns")
        except StopTrace as stop:
            if stop.tx is not tx:
                raise
        except UserErrorInTrace as error:
            raise RaisesOnExamples(f"tracing the body stopped: {_why(error)}", error.error) \
                from None  # fmt: skip
        except (GraphBreak, RestartTrace) as error:
            raise NotCaptured(f"tracing the body stopped: {_why(error)}") from None
        finally:
            tx.stop_at, state.loop_watch = saved_stop, saved_watch
            state.graph = outer
        # Side effects are replayed once after the graph, not once per iteration: every write
        # to what existed before must have stopped the body through the watch (`mutation`,
        # `global_write`) before it changed the trace's models. One that did not is a bug of
        # ours (the frame then runs eagerly, with a warning), never a loop replayed once.
        if len(state.effects.writes) > effects:
            write = state.effects.writes[effects]
            raise RuntimeError(f"a loop body wrote {write.describe()} unseen by its watch")
        if len(tx.stack) < depth or any(a is not b for a, b in zip(tx.stack, below)):
            raise NotCaptured("the body takes values from the stack")
        if (len(state.contexts.exits), tx.user_with_depth) != open_blocks:
            raise NotCaptured("the body leaves a with-block it opened")
        left = tx.stack[depth:]
        del tx.stack[depth:]
        return left

    def finish(self, outputs: list[Value], iterated: list[Value]) -> list[Value]:
        """The body's output node, inputs for the values it reads from before the loop; checks.
        Returns those values (the loop node's last arguments)."""
        body = self.graph
        for value in outputs:
            either_float.refuse(value)
            if self.snapshot.watch.varies(value):
                raise NotCaptured(f"{value.describe()}, whose shape follows the loop index, "
                                  "is carried to the next iteration or used after the loop")  # fmt: skip
        body.add("output", None, (tuple(v.node for v in outputs),), name="output")
        read = _lift_free_values(self.tx, body, iterated)
        body.eliminate_dead_code()
        body.lint()
        return read

    def run_on_examples(self, loop: LoopSpec, placeholders: dict, read: list, leading: tuple,
                        values: tuple) -> tuple:  # fmt: skip
        """The whole loop run on the examples of its arguments (``leading`` plain ones, then
        the graph's ``values``), so that the trace goes on with its real results; the run is
        kept for the graph's first call (`first_run`: `add_node` hands it to the trace).
        First a carried array written in place must stay its own memory
        (`check_written_carries`), and the first iteration's writes, made as the body was
        traced, are put back. NotCaptured if it raises."""
        check_written_carries(self.tx, self.snapshot.watch, placeholders, read)
        self.snapshot.watch.undo_writes()
        state = self.state
        run = loop_function(loop)
        try:
            with state.budget.paused(), state.phases.time("loop run"):
                results, self.first_run = run_keeping(
                    run, (*leading, *as_example(values)), state.contexts.fp_ignored(),
                    uninitialized(values, len(leading)))  # fmt: skip
        except SideNotTraced as error:  # an iteration takes a side only eager code runs
            raise UserErrorInTrace(error) from None
        except Exception as error:  # noqa: BLE001 - any error: the frame meets it where it is
            raise NotCaptured(f"the loop raises {type(error).__name__} on the traced values") \
                from None  # fmt: skip
        return results

    def add_node(self, loop: LoopSpec, args: tuple, example, outputs: list[str], name: str,
                 risk: str = SILENT, counted: bool = False) -> None:  # fmt: skip
        """The loop node in the frame's graph; the frame's locals get its results. It fails as
        its body's operations may (``risk``: the loop's own, a while loop's test).
        ``counted``: its trip count changes from call to call (`TraceState.loop_fact`)."""
        tx, state = self.tx, self.state
        writers = [node for node in self.graph.nodes if node.mutates]
        risks = {risk, *(n.risk for n in self.graph.nodes if n.op not in ("input", "output"))}
        result = graph_calls.opaque_call(state, loop.op, loop, args, example, name=name,
                                         writes_inputs=union(n.writes_inputs for n in writers),
                                         mutates=bool(writers),
                                         risk=next(r for r in (RAISE, FP, SILENT) if r in risks))  # fmt: skip
        node = next(n for n in reversed(state.graph.nodes) if n.target is loop)
        if counted:
            state.counted_loops.append(node)
        if self.first_run is not None:
            state.first_runs[node] = self.first_run
        for local, value in zip(outputs, result.items, strict=True):
            graph_calls.name_value(state, value, local)
            tx.locals[local] = value
        for local in self.stored:
            if local not in outputs and not isinstance(tx.locals.get(local), Const):
                tx.locals[local] = UNBOUND  # a body temporary no one reads after the loop


def check_written_carries(tx, watch: Watch, placeholders: dict[str, Value], read: list) -> None:
    """A carried array the body writes in place is written, in the next iteration, wherever
    its end value lives: its own memory or new memory, never another of the loop's arguments,
    which the loop node would then write unannounced (``b += 1; b = m[2]`` writes ``m`` from
    the second iteration on; ``v[1:] = ...; u, v = v, u`` writes ``u``'s first array)."""
    saved = [memory for memory, _ in watch.written]
    arguments = [*placeholders.items(), *((v.describe(), v) for v in read)]
    for name, placeholder in placeholders.items():
        end = tx.locals.get(name)
        if not isinstance(placeholder, ArrayValue) or not isinstance(end, ArrayValue):
            continue
        if not any(np.may_share_memory(memory, placeholder.example) for memory in saved):
            continue  # not written in place
        for other_name, other in arguments:
            if (
                other is not placeholder
                and isinstance(other, ArrayValue)
                and np.may_share_memory(end.example, other.example)
            ):
                raise NotCaptured(f"{name} is written in place, and the next iteration's {name} "
                                  f"is {other_name}'s memory")  # fmt: skip


def uninitialized(values, leading: int) -> frozenset[int]:
    """The positions (after ``leading`` other arguments) of the arrays among ``values`` that
    ``np.empty`` or ``np.empty_like`` made in this graph: their contents are whatever memory
    held (`first_run`)."""
    return frozenset(
        leading + i
        for i, v in enumerate(values)
        if isinstance(v, ArrayValue) and v.node.op == "call"
        and v.node.target in (np.empty, np.empty_like)
    )  # fmt: skip


def carriable(value: Value) -> bool:
    """A value a loop node can carry from one iteration to the next: an array or NumPy scalar
    of the graph, or a NumPy scalar constant (``total = np.float64(0)``: the body makes it a
    graph value of the same type)."""
    return isinstance(value, NumpyValue) or (
        isinstance(value, Const) and isinstance(value.value, np.generic)
    )


def python_number(value: Value) -> bool:
    """A Python int or float the loop counts with (``sweeps += 1``, ``t += dt``): the node
    carries it as a number of the graph (after the loop, using it as a number breaks the graph
    there, unless a for loop moves an int by a constant step: `loops._counter_after`). One the
    graph computes already (a cond node's, an enclosing loop's) is carried as well."""
    if isinstance(value, SymInt):
        return type(value.hint) is int and not value.branch
    return isinstance(value, SymFloat) or (isinstance(value, Const)
                                           and type(value.value) in (int, float))  # fmt: skip


def _body_input(body: Graph, name: str, example) -> Node:
    node = Node(body, body.fresh_name(name), "input", f"loop {name}", meta=describe_value(example),
                tensor=TensorMeta.of(example))  # fmt: skip
    body.nodes.insert(len(body.inputs), node)
    return node


def _why(error: Exception) -> str:
    if isinstance(error, GraphBreak):
        return error.record.explanation
    if isinstance(error, UserErrorInTrace):
        return f"the body raises {type(error.error).__name__}"
    return str(error)


def union(groups) -> tuple:
    found: list = []
    for group in groups:
        found += [item for item in group if not any(item is f for f in found)]
    return tuple(found)


def check_restart(name: str, end: Value, placeholders: dict, entry: dict, loaded) -> bool:
    """Whether the local ``name`` (``end`` at the body's end) is carried; raises where the next
    iteration would not start as the first did: a carried value changed kind, or a local the
    body reads changed its constant. `KindChanges` where one unrolled iteration may settle it
    (a constant becoming an array); a counter changes every time."""
    if name in placeholders:
        if isinstance(end, Const) and python_number(entry[name]):
            raise NotCaptured(f"{name} is read, then set to {end.describe()} in the body (a number "
                              "carried to the next iteration is computed from its last value)")  # fmt: skip
        if not same_kind(placeholders[name], end):
            raise KindChanges(f"{name} changes from {entry[name].describe()} to "
                              f"{end.describe()} in the body", name, entry[name], end)  # fmt: skip
        return True
    if name in loaded and entry[name] is not UNBOUND and not same_constant(entry[name], end):
        changes = KindChanges if isinstance(end, NumpyValue) else NotCaptured
        raise changes(f"{name} changes from {entry[name].describe()} to {end.describe()}")
    return False


def same_kind(a: Value, b: Value) -> bool:
    """Two NumPy values of one kind: class, dtype and shape (a carried value must keep them);
    or two ints, or two floats, of the graph (a carried `python_number`)."""
    if type(a) is type(b) and isinstance(a, SymInt | SymFloat):
        return True
    if isinstance(a, FloatOrFloat64):  # a float carried as a float64 (`either_float`)
        return type(b) is ScalarValue and b.example.dtype == np.float64
    if not (isinstance(a, NumpyValue) and isinstance(b, NumpyValue)):
        return False
    return type(a) is type(b) and type(a.example) is type(b.example) and \
        a.example.dtype == b.example.dtype and a.example.shape == b.example.shape  # fmt: skip


def same_constant(a: Value, b: Value) -> bool:
    if a is b:
        return True
    if not (isinstance(a, Const) and isinstance(b, Const)) or type(a.value) is not type(b.value):
        return False
    try:
        return bool(a.value == b.value)
    except Exception:  # noqa: BLE001 - a comparison that fails is no equality
        return False


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
    known = values_by_node(tx, iterated)
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


def values_by_node(tx, roots: list[Value]) -> dict[int, Value]:
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
    if isinstance(value, ArrayValue) and value.sym_dims is not None:  # an input's dynamic dims
        return [d for d in value.sym_dims if d is not None]
    return [
        getattr(value, name) for name in ("self_value", "array", "manager") if hasattr(value, name)
    ]


# -- putting things back when a body is not captured ---------------------------------------------


def capture_once(tx, start: int, stop: int, lowest: int, end: int, capture, condition=frozenset()):
    """What every loop's capture does around its own: the body ``instrs[start:stop]`` checked
    (`check_instructions`), then ``capture(snapshot)``, with the translator and the examples
    put back where it raises (NotCaptured, KindChanges)."""
    check_instructions(tx, start, stop, lowest, end, condition=condition)
    with Snapshot(tx) as snapshot:
        loop = capture(snapshot)
        snapshot.keep()
    return loop


class Snapshot:
    """The translator's frame and the trace's break region before the body was traced, and
    the examples the body's first iteration wrote into (`Watch`), put back unless `keep` was
    called."""

    def __init__(self, tx):
        self.tx = tx
        self.kept = False
        self.watch: Watch | None = None

    def keep(self) -> None:
        self.kept = True

    def __enter__(self):
        tx = self.tx
        self.saved = (list(tx.stack), dict(tx.locals), dict(tx.lazy_locals), tx.ip, tx.current,
                      tx.user_with_depth, tx.state.breaks.region)  # fmt: skip
        self.contexts = list(tx.state.contexts.exits)  # with-blocks the body may have left open
        return self

    def __exit__(self, *exc) -> None:
        if self.kept:
            return
        if self.watch is not None:
            self.watch.undo_writes()
        tx = self.tx
        stack, locals_, lazy, tx.ip, tx.current, tx.user_with_depth, tx.state.breaks.region = (
            self.saved
        )
        tx.stack[:] = stack
        tx.locals.clear()
        tx.locals.update(locals_)
        tx.lazy_locals.clear()
        tx.lazy_locals.update(lazy)
        for left_open in tx.state.contexts.exits[len(self.contexts) :][::-1]:
            tx.state.contexts.exit(left_open)
