"""Python semantics on symbolic values: operators, truth, attributes, items, iteration.

The opcode handlers call these; they fold constants, add graph nodes for NumPy values, and
raise located graph breaks for what cannot be traced.
"""

from __future__ import annotations

import inspect
import operator
import types

import numpy as np

from . import masked, operators, quiet
from . import numpy_table as table
from .errors import RestartTrace, UserErrorInTrace
from .graph import Node
from .source import AttrSource, TypeSource
from .trace_state import TraceState
from .user_code import is_user_function
from .values.arrays import (
    ArrayFlags,
    ArrayMethod,
    ArrayValue,
    NumpyValue,
    ScalarValue,
    SymFloat,
    SymInt,
    is_dynamic_number,
)
from .values.containers import (
    ConstMethod,
    DictValue,
    Iterator,
    ListValue,
    RangeValue,
    SetValue,
    SliceValue,
    TupleValue,
)
from .values.core import Const, NotConstant, Obj, Value
from .values.functions import UserFunction
from .values.objects import BoundMethod, Opaque, SuperValue, UserObject
from .wrapping import CONST_TYPES, function_value

_SYMINT_OPS = {operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod, min}
_SILENT_INT_OPS = {
    operator.add,
    operator.sub,
    operator.mul,
    operator.neg,
    min,
}  # no ZeroDivisionError
_COMPARISONS = {operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne}


def fold(fn, *args, **kwargs) -> Value:
    """Run a pure Python operation on constants; the user's own error if it raises."""
    try:
        result = fn(*args, **kwargs)
    except Exception as error:
        raise UserErrorInTrace(error) from error
    return const_to_value(result)


def fold_operator(state: TraceState, fn, values: list[Value], name: str) -> Value:
    """An operator on constants, folded now; but when NumPy scalars are involved and the
    operation warns (overflow, division by zero), it goes into the graph instead, so it warns
    at the user's line on every call, as eager code does."""
    args = [v.constant() for v in values]
    if not any(isinstance(a, np.generic) for a in args):
        return fold(fn, *args)
    try:
        with quiet.strict():
            return const_to_value(fn(*args))
    except (Warning, FloatingPointError):
        return state.graph_call("call", fn, tuple(values), {}, name=name)
    except Exception as error:
        raise UserErrorInTrace(error) from error


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


# -- sizes ---------------------------------------------------------------------------------


def concretize(state: TraceState, v: SymInt) -> int:
    """Use a dynamic size as a Python int: specialise the input dims it comes from."""
    for callback in v.on_concrete:
        callback()
    if v.deps is None:
        raise RestartTrace(
            f"a size of an intermediate array ({v.node.name}) was used as a Python int"
        )
    for source_name, dim in v.deps:
        state.inputs.specialize_dim(source_name, dim)
    return v.hint


def python_int(state: TraceState, v: Value):
    return concretize(state, v) if isinstance(v, SymInt) else v.constant()


# -- operators -----------------------------------------------------------------------------


def binary_op(state: TraceState, fn, a: Value, b: Value, name: str) -> Value:
    """``a <op> b`` for an ``operator`` function (``operator.iadd`` for ``+=``)."""
    if isinstance(a, masked.MaskedValue) or isinstance(b, masked.MaskedValue):
        return masked.binary(state, fn, a, b)
    plain = operators.plain(fn)
    if isinstance(a, NumpyValue) or isinstance(b, NumpyValue):
        if operators.is_inplace(fn) and isinstance(a, ArrayValue):
            return state.graph_call("inplace", fn, (a, b), {}, name=name)
        return state.graph_call("call", plain, (a, b), {}, name=name)
    if isinstance(a, (SymInt, SymFloat)) or isinstance(b, (SymInt, SymFloat)):
        result = number_compare(state, plain, a, b, name)
        if result is not None:
            return result
    if isinstance(a, SymInt) or isinstance(b, SymInt):
        result = symint_op(state, plain, a, b, name) or symfloat_op(state, plain, [a, b], name)
        if result is not None:
            return result
        # not int arithmetic (``n < 3``, ``lst * n``, ``np.int8(1) + n``): as with the int
        a, b = (Const(python_int(state, v)) if isinstance(v, SymInt) else v for v in (a, b))
    if isinstance(a, SymFloat) or isinstance(b, SymFloat):
        result = symfloat_op(state, plain, [a, b], name)
        if result is not None:
            return result
    if isinstance(a, ListValue) and fn in (operator.iadd, operator.imul):
        # in place, like list.__iadd__/__imul__: every alias of the list sees it
        if fn is operator.iadd:
            items = a.items + iterate(state, b)
        else:
            try:
                items = a.items * python_int(state, b)
            except TypeError as error:
                raise UserErrorInTrace(error) from error
        mutate_list(state, a)
        a.items[:] = items
        return a
    if isinstance(a, (TupleValue, ListValue)) or isinstance(b, (TupleValue, ListValue)):
        return sequence_op(state, plain, a, b)
    if isinstance(a, UserObject) or isinstance(b, UserObject):
        raise state.graph_break(
            "unsupported_object", f"operator {name!r} on {a.describe()} and {b.describe()}"
        )
    try:
        return fold_operator(state, fn, [a, b], name)
    except NotConstant:
        raise state.graph_break(
            "unsupported_object", f"operator {name!r} on {a.describe()} and {b.describe()}"
        ) from None


def symint_op(state: TraceState, fn, a: Value, b: Value, name: str) -> SymInt | None:
    """Int arithmetic on a dynamic int, as a graph node; None for other operations."""
    if fn in _SYMINT_OPS and all(
        isinstance(v, SymInt) or type(getattr(v, "value", None)) is int for v in (a, b)
    ):
        try:
            hint = fn(*(v.hint if isinstance(v, SymInt) else v.value for v in (a, b)))
        except ZeroDivisionError as error:  # by a constant 0 (guarded): eager raises too
            raise UserErrorInTrace(error) from error
        args = tuple(v.node if isinstance(v, SymInt) else v.value for v in (a, b))
        node = state.graph.add("call", fn, args, name=name, meta="int", stack=state.user_stack(),
                               risk="silent" if fn in _SILENT_INT_OPS else "raise")  # fmt: skip
        symbolic = [v for v in (a, b) if isinstance(v, SymInt)]
        deps = [v.deps for v in symbolic]
        merged = None if any(d is None for d in deps) else frozenset().union(*deps)
        on_concrete = tuple(dict.fromkeys(c for v in symbolic for c in v.on_concrete))
        return SymInt(node, hint, merged, on_concrete=on_concrete, at_least=_bound(fn, a, b))
    return None


def _bound(fn, a: Value, b: Value) -> int:
    """The lower bound the guards assure for ``fn(a, b)``: a bounded size moved by a constant
    (``len(x) - 1`` is at least 1 where ``len(x)`` is at least 2)."""
    if fn is operator.add and isinstance(b, SymInt):
        a, b = b, a
    if fn not in (operator.add, operator.sub) or not isinstance(a, SymInt) or not a.at_least:
        return 0
    if not isinstance(b, Const) or type(b.value) is not int:
        return 0
    return max(0, a.at_least + (b.value if fn is operator.add else -b.value))


def number_compare(state: TraceState, fn, a: Value, b: Value, name: str) -> SymInt | None:
    """In a split loop's body (`glue.split_loop`), a comparison of dynamic ints (no array
    sizes) and floats, as a graph node giving a bool: a branch on it breaks, once per
    iteration, where pinning the numbers' values would recompile the body on every iteration
    (``while err > tol``). None elsewhere; any other use of the bool pins them."""
    if not state.per_iteration or fn not in _COMPARISONS:
        return None
    symbolic = [v for v in (a, b) if isinstance(v, (SymInt, SymFloat))]
    if not symbolic or any(
        not (isinstance(v, SymFloat) or (isinstance(v, SymInt) and v.deps == frozenset()))
        and type(getattr(v, "value", None)) not in (int, float)
        for v in (a, b)
    ):
        return None
    hint = fn(*(v.hint if isinstance(v, (SymInt, SymFloat)) else v.value for v in (a, b)))
    args = tuple(v.node if isinstance(v, (SymInt, SymFloat)) else v.value for v in (a, b))
    node = state.graph.add("call", fn, args, name=name, meta="int", stack=state.user_stack(),
                           risk="silent")  # fmt: skip
    pins = tuple(dict.fromkeys(
        c for v in symbolic for c in (v.on_concrete if isinstance(v, SymInt) else (v.pin,))
    ))  # fmt: skip
    return SymInt(node, hint, frozenset(), on_concrete=pins, branch=True)


_FLOAT_OPS = {operator.add, operator.sub, operator.mul, operator.truediv, operator.neg}


def symfloat_op(state: TraceState, fn, values: list[Value], name: str) -> Value | None:
    """Float arithmetic on dynamic floats, as a graph node giving a Python float; None where
    the value is needed instead (other operators, a result that is not a float)."""
    if fn not in _FLOAT_OPS or not all(
        isinstance(v, SymFloat)
        or is_dynamic_number(v)
        or type(getattr(v, "value", None)) in (int, float)
        for v in values
    ):
        return None
    hints = [v.hint if isinstance(v, (SymFloat, SymInt)) else v.value for v in values]
    try:
        hint = fn(*hints)
    except ArithmeticError:
        return None  # raising depends on the value: pin it (the caller folds), raise as eager
    if type(hint) is not float:
        return None
    args = tuple(v.node if isinstance(v, (SymFloat, SymInt)) else v.value for v in values)
    node = state.graph.add("call", fn, args, name=name, meta="float", stack=state.user_stack(),
                           risk="raise" if fn is operator.truediv else "silent")  # fmt: skip
    # What pins it: the float inputs it is made of, and the dynamic ints (``1.0 / (i + 1)``)
    made_of = [i for v in values if isinstance(v, SymFloat) for i in v.inputs]
    made_of += [v for v in values if isinstance(v, SymInt)]
    return SymFloat(node, hint, tuple({id(i): i for i in made_of}.values()))


def _sequence_like(seq: Value, items: list) -> Value:
    """A new tuple or list value (a list read from an argument makes a plain list value)."""
    return TupleValue(items) if isinstance(seq, TupleValue) else ListValue(items)


def sequence_op(state: TraceState, fn, a: Value, b: Value) -> Value:
    if fn is operator.add and any(
        isinstance(a, k) and isinstance(b, k) for k in (TupleValue, ListValue)
    ):
        if isinstance(a, TupleValue) and not (a.items and b.items):
            return b if not a.items else a  # CPython returns the non-empty tuple itself
        return _sequence_like(a, list(a.items) + list(b.items))
    if fn is operator.mul:
        seq, count = (a, b) if isinstance(a, (TupleValue, ListValue)) else (b, a)
        n = python_int(state, count)
        if isinstance(seq, TupleValue) and n == 1:
            return seq  # CPython returns the tuple itself
        return _sequence_like(seq, list(seq.items) * n)
    if fn in (operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge):
        try:
            return fold(fn, a.constant(), b.constant())
        except NotConstant:
            pass
    raise state.graph_break(
        "unsupported_object", f"{fn.__name__} on {a.describe()} and {b.describe()}"
    )


def compare_op(state: TraceState, symbol: str, a: Value, b: Value) -> Value:
    op = operators.BINARY[symbol]
    return binary_op(state, op.fn, a, b, name=op.name)


def unary_op(state: TraceState, fn, v: Value, name: str) -> Value:
    if isinstance(v, masked.MaskedValue):
        return masked.unary(state, fn, v)
    if isinstance(v, NumpyValue):
        return state.graph_call("call", fn, (v,), {}, name=name)
    if isinstance(v, SymFloat):
        result = symfloat_op(state, fn, [v], name)
        if result is not None:
            return result
    if isinstance(v, SymInt) and fn is operator.neg:
        node = state.graph.add("call", fn, (v.node,), name=name, meta="int",
                               stack=state.user_stack(), risk="silent")  # fmt: skip
        return SymInt(node, -v.hint, v.deps, on_concrete=v.on_concrete)
    try:
        if isinstance(v, SymInt):
            return fold(fn, python_int(state, v))
        return fold_operator(state, fn, [v], name)
    except NotConstant:
        raise state.graph_break("unsupported_object", f"unary {name} on {v.describe()}") from None


def truth(state: TraceState, v: Value) -> bool:
    """``bool(v)`` for a branch; a data-dependent break for arrays and NumPy scalars."""
    if isinstance(v, masked.MaskedValue):
        raise masked.escape(v)
    if isinstance(v, NumpyValue):
        raise state.graph_break(
            "data_dependent_branch",
            f"the condition depends on the value of {v.describe()} ({v.node.name})",
            "Use np.where(cond, a, b) to select values without a Python branch.",
        )
    if isinstance(v, SymInt) and v.branch:
        raise state.graph_break(
            "iteration_branch",
            "the condition compares ints that change from one iteration to the next",
        )
    if isinstance(v, SymInt):
        return bool(concretize(state, v))
    if isinstance(v, SymFloat):
        return bool(v.pin())
    if isinstance(v, (TupleValue, ListValue)):
        return bool(v.items)
    if isinstance(v, DictValue):
        return bool(v.items)
    if isinstance(v, SetValue):
        return bool(v.values)
    if isinstance(v, Const):
        return bool(v.value)
    if isinstance(v, UserObject):
        cls = v.cls
        if hasattr(cls, "__bool__") or hasattr(cls, "__len__"):
            raise state.graph_break(
                "unsupported_object", f"truth value of {v.describe()} (custom __bool__/__len__)"
            )
        return True
    if isinstance(v, Obj):
        return bool(v.value)  # modules, functions, classes, NumPy objects: a pure question
    if isinstance(v, (UserFunction, BoundMethod, ArrayMethod, ConstMethod, Iterator)):
        return True
    raise state.graph_break("unsupported_object", f"truth value of {v.describe()}")


def identity(state: TraceState, a: Value, b: Value) -> bool:
    """``a is b`` on symbolic values."""
    if a is b:
        return True
    if isinstance(a, TupleValue) and isinstance(b, TupleValue) and not a.items and not b.items:
        return a.namedtuple is b.namedtuple is None  # () is a singleton
    if isinstance(a, NumpyValue) and isinstance(b, NumpyValue):
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


# -- attributes ----------------------------------------------------------------------------


def get_attr(state: TraceState, v: Value, name: str, tx) -> Value:
    if isinstance(v, masked.MaskedValue):  # its dtype and rank are known, not its length
        if name == "dtype":
            return Const(v.dtype)
        if name == "ndim":
            return Const(v.full.example.ndim - v.mask.example.ndim + 1)
        raise masked.escape(v)
    if isinstance(v, ArrayValue):
        return _array_attr(state, v, name)
    if isinstance(v, ScalarValue):
        if name in ("dtype", "ndim", "shape", "size", "itemsize", "nbytes"):
            return const_to_value(getattr(v.example, name))
        if name in ("real", "imag"):
            return state.graph_call("attr", name, (v,), {}, name=name)
        if callable(getattr(v.example, name, None)):
            return ArrayMethod(v, name)
    if isinstance(v, (Const,)) or (isinstance(v, Obj) and _is_pure_object(v.value)):
        return _known_attr(state, v, name)
    if isinstance(v, Obj):
        return _object_attr(state, v, name)
    if isinstance(v, Opaque):
        return _opaque_attr(state, v, name)
    if isinstance(v, TupleValue) and v.namedtuple is not None:
        if name in v.namedtuple._fields:
            return v.items[v.namedtuple._fields.index(name)]
        if not callable(getattr(v.namedtuple, name, None)):
            return fold(getattr, v.namedtuple, name)
    if isinstance(v, (TupleValue, ListValue, DictValue, SetValue)):
        return ConstMethod(v, name)
    if isinstance(v, UserObject):
        return _user_attr(state, v, name, tx)
    if isinstance(v, SuperValue):
        return super_attr(state, v, name)
    if isinstance(v, UserFunction) and name in (
        "__name__",
        "__qualname__",
        "__doc__",
        "__module__",
    ):
        return Const(getattr(v.fn, name) if v.fn is not None else v.name)
    if isinstance(v, SymInt) and name in ("real", "numerator"):
        return v
    if isinstance(v, ArrayFlags):
        return fold(getattr, v.array.example.flags, name)
    raise state.graph_break("unsupported_object", f"attribute {name!r} of {v.describe()}")


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
            size = binary_op(state, operator.mul, size, d, "size")
        if name == "nbytes":
            return binary_op(state, operator.mul, size, Const(v.example.itemsize), "nbytes")
        return size
    if name in table.NODE_ATTRS:
        return state.graph_call("attr", name, (v,), {}, name=f"{v.node.name}_{name}")
    if name in table.LAYOUT_ATTRS and v.device:
        raise state.graph_break(
            "unsupported_object",
            f"{name} of a device array: its layout is its library's ({v.node.tensor.placement})",
        )
    if name in ("strides", "flags"):
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


def _is_pure_object(obj) -> bool:
    return table.is_numpy_object(obj) or table.is_numpy_module(obj) or isinstance(obj, (np.dtype, np.finfo, np.iinfo)) \
        or type(obj) is type(np.zeros(0).flags)  # fmt: skip


def _known_attr(state: TraceState, v: Value, name: str) -> Value:
    """An attribute of a constant or a NumPy object: read it now (these never change)."""
    try:
        attr = getattr(v.value, name)
    except AttributeError as error:
        raise UserErrorInTrace(error) from error
    if isinstance(
        attr, (types.BuiltinMethodType, types.MethodWrapperType)
    ) and not table.is_numpy_object(attr):
        return ConstMethod(v, name)
    return const_to_value(attr)


def _object_attr(state: TraceState, v: Obj, name: str) -> Value:
    """An attribute of a module or class: guarded by identity through its source."""
    try:
        attr = getattr(v.value, name)
    except AttributeError as error:
        raise UserErrorInTrace(error) from error
    if isinstance(v.value, types.ModuleType) and table.is_numpy_module(v.value) or v.source is None:
        return wrap_unguarded(state, attr)
    if not isinstance(v.value, (type, types.ModuleType)):
        method = _bound_method(state, v, name, attr)
        if method is not None:
            return method
    return state.wrap(attr, AttrSource(v.source, name))


def _bound_method(state: TraceState, v: Value, name: str, attr) -> Value | None:
    """A method bound to the object read from it (``x.mean`` of a foreign object): a new bound
    object on every read, so its identity says nothing. What stays the same is the class's
    function, and that the object does not shadow it: those are guarded."""
    if getattr(attr, "__self__", None) is not v.value or v.source is None:
        return None
    class_attr = inspect.getattr_static(type(v.value), name, None)
    if class_attr is None:
        return None
    state.guards.add(v.source, "no_shadow", name)
    state.wrap(class_attr, AttrSource(TypeSource(v.source), name))
    return Obj(attr, AttrSource(v.source, name))


def _opaque_attr(state: TraceState, v: Opaque, name: str) -> Value:
    """A method of an object the trace does not look into: a new bound object on every read,
    called eagerly (a break); any other attribute is read eagerly (a break)."""
    class_attr = inspect.getattr_static(v.cls, name, None)
    if class_attr is None or not callable(class_attr) or isinstance(class_attr, type):
        raise state.graph_break("unsupported_object", f"attribute {name!r} of {v.describe()}")
    state.guards.add(v.source, "no_shadow", name)
    state.wrap(class_attr, AttrSource(TypeSource(v.source), name))
    return Opaque(types.MethodType, AttrSource(v.source, name))


def wrap_unguarded(state: TraceState, obj) -> Value:
    """A value read where no guard is needed (NumPy's namespace, builtins, imports)."""
    if type(obj) is types.FunctionType and is_user_function(obj):
        return function_value(obj, None)
    return const_to_value(obj)


def _user_attr(state: TraceState, v: UserObject, name: str, tx) -> Value:
    obj, cls = v.value, v.cls
    if name in v.overlay:
        return v.overlay[name]
    class_attr = None
    for klass in cls.__mro__:
        if name in klass.__dict__:
            class_attr = klass.__dict__[name]
            break
    if isinstance(class_attr, property):
        if class_attr.fget is None:
            raise state.graph_break("unsupported_object", f"write-only property {name!r}")
        if v.source is None:
            getter = wrap_unguarded(state, class_attr.fget)
        else:
            getter = state.wrap(
                class_attr.fget, AttrSource(AttrSource(TypeSource(v.source), name), "fget")
            )
        return tx.call(getter, [v], {})
    if hasattr(class_attr, "__get__") and hasattr(class_attr, "__set__"):
        raise state.graph_break("unsupported_object", f"data descriptor {name!r} of {v.describe()}")
    instance_dict = getattr(obj, "__dict__", {}) if v.new_cls is None else {}
    if name in instance_dict:
        return state.wrap(instance_dict[name], AttrSource(v.source, name))
    if class_attr is None:
        if hasattr(cls, "__getattr__"):
            raise state.graph_break("unsupported_object", f"{v.describe()} defines __getattr__")
        raise UserErrorInTrace(AttributeError(f"{cls.__name__!r} object has no attribute {name!r}"))
    class_source = AttrSource(TypeSource(v.source), name) if v.source is not None else None
    if class_source is None:  # an object made in the trace: its class was guarded when called
        if isinstance(class_attr, types.FunctionType):
            return BoundMethod(wrap_unguarded(state, class_attr), v)
        if isinstance(class_attr, staticmethod):
            return wrap_unguarded(state, class_attr.__func__)
        if isinstance(class_attr, classmethod):
            return BoundMethod(wrap_unguarded(state, class_attr.__func__), Obj(cls))
        return wrap_unguarded(state, class_attr)
    if isinstance(class_attr, types.FunctionType):
        state.guards.add(v.source, "no_shadow", name)
        return BoundMethod(state.wrap(class_attr, class_source), v)
    if isinstance(class_attr, staticmethod):
        state.guards.add(v.source, "no_shadow", name)
        return state.wrap(class_attr.__func__, class_source)  # type(o).name is the plain function
    if isinstance(class_attr, classmethod):
        state.guards.add(v.source, "no_shadow", name)
        return BoundMethod(state.wrap(class_attr.__func__, AttrSource(class_source, "__func__")),
                           state.wrap(cls, TypeSource(v.source)))  # fmt: skip
    attr = getattr(obj, name)
    return _bound_method(state, v, name, attr) or state.wrap(attr, AttrSource(v.source, name))


# ``arr.flags.<name> = v`` is ``arr.setflags(<keyword>=v)``
_SETFLAGS = {"writeable": "write", "aligned": "align", "writebackifcopy": "uic"}


def store_attr(state: TraceState, obj: Value, name: str, value: Value) -> None:
    if isinstance(obj, UserObject):
        state.note_mutation(obj)
    if isinstance(obj, UserObject) and obj.new_cls is not None:
        obj.overlay[name] = value  # an object made in the trace: no side effect to replay
        return
    if isinstance(obj, UserObject) and obj.source is not None:
        obj.overlay[name] = value
        obj.mutated = True
        state.effects.write_attr(obj, name)
        return
    if isinstance(obj, ArrayFlags) and name in _SETFLAGS:
        state.graph_call("method", "setflags", (obj.array,), {_SETFLAGS[name]: value},
                         name="setflags")  # fmt: skip
        return
    raise state.graph_break(
        "unsupported_mutation", f"setting attribute {name!r} of {obj.describe()}"
    )


def super_attr(state: TraceState, sup: SuperValue, name: str) -> Value:
    """``super().name``: the first class after ``sup.cls`` in the MRO that defines it."""
    mro = sup.self_value.python_type().__mro__
    for klass in mro[mro.index(sup.cls) + 1 :]:
        if name in klass.__dict__:
            attr = klass.__dict__[name]
            if isinstance(attr, types.FunctionType):
                return BoundMethod(wrap_unguarded(state, attr), sup.self_value)
            if isinstance(attr, classmethod):
                return BoundMethod(
                    wrap_unguarded(state, attr.__func__), Obj(sup.self_value.python_type())
                )
            if isinstance(attr, staticmethod):
                return wrap_unguarded(state, attr.__func__)
            if klass is object and name == "__init__":
                return Obj(lambda *a, **k: None)
            return wrap_unguarded(state, attr)
    raise UserErrorInTrace(AttributeError(f"'super' object has no attribute {name!r}"))


def construct(state: TraceState, cls: type, args, kwargs, tx) -> Value:
    """``cls(*args)`` for a plain user class: a new object, ``__init__`` inlined."""
    if type(cls) is not type or cls.__new__ is not object.__new__ or "__slots__" in vars(cls):
        raise state.graph_break("unsupported_call", f"constructing a {cls.__qualname__} object "
                                "(custom __new__, metaclass or __slots__)")  # fmt: skip
    obj = UserObject(None, new_cls=cls)
    init = getattr(cls, "__init__", object.__init__)
    if init is object.__init__:
        if args or kwargs:
            raise UserErrorInTrace(TypeError(f"{cls.__qualname__}() takes no arguments"))
        return obj
    if not isinstance(init, types.FunctionType) or not is_user_function(init):
        raise state.graph_break(
            "unsupported_call", f"constructing a {cls.__qualname__} object (its __init__)"
        )
    result = tx.call(BoundMethod(function_value(init, None), obj), list(args), kwargs)
    if not (isinstance(result, Const) and result.value is None):
        raise UserErrorInTrace(TypeError("__init__() should return None"))
    return obj


# -- items ---------------------------------------------------------------------------------


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
        if isinstance(part, ArrayValue) and part.example.dtype == np.bool_:
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


def get_item(state: TraceState, obj: Value, index: Value, tx) -> Value:
    selection = obj if isinstance(obj, masked.MaskedValue) else masked.first_masked(index)
    if selection is not None:
        raise masked.escape(selection)
    if isinstance(obj, ArrayValue):
        selection = masked.read(state, obj, index)  # ``z[m]``: made only if it must be
        if selection is not None:
            return selection
    if isinstance(obj, NumpyValue):
        return state.graph_call(
            "getitem", None, (obj, index_arg(state, index)), {}, name=f"{_hint(obj)}_item"
        )
    if isinstance(index, SymInt):
        index = Const(concretize(state, index))
    if isinstance(obj, (TupleValue, ListValue)):
        key = index.constant() if index.is_constant() else None
        if isinstance(key, slice):
            return _sequence_like(obj, obj.items[key])
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool | np.bool_):
            try:
                return obj.items[key]
            except IndexError as error:
                raise UserErrorInTrace(error) from error
    if isinstance(obj, DictValue) and index.is_constant():
        key = index.constant()
        if key not in obj.items:
            raise UserErrorInTrace(KeyError(key))
        return obj.items[key]
    if isinstance(obj, UserObject):
        method = get_attr(state, obj, "__getitem__", tx)
        return tx.call(method, [index], {})
    if isinstance(obj, ArrayFlags):
        return fold(operator.getitem, obj.array.example.flags, index.constant())
    try:
        return fold(operator.getitem, obj.constant(), index.constant())
    except NotConstant:
        raise state.graph_break(
            "unsupported_object", f"indexing {obj.describe()} with {index.describe()}"
        ) from None


def _hint(v: Value) -> str:
    node = getattr(v, "node", None)
    return node.name if isinstance(node, Node) else "v"


def set_item(state: TraceState, obj: Value, index: Value, value: Value) -> None:
    selection = obj if isinstance(obj, masked.MaskedValue) else masked.first_masked(index)
    if selection is not None:
        raise masked.escape(selection)
    if isinstance(obj, ArrayValue) and masked.store(state, obj, index, value):
        return  # ``a[mask] = v``: a masked write in the graph
    if isinstance(value, masked.MaskedValue):
        raise masked.escape(value)
    if isinstance(obj, ArrayValue):
        state.graph_call("setitem", None, (obj, index_arg(state, index), value), {}, name="setitem")
        return
    if isinstance(obj, ListValue) and index.is_constant():
        mutate_list(state, obj)
        try:
            obj.items[index.constant()] = value
        except (IndexError, TypeError) as error:
            raise UserErrorInTrace(error) from error
        return
    if isinstance(obj, DictValue) and index.is_constant():
        mutate_list(state, obj)
        obj.items[index.constant()] = value
        return
    raise state.graph_break("unsupported_mutation", f"item assignment on {obj.describe()}")


def mutate_list(state: TraceState, container: Value) -> None:
    """Containers made in the trace mutate freely; pre-existing ones are replayed after the graph."""
    state.note_mutation(container)
    if container.source is not None:
        state.effects.mutate(container)


# -- iteration -----------------------------------------------------------------------------


def _fixed_trip_count(state: TraceState, size: Value | None, what: str) -> None:
    """A loop about to be unrolled over ``size`` items: a break when that is a dynamic size
    (an input's dim, a dynamic int, an int of a split loop's body), which unrolling would
    pin."""
    if isinstance(size, SymInt):
        raise state.graph_break("dynamic_trip_count", f"a loop over {what}, a dynamic number "
                                "of iterations, that cannot be one loop node")  # fmt: skip


def take(state: TraceState, v: Value) -> None:
    """``v`` becomes the source of zip, enumerate, map or filter: an iterator is theirs from
    now on (`check_untaken`)."""
    if isinstance(v, Iterator):
        check_untaken(state, v)
        v.taken = True


def check_untaken(state: TraceState, it: Iterator) -> None:
    """An iterator that zip, enumerate, map or filter took is not advanced apart from them:
    they take all its items at once, where Python takes them one by one (``zip(it, it)``,
    ``next(z)`` during ``for i, x in enumerate(z)``)."""
    if it.taken:
        raise state.graph_break("unsupported_object", "an iterator that zip, enumerate, map or "
                                "filter takes items from, used on its own too")  # fmt: skip


def iterate(state: TraceState, v: Value, taker: bool = False, loop: bool = False) -> list[Value]:
    """The items a for-loop over ``v`` sees, all known at trace time (the loop is unrolled);
    ``taker``: for the iterator that took ``v`` (`take`). ``loop``: for a loop (``GET_ITER``),
    which breaks instead of unrolling a number of iterations that is a dynamic size: it runs in
    Python (split), so that a new size does not recompile."""
    if isinstance(v, masked.MaskedValue):
        raise masked.escape(v)
    if isinstance(v, (TupleValue, ListValue)):
        return list(v.items)
    if isinstance(v, DictValue):
        return [const_to_value(k) for k in v.items]
    if isinstance(v, Iterator):
        if not taker:
            check_untaken(state, v)
        items = v.known_items()[v.position :]
        v.position = len(v.items)
        return items
    if isinstance(v, ArrayValue):
        if v.example.ndim == 0:
            raise UserErrorInTrace(TypeError("iteration over a 0-d array"))
        dims = array_dims(state, v)
        if loop:
            _fixed_trip_count(state, dims[0], f"the rows of {v.describe()}")
        n = python_int(state, dims[0])
        if not state.budget.rows_fit(n):
            raise state.graph_break("trace_budget", f"unrolling a loop over {n} rows would make "
                                    "more graph ops than tc.config.trace_max_ops")  # fmt: skip
        return [get_item(state, v, Const(i), None) for i in range(n)]
    if isinstance(v, SetValue):
        return [Const(i) for i in v.values]
    if isinstance(v, RangeValue):
        if loop:
            for part in (v.start, v.stop):
                _fixed_trip_count(state, part, v.describe())
        v = Const(range(*(python_int(state, part) for part in v.parts())))  # unrolled
    if isinstance(v, Const) and isinstance(v.value, (range, str, bytes, tuple, frozenset)):
        return [const_to_value(i) for i in v.value]
    raise state.graph_break("unsupported_object", f"iterating over {v.describe()}")
