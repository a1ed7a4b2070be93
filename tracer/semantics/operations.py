"""Python semantics on symbolic values: the entry points the opcode handlers call for
operators, truth, attributes, items and iteration.

Each asks the semantics of the value's family (`protocol`; the families register in `numbers`,
`arrays`, `containers`, `objects` and `masked_values`), a binary operator by Python's rule
(`protocol.binary`). They fold constants, add graph nodes for NumPy values, and raise located
graph breaks for what cannot be traced.
"""

from __future__ import annotations

import operator

from ..ir import operators
from ..state import masked
from ..state.trace_state import TraceState
from ..values.arrays import ArrayFlags, NumpyValue, SymInt
from ..values.containers import DictValue, ListValue, TupleValue
from ..values.core import Const, Obj, Value
from ..values.functions import UserFunction
from ..values.objects import Opaque, UserObject
from . import arrays, containers, masked_values, numbers, objects, protocol  # noqa: F401 - they register
from .folding import concretize
from .numbers import number_node
from .protocol import semantics_of

binary_op = protocol.binary  # ``a <op> b`` for an ``operator`` function


def compare_op(state: TraceState, symbol: str, a: Value, b: Value) -> Value:
    op = operators.BINARY[symbol]
    return binary_op(state, op.fn, a, b, name=op.name)


def unary_op(state: TraceState, fn, v: Value, name: str) -> Value:
    return semantics_of(v).unary(state, fn, v, name)


def logical_not(state: TraceState, v: Value) -> Value:
    """``not v``; of a comparison in a split loop's body (`number_compare`), a bool of the
    graph: its truth is still a break, but ``while not done & (k < n)`` is none."""
    if isinstance(v, SymInt) and v.branch:
        return number_node(state, operator.not_, [v], "not", risk="silent")
    return Const(not truth(state, v))


def truth(state: TraceState, v: Value) -> bool:
    """``bool(v)`` for a branch; a data-dependent break for arrays and NumPy scalars."""
    return semantics_of(v).truth(state, v)


def identity(state: TraceState, a: Value, b: Value) -> bool:
    """``a is b`` on symbolic values."""
    if a is b:
        return True
    if isinstance(a, TupleValue) and isinstance(b, TupleValue) and not a.items and not b.items:
        return a.namedtuple is b.namedtuple is None  # () is a singleton
    if isinstance(a, NumpyValue) and isinstance(b, NumpyValue):
        for value in (a, b):
            if (follows := state.loop_fact(value, "identity")) is not None:
                raise follows
        same = a.example is b.example
        if a.source is not None and b.source is not None:
            state.guards.add(a.source, "alias", (b.source, same))
        return same
    for opaque, other in ((a, b), (b, a)):
        if isinstance(opaque, Opaque):
            return _opaque_identity(state, opaque, other)
    known_a, known_b = _known_object(a), _known_object(b)
    if known_a is not _UNKNOWN and known_b is not _UNKNOWN:
        same = known_a is known_b
        if a.source and b.source and not isinstance(a, Obj) and not isinstance(b, Obj):
            # constants and objects are guarded by value or type, not identity: whether these
            # two are one object is a guard of its own (Obj values are guarded by identity)
            state.guards.add(a.source, "alias", (b.source, same))
        return same
    return False  # a value made in the trace is never one of these objects


_UNKNOWN = object()


def _opaque_identity(state: TraceState, opaque: Opaque, other: Value) -> bool:
    """``opaque is other``: False for a value the trace made (the opaque object existed
    before) and for a value of another type (both types are guarded); else a break."""
    if other.source is None or other.python_type() is not opaque.cls:
        return False
    raise state.graph_break("unsupported_object", f"`is` on {opaque.describe()}")


def _known_object(v: Value):
    if isinstance(v, UserObject) and v.new_cls is not None:
        return _UNKNOWN
    if isinstance(v, (Const, Obj, UserObject)):
        return v.value
    if isinstance(v, (ListValue, DictValue)) and v.source is not None:
        return v  # pre-existing containers are one value per object (TraceState._shared)
    if isinstance(v, UserFunction) and v.fn is not None:
        return v.fn
    return _UNKNOWN


def get_attr(state: TraceState, v: Value, name: str, tx) -> Value:
    return semantics_of(v).get_attr(state, v, name, tx)


# ``arr.flags.<name> = v`` is ``arr.setflags(<keyword>=v)``
_SETFLAGS = {"writeable": "write", "aligned": "align", "writebackifcopy": "uic"}


def store_attr(state: TraceState, obj: Value, name: str, value: Value) -> None:
    """``obj.name = value`` of what is not a user object (`user_objects.store_attr`)."""
    if isinstance(obj, ArrayFlags) and name in _SETFLAGS:
        state.graph_call("method", "setflags", (obj.array,), {_SETFLAGS[name]: value},
                         name="setflags")  # fmt: skip
        return
    raise state.graph_break(
        "unsupported_mutation", f"setting attribute {name!r} of {obj.describe()}"
    )


def get_item(state: TraceState, obj: Value, index: Value, tx) -> Value:
    masked.escape_selection(obj, index)
    semantics = semantics_of(obj)
    if isinstance(index, SymInt) and not semantics.symbolic_index:
        index = Const(concretize(state, index))
    return semantics.get_item(state, obj, index, tx)


def set_item(state: TraceState, obj: Value, index: Value, value: Value) -> None:
    masked.escape_selection(obj, index)
    # ``a[mask] = v``: a masked write in the graph; a masked value stored elsewhere breaks
    if not masked.store(state, obj, index, value):
        semantics_of(obj).set_item(state, obj, index, value)


def iterate(state: TraceState, v: Value, taker: bool = False, loop: bool = False) -> list[Value]:
    """The items a for-loop over ``v`` sees, all known at trace time (the loop is unrolled);
    ``taker``: for the iterator that took ``v`` (`containers.take`). ``loop``: for a loop
    (``GET_ITER``), which breaks instead of unrolling a number of iterations that is a dynamic
    size: it runs in Python (split), so that a new size does not recompile."""
    return semantics_of(v).iterate(state, v, taker, loop)
