"""Operations entering the graph: `graph_call` adds a NumPy call (or a method, attribute,
item or in-place operation) and runs it on the example values, so shapes, dtypes and NumPy
scalar types are exactly NumPy's, without ever mutating a real input (writes go to private
copies, see `examples.ExampleMemory`). Its result becomes a value of the trace. ``state`` is
the `trace_state.TraceState` the operation belongs to."""

from __future__ import annotations

import dataclasses

import numpy as np

from ..ir.canonical import canonicalize
from ..ir.node import FP, RAISE, Node, TensorMeta, describe_value, nodes_in
from ..values.arrays import ArrayValue, NumpyValue, ScalarValue, SymFloat, SymInt
from ..values.containers import ListValue, SliceValue, TupleValue, rebuild
from ..values.core import Const, NotGraphArgument, Value
from ..values.source import AttrSource
from . import data_sizes, effects, masked
from .examples import (
    run_with_stand_ins,
    sizes_follow_data,
    traced_leaves,
    value_dependent_shape,
)


def graph_call(state, op: str, target, args: tuple, kwargs: dict, *, name: str,
               writes: list | None = None, example_fn=None, data_shape: bool = False) -> Value:  # fmt: skip
    """Add ``target(*args, **kwargs)`` (or a method/attr/getitem) and return its value.

    The operation runs on the examples, writes included (see `examples.ExampleMemory`):
    ``writes`` are the arguments it writes into, found from NumPy's signatures
    (``out=``, in-place methods and functions) unless given (custom ops). A masked value
    among the arguments (``z[m]``) goes to `masked.call`. ``data_shape``: NumPy's table says
    the output size follows array values (``np.nonzero``): a size from data (`data_sizes`).
    """
    if masked.first_masked((args, kwargs)) is not None:
        return masked.call(state, op, target, args, kwargs, name)
    what = _op_text(op, target)
    if data_shape and state.inputs.has_dask:
        raise state.graph_break("data_dependent_shape", f"{what}: its output size follows array "
                                "values, which a Dask array has only once computed (its chunk "
                                "sizes are unknown until then), so this part runs as plain "
                                "Dask code")  # fmt: skip
    if writes is None:
        try:
            writes = effects.written_values(op, target, args, kwargs)
        except effects.UnknownWrites:
            raise state.graph_break("unsupported_numpy", f"{what}: NumPy does not say "
                                   "whether it writes into its arguments") from None  # fmt: skip
    _check_writes(state, what, writes)
    g_args, g_kwargs = as_graph_arg(state, args), as_graph_arg(state, kwargs)
    if writes:
        masked.note_writes(state, writes)
    written_inputs = _prepare_writes(state, writes)
    for w in writes:
        state.note_write(w.example)
    # in a loop body, whose writes to the examples are undone after its trace
    example = run_with_stand_ins(op, example_fn or target, args, kwargs, writes,
                                 state.examples_differ, state.loop_watch is not None)  # fmt: skip
    if example_fn is not None:
        state.examples_differ.append(f"{what}: its example made by a function of its own")
    leaves = traced_leaves((args, kwargs))
    if data_shape and not data_sizes.takes(example):
        raise state.graph_break("data_dependent_shape", f"{what}: its output shape depends on "
                                f"array values, and it returns a {type(example).__name__}")  # fmt: skip
    sized_by_data = data_sizes.follows(leaves) or data_shape or (
        not writes and _shape_from_data(state, what, op, example_fn or target, args, kwargs,
                                        example, leaves)
    )  # fmt: skip
    varies = not writes and _check_static_shape(state, op, example_fn or target, args, kwargs,
                                                example, leaves)  # fmt: skip
    node = state.graph.add(*canonicalize(op, target, g_args, g_kwargs), name=name,
                          stack=state.user_stack())  # fmt: skip
    node.mutates = bool(writes)
    node.writes_inputs = written_inputs
    node.errstate = state.contexts.errstate()
    node.risk = effects.risk(op, target, args, kwargs, dynamic=state.inputs.has_dynamic_dims)
    if node.risk == FP and any(v in ("raise", "call") for _, v in node.errstate):
        node.risk = RAISE  # traced inside np.errstate(...="raise")
    if op == "inplace":  # canonical form: ``np.add(a, b, out=a)``, whose value is ``a``
        example = writes[0].example
    if op == "setitem":
        return writes[0]
    node.tensor = tensor_meta(state, example)
    watch = state.loop_watch
    if (
        watch is not None
        and np.ndim(example)
        and type(example) is np.ndarray
        and (varies or any(watch.varies(v) for v in leaves))
    ):  # a shape that changes every iteration of the loop being captured: not static
        watch.varying.add(id(node))
        node.tensor = TensorMeta.of(example, symbolic=True)
    node.meta = node.tensor.text()
    if sized_by_data:
        data_sizes.mark(node, example)
    return value_of(state, node, example, writes) if op != "inplace" else writes[0]


def opaque_call(state, op: str, target, args: tuple, example, *, name: str, mutates: bool = False,
                writes_inputs: tuple = (), risk: str = RAISE) -> Value:  # fmt: skip
    """A node the tracer built itself and already ran on the examples (a loop node); it may
    write into its arguments (``mutates``: the graph inputs whose memory it writes are
    ``writes_inputs``), and may fail as ``risk`` says (then the frame runs again eagerly,
    `graph_failure`)."""
    node = state.graph.add(op, target, as_graph_arg(state, args), {}, name=name,
                           stack=state.user_stack(), risk=risk)  # fmt: skip
    node.mutates, node.writes_inputs = mutates, writes_inputs
    node.errstate = state.contexts.errstate()
    node.tensor = tensor_meta(state, example)
    node.meta = node.tensor.text()
    if isinstance(example, tuple) and any(type(e) in (int, float) for e in example):
        return TupleValue([_opaque_item(state, node, i, e) for i, e in enumerate(example)])
    return value_of(state, node, example)


def _opaque_item(state, node: Node, i: int, example) -> Value:
    """An item of an opaque call's tuple; an int or a float (a loop's counter) is one of the
    graph, whose value is known only when the loop runs: the trace breaks where it is needed
    as a number."""
    item = state.graph.add("getitem", None, (node, i), name=f"{node.name}_{i}",
                           meta=describe_value(example), stack=node.stack, risk="silent")  # fmt: skip
    if type(example) not in (int, float):
        item.tensor = tensor_meta(state, example)
        return value_of(state, item, example)

    def needed_as_number():
        raise state.graph_break("data_dependent_value", f"{item.name}, a number a loop node "
                                "computes (known only when it runs), is used as a Python number")  # fmt: skip

    if type(example) is int:
        return SymInt(item, example, frozenset(), on_concrete=(needed_as_number,))
    return SymFloat.leaf(item, example, needed_as_number)


def tensor_meta(state, example) -> TensorMeta:
    """The structured meta of a value computed in the graph, with the graph input whose
    memory it views, if any."""
    meta = TensorMeta.of(example, symbolic=state.inputs.has_dynamic_dims)
    if isinstance(example, np.ndarray):
        block = state.memory.block_of(example)
        if block is not None and block.inputs:
            meta = dataclasses.replace(meta, view_of=block.inputs[0][0].node.name)
    return meta


def _shape_from_data(state, what: str, op: str, target, args, kwargs, example,
                     leaves: list) -> bool:  # fmt: skip
    """Whether the result's shape follows array values (``np.repeat(x, counts)``,
    ``np.zeros(counts.max())``): a size from data (`data_sizes`), or, where those are turned
    off, a break. ``leaves``: the arguments' `traced_leaves`."""
    data = [v for v in leaves if isinstance(v, NumpyValue)]
    # An element-wise operation's or an index's shape follows shapes, not array values; the
    # numbers in a slice (``a[:n]``) still make it.
    if effects.shape_from_meta(op, target) or not value_dependent_shape(
        op, target, args, kwargs, example, data
    ):
        return False
    if not (data_sizes.enabled() and sizes_follow_data(op, target, args, kwargs, example, data)):
        raise state.graph_break(
            "data_dependent_shape", f"{what}: its output shape depends on array values",
            "Keep sizes static, or compute them outside the compiled function.",
        )  # fmt: skip
    return True


def _check_static_shape(state, op: str, target, args, kwargs, example, leaves: list) -> bool:
    """A result shape that follows a dynamic int or float argument pins its value
    (``np.arange(step)``, ``a[:n]``). True when it follows the index of the loop whose body is
    traced (``a[:k]``: it varies per iteration), or a slice bound read from an array there.
    ``leaves``: the arguments' `traced_leaves`."""
    data = [v for v in leaves if isinstance(v, NumpyValue)]
    watch = state.loop_watch
    index = [v for v in leaves if watch is not None and watch.follows_index(v)]
    numbers = [
        v for v in leaves if not isinstance(v, NumpyValue) and not any(v is i for i in index)
    ]
    # A slice's length follows its bounds at the array's ends (``a[n:n + 2]`` is shorter at
    # the last element) where a nudge of the bound may not show it: a number in a slice
    # always counts.
    in_slice = _slice_numbers((args, kwargs))
    if any(v is s for v in numbers for s in in_slice) or value_dependent_shape(
        op, target, args, kwargs, example, numbers
    ):
        for value in numbers:
            value.constant()  # pins it (the index of an enclosing loop: that one is unrolled)
    if watch is not None and any(v is s for v in data for s in in_slice):
        return True  # a bound read from an array (`operations.index_arg`): it varies too
    return bool(index) and (
        any(v is s for v in index for s in in_slice)
        or value_dependent_shape(op, target, args, kwargs, example, index)
    )


def _slice_numbers(obj) -> list:
    """The values inside the slices among an operation's arguments."""
    if isinstance(obj, (tuple, list)):
        return [v for item in obj for v in _slice_numbers(item)]
    if isinstance(obj, dict):
        return _slice_numbers(list(obj.values()))
    if isinstance(obj, (TupleValue, ListValue)):
        return _slice_numbers(obj.items)
    if isinstance(obj, SliceValue):
        return list(obj.parts())
    return []


def _check_writes(state, what: str, writes: list) -> None:
    """Break where an operation writes into something the graph cannot write."""
    for w in writes:
        if not isinstance(w, ArrayValue):
            raise state.graph_break("unsupported_numpy", f"{what} writing into {w.describe()}")
        if writes_dask(state, w.node):
            raise state.graph_break("unsupported_mutation", f"{what} writes into an array "
                                    "computed from a Dask array: a Dask array is never written "
                                    "in place (x[i] = v makes a new graph for x alone, x += 1 "
                                    "a new array), so this part runs as plain Dask code")  # fmt: skip


def writes_dask(state, node: Node) -> bool:
    """Whether a write into ``node``'s array could write a Dask array's data, where NumPy's
    in-place semantics (views share memory) and Dask's (a new graph) part: ``node`` derives
    from a Dask input, or is in a loop body of a frame that has one (a body's inputs stand
    for values made outside it)."""
    if not state.inputs.has_dask:
        return False
    if state.graph is not state.root_graph:
        return True
    seen, todo = set(), [node]
    while todo:
        n = todo.pop()
        if n.op == "input" and n.tensor is not None and n.tensor.placement == "dask":
            return True
        for used in nodes_in((n.args, n.kwargs)):
            if id(used) not in seen:
                seen.add(id(used))
                todo.append(used)
    return False


def _prepare_writes(state, writes: list) -> tuple:
    """Make the written examples private; the graph inputs whose memory gets written and
    that are writeable at this point (what a graph that fails puts back, `graph_failure`).
    A read-only input viewing that memory is left out: it cannot be written, and it sees the
    memory a writeable one puts back (the write itself goes through a view of a writeable
    one, or of one the graph made writeable: ``v.flags.writeable = True``)."""
    inputs: list = []
    for w in writes:
        block = state.memory.prepare_write(w)
        if block is None:
            continue
        for value, writeable in block.inputs:
            # the caller's flag decides whether eager code raises here (a device array
            # has no flags: it is always writeable)
            if not value.device:
                state.guards.add(AttrSource(AttrSource(value.source, "flags"), "writeable"),
                           "const", writeable)  # fmt: skip
            if value.example.flags.writeable and value.node not in inputs:
                inputs.append(value.node)
    return tuple(inputs)


def value_of(state, node: Node, example: object, writes=()) -> Value:
    """Wrap an operation's example result, unpacking tuples/lists of arrays into items.
    A result that *is* a written argument (``out=``) is that argument's value."""
    for w in writes:
        if example is w.example:
            return w
    if type(example) is np.ndarray:
        if example.dtype == object:
            raise state.graph_break("unsupported_object", f"{_op_text(node.op, node.target)} "
                                   "makes an object array (its items are Python objects)")  # fmt: skip
        value = ArrayValue(node, example)
        state.memory.add(value)
        return value
    if isinstance(example, np.ndarray):
        raise state.graph_break("unsupported_object", f"{_op_text(node.op, node.target)} "
                               f"returns a {type(example).__qualname__} (an ndarray subclass)")  # fmt: skip
    if isinstance(example, np.generic):
        return ScalarValue(node, example)
    if isinstance(example, (tuple, list)) and all(
        isinstance(e, (np.ndarray, np.generic)) for e in example
    ):
        items = []
        for i, ex in enumerate(example):
            written = next((w for w in writes if w.example is ex), None)
            if written is not None:
                items.append(written)
                continue
            item = state.graph.add("getitem", None, (node, i), name=f"{node.name}_{i}",
                                  meta=describe_value(ex), stack=node.stack, risk="silent")  # fmt: skip
            item.tensor = tensor_meta(state, ex)
            if node.sized_by_data:
                data_sizes.mark(item, ex)
            items.append(value_of(state, item, ex))
        return TupleValue(items) if isinstance(example, tuple) else ListValue(items)
    if example is None:
        return Const(None)
    raise state.graph_break(
        "data_dependent_value",
        f"{_op_text(node.op, node.target)} returns a {type(example).__name__} computed from array data",
    )


def name_value(state, value: Value, name: str) -> None:
    """Name a graph node after the user's variable the first time it is stored."""
    node = (
        masked.name_of(value)
        if isinstance(value, masked.MaskedValue)
        else getattr(value, "node", None)
    )
    # (a loop body being traced names only its own nodes: the frame's keep their names)
    if isinstance(node, Node) and node.graph is state.graph and node.op != "input" and \
            id(node) not in state.named_nodes:  # fmt: skip
        state.named_nodes.add(id(node))
        state.graph.rename(node, name)


def _op_text(op: str, target) -> str:
    if op == "setitem":
        return "an item assignment"
    if op == "method":
        return f"ndarray.{target}()"
    return getattr(target, "__name__", str(target)) + "()"


# -- converting values to graph arguments and examples -------------------------------------


def as_graph_arg(state, value):
    """The graph-side form of an argument: nodes for graph values, constants as they are."""

    def graph_arg(v):
        try:
            return v.graph_arg()
        except NotGraphArgument:
            raise state.graph_break(
                "unsupported_object", f"{v.describe()} cannot be passed to a NumPy operation"
            ) from None

    return rebuild(value, graph_arg)
