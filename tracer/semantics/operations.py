"""Python semantics on symbolic values: operators, truth, attributes, items, iteration.

The opcode handlers call these; they fold constants, add graph nodes for NumPy values, and
raise located graph breaks for what cannot be traced.
"""

from __future__ import annotations

import inspect
import operator
import types

import numpy as np

from .. import user_text
from ..errors import RestartTrace, UserErrorInTrace
from ..ir import numpy_table as table
from ..ir import operators, quiet
from ..ir.node import Node, describe_value
from ..ir.static_lookup import protocol_hook, static_lookup
from ..state import masked
from ..state.trace_state import TraceState
from ..state.wrapping import CONST_TYPES, function_value
from ..user_code import is_user_function, user_method
from ..values.arrays import (
    ArrayFlags,
    ArrayMethod,
    ArrayValue,
    NumpyValue,
    ScalarValue,
    SymFloat,
    SymInt,
    SymStr,
    is_dynamic_number,
)
from ..values.containers import (
    ConstMethod,
    DictValue,
    Iterator,
    ListValue,
    RangeValue,
    SetValue,
    SliceValue,
    TupleValue,
)
from ..values.core import Const, NotConstant, Obj, Value
from ..values.functions import UserFunction
from ..values.objects import BoundMethod, Opaque, SuperValue, UserObject
from ..values.source import AttrSource, TypeSource

# Int arithmetic kept symbolic on dynamic ints (bools too: ``(k < 2) & (j > 0)``; ``min`` of
# zip's counts)
_SYMINT_OPS = {operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod,
               operator.and_, operator.or_, operator.xor, min}  # fmt: skip
# ... of which these never raise (no ZeroDivisionError)
_SILENT_INT_OPS = {operator.add, operator.sub, operator.mul, operator.and_, operator.or_,
                   operator.xor, min}  # fmt: skip
_INT_UNARY_OPS = {operator.neg, operator.pos, operator.invert, operator.abs, operator.not_}
_COMPARISONS = {operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne}
_SYMBOLIC = (SymInt, SymFloat, SymStr)  # Python values of the graph (`number_node`)


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


def binary_op(state: TraceState, fn, a: Value, b: Value, name: str) -> Value:  # noqa: C901 - semantics by protocol replace the ladder (issue 21.5)
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
    if plain is operator.add and _text_pair(a, b):  # "loss " + f"{x:.3f}": text of the graph
        return number_node(state, operator.add, [a, b], "text", risk="silent")
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
        return fold(state, fn, a.constant(), b.constant())
    except NotConstant:
        raise state.graph_break(
            "unsupported_object", f"operator {name!r} on {a.describe()} and {b.describe()}"
        ) from None


def symint_op(state: TraceState, fn, a: Value, b: Value, name: str) -> SymInt | None:
    """Int arithmetic on a dynamic int, as a graph node; None for other operations."""
    if fn in _SYMINT_OPS and all(
        isinstance(v, SymInt) or type(getattr(v, "value", None)) in (int, bool) for v in (a, b)
    ):
        try:
            return number_node(state, fn, [a, b], name,
                               risk="silent" if fn in _SILENT_INT_OPS else "raise",
                               at_least=_bound(fn, a, b))  # fmt: skip
        except ZeroDivisionError as error:  # by a constant 0 (guarded): eager raises too
            raise UserErrorInTrace(error) from error
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
    """In a split loop's body (`loops.split_loop`), a comparison of dynamic ints (no array
    sizes) and floats, as a graph node giving a bool: a branch on it breaks, once per
    iteration, where pinning the numbers' values would recompile the body on every iteration
    (``while err > tol``). None elsewhere; any other use of the bool pins them."""
    if not state.per_iteration or fn not in _COMPARISONS:
        return None
    if not any(isinstance(v, (SymInt, SymFloat)) for v in (a, b)) or any(
        not is_dynamic_number(v) and type(getattr(v, "value", None)) not in (bool, int, float)
        for v in (a, b)
    ):
        return None
    return number_node(state, fn, [a, b], name, risk="silent", branch=True)


def number_node(state: TraceState, fn, values: list[Value], name: str, *, risk: str,
                branch: bool = False, at_least: int = 0) -> SymInt | SymFloat | SymStr:  # fmt: skip
    """``fn`` on dynamic numbers (`SymInt`, `SymFloat`), text made of them (`SymStr`) and
    Python constants, as a graph node giving a Python number (or text) whose value is known
    when the graph runs. ``fn`` raising on the numbers' current values raises here. Its value
    is made of theirs: it is pinned by pinning them, and a bool of a comparison in a split
    loop's body (``branch``, or made of one) stays one whose truth is a break. ``at_least``: a
    lower bound its guards assure (`_bound`: ``len(x) - 1`` of a dynamic size)."""
    hint, warns = run_example(
        fn, *(v.hint if isinstance(v, _SYMBOLIC) else v.value for v in values)
    )
    args = tuple(v.node if isinstance(v, _SYMBOLIC) else v.value for v in values)
    node = state.graph.add("call", fn, args, name=name, meta=describe_value(hint),
                           stack=state.user_stack(), risk="raise" if warns else risk)  # fmt: skip
    if type(hint) is float:
        # What pins it: the float inputs it is made of, and the dynamic ints (``1.0 / (i + 1)``)
        made_of = [i for v in values if isinstance(v, SymFloat) for i in v.inputs]
        made_of += [v for v in values if isinstance(v, SymInt)]
        return SymFloat(node, hint, tuple({id(i): i for i in made_of}.values()))
    pins = tuple(dict.fromkeys(
        c for v in values if isinstance(v, _SYMBOLIC)
        for c in (v.on_concrete if isinstance(v, SymInt) else v.pins if isinstance(v, SymStr)
                  else (v.pin,))
    ))  # fmt: skip
    if type(hint) is str:
        return SymStr(node, hint, pins)
    ints = [v for v in values if isinstance(v, SymInt)]
    deps = [v.deps for v in ints]
    merged = None if any(d is None for d in deps) else frozenset().union(*deps)
    return SymInt(node, hint, merged, on_concrete=pins,
                  branch=branch or any(v.branch for v in ints), at_least=at_least)  # fmt: skip


_FLOAT_OPS = {operator.add, operator.sub, operator.mul, operator.truediv, operator.neg,
              operator.pos, operator.abs}  # fmt: skip


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
    return number_node(state, fn, values, name,
                       risk="raise" if fn is operator.truediv else "silent")  # fmt: skip


_CONVERSIONS = {int: "int", float: "float", round: "round"}


def number_conversion(state: TraceState, fn, values: list[Value]) -> Value | None:
    """``int(v)``, ``float(v)``, ``round(v)``, ``round(v, n)`` of a dynamic number, as a graph
    node: the result needs no value guard until it is used as a number itself (a split loop's
    body printing ``round(err, 6)`` does not recompile for every value). None where the value
    is needed (``int(v, base)``, a value it raises for)."""
    v, rest = values[0], values[1:]
    if fn not in _CONVERSIONS or not is_dynamic_number(v) or len(rest) > (fn is round):
        return None
    if any(type(getattr(n, "value", None)) is not int and not isinstance(n, SymInt) for n in rest):
        return None  # ``round(v, None)`` is ``round(v)``; anything else: as with the values
    if not rest and v.python_type() is (int if fn is round else fn):
        return v  # int(k), float(x), round(k): the number itself
    try:
        return number_node(state, fn, values, _CONVERSIONS[fn], risk="raise")
    except (ArithmeticError, ValueError):
        return None  # it raises for this value: pinned, it raises as eager code does


_TEXT = {format: "format", str: "str", repr: "repr", ascii: "ascii"}


def number_text(state: TraceState, fn, values: list[Value]) -> Value | None:
    """``format(v, spec)``, ``str(v)``, ``repr(v)``, ``ascii(v)`` (f-strings: ``f"{v:.3e}"``) of
    a dynamic number, or of text made of one, as a graph node: the text needs no value guard
    until it is used as a str itself (a split loop's body printing ``f"{err:.3e}"`` does not
    recompile for every value). None where the value is needed."""
    v, rest = values[0], values[1:]
    if (
        fn not in _TEXT
        or len(rest) > (fn is format)
        or not (is_dynamic_number(v) or isinstance(v, SymStr))
    ):
        return None
    if any(type(getattr(spec, "value", None)) is not str for spec in rest):
        return None
    if fn is str and isinstance(v, SymStr):
        return v
    return number_node(state, fn, values, _TEXT[fn], risk="raise")


def _text_pair(a: Value, b: Value) -> bool:
    """Two texts, one of them the graph's (`SymStr`), the other too or a constant str."""
    if not (isinstance(a, SymStr) or isinstance(b, SymStr)):
        return False
    return all(isinstance(v, SymStr) or (isinstance(v, Const) and type(v.value) is str)
               for v in (a, b))  # fmt: skip


def array_text(state: TraceState, fn, values: list[Value], what: str) -> SymStr | None:
    """``format(v, spec)``, ``str(v)``... (f-strings: ``f"{loss:.3f}"``) of a NumPy scalar or
    0-d array of the graph (``y.sum()``), as a graph node: the text is made when the graph runs,
    as the plain code makes it, so printing it breaks the graph once, at the print, instead of
    at every field. Its value is never known to the trace: any use of it as a str itself breaks
    the graph there. ``what``: the user's words for it. None for other arrays (their text
    follows NumPy's print options) or specs that are not constants."""
    v, rest = values[0], values[1:]
    if fn not in _TEXT or len(rest) > (fn is format) or getattr(v.example, "ndim", None) != 0:
        return None
    if any(type(getattr(spec, "value", None)) is not str for spec in rest):
        return None
    specs = tuple(spec.value for spec in rest)
    try:
        hint, _ = run_example(fn, v.example, *specs)
    except Exception:  # a spec unfit for the value (``f"{x.sum():d}"``): made eagerly, to raise
        return None
    node = state.graph.add("call", fn, (v.node, *specs), name=_TEXT[fn], meta=describe_value(hint),
                           stack=state.user_stack(), risk="raise")  # fmt: skip

    def needed() -> None:
        raise state.graph_break(
            "data_dependent_value",
            f"{what} is text made of array data, used here as a str: its characters are known "
            "only when the compiled code runs",
            "Keep the text for printing or returning, and compare or slice the numbers "
            "themselves (in arrays) instead of their text.",
        )

    return SymStr(node, hint, (needed,))


def concatenate(state: TraceState, parts: list[Value]) -> Value:
    """``"".join(parts)`` of an f-string's parts: in the graph where one is text it makes."""
    pieces: list[Value] = []  # neighbouring constants joined
    for part in parts:
        if isinstance(part, SymStr):
            pieces.append(part)
        elif pieces and isinstance(pieces[-1], Const):
            pieces[-1] = Const(pieces[-1].value + part.constant())
        else:
            pieces.append(Const(part.constant()))
    pieces = [p for p in pieces if not (isinstance(p, Const) and p.value == "")] or [Const("")]
    text = pieces[0]
    for piece in pieces[1:]:
        text = number_node(state, operator.add, [text, piece], "text", risk="silent")
    return text


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
            return fold(state, fn, a.constant(), b.constant())
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
    if isinstance(v, SymInt) and fn in _INT_UNARY_OPS:
        return number_node(state, fn, [v], name, risk="silent")
    try:
        if isinstance(v, SymInt):
            return fold(state, fn, python_int(state, v))
        return fold(state, fn, v.constant())
    except NotConstant:
        raise state.graph_break("unsupported_object", f"unary {name} on {v.describe()}") from None


def logical_not(state: TraceState, v: Value) -> Value:
    """``not v``; of a comparison in a split loop's body (`number_compare`), a bool of the
    graph: its truth is still a break, but ``while not done & (k < n)`` is none."""
    if isinstance(v, SymInt) and v.branch:
        return number_node(state, operator.not_, [v], "not", risk="silent")
    return Const(not truth(state, v))


def truth(state: TraceState, v: Value) -> bool:
    """``bool(v)`` for a branch; a data-dependent break for arrays and NumPy scalars."""
    if isinstance(v, masked.MaskedValue):
        raise masked.escape(v)
    if isinstance(v, NumpyValue):
        what = "a NumPy array" if isinstance(v.example, np.ndarray) else \
            f"a NumPy {type(v.example).__name__}"  # fmt: skip
        explanation, hints = user_text.branch_words(_tested(state), what)
        raise state.graph_break("data_dependent_branch", explanation, *hints)
    if isinstance(v, SymInt) and v.branch:
        cond = _tested(state)
        tested = f"`{cond.text}` compares" if cond is not None else "the condition compares"
        raise state.graph_break(
            "iteration_branch", f"{tested} ints that change from one iteration to the next"
        )
    if isinstance(v, SymInt):
        return bool(concretize(state, v))
    if isinstance(v, (SymFloat, SymStr)):
        return bool(v.constant())
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
        if static_lookup(cls, "__bool__") is not None or static_lookup(cls, "__len__") is not None:
            raise state.graph_break(
                "unsupported_object", f"truth value of {v.describe()} (custom __bool__/__len__)"
            )
        return True
    if isinstance(v, Obj):  # modules, functions, classes, NumPy objects: a pure question
        return fold(state, bool, v.value).value  # but bool(NotImplemented) warns
    if isinstance(v, (UserFunction, BoundMethod, ArrayMethod, ConstMethod, Iterator)):
        return True
    raise state.graph_break("unsupported_object", f"truth value of {v.describe()}")


def _tested(state: TraceState) -> user_text.Condition | None:
    """What the user wrote for the value being tested for truth (a jump's condition; the
    call itself for ``bool(x)``, ``any(...)``), or None."""
    return state.tx.tested() if state.tx is not None else None


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


# -- attributes ----------------------------------------------------------------------------


def get_attr(state: TraceState, v: Value, name: str, tx) -> Value:  # noqa: C901 - semantics by protocol replace the ladder (issue 21.5)
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
    if isinstance(v, SymStr):  # its methods need its value
        v = Const(v.constant())
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
            return fold(state, getattr, v.namedtuple, name)
    if isinstance(v, (TupleValue, ListValue, DictValue, SetValue)):
        return ConstMethod(v, name)
    if isinstance(v, SuperValue):
        return super_attr(state, v, name)
    if isinstance(v, UserFunction) and name in (
        "__name__",
        "__qualname__",
        "__doc__",
        "__module__",
    ):
        if v.source is not None:  # guarded: functions of one code can have other names
            return state.wrap(getattr(v.fn, name), AttrSource(v.source, name))
        if v.fn is not None:
            return Const(getattr(v.fn, name))
        made = {"__name__": v.name, "__qualname__": v.code.co_qualname,
                "__module__": v.globals.get("__name__")}  # fmt: skip
        if name in made:  # a function made in the trace: as MAKE_FUNCTION sets them
            return Const(made[name])
    if isinstance(v, SymInt) and name in ("real", "numerator") and v.python_type() is int:
        return v
    if isinstance(v, ArrayFlags):
        return fold(state, getattr, v.array.example.flags, name)
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
    user_code_runs = _attribute_runs_user_code(v.value, name)
    if user_code_runs:  # run by the break, as eagerly: never when tracing nor in a guard
        raise state.graph_break("unsupported_object", f"attribute {name!r} of {v.describe()} "
                                f"runs the user's code ({user_code_runs})")  # fmt: skip
    try:
        attr = getattr(v.value, name)
    except AttributeError as error:
        raise UserErrorInTrace(error) from error
    if isinstance(v.value, types.ModuleType) and table.is_numpy_module(v.value) or v.source is None:
        return wrap_unguarded(state, attr)
    if not isinstance(v.value, (type, types.ModuleType)):
        method = bound_method(state, v, name, attr)
        if method is not None:
            return method
    return state.wrap(attr, AttrSource(v.source, name))


def _attribute_runs_user_code(obj, name: str) -> str | None:
    """What of the user's code reading ``obj.name`` (a module or a class) would run, if any:
    its metaclass's __getattribute__ or __getattr__, a descriptor's __get__, a module's
    __getattr__ (PEP 562)."""
    meta = type(obj)
    if protocol_hook(meta, "__getattribute__") or protocol_hook(meta, "__getattr__"):
        return "its metaclass defines __getattribute__ or __getattr__"
    if isinstance(obj, type) and user_method(
        static_lookup(type(static_lookup(obj, name)), "__get__")
    ):
        return "a descriptor's __get__"
    namespace = obj.__dict__ if isinstance(obj, types.ModuleType) else {}
    if name not in namespace and user_method(namespace.get("__getattr__")):
        return "the module's __getattr__"
    return None


def bound_method(state: TraceState, v: Value, name: str, attr) -> Value | None:
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
            if isinstance(attr, (types.WrapperDescriptorType, types.MethodDescriptorType)):
                return BoundMethod(Obj(attr), sup.self_value)  # super().__getattribute__(name)
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
        return tx.call(tx.special_method(obj, "__getitem__"), [index], {})
    if isinstance(obj, ArrayFlags):
        return fold(state, operator.getitem, obj.array.example.flags, index.constant())
    try:
        return fold(state, operator.getitem, obj.constant(), index.constant())
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


def iterate(state: TraceState, v: Value, taker: bool = False, loop: bool = False) -> list[Value]:  # noqa: C901 - semantics by protocol replace the ladder (issue 21.5)
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
    if isinstance(v, SymStr):
        v = Const(v.constant())  # unrolled: the characters are needed
    if isinstance(v, RangeValue):
        if loop:
            for part in (v.start, v.stop):
                _fixed_trip_count(state, part, v.describe())
        v = Const(range(*(python_int(state, part) for part in v.parts())))  # unrolled
    if isinstance(v, Const) and isinstance(v.value, (range, str, bytes, tuple, frozenset)):
        return [const_to_value(i) for i in v.value]
    raise state.graph_break("unsupported_object", f"iterating over {v.describe()}")
