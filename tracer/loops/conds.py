"""Branches on array values as ``cond`` nodes: ``if x[i] > best: best = x[i]`` would break the
graph (the branch's truth is data); instead both sides of the ``if`` are traced and one node
runs the side its predicate picks (`ir.cond_nodes.Cond`).

At a conditional jump on an array value that is no while loop's test (`bytecode.if_shapes` reads
the ``if`` around it: its sides up to where they meet again), each side is traced once into a graph
of its own (`loop_body.BodyTrace`), from the state before the jump: what tracing one side did to
the trace (locals, the examples it wrote) is put back before the other is traced. The locals either
side sets that the code after the ``if`` reads are the sides' outputs: on both sides of one kind
(class, dtype and shape; or both Python ints, or both floats), a side that leaves one alone giving
back its value from before. The node ``cond(pred, *read)`` is then run on the examples, so the
trace goes on with the real side's results.

Anything else breaks the graph at the jump, as before, with the reason in the break's hints:
a side that returns, raises, leaves a loop or changes state the graph does not hold (a list, an
attribute, a global), outputs of different kinds, a local set on one side only that the code
after reads, a predicate of several values (``bool`` raises there).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..bytecode import analysis
from ..bytecode.if_shapes import IfShape, if_shape, raises_always, side_exits
from ..errors import UserErrorInTrace
from ..ir import file_labels
from ..ir.cond_nodes import Cond, SideNotTraced, side_not_traced
from ..ir.first_run import run_keeping
from ..ir.graph import fresh_name_in_all, loop_function
from ..ir.node import FP, RAISE, SILENT, Node, TensorMeta, describe_value, nodes_in, substitute
from ..state import graph_calls
from ..state.examples import as_example
from ..values.arrays import NumpyValue, SymFloat, SymInt
from ..values.core import UNBOUND, Const, Obj, Value
from . import either_float
from .loop_body import (
    BodyTrace,
    NotCaptured,
    RaisesOnExamples,
    Snapshot,
    check_instructions,
    same_constant,
    same_kind,
    uninitialized,
    union,
    values_by_node,
)


@dataclass
class _Side:
    """One side traced: its body, the locals it set (their values at its end); or, where it
    raised on the examples (which took the other side), why (``untraced``: its body is a
    `side_not_traced` call)."""

    body: BodyTrace
    ends: dict[str, Value]
    stack: list = field(default_factory=list)  # the translator's stack at its end
    kept: int = 0  # how many of the stack's values from before the branch it left in place
    untraced: str = ""


def _untraced_side(state, body: BodyTrace, reason: str) -> _Side:
    """A side that raises, or raised on the examples: eager code runs it (the frame runs
    again, `graph_failure`) if a call takes it; the graph never does."""
    body.graph.add("call", side_not_traced, (reason,), name="side_not_traced",
                   stack=state.user_stack(), risk=RAISE)  # fmt: skip
    return _Side(body, {}, untraced=reason)


def capture(tx, inst, pred: NumpyValue) -> str | None:
    """At a conditional jump on the array value ``pred``: if it is an ``if``'s test whose sides
    can be a cond node, add the node and go on after the ``if`` (returns None); else the
    reason it is not one ("" for a jump that is no ``if``). The translator is as it was where
    it is not."""
    shape = if_shape(tx.instrs, tx.ip - 1)
    if shape is None:
        return ""
    try:
        if np.ndim(pred.example) != 0:
            raise NotCaptured("the condition has several values (bool() raises for it)")
        for start, stop in (shape.then_side, shape.else_side):
            if not raises_always(tx.instrs, start, stop):
                check_instructions(tx, start, stop, start, stop + 1,
                                   side_exits(tx.instrs, start, stop, shape.join), "the branch")  # fmt: skip
        with Snapshot(tx) as snapshot:  # put back if a side is not captured
            _capture(tx, shape, pred)
            snapshot.keep()
    except NotCaptured as why:
        return str(why)
    tx.ip = shape.join
    return None


def _capture(tx, shape: IfShape, pred: NumpyValue) -> None:
    state = tx.state
    bodies = [BodyTrace(tx, start, stop, Snapshot(tx), f"cond_{side}")
              for (start, stop), side in ((shape.then_side, "then"), (shape.else_side, "else"))]  # fmt: skip
    entry = {}
    for body in bodies:  # lazy locals, globals and cells the sides read: loaded once, before
        entry.update(body.read_inputs())
    roots = [pred, *tx.stack, *tx.locals.values()]  # the values the sides may read
    sides = _trace_sides(tx, bodies, shape, pred)
    kept = _stack_outputs(sides)
    live_after = {*analysis.live_locals_at(tx.code, tx.instrs[shape.join].offset),
                  *(name for s in sides for name in s.ends if name.startswith(_STACKED))}  # fmt: skip
    outputs, constants = _outputs(sides, entry, live_after)
    for side in sides:
        items = [None if side.untraced else _output_item(side.ends.get(name, entry.get(name, UNBOUND)))
                 for name in outputs]  # fmt: skip
        side.body.graph.add("output", None, (tuple(items),), name="output")
    read = _lift_shared(tx, [s.body.graph for s in sides], roots)
    for side in sides:
        side.body.graph.eliminate_dead_code()
        side.body.graph.lint()
    cond = Cond(sides[0].body.graph, sides[1].body.graph)
    traced = next(s for s in sides if not s.untraced)

    def stand_in() -> tuple:  # a traced side's results, where the examples reach no side
        return tuple(as_example(traced.ends.get(name, entry.get(name, UNBOUND)))
                     for name in outputs)  # fmt: skip

    node, items = _add_node(state, cond, (pred, *read), bool(outputs), stand_in)
    ends = {**constants, **dict(zip(outputs, items, strict=True))}
    del tx.stack[kept:]
    for local, value in sorted(ends.items()):  # the stack's values in order
        if local.startswith(_STACKED):
            tx.push(value)
        else:
            if local in outputs:
                graph_calls.name_value(state, value, local)
            tx.locals[local] = value
    # (an untraced side's stores never reach the code after the branch: it raises)
    stored = {name for s in sides if not s.untraced for name in s.body.stored}
    for local in stored - set(outputs) - set(constants):
        tx.locals[local] = UNBOUND  # a temporary of a side no one reads after the branch
    _name_apart(state.graph, cond)  # after the items took the user's names
    gives = tuple("the value it leaves" if o.startswith(_STACKED) else o for o in outputs)
    state.conds.append(CondRecord(tx.code.co_filename, tx.instrs[tx.ip - 1].line or 0,
                                  sum(body.op_count() for body in cond.bodies), gives,
                                  state.graph.cond_code(node), "".join(s.untraced for s in sides)))  # fmt: skip


def _trace_sides(tx, bodies: list[BodyTrace], shape: IfShape, pred) -> list[_Side]:
    """Each side traced (the one that gives the test's value with ``pred`` on the stack), or not
    traced where it raises (``assert``), or raised on the examples (the side the examples take
    may not: the program raises there, the frame runs eagerly; in a loop body traced on an
    iteration the loop never runs, either may)."""
    taken, join = 0 if bool(pred.example) else 1, shape.join
    if _unreached(tx.state):  # no side is taken on the examples: both may raise there
        taken = -1
    sides = []
    for position, (body, name) in enumerate(zip(bodies, ("then", "else"), strict=True)):
        if raises_always(tx.instrs, body.start, body.stop):
            if position == taken:
                raise UserErrorInTrace(RuntimeError("the traced code raises an exception"))
            sides.append(_untraced_side(tx.state, body, f"its {name} side raises (an assert "
                                        "that fails, a raise statement)"))  # fmt: skip
            continue
        try:
            given = [pred] if position == shape.gives_test else []
            # `a and b` whose `b` compares Python ints (`while z < 4.0 and n < m:`): a NumPy
            # bool either way
            as_bool = shape.gives_test == 1 - position
            sides.append(_trace_side(tx, body, join, given, as_bool))
        except RaisesOnExamples as why:
            if position == taken:
                raise  # eager code raises there too
            error = why.error
            sides.append(_untraced_side(tx.state, body, f"its {name} side raised "
                                        f"{type(error).__name__} when traced ({error})"))  # fmt: skip
    if all(side.untraced for side in sides):
        raise NotCaptured("both its sides raise on the traced values")
    return sides


def _stack_outputs(sides: list[_Side]) -> int:
    """The stack after the branch: what both sides left in place (returns how many values),
    then what either side changed or pushed, their outputs (a conditional expression's value,
    a returned value, the operation a side ends with on a value from before the branch: 3.12
    copies ``y + (a if c else b)``'s add into each side)."""
    traced = [s for s in sides if not s.untraced]
    kept = min(s.kept for s in traced)
    if len({len(s.stack) for s in traced}) != 1:
        raise NotCaptured("its sides leave stacks of different heights")
    for side in traced:
        side.ends.update((_stacked(k), v) for k, v in enumerate(side.stack[kept:]))
    return kept


def _add_node(state, cond: Cond, args: tuple, gives: bool, stand_in) -> tuple[Node, list]:
    """The cond node, run on the examples (the trace goes on with the side taken's results),
    and the values of its items. In a body traced on an iteration its loop never runs, where
    the examples may make either side raise, a side's traced results (``stand_in``) do."""
    try:
        with state.budget.paused(), state.phases.time("loop run"):
            results, _ = run_keeping(loop_function(cond), as_example(args),
                                     state.contexts.fp_ignored(), uninitialized(args, 0))  # fmt: skip
    except Exception as error:
        if _unreached(state):
            results = stand_in()
        elif isinstance(error, SideNotTraced):  # a cond inside takes a side only eager code runs
            raise UserErrorInTrace(error) from None
        else:  # any other error: the frame meets it where it is
            raise NotCaptured(f"the branch raises {type(error).__name__} on the traced "
                              "values") from None  # fmt: skip
    nodes = [n for body in cond.bodies for n in body.nodes if n.op not in ("input", "output")]
    writers = [n for n in nodes if n.mutates]
    risks = {n.risk for n in nodes}
    result = graph_calls.opaque_call(
        state, "cond", cond, args, results, name="cond", mutates=bool(writers),
        writes_inputs=union(n.writes_inputs for n in writers),
        risk=next((r for r in (RAISE, FP) if r in risks), SILENT))  # fmt: skip
    node = next(n for n in reversed(state.graph.nodes) if n.target is cond)
    return node, (result.items if gives else [])


def _unreached(state) -> bool:
    return state.loop_watch is not None and state.loop_watch.unreached


def _trace_side(tx, body: BodyTrace, join: int, given: list, as_bool: bool = False) -> _Side:
    """``body`` traced from the translator's state (with ``given`` pushed first), which is put
    back after (with what the side wrote into the examples); ``as_bool``: the side gives a
    boolean test's value, made a NumPy bool where it is a comparison of Python ints."""
    state = tx.state
    with body.snapshot:  # not kept
        before = list(tx.stack)
        saved, state.comparisons_in_graph = state.comparisons_in_graph, as_bool
        try:
            stack = body.run(body.stop, lambda: given,
                             exits=side_exits(tx.instrs, body.start, body.stop, join), stack_base=0)  # fmt: skip
        finally:
            state.comparisons_in_graph = saved
        if as_bool and stack:
            stack[-1] = _numpy_bool(tx, body, stack[-1])
        ends = {name: tx.locals.get(name, UNBOUND) for name in body.stored}
        for name, value in ends.items():
            if body.snapshot.watch.varies(value):
                raise NotCaptured(f"{name}'s shape follows array values in a side")
    kept = next((k for k, (a, b) in enumerate(zip(stack, before)) if a is not b),
                min(len(stack), len(before)))  # fmt: skip
    return _Side(body, ends, stack, kept)


def _numpy_bool(tx, body: BodyTrace, value: Value) -> Value:
    """``value`` as a NumPy bool where it is a Python bool, constant or of the graph (a
    comparison of ints; ``np.bool_(value)`` traced into the side's graph)."""
    if isinstance(value, Const) and type(value.value) is bool:
        return Const(np.bool_(value.value))
    state = tx.state
    outer, state.graph = state.graph, body.graph
    try:
        return numpy_bool(tx, value)
    finally:
        state.graph = outer


def numpy_bool(tx, value: Value) -> Value:
    """A bool of the graph (a comparison of ints, `SymInt`) as a NumPy bool of the graph now
    traced (``np.bool_(value)``); any other value as it is."""
    if not (isinstance(value, SymInt) and value.python_type() is bool):
        return value
    return tx.call(Obj(np.bool_), [value], {})


_STACKED = "__tc_stacked_"  # the name of a value a side leaves on the stack, by its position


def _stacked(position: int) -> str:
    """What the value a side leaves at ``position`` on the stack (above the branch's) goes by
    among its outputs: a conditional expression's value, a side's returned value."""
    return f"{_STACKED}{position:03d}"


def _described(name: str) -> str:
    """A local by its name; a value a side leaves on the stack as what it is to the user."""
    return "the value each side gives (returns, or computes in an expression)" \
        if name.startswith(_STACKED) else name  # fmt: skip


def _outputs(sides: list[_Side], entry: dict, live_after) -> tuple[list[str], dict]:
    """The locals the cond node gives (set by a side, read after the branch), and those both
    sides leave the same constant (or the one traced side leaves a constant: the code after
    the branch runs only after it)."""
    outputs, constants = [], {}
    names = sorted({name for s in sides for name in s.ends} & set(live_after))
    traced = [s for s in sides if not s.untraced]
    if len(traced) == 1:
        for name in names:
            end = traced[0].ends[name]
            if isinstance(end, Const):
                constants[name] = end
            else:
                outputs.append(name)
        return outputs, constants
    for name in names:
        a, b = (s.ends.get(name, entry.get(name, UNBOUND)) for s in sides)
        what = _described(name)
        if a is UNBOUND or b is UNBOUND:
            raise NotCaptured(f"{what} is set on one side only and read after the branch")
        if same_constant(a, b):
            constants[name] = a
        elif same_kind(a, b) or _same_number_type(a, b) or _numpy_bools(a, b):
            outputs.append(name)
        else:
            raise NotCaptured(f"{what} is {a.describe()} on one side and {b.describe()} on the "
                              "other (a cond node's sides give values of one kind)")  # fmt: skip
    return outputs, constants


def _numpy_bools(a: Value, b: Value) -> bool:
    """A NumPy bool of the graph and a constant one (``a and b`` whose ``b`` is known)."""
    kinds = {type(v.value if isinstance(v, Const) else getattr(v, "example", None)) for v in (a, b)}
    return kinds == {np.bool_} and any(isinstance(v, Const) for v in (a, b))


def _same_number_type(a: Value, b: Value) -> bool:
    """Both Python ints, or both floats (constants or numbers of the graph)."""
    kinds = {_number_type(a), _number_type(b)}
    return len(kinds) == 1 and None not in kinds


def _number_type(value: Value) -> type | None:
    if isinstance(value, Const):
        return type(value.value) if type(value.value) in (int, float) else None
    if isinstance(value, SymInt):
        return int if type(value.hint) is int else None
    return float if isinstance(value, SymFloat) else None


def _output_item(value: Value):
    """What a side's output tuple holds for ``value``: its node, or the constant."""
    either_float.refuse(value)
    node = getattr(value, "node", None)
    if isinstance(node, Node):
        return node
    if isinstance(value, Const):
        return value.value
    raise NotCaptured(f"a side gives {value.describe()}, which a graph cannot return")


def _name_apart(enclosing, cond: Cond) -> None:
    """Name the sides' nodes (those of the conds inside them too) apart from every name of the
    ``enclosing`` graph, where they are printed inline; the sides' shared inputs by one name."""
    for inputs in zip(*(body.inputs for body in cond.bodies), strict=True):
        name = enclosing.fresh_name(inputs[0].name)
        for node in inputs:
            node.name = name
    for body in cond.bodies:
        for node in body.nodes:
            if node.op != "input":
                node.name = enclosing.fresh_name(node.name)
            if isinstance(node.target, Cond):
                _name_apart(enclosing, node.target)


def _lift_shared(tx, graphs: list, roots: list) -> list[Value]:
    """Nodes of the frame's graph the sides use become inputs of both (by the same names, in
    one order); returns the values they stand for (the cond node's arguments after the
    predicate), found from the frames or ``roots``."""
    inside = {id(n) for g in graphs for n in g.nodes}
    free: dict[int, Node] = {}
    for graph in graphs:
        for node in graph.nodes:
            for used in nodes_in((node.args, node.kwargs)):
                if id(used) not in inside:
                    free.setdefault(id(used), used)
    known = values_by_node(tx, roots)
    values = []
    renamed: list[dict] = [{} for _ in graphs]
    for key, node in free.items():
        value = known.get(key)
        if value is None:
            raise NotCaptured(f"a side reads {node.name}, which cannot be passed to a cond node")
        values.append(value)
        name = fresh_name_in_all(graphs, node.name)
        example = as_example(value)
        for graph, names in zip(graphs, renamed, strict=True):
            made = Node(graph, name, "input", f"cond {node.name}", meta=describe_value(example),
                        tensor=TensorMeta.of(example))  # fmt: skip
            graph.nodes.insert(len(graph.inputs), made)
            names[key] = made
    for graph, names in zip(graphs, renamed, strict=True):
        for node in graph.nodes:
            node.args, node.kwargs = substitute((node.args, node.kwargs), names)
    return values


@dataclass(frozen=True)
class CondRecord:
    """A branch on data captured as a cond node, for `explain` and the widgets: where, the ops
    of its sides, the locals it sets, and its function's code (``sides``)."""

    filename: str
    lineno: int
    body_ops: int
    outputs: tuple[str, ...]
    sides: str
    untraced: str = ""  # why a side runs eagerly (the frame again), if one does

    def describe(self) -> str:
        sets = f", sets {', '.join(self.outputs)}" if self.outputs else ""
        eager = f"; {self.untraced}: if taken, the frame runs eagerly" if self.untraced else ""
        return (f"{file_labels.label(self.filename)}:{self.lineno}: cond node (the branch's "
                f"condition computed in the graph, only the side taken runs), {self.body_ops} "
                f"ops in its sides{sets}{eager}")  # fmt: skip
