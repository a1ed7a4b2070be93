"""What every family of Python's semantics shares: constants folded at trace time, dynamic
ints pinned to Python ints, values read without a guard, containers mutated."""

from __future__ import annotations

import types

import numpy as np

from .. import user_text
from ..errors import RestartTrace, UserErrorInTrace
from ..ir import quiet
from ..ir.node import describe_value
from ..state.trace_state import TraceState
from ..state.wrapping import CONST_TYPES, function_value
from ..user_code import is_user_function
from ..values.arrays import SymInt
from ..values.containers import DictValue, ListValue, SetValue, TupleValue
from ..values.core import Const, Obj, Value


def run_example(fn, *args, **kwargs) -> tuple[object, bool]:
    """``fn(*args, **kwargs)`` run at trace time, and whether eager code would warn there
    (``~True`` on Python 3.12+, a NumPy scalar overflow): then its result is that of a quiet
    run, and the operation must run in the graph too, which warns on every call."""
    try:
        with quiet.strict():
            return fn(*args, **kwargs), False
    except (Warning, FloatingPointError):
        with quiet.silenced():
            return fn(*args, **kwargs), True


def fold(state: TraceState, fn, *args, **kwargs) -> Value:
    """Run a pure Python operation on constants; the user's own error if it raises. One that
    warns is also put in the graph (its value unused), which warns at the user's line on
    every call, as eager code does, where a fold would warn once, when tracing."""
    try:
        result, warns = run_example(fn, *args, **kwargs)
    except Exception as error:
        raise UserErrorInTrace(error) from error
    if warns:
        state.examples_differ.append(f"{getattr(fn, '__name__', fn)} warned while tracing")
        node = state.graph.add("call", fn, args, kwargs, name=getattr(fn, "__name__", "fold"),
                               stack=state.user_stack(), risk="raise")  # fmt: skip
        node.meta = describe_value(result)
        node.errstate = state.contexts.errstate()  # the caller's np.errstate decides
    return const_to_value(result)


def const_to_value(result) -> Value:
    if type(result) in CONST_TYPES or isinstance(result, (np.generic, np.dtype)):
        return Const(result)
    if type(result) is tuple:
        return TupleValue([const_to_value(r) for r in result])
    if type(result) is list:
        return ListValue([const_to_value(r) for r in result])
    if type(result) is dict:
        return DictValue({k: const_to_value(v) for k, v in result.items()})
    if type(result) is slice or type(result) is frozenset:
        return Const(result)
    if type(result) is set:
        return SetValue(result)
    return Obj(result)


def concretize(state: TraceState, v: SymInt) -> int:
    """Use a dynamic size as a Python int: specialise the input dims it comes from."""
    for callback in v.on_concrete:
        callback()
    if v.deps is None and state.inputs.has_dask:  # static shapes would not help: no example
        raise state.graph_break("dask_size", f"a size of an array made from a Dask array "
                                f"({v.node.name}) is needed as a Python int here")  # fmt: skip
    if v.deps is None:
        raise RestartTrace(
            f"a size of an intermediate array ({v.node.name}) was used as a Python int"
        )
    for source_name, dim in v.deps:
        state.inputs.specialize_dim(source_name, dim)
    return v.hint


def python_int(state: TraceState, v: Value):
    return concretize(state, v) if isinstance(v, SymInt) else v.constant()


def mutate_list(state: TraceState, container: Value) -> None:
    """Containers made in the trace mutate freely; pre-existing ones are replayed after the graph."""
    state.note_mutation(container)
    if container.source is not None:
        state.effects.mutate(container)


def wrap_unguarded(state: TraceState, obj) -> Value:
    """A value read where no guard is needed (NumPy's namespace, builtins, imports)."""
    if type(obj) is types.FunctionType and is_user_function(obj):
        return function_value(obj, None)
    return const_to_value(obj)


def tested(state: TraceState) -> user_text.Condition | None:
    """What the user wrote for the value being tested for truth (a jump's condition; the
    call itself for ``bool(x)``, ``any(...)``), or None."""
    return state.tx.tested() if state.tx is not None else None


def fixed_trip_count(state: TraceState, size: Value | None, what: str) -> None:
    """A loop about to be unrolled over ``size`` items: a break when that is a dynamic size
    (an input's dim, a dynamic int, an int of a split loop's body), which unrolling would
    pin."""
    if isinstance(size, SymInt):
        raise state.graph_break("dynamic_trip_count", f"a loop over {what}, a dynamic number "
                                "of iterations, that cannot be one loop node")  # fmt: skip
