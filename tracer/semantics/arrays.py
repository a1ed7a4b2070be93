"""NumPy arrays and scalars of the graph: operators, attributes and items as graph nodes, rows
iterated, truth a data-dependent break; ``arr.flags``."""

from __future__ import annotations

import operator

import numpy as np

from .. import user_text
from ..errors import UserErrorInTrace
from ..ir import numpy_table as table
from ..ir import operators
from ..ir.node import Node
from ..state import data_sizes, masked
from ..state.trace_state import TraceState
from ..values.arrays import ArrayFlags, ArrayMethod, ArrayValue, NumpyValue, SymInt
from ..values.containers import ListValue, SliceValue, TupleValue
from ..values.core import Const, Value
from ..values.functions import UserFunction
from ..values.objects import UserObject
from .folding import const_to_value, fixed_trip_count, fold, python_int, tested
from .protocol import Semantics, binary, register


@register(NumpyValue)
class NumpySemantics(Semantics):
    rank = 40  # an operator with an array or a NumPy scalar is the graph's
    symbolic_index = True

    def binary(self, state, fn, a, b, name, reflected):
        if operators.is_inplace(fn) and isinstance(a, ArrayValue):
            return state.graph_call("inplace", fn, (a, b), {}, name=name)
        return state.graph_call("call", operators.plain(fn), (a, b), {}, name=name)

    def unary(self, state, fn, v, name):
        return state.graph_call("call", fn, (v,), {}, name=name)

    def truth(self, state, v):
        what = "a NumPy array" if isinstance(v.example, np.ndarray) else \
            f"a NumPy {type(v.example).__name__}"  # fmt: skip
        explanation, hints = user_text.branch_words(tested(state), what)
        raise state.graph_break("data_dependent_branch", explanation, *hints)

    def get_attr(self, state, v, name, tx):  # a NumPy scalar's
        if name in ("dtype", "ndim", "shape", "size", "itemsize", "nbytes"):
            return const_to_value(getattr(v.example, name))
        if name in ("real", "imag"):
            return state.graph_call("attr", name, (v,), {}, name=name)
        if callable(getattr(v.example, name, None)):
            return ArrayMethod(v, name)
        return super().get_attr(state, v, name, tx)

    def get_item(self, state, obj, index, tx):
        index = index_arg(state, index)
        return state.graph_call("getitem", None, (obj, index), {}, name=f"{_hint(obj)}_item",
                                data_shape=_selects_by_mask(index))  # fmt: skip


@register(ArrayValue)
class ArraySemantics(NumpySemantics):
    def get_attr(self, state, v, name, tx):
        return _array_attr(state, v, name)

    def get_item(self, state, obj, index, tx):
        selection = masked.read(state, obj, index)  # ``z[m]``: made only if it must be
        if selection is not None:
            return selection
        return super().get_item(state, obj, index, tx)

    def set_item(self, state, obj, index, value):
        state.graph_call("setitem", None, (obj, index_arg(state, index), value), {}, name="setitem")

    def iterate(self, state, v, taker, loop):
        if v.example.ndim == 0:
            raise UserErrorInTrace(TypeError("iteration over a 0-d array"))
        dims = array_dims(state, v)
        if loop:
            fixed_trip_count(state, dims[0], f"the rows of {v.describe()}")
        n = python_int(state, dims[0])
        if not state.budget.rows_fit(n):
            raise state.graph_break("trace_budget", f"unrolling a loop over {n} rows would make "
                                    "more graph ops than tc.config.trace_max_ops")  # fmt: skip
        return [self.get_item(state, v, Const(i), None) for i in range(n)]


@register(ArrayFlags)
class FlagsSemantics(Semantics):
    def get_attr(self, state, v, name, tx):
        return fold(state, getattr, v.array.example.flags, name)

    def get_item(self, state, obj, index, tx):
        return fold(state, operator.getitem, obj.array.example.flags, index.constant())


def _array_attr(state: TraceState, v: ArrayValue, name: str) -> Value:
    if name in table.META_ATTRS:
        if name == "dtype":
            return Const(v.example.dtype)
        if name == "ndim":
            return Const(v.example.ndim)
        if name == "itemsize":
            return Const(v.example.itemsize)
        dims = array_dims(state, v)
        if name == "shape":
            return TupleValue(dims)
        size = Const(1)
        for d in dims:
            size = binary(state, operator.mul, size, d, "size")
        if name == "nbytes":
            return binary(state, operator.mul, size, Const(v.example.itemsize), "nbytes")
        return size
    if name in table.NODE_ATTRS:
        return state.graph_call("attr", name, (v,), {}, name=f"{v.node.name}_{name}")
    if name in table.LAYOUT_ATTRS and v.device:
        raise state.graph_break(
            "unsupported_object",
            f"{name} of a device array: its layout is its library's ({v.node.tensor.placement})",
        )
    if name in ("strides", "flags"):
        if (follows := state.loop_fact(v, name)) is not None:
            raise follows
        state.inputs.guard_layout()
        return ArrayFlags(v) if name == "flags" else const_to_value(v.example.strides)
    if name in table.LAYOUT_ATTRS:
        raise state.graph_break(
            "unsupported_numpy",
            f"ndarray.{name} exposes memory layout, which tcompile does not trace",
        )
    if callable(getattr(np.ndarray, name, None)):
        return ArrayMethod(v, name)
    if not hasattr(v.example, name):
        raise UserErrorInTrace(AttributeError(f"'numpy.ndarray' object has no attribute {name!r}"))
    raise state.graph_break("unsupported_numpy", f"ndarray attribute {name!r}")


def array_dims(state: TraceState, v: ArrayValue) -> list[Value]:
    """Each dim as a Const, or a SymInt for dynamic dims (graph inputs) and for any dim of an
    intermediate array while the trace has dynamic inputs."""
    if v.sym_dims is not None:
        return [Const(s) if d is None else d for s, d in zip(v.example.shape, v.sym_dims)]
    if v.node.sized_by_data:  # known when the graph runs: its dims read there
        return _dims_in_graph(state, v, frozenset(), (data_sizes.needed_as_number(state, v),))
    watch = state.loop_watch
    if watch is not None and watch.varies(v):  # sizes that follow the loop's index
        return _dims_in_graph(state, v, frozenset(), (watch.index_callback,))
    if v.source is None and state.inputs.has_dynamic_dims:
        return _dims_in_graph(state, v, None, ())
    return [Const(int(s)) for s in v.example.shape]


def _dims_in_graph(state: TraceState, v: ArrayValue, deps, on_concrete: tuple) -> list[SymInt]:
    """The array's dims read in the graph at run time, as symbolic ints."""
    shape = state.graph.add("call", np.shape, (v.node,), name=f"{v.node.name}_shape", meta="tuple",
                            stack=state.user_stack(), risk="silent")  # fmt: skip
    dims = []
    for i, s in enumerate(v.example.shape):
        node = state.graph.add("getitem", None, (shape, i), name=f"{v.node.name}_size{i}",
                               meta="int", risk="silent")  # fmt: skip
        dims.append(SymInt(node, int(s), deps, on_concrete=on_concrete))
    return dims


def _selects_by_mask(index: Value) -> bool:
    """Whether the index holds a boolean array (not 0-d): its selection's size follows the
    mask's values."""
    parts = index.items if isinstance(index, TupleValue) else [index]
    return any(
        isinstance(p, ArrayValue) and p.example.dtype == np.bool_ and p.example.ndim for p in parts
    )


def index_arg(state: TraceState, index: Value) -> Value:
    """Check an array index; boolean masks make the shape data-dependent."""
    parts = index.items if isinstance(index, TupleValue) else [index]
    for part in parts:
        if isinstance(part, SliceValue) and not all(
            _static_bound(state, p) for p in (part.start, part.stop, part.step)
        ):
            raise state.graph_break(
                "data_dependent_shape",
                "a slice bound computed from array values: the result's shape depends on it",
                "Keep slice bounds static (constants or shapes).",
            )
        if (
            isinstance(part, ArrayValue)
            and part.example.dtype == np.bool_
            and not (data_sizes.enabled() and part.example.ndim)
        ):  # a mask's selection has a size from data (`data_sizes`): a 0-d one adds a dim
            raise state.graph_break("data_dependent_shape", masked.EXPLANATION, masked.HINT)
        if isinstance(part, ListValue) and any(isinstance(i, ArrayValue) for i in part.items):
            raise state.graph_break("unsupported_numpy", "a list of arrays used as an index")
        if isinstance(part, (UserObject, UserFunction)):
            raise state.graph_break("unsupported_object", f"{part.describe()} used as an index")
    return index


def _static_bound(state: TraceState, bound: Value) -> bool:
    """A slice bound that is no array value; in a loop body being captured, an integer read
    from an array (``values[indptr[i]:indptr[i + 1]]``) is allowed too: the slice is computed
    per iteration, its length varying (`graph_calls`), as a bound that follows the index."""
    if not isinstance(bound, NumpyValue):
        return True
    return (
        state.loop_watch is not None
        and np.ndim(bound.example) == 0
        and np.asarray(bound.example).dtype.kind in "iu"
    )


def _hint(v: Value) -> str:
    node = getattr(v, "node", None)
    return node.name if isinstance(node, Node) else "v"
