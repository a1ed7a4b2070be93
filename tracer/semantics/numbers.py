"""Dynamic numbers and text made of them (`SymInt`, `SymFloat`, `SymStr`): arithmetic,
conversions and formatting stay graph nodes where they can, giving Python numbers (or text)
known when the graph runs; anything else needs their values, and pins them."""

from __future__ import annotations

import operator

import numpy as np

from ..errors import UserErrorInTrace
from ..ir import operators
from ..ir.node import describe_value
from ..state.trace_state import TraceState
from ..values.arrays import SymFloat, SymInt, SymStr, is_dynamic_number
from ..values.core import Const, Value
from . import protocol
from .folding import concretize, python_int, run_example, tested
from .protocol import Semantics, register, semantics_of

# Int arithmetic kept symbolic on dynamic ints (bools too: ``(k < 2) & (j > 0)``; ``min`` of
# zip's counts)
_SYMINT_OPS = {operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod,
               operator.and_, operator.or_, operator.xor, operator.rshift, operator.lshift,
               min}  # fmt: skip


# ... of which these never raise (no ZeroDivisionError, no negative shift count)
_SILENT_INT_OPS = {operator.add, operator.sub, operator.mul, operator.and_, operator.or_,
                   operator.xor, min}  # fmt: skip


_INT_UNARY_OPS = {operator.neg, operator.pos, operator.invert, operator.abs, operator.not_}


_COMPARISONS = {operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne}


_SYMBOLIC = (SymInt, SymFloat, SymStr)  # Python values of the graph (`number_node`)


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
    """In a split loop's body (`loops.split_loop`), a comparison of dynamic ints and floats (an
    array size only against one of those, `_varies`), as a graph node giving a bool: a branch
    on it breaks, once per iteration, where pinning the numbers' values would recompile the
    body on every iteration (``while err > tol``); while a loop condition's ``a and b`` is
    traced, as a bool of the graph (`loops.conds`). None elsewhere; any other use of the bool
    pins them."""
    if not (state.per_iteration or state.comparisons_in_graph) or fn not in _COMPARISONS:
        return None
    if not any(_varies(state, v) for v in (a, b)) or any(
        not isinstance(v, (SymInt, SymFloat))
        and type(getattr(v, "value", None)) not in (bool, int, float)
        for v in (a, b)
    ):
        return None
    return number_node(state, fn, [a, b], name, risk="silent", branch=state.per_iteration)


def _varies(state: TraceState, v: Value) -> bool:
    """A number that changes from run to run of the code it is in: a dynamic number, or an
    int made from a captured loop's index (``i + 1`` where ``i = n - 1 - k``: made of a size
    too); compared with sizes and constants, its comparison is a bool of the graph."""
    watch = state.loop_watch
    return is_dynamic_number(v) or (watch is not None and watch.follows_index(v))


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
    if warns:  # its node warns when the graph runs
        state.examples_differ.append(f"{name} warned while tracing")
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
    if not (fn in _FLOAT_OPS or _float_power(fn, values)) or not all(
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
                       risk="raise" if fn in (operator.truediv, operator.pow) else "silent")  # fmt: skip


def _float_power(fn, values: list[Value]) -> bool:
    """``f ** k`` of a float by an int (``0.5 ** i``): a float for every value (a float base
    with a float exponent can give a complex, an int base a float or an int)."""
    if fn is not operator.pow or len(values) != 2:
        return False
    base, exponent = values
    return (isinstance(base, SymFloat) or type(getattr(base, "value", None)) is float) and (
        isinstance(exponent, SymInt) or type(getattr(exponent, "value", None)) is int
    )


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


def array_number(state: TraceState, kind, args: list, kwargs: dict, needed) -> Value | None:
    """``int(x)`` or ``float(x)`` of a real NumPy scalar of the graph (``b = int(v * nbins)``,
    then ``hist[b] += w``), as a graph node: a Python number known when the graph runs, which
    indices, arithmetic and loop nodes use as it is; where it is needed as a number here (a
    branch, a size, a constant argument) ``needed`` breaks the graph. None where it is not
    one (an array, a complex, a value it raises for: the break, as eager code raises there)."""
    if kind not in (int, float) or kwargs or len(args) != 1:
        return None
    value = args[0]
    example = value.example
    if np.ndim(example) != 0 or np.asarray(example).dtype.kind not in "biuf":
        return None
    try:
        hint = kind(example)
    except (ArithmeticError, ValueError):
        return None
    node = state.graph.add("call", kind, (value.node,), name=kind.__name__,
                           meta=describe_value(hint), stack=state.user_stack(), risk="raise")  # fmt: skip
    if kind is int:
        return SymInt(node, hint, frozenset(), on_concrete=(needed,))
    return SymFloat.leaf(node, hint, needed)


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


@register(SymInt, SymFloat, SymStr)
class NumberSemantics(Semantics):
    rank = 30

    def binary(self, state, fn, a, b, name, reflected):
        plain = operators.plain(fn)
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
            return self._float_op(state, plain, a, b, name) or protocol.binary(
                state, fn, a, b, name, below=self.rank
            )
        return self._float_op(state, plain, a, b, name) or NotImplemented

    @staticmethod
    def _float_op(state, fn, a: Value, b: Value, name: str) -> Value | None:
        if isinstance(a, SymFloat) or isinstance(b, SymFloat):
            return symfloat_op(state, fn, [a, b], name)
        return None

    def unary(self, state, fn, v, name):
        if isinstance(v, SymFloat):
            result = symfloat_op(state, fn, [v], name)
            if result is not None:
                return result
        if isinstance(v, SymInt) and fn in _INT_UNARY_OPS:
            return number_node(state, fn, [v], name, risk="silent")
        return super().unary(state, fn, v, name)

    def truth(self, state, v):
        if isinstance(v, SymInt) and v.branch:
            cond = tested(state)
            tested_text = (
                f"`{cond.text}` compares" if cond is not None else "the condition compares"
            )
            raise state.graph_break(
                "iteration_branch", f"{tested_text} ints that change from one iteration to the next"
            )
        if isinstance(v, SymInt):
            return bool(concretize(state, v))
        return bool(v.constant())

    def get_attr(self, state, v, name, tx):
        if isinstance(v, SymStr):  # its methods need its value
            known = Const(v.constant())
            return semantics_of(known).get_attr(state, known, name, tx)
        if isinstance(v, SymInt) and name in ("real", "numerator") and v.python_type() is int:
            return v
        return super().get_attr(state, v, name, tx)

    def iterate(self, state, v, taker, loop):
        if isinstance(v, SymStr):
            known = Const(v.constant())  # unrolled: the characters are needed
            return semantics_of(known).iterate(state, known, taker, loop)
        return super().iterate(state, v, taker, loop)
