"""Masked stores without a break: ``a[mask] = v`` and ``z[m] = f(z[m], c[m])`` change no shape,
so they stay in the graph although ``z[m]`` alone has a shape that follows the mask's values.

A read ``z[m]`` with a boolean array ``m`` (of ``z``'s shape, or of its first dims) becomes a
`MaskedValue`: ``z[m]`` not made yet, held as the array ``full`` whose elements at the mask's
true positions are the ones ``z[m]`` would gather. Element-wise ufuncs and operators between
masked values of one mask and numbers run on the full arrays, restricted to the mask, into a
new array (so warnings and floating-point errors come from exactly the elements eager code
computes), and a store ``z[m] = value`` writes the selected elements back. ``z[m] = z[m] ** 2
+ c[m]`` on complex arrays is::

    t = np.empty_like(z, dtype=np.dtype('<c16'))
    np.square(z, out=t, where=m)                       # z[m] ** 2
    np.add(t, c, out=z, where=m)                       # ... + c[m], stored: z has its dtype

and a store that casts (or of a number) is ``np.copyto(z, value, casting='unsafe', where=m)``.

A read is kept masked only where its value is stored so, or where sizes from data are off:
a selection that is only computed on and reduced (``(x[m] > 1).any()``) is made at its read,
in the graph (`data_sizes`), eager's own computation and cheaper than masked operations over
the whole array. Other operations on a masked value (``z[m] = x[m] / x[m].sum()``) take the
selection made in the graph (`made`), where sizes from data are on. Any other use of a masked value (``len``, its shape, a branch, another mask, a
read after ``z`` or ``m`` was written...) is the graph break reading it always was: at the read,
so the frame resumes there with ``z[m]`` made eagerly. A read is kept lazy only where the
bytecode after it shows the value used up by the end of its statement (`_scan`; a reduction
uses it up), so a value that is returned or kept for later breaks where it is read, as before.

Exactness: the selected elements are computed by the same ufunc loops as eager code's gathered
arrays (float16 and long doubles, whose loops differ between strided and contiguous operands,
are left to eager code), each masked operation is checked against eager's on the examples, and
stores cast only within a kind (other casts pick loops, or warn, differently; see `store`).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from .. import hatches
from ..bytecode import analysis, stack_effects
from ..bytecode.stack_effects import tracked
from ..errors import BreakRecord, GraphBreak, UserErrorInTrace
from ..ir import graph_passes, operators, quiet
from ..ir import numpy_table as table
from ..values.arrays import ArrayValue, ScalarValue, SymFloat, SymInt
from ..values.containers import leaves
from ..values.core import Const, Value
from . import data_sizes

EXPLANATION = "boolean-mask indexing: the result's shape depends on the mask's values"
HINT = (
    "Reduce the selection where it is read (x[mask].sum(), np.mean(x[mask])) to keep it "
    "in the graph, or use np.where(mask, x, 0) to keep shapes static."
)
_NUMBERS = (bool, int, float, complex)
_SCAN_LIMIT = 400  # instructions looked at after a read to see its value used up


@dataclass(frozen=True)
class _Origin:
    """The read a masked value comes from: the break it becomes when it must exist."""

    record: BreakRecord
    error_on_graph_break: bool
    root_index: int  # the root frame's instruction the read belongs to

    def graph_break(self) -> GraphBreak:
        brk = GraphBreak(self.record, error_on_graph_break=self.error_on_graph_break)
        brk.root_index = self.root_index
        return brk


@dataclass(frozen=True)
class _Made:
    """How a masked value's array was computed: ``ufunc(*args, out=<new array>, where=...)``,
    the graph's last two nodes while nothing came after them."""

    ufunc: np.ufunc
    args: tuple
    name: str
    nodes: tuple  # (the np.empty_like node, the ufunc's node)


@dataclass(eq=False)
class MaskedValue(Value):
    """``base[mask]`` before it is made: its elements are those of ``full`` where ``where``
    (the mask, with trailing axes for a row mask) is true; the rest of ``full`` is never read.
    ``stale``: ``full`` or ``mask`` was written since, so the value can no longer be made."""

    full: ArrayValue
    mask: ArrayValue
    where: ArrayValue
    origin: _Origin
    fresh: bool = False  # ``full`` is an array of its own (not the array read)
    stale: bool = False
    made: _Made | None = None  # the last two graph nodes, where they computed ``full``

    @property
    def dtype(self) -> np.dtype:
        return self.full.example.dtype

    def python_type(self) -> type:
        return np.ndarray

    def describe(self) -> str:
        return f"ndarray {_short(self.dtype)}[?] (a boolean-mask selection)"

    def constant(self):
        raise escape(self)

    def graph_arg(self):
        raise escape(self)

    def rebuild_text(self, rb) -> str:
        """Made after the graph from what it selects (a value live at a later break)."""
        if self.stale:
            raise escape(self)
        return rb.temp(f"{rb.expr(self.full)}[{rb.expr(self.mask)}]", self)


def escape(value: MaskedValue) -> GraphBreak:
    """The break for a masked value used as an array of its own: at its read, as before."""
    return value.origin.graph_break()


def first_masked(obj) -> MaskedValue | None:
    """The earliest-read masked value among ``obj``'s leaves, if any."""
    found = [v for v in leaves(obj) if isinstance(v, MaskedValue)]
    return min(found, key=lambda v: v.origin.root_index) if found else None


def escape_selection(obj: Value, index: Value) -> None:
    """``obj[index]``, read or written, where ``obj`` is a masked value or ``index`` holds one:
    the break at its read."""
    selection = obj if isinstance(obj, MaskedValue) else first_masked(index)
    if selection is not None:
        raise escape(selection)


# -- reads and stores ----------------------------------------------------------------------


def read(state, obj: Value, index: Value) -> MaskedValue | None:
    """``obj[index]`` as a masked value, or None where it must be made now (the break)."""
    if not _selects(obj, index) or not _exact_dtype(obj.example.dtype):
        return None
    tx = state.tx
    if tx is None or tx.current is None or tx.current.opname != "BINARY_SUBSCR":
        return None
    if state.breaks.region is not None or _blocked(tx):
        return None
    scan = _scan(tx)
    if not scan.used_up or (data_sizes.enabled() and not scan.stored):
        # kept, or only computed on and reduced (``(x[m] > 1).any()``): the selection made
        # now, in the graph where sizes from data are on, costs less than masked operations
        # over the whole array, and is eager's own computation
        return None
    brk = state.graph_break("data_dependent_shape", EXPLANATION, HINT)
    root = tx
    while root.parent is not None:
        root = root.parent
    origin = _Origin(brk.record, brk.error_on_graph_break, root.ip - 1)
    value = MaskedValue(obj, index, _where(state, index, obj), origin)
    _live(state).add(value)
    return value


def store(state, obj: Value, index: Value, value: Value) -> bool:
    """``obj[index] = value`` as an in-graph masked write, if it is one; False where it is not
    (a masked ``value`` that cannot be written so must be made: the break at its read)."""
    # a mask sharing memory with the array would change while NumPy writes it
    writable = _selects(obj, index) and obj.example.dtype.kind in "biufc"
    if not writable or np.may_share_memory(obj.example, index.example):
        if isinstance(value, MaskedValue):
            raise escape(value)
        return False
    if isinstance(value, MaskedValue):
        same_selection = _same_mask(state, value.mask, index)
        same_selection = same_selection and value.full.example.shape == obj.example.shape
        # other casts than within a kind pick their loop by layout, or warn differently
        if (
            value.stale
            or not same_selection
            or not np.can_cast(value.dtype, obj.example.dtype, "same_kind")
        ):
            raise escape(value)
        if _written_in_place(state, obj, value):
            return True
        source, where = value.full, value.where
    else:
        source = _scalar_source(state, value, obj.example.dtype)
        if source is None:
            return False
        where = _where(state, index, obj)
    kwargs = {"casting": Const("unsafe"), "where": where}
    state.graph_call("call", np.copyto, (obj, source), kwargs, name="masked_store")
    return True


def _same_mask(state, read: ArrayValue, written: ArrayValue) -> bool:
    """Whether the mask a selection was read with and the one a store writes with are one
    mask: the same value, or computed alike (``a[a > 0] = a[a > 0] ** 2``)."""
    if read is written:
        return True
    nodes = getattr(read, "node", None), getattr(written, "node", None)
    return None not in nodes and graph_passes.same_values(state.graph, *nodes)


def _written_in_place(state, obj: ArrayValue, value: MaskedValue) -> bool:
    """``z[m] = <ufunc result>`` just computed, of z's dtype: the ufunc writes into ``z``
    itself (``np.add(t, c, out=z, where=m)``) instead of into a new array then copied. The
    elements are the same (same loop, no cast; NumPy reads overlapping inputs first)."""
    made, nodes = value.made, state.graph.nodes
    if made is None or value.full.node is not made.nodes[0] or tuple(nodes[-2:]) != made.nodes:
        return False  # not the last computation: something may have read that array since
    if value.dtype != obj.example.dtype or made.nodes[1].errstate != state.contexts.errstate():
        return False
    del nodes[-2:]
    state.graph_call(
        "call", made.ufunc, made.args, {"out": obj, "where": value.where}, name=made.name
    )
    value.full, value.fresh, value.made = obj, False, None
    return True


def _selects(obj: Value, index: Value) -> bool:
    """Whether ``index`` is a boolean array selecting elements (or rows) of array ``obj``."""
    if not (isinstance(obj, ArrayValue) and isinstance(index, ArrayValue)):
        return False
    mask = index.example
    if obj.device or index.device or mask.dtype != np.bool_:
        return False
    return 1 <= mask.ndim <= obj.example.ndim and obj.example.shape[: mask.ndim] == mask.shape


def _where(state, mask: ArrayValue, obj: ArrayValue) -> ArrayValue:
    """The mask broadcasting against ``obj``: itself, or ``mask[..., None]`` for a row mask."""
    extra = obj.example.ndim - mask.example.ndim
    if not extra:
        return mask
    index = Const((Ellipsis,) + (None,) * extra)
    return state.graph_call("getitem", None, (mask, index), {}, name=f"{mask.node.name}_rows")


def _scalar_source(state, value: Value, dtype: np.dtype) -> Value | None:
    """What ``a[mask] = value`` writes, for a number ``value``: converted to ``a``'s dtype the
    way item assignment converts it (``np.array(value, dtype)``: 2.7 into an int array is 2,
    NaN raises), then copied without a cast. None: not a number this handles."""
    if isinstance(value, Const) and (type(value.value) in _NUMBERS or _numeric(value.value)):
        try:
            with quiet.strict():
                return Const(np.array(value.value, dtype=dtype)[()])
        except (Warning, FloatingPointError):  # it warns: on every call, at the user's line
            return _converted(state, value, dtype)
        except Exception as error:  # raised whatever the mask selects
            raise UserErrorInTrace(error) from error
    if isinstance(value, ScalarValue) and _numeric(value.example):
        return _converted(state, value, dtype)
    if isinstance(value, (SymInt, SymFloat)):
        converted = _converted(state, value, dtype)
        converted.node.risk = "raise"  # a NaN or a too large number for the dtype raises
        return converted
    if isinstance(value, ArrayValue) and value.example.ndim == 0:
        # 0-d arrays are cast per selected element: only casts that cannot warn
        return value if np.can_cast(value.example.dtype, dtype, "safe") else None
    return None


def _converted(state, value: Value, dtype: np.dtype) -> Value:
    return state.graph_call(
        "call", np.array, (value,), {"dtype": Const(dtype)}, name="masked_value"
    )


def _numeric(obj) -> bool:
    return isinstance(obj, np.generic) and obj.dtype.kind in "biufc"


# -- element-wise operations ---------------------------------------------------------------


def binary(state, fn, a: Value, b: Value) -> Value:
    """``a <op> b`` (or ``a <op>= b``) where an operand is a masked value."""
    op = operators.of_function(fn)
    inplace = operators.is_inplace(fn)
    masked = first_masked((a, b))
    if op is None or (inplace and not isinstance(a, MaskedValue)):
        raise escape(masked)
    operands, ufunc = [a, b], op.ufunc
    if op.symbol == "**":
        ufunc = np.power
        if isinstance(a, MaskedValue) and isinstance(b, Const) and _is_number(b.value):
            ufunc = operators.power_ufunc(a.dtype, b.value)  # NumPy's fast paths (x ** 2)
            if ufunc is not None and ufunc.nin == 1:
                operands = [a]
        elif not isinstance(b, MaskedValue):
            ufunc = None  # a traced exponent: which ufunc runs depends on its value
    if ufunc is None:
        raise escape(masked)
    return apply(state, ufunc, operands, name=op.name, into=a if inplace else None)


def unary(state, fn, v: MaskedValue) -> Value:
    op = operators.UNARY.get(fn)
    if op is None or op.ufunc is None:
        raise escape(v)
    return apply(state, op.ufunc, [v], name=op.name)


def call(state, op: str, target, args: tuple, kwargs: dict, name: str) -> Value:
    """A graph operation with a masked value among its arguments: an element-wise ufunc of
    masked values and numbers stays masked; anything else takes the selections made in the
    graph (`made`), where sizes from data are on; else it makes the value where it was read
    (the break)."""
    ufunc = table.elementwise_ufunc(target) if op == "call" else None
    if ufunc is not None and not kwargs and len(args) == ufunc.nin:
        return apply(state, ufunc, list(args), name=name)
    made_args = tuple(made(state, v, name) if isinstance(v, MaskedValue) else v for v in args)
    made_kwargs = {k: made(state, v, name) if isinstance(v, MaskedValue) else v
                   for k, v in kwargs.items()}  # fmt: skip
    if first_masked((made_args, made_kwargs)) is not None:  # one inside a container
        raise escape(first_masked((made_args, made_kwargs)))
    return state.graph_call(op, target, made_args, made_kwargs, name=name)


# Methods that use a selection up whole (``x[m].sum()``): its read stays lazy until the call
WHOLE_METHODS = frozenset(("sum", "mean", "prod", "max", "min", "any", "all", "var", "std",
                           "argmax", "argmin"))  # fmt: skip


def made(state, selection: MaskedValue, name: str) -> Value:
    """The selection ``full[mask]`` made in the graph: an array whose length is known only
    when the graph runs (`data_sizes`), which what follows uses as eager code does (a
    reduction of it is eager's bit for bit; one that raises on an empty selection makes the
    frame run again eagerly). With sizes from data off, or once ``full`` or ``mask`` was
    written, the break at its read."""
    if selection.stale or not data_sizes.enabled():
        raise escape(selection)
    return state.graph_call("getitem", None, (selection.full, selection.mask), {},
                            name=f"{name}_selected", data_shape=True)  # fmt: skip


def apply(state, ufunc: np.ufunc, operands: list, *, name: str, into: MaskedValue | None = None):
    """``ufunc(*operands)`` on the selected elements, into a fresh array; ``into``: the masked
    value an in-place operator updates (``t += 1``: every name of ``t`` sees the new values)."""
    masked = [v for v in operands if isinstance(v, MaskedValue)]
    first = min(masked, key=lambda v: v.origin.root_index)
    for v in masked:
        if v.stale:
            raise escape(v)
        if v.mask is not first.mask or v.full.example.shape != first.full.example.shape:
            raise escape(first)  # another mask: eager code gathers arrays that may not fit
    if (
        table.elementwise_ufunc(ufunc) is None
        or not all(isinstance(v, MaskedValue) or _scalar_operand(v) for v in operands)
        or not all(_exact_dtype(v.dtype) for v in masked)
    ):
        raise escape(first)
    dtype = _result_dtype(ufunc, operands, into)
    if not _exact_dtype(dtype) or not _same_as_eager(ufunc, operands, first, dtype, into):
        raise escape(first)
    full = (into or first).full
    out = state.graph_call("call", np.empty_like, (full,), {"dtype": Const(dtype)}, name=name)
    args = tuple(v.full if isinstance(v, MaskedValue) else v for v in operands)
    state.graph_call("call", ufunc, args, {"out": out, "where": first.where}, name=name)
    made = _Made(ufunc, args, name, (out.node, state.graph.nodes[-1]))
    if into is not None:
        into.full, into.fresh, into.made = out, True, made
        return into
    result = MaskedValue(out, first.mask, first.where, first.origin, fresh=True, made=made)
    _live(state).add(result)
    return result


def _scalar_operand(v: Value) -> bool:
    """A number broadcast against the selection as eager code broadcasts it."""
    if isinstance(v, Const):
        return _is_number(v.value) and (
            not isinstance(v.value, np.generic) or _exact_dtype(v.value.dtype)
        )
    if isinstance(v, (SymInt, SymFloat)):
        return True
    if isinstance(v, ScalarValue) or (isinstance(v, ArrayValue) and v.example.ndim == 0):
        return _exact_dtype(v.example.dtype)
    return False


def _is_number(obj) -> bool:
    return type(obj) in _NUMBERS or _numeric(obj)


_SAMPLE = 4096  # elements of the examples an operation is checked on against eager's


def _example(v: Value, part: str):
    """``v``'s example: for a masked value its ``"full"`` array, or the first rows of it and of
    its mask (``"rows"``: a view, same strides), or an empty array of its dtype (``"none"``)."""
    if isinstance(v, (SymInt, SymFloat)):
        return v.hint
    if not isinstance(v, MaskedValue):
        return v.value if isinstance(v, Const) else v.example
    full, mask = v.full.example, v.mask.example
    if part == "none":
        return np.empty((0, *full.shape[mask.ndim :]), full.dtype)
    rows = max(1, _SAMPLE // max(1, full[0].size)) if full.shape[0] else 0
    return (full[:rows], mask[:rows]) if part == "rows" else full


def _result_dtype(ufunc, operands: list, into: MaskedValue | None) -> np.dtype:
    """The dtype eager code's result has; its type errors (an int too large for the dtype,
    an output cast ``+=`` refuses) are raised whatever the mask selects."""
    empty = [_example(v, "none") for v in operands]
    try:
        with quiet.silenced():
            if into is not None:
                ufunc(*empty, out=_example(into, "none"))
                return into.dtype
            return ufunc(*empty).dtype
    except Exception as error:
        raise UserErrorInTrace(error) from error


def _same_as_eager(ufunc, operands: list, first: MaskedValue, dtype, into) -> bool:
    """Whether the masked computation gives eager's elements bit for bit, on the first rows of
    the examples (views: the layouts the graph computes on)."""
    sampled = [_example(v, "rows") for v in operands]
    masked = [isinstance(v, MaskedValue) for v in operands]
    fulls = [s[0] if m else s for m, s in zip(masked, sampled)]
    gathered = [s[0][s[1]] if m else s for m, s in zip(masked, sampled)]
    mask = _example(first, "rows")[1]
    with quiet.silenced():
        try:
            if into is not None:
                expected = gathered[0].copy()
                ufunc(expected, *gathered[1:], out=expected)  # ``t += v`` on the gathered copy
            else:
                expected = ufunc(*gathered)
        except Exception:  # noqa: BLE001 - these values raise: the graph raises there too
            return True
        out = np.empty_like(_example(into or first, "rows")[0], dtype=dtype)
        where = mask[(Ellipsis,) + (None,) * (out.ndim - mask.ndim)]
        try:
            ufunc(*fulls, out=out, where=where)
        except Exception:  # noqa: BLE001
            return False
    got = out[mask]
    return got.dtype == expected.dtype and got.tobytes() == np.asarray(expected).tobytes()


def _exact_dtype(dtype: np.dtype) -> bool:
    """Dtypes whose ufunc loops give the same bits on strided and contiguous operands (not
    float16, computed through float32 only on contiguous data; not long doubles)."""
    return dtype.kind in "biufc" and dtype.char not in "egG"


def _short(dtype: np.dtype) -> str:
    return {"b": "bool"}.get(dtype.kind, f"{dtype.kind}{dtype.itemsize * 8}")


# -- what is still live, and writes that make it stale ---------------------------------------

_LIVE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _live(state) -> weakref.WeakSet:
    if state not in _LIVE:
        _LIVE[state] = weakref.WeakSet()
    return _LIVE[state]


def note_writes(state, writes: list) -> None:
    """Arrays about to be written: a masked value selecting from one can no longer be made."""
    live = _LIVE.get(state)
    if not live:
        return
    for value in list(live):
        arrays = (value.full.example, value.mask.example)
        if not value.stale and any(
            np.may_share_memory(w.example, a) for w in writes for a in arrays
        ):
            value.stale = True


def name_of(value: MaskedValue):
    """The node a user's variable name goes to: the array a masked result is computed into."""
    return value.full.node if value.fresh else None


# -- is the value read used up by the end of its statement? ----------------------------------


def _blocked(tx) -> bool:
    """Inside a try block or a user-defined with-block, where a frame cannot resume."""
    while tx is not None:
        if tx.current.in_try or tx.user_with_depth:
            return True
        tx = tx.parent
    return False


@dataclass(frozen=True)
class _Scanned:
    used_up: bool  # no stack slot or live local holds the value by the end of its statement
    stored: bool  # it (or a value computed from it) is stored by ``container[key] = value``


def _scan(tx) -> _Scanned:
    """Where the value the current BINARY_SUBSCR pushes, and what is computed from it, go in
    a straight run of instructions. It is used up where, by the end of the run, no stack slot
    holds it and no local holding it is read again. Returned by the root frame, put in a
    container, read as an attribute or item, or still live at a jump: not used up (the read
    is made where it is, as before). Passed to a call: its result is taken to hold it."""
    try:
        return _follow(tx)
    except (IndexError, KeyError):  # a stack effect or an offset this does not know
        return _Scanned(False, False)


def _follow(tx) -> _Scanned:
    frame, ip = tx, tx.ip
    stack: list = [*tx.stack, stack_effects.TRACKED]
    names: set[str] = set()
    stored = False
    for _ in range(_SCAN_LIMIT):
        if not any(map(tracked, stack)) and not (names and names & _live_locals(frame, ip)):
            return _Scanned(True, stored)
        inst = frame.instrs[ip]
        ip += 1
        if inst.opname == "RETURN_VALUE":
            returned = stack.pop()
            parent = frame.parent
            if parent is None or parent.current.opname not in ("CALL", "CALL_KW"):
                used_up = not tracked(returned) and not any(map(tracked, stack))
                return _Scanned(used_up, stored)
            frame, ip, names = parent, parent.ip, set()
            stack = [*parent.stack, returned]
            continue
        stored = stored or (inst.opname == "STORE_SUBSCR" and tracked(stack[-3]))
        if not stack_effects.step(inst, stack, names, _opaque, WHOLE_METHODS):
            return _Scanned(False, stored)
    return _Scanned(False, stored)


def _live_locals(frame, ip: int) -> frozenset:
    return analysis.live_locals_at(frame.code, frame.instrs[ip].offset)


def _opaque(slot) -> bool:
    """A callable that would see the value itself rather than an array: ``nonstrict_trace``
    (it runs on proxies), and ``callable`` (it answers for traced values by their kind)."""
    fn = getattr(slot, "value", None) if isinstance(slot, Value) else None
    return (
        isinstance(fn, hatches.nonstrict_trace) or fn is hatches.nonstrict_trace or fn is callable
    )
