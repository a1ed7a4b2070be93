"""A loop node's function as numba compiles it: the graph's own printing, with NumPy's typing
rules spelled out where numba's differ.

numba types a Python number in an operation with a NumPy value as a 64-bit one (``f32 + 1.0``
is a float64 to numba, a float32 to NumPy under NEP 50, and ``f32 > 0.1`` compares in float64
there, in float32 here). So a Python number meeting a NumPy value is printed converted to the
type NumPy computes in (``t * np.float32(1.5) + np.float32(1)``), and NumPy scalar constants
are printed as text (``np.float32(1.5)``), not bound as globals: the text is what numba's disk
cache is keyed by. What numba would do differently from NumPy and no spelling fixes makes the
loop run as the graph's Python (`Unsupported`, with the reason): `numba_types` checks the rest
against the trace after numba has typed the function.

Floats are NumPy's within tolerance (as on the triton backend); integers, dtypes and shapes are
exact. A float vector's dot product (``np.dot``, ``@``, ``np.inner``, ``np.vdot``) is
``_dot(a, b)``, 8 partial sums: NumPy's BLAS adds in an order no loop reproduces. A float
vector's ``np.sum`` and ``np.mean`` are NumPy's own pairwise sum, bit for bit (``_sum``,
``_mean``). Other float reductions, which numba adds in order, compile for a few elements only.
Ufunc calls with ``where=`` and ``np.copyto`` (masked stores) are element loops of their own
(`native_masked`).
"""

from __future__ import annotations

import math
import operator
from dataclasses import replace

import numpy as np

from tcompile.tracer.ir import operators
from tcompile.tracer.ir.graph import loop_lines
from tcompile.tracer.ir.loop_nodes import COUNT
from tcompile.tracer.ir.node import RAISE, Node
from tcompile.tracer.ir.printer import Printer, numpy_name

from . import scalar_ops as ops
from .index_checks import IndexChecks
from .int_ranges import IntRanges
from .native_elementwise import ElementLoops
from .native_masked import MaskedStores


class Unsupported(Exception):
    """What in a loop numba cannot run as NumPy does (the loop then runs as Python)."""


_POWER = (operator.pow, np.power)


class _Converted:
    """A Python number printed converted to ``dtype`` (``np.float32(x)``)."""

    def __init__(self, value, dtype: np.dtype):
        self.value, self.dtype = value, dtype


class _NonZero:
    """A Python number divided by: printed checked (``_nonzero(b)`` raises for zero)."""

    def __init__(self, value):
        self.value = value


class _Checked:
    """An int index of ``array``'s dim ``dim``: printed checked (``_at(i, n)`` raises IndexError
    out of NumPy's range ``-n <= i < n``)."""

    def __init__(self, value, array, dim: int):
        self.value, self.array, self.dim = value, array, dim


class _Apart:
    """An array operand of an operation writing ``out``: printed as `native_prelude`'s
    ``_apart`` (a copy where it overlaps ``out`` otherwise than element for element: NumPy
    reads it so, numba's ``a[1:] += a[:-1]`` would read the elements it already wrote)."""

    def __init__(self, value, out):
        self.value, self.out = value, out


def _read_apart(node: Node) -> Node:
    """``a += b``, ``np.add(b, c, out=a)``: array operands other than ``a`` read apart."""
    out = node.args[0] if node.op == "inplace" else node.kwargs["out"]
    if getattr(getattr(out, "tensor", None), "kind", None) != "array":
        return node
    args = tuple(
        _Apart(a, out) if a is not out and getattr(getattr(a, "tensor", None), "kind", None) == "array"
        else a for a in node.args
    )  # fmt: skip
    return replace(node, args=args)


_DIVISIONS = (np.true_divide, np.floor_divide, np.remainder)


# Python ints have no size: numba's are int64. These operations on them are checked (the
# helpers above raise OverflowError where a result outgrows 64 bits; the loop then runs as
# Python); others that could outgrow them are not compiled.
_CHECKED_INT_OPS = {"add": "_int_add", "sub": "_int_sub", "mul": "_int_mul"}
_UNCHECKED_INT_OPS = ("pow", "lshift")


class NativePrinter(Printer):
    """The graph's `Printer`, spelling NumPy's typing for numba (see the module's docstring)."""

    empty_loop_tail = False  # the caller runs a loop of no iteration as Python
    inline_loops = False  # numba compiles each loop's function: LLVM inlines them

    def __init__(self, ns: dict, ranges: IntRanges, checks: IndexChecks):
        super().__init__(ns)
        self.ranges = ranges  # the bits each Python int may need
        self.checks = checks  # the bounds checks the caller can make once per call
        self.checks_ints = False  # whether a Python int operation is checked for overflow
        self.boundscheck = False  # whether numba checks every access (an index not an int)
        self.may_raise = False  # whether the glue runs the frame again where the loop raises
        self.masked = MaskedStores()  # helpers of ufunc calls with where=, np.copyto
        self.elements = ElementLoops()  # element-wise operations fused into loop nests

    def lines_of(self, node: Node) -> list[tuple[str, Node]] | None:
        return self.elements.lines(self, node)

    def statement(self, node: Node, buffer: Node | None = None, loop_function: str = "") -> str:
        if node.op in ("call", "inplace") and len(node.args) == 2:
            if _is_weak(node.args[0]) and _is_weak(node.args[1]) and _python_int(node):
                return self._int_statement(node)
            node = replace(node, args=_with_weak_converted(node))
            if node.op == "inplace" or ("out" in node.kwargs and "where" not in node.kwargs):
                node = _read_apart(node)  # (masked stores read apart in their own helpers)
        elif node.op == "setitem":
            if _own_view_stored(node):  # ``a[i, 1:-1] += v``'s store: the view is a's memory
                return "pass"
            _check_store(node)
            if _array_into_view(node):
                if not _slices_only(node.args[1]):
                    node = self._checked(node)
                obj, index, value = node.args
                # a nest's fresh array of the view's shape: no overlap to check, no broadcast
                fresh = self.elements.fresh(value) and _may_match(_view_shape(obj, index),
                                                                  value.tensor.shape)  # fmt: skip
                helper = ("_copy_into1" if len(value.tensor.shape) == 1 else "_copy_into") \
                    if fresh else "_assign"  # fmt: skip
                return f"{helper}({self.arg(obj)}[{self.index(index)}], {self.arg(value)})"
        if node.op == "call" and ("where" in node.kwargs or node.target is np.copyto):
            return self.masked.statement(self, node, Unsupported)  # numba takes no where=
        if node.op in ("getitem", "setitem") and not _slices_only(node.args[1]):
            node = self._checked(node)
        elif node.op == "call" and node.target is int and _dtype(node.args[0]) == np.uint64:
            raise Unsupported("int() of a uint64 (Python's int holds values int64 does not)")
        elif node.op == "call" and node.target is int and _is_float(node.args[0]):
            self.checks_ints = True  # past int64: OverflowError, and the loop runs as Python
            return f"{node.name} = _int_of({self.arg(node.args[0])})"
        elif node.op == "call" and _float_to_int(node):
            return f"{node.name} = {self._float_to_int(node)}"
        elif node.op == "call" and node.target is round and _is_float(node.args[0]):
            raise Unsupported("round() of a float (NaN and infinity raise)")
        elif node.op == "call" and self.vector_helper(node) is None:
            _check_float_sum(node)
        return super().statement(node, buffer, loop_function)

    def _float_to_int(self, node: Node) -> str:
        """A float (or floats) converted to an integer type, checked within the bounds where
        the conversion is NumPy's: past them (NaN, infinities) OverflowError, and the loop runs
        as Python. A scalar converts as NumPy's (`scalar_ops.cast`); numba's ``astype`` is
        NumPy's within the integer type's own bounds."""
        value, dst = self.arg(node.args[0]), node.tensor.dtype
        self.checks_ints = True  # the loop's writes are undone where it raises
        if node.tensor.kind == "array":  # astype, np.asarray(a, dtype), np.array(a, dtype)
            low, high = ops.integer_bounds(dst)
            return f"_all_within({value}, {low!r}, {high!r}).astype(np.{dst.name})"
        low, high = ops.cast_bounds(dst)
        return ops.cast(f"_within({value}, {low!r}, {high!r})", _dtype(node.args[0]) or
                        np.dtype(np.float64), dst)  # fmt: skip

    def _checked(self, node: Node) -> Node:
        """``node`` with the int items of its index the caller cannot check once per call
        checked where they are used (``_at``); any other such item (an array, a bool) is
        numba's ``boundscheck``."""
        array, index = node.args[:2]
        positions = self.checks.add(node)
        items = index if isinstance(index, tuple) else (index,)
        if not positions:
            return node
        if not all(_is_int(items[p]) for p in positions):
            self.boundscheck = True
            return node
        checked = tuple(
            _Checked(item, array, p) if p in positions else item for p, item in enumerate(items)
        )
        return replace(node, args=(array, checked if isinstance(index, tuple) else checked[0],
                                   *node.args[2:]))  # fmt: skip

    def errstate(self, settings: dict) -> str | None:
        """Machine code neither raises nor warns for floating-point errors: as NumPy ignoring
        them (or warning: the backend's trade), never as NumPy raising."""
        if any(mode in ("raise", "call") for mode in settings.values()):
            raise Unsupported(f"np.errstate({settings}) raises for floating-point errors")
        return None

    def loop_prologue(self, loop, first: str) -> list[str]:
        """The checks of a loop inside the loop's indices, made before it runs (`_span_at`):
        per array dim, coefficient and term, the lowest and highest offset."""
        offsets: dict[tuple, tuple] = {}
        for span in self.checks.spans.get(id(loop), ()):
            key = (id(span.array), span.dim, span.coefficient, span.times, id(span.term))
            offsets.setdefault(key, (span, []))[1].append(span.offset)
        return [
            f"_span_at({span.coefficient}, {first}, {COUNT}, {span.times}, "
            f"{'0' if span.term is None else self.arg(span.term)}, {min(found)}, {max(found)}, "
            f"{self.arg(span.array)}.shape[{span.dim}])"
            for span, found in offsets.values()
        ]

    def first_index(self, loop_node: Node | None) -> str:
        """The first index as a literal where the graph calls the loop with one: LLVM then
        knows the indices' signs and drops NumPy's negative-index wrap-around from loads it
        proves non-negative (a loop over ``v[i - 1]`` vectorizes)."""
        first = loop_node.args[0] if loop_node is not None else None
        return repr(first) if type(first) is int else super().first_index(loop_node)

    def _int_statement(self, node: Node) -> str:
        """An operation on two Python ints: checked where it may outgrow 64 bits."""
        op = operators.of_function(node.target)
        name = op.name if op is not None else ""
        if node.op == "inplace" or name in _UNCHECKED_INT_OPS:
            raise Unsupported(f"a Python int {name or 'operation'} may outgrow 64 bits")
        if name == "rshift" and not (type(node.args[1]) is int and 0 <= node.args[1] < 64):
            # Python shifts by any count (0 or -1 past the bits), LLVM's shift is undefined
            raise Unsupported("a Python int shifted by a count that may reach 64 bits")
        if name in ("truediv", "floordiv", "mod"):
            node = replace(node, args=(node.args[0], _NonZero(node.args[1])))
        if name not in _CHECKED_INT_OPS or self.ranges.fits(node):  # index arithmetic: it fits
            return super().statement(node)
        self.checks_ints = True
        return f"{node.name} = {_CHECKED_INT_OPS[name]}({self.call_args(node.args, {})})"

    def expression(self, node: Node) -> str:
        if node.op == "call" and node.target == np.add.at:
            return self._add_at(node)
        helper = self.vector_helper(node)
        if helper is not None:
            return f"{helper}({self.call_args(node.args, {})})"
        text = super().expression(node)
        meta = node.tensor
        if node.op == "call" and meta is not None and meta.kind == "scalar" \
                and meta.dtype.kind in "iu" and meta.dtype.itemsize < 8:  # fmt: skip
            # numba computes on small NumPy ints as int64: the low bits are NumPy's result
            return f"np.{meta.dtype.name}({text})"
        return text

    def vector_helper(self, node: Node) -> str | None:
        """`_vector_helper`'s, but not ``_mean`` where an empty vector's mean would raise in a
        loop the glue runs again from its inputs only where it may raise (its ``risk``): NumPy
        warns and gives NaN for it, it raises no error of its own."""
        helper = _vector_helper(node)
        if helper == "_mean" and not self.may_raise and not node.args[0].tensor.shape[0]:
            return None
        return helper

    def _add_at(self, node: Node) -> str:
        """``np.add.at(a, i, v)`` on vectors of one dtype, by `native_prelude`'s helpers (numba has
        no ``ufunc.at``)."""
        target, indices, values = (node.args + (None,))[:3]
        dtype, index_dtype = _dtype(target), _dtype(indices)
        shapes = [getattr(getattr(v, "tensor", None), "shape", None) for v in node.args]
        if node.kwargs or dtype is None or index_dtype is None or index_dtype.kind not in "iu" \
                or len(shapes[0] or ()) != 1 or len(shapes[1] or ()) != 1:  # fmt: skip
            raise Unsupported("np.add.at other than of a vector at a vector of integer indices")
        if _dtype(values) == dtype and len(shapes[2] or ()) == 1 and shapes[2] == shapes[1]:
            return f"_add_at({self.call_args(node.args, {})})"
        if _dtype(values) == dtype and not shapes[2] or _is_weak(values):
            value = self.arg(_Converted(values, dtype) if _is_weak(values) else values)
            spread = f"np.broadcast_to({value}, {self.arg(indices)}.shape)"  # no copy
            return f"_add_at({self.arg(target)}, {self.arg(indices)}, {spread})"
        raise Unsupported("np.add.at of values of another dtype or shape than its target's")

    def arg(self, value) -> str:
        if isinstance(value, _Apart):
            return f"_apart({super().arg(value.value)}, {super().arg(value.out)})"
        if isinstance(value, _Checked):
            size = f"{self.arg(value.array)}.shape[{value.dim}]"
            return f"_at({super().arg(value.value)}, {size})"
        if isinstance(value, _NonZero):
            return f"_nonzero({super().arg(value.value)})"
        if isinstance(value, _Converted):
            return f"np.{value.dtype.name}({super().arg(value.value)})"
        if isinstance(value, np.generic) and value.dtype.kind in "biuf":
            return _scalar_text(value)
        return super().arg(value)


def native_lines(loop_node: Node, name: str) -> tuple[list, dict, NativePrinter]:
    """``loop_node``'s function ``name`` for numba, line by line as (text, node), the globals
    it needs (``np``, and constants it binds), and the printer, which says whether it may
    raise OverflowError (``checks_ints``: a Python int outgrowing 64 bits, the loop must then
    run again as Python), whether numba must check every access (``boundscheck``) and the
    checks its caller can make once per call (``checks``)."""
    namespace: dict = {"np": np}
    loop = loop_node.target
    printer = NativePrinter(namespace, IntRanges(loop), IndexChecks(loop))
    printer.may_raise = loop_node.risk == RAISE
    lines = loop_lines(loop, name, printer, node=loop_node)
    return lines, namespace, printer


def _slices_only(index) -> bool:
    """Whether an index holds only slices (and ``None``, ``...``): they clip, never raise."""
    items = index if isinstance(index, tuple) else (index,)
    return all(isinstance(i, slice) or i is None or i is Ellipsis for i in items)


def _array_into_view(node: Node) -> bool:
    """``a[slices] = b`` or ``a[i, slices] = b`` (a view of ``a``), ``b`` an array of ``a``'s
    dtype: `native_prelude`'s ``_assign`` stores it (numba's setitem would compile its shape
    errors' text formatting: 2.8 s on a fresh machine)."""
    target, index, value = node.args
    meta, into = getattr(value, "tensor", None), getattr(target, "tensor", None)
    items = index if isinstance(index, tuple) else (index,)
    ints = [i for i in items if not isinstance(i, slice)]
    return (isinstance(value, Node) and meta is not None and into is not None
            and meta.kind == "array" and len(meta.shape) > 0 and meta.dtype == _dtype(target)
            and all(map(_is_int, ints)) and len(ints) < len(into.shape))  # fmt: skip


def _own_view_stored(node: Node) -> bool:
    """``a[index] = view`` where ``view`` is ``a[index]`` (basic indexing: ``a``'s own memory),
    as an in-place update stores it back: it changes nothing."""
    target, index, value = node.args
    if not (isinstance(value, Node) and value.op == "getitem" and value.args[0] is target):
        return False
    if getattr(value.tensor, "kind", None) != "array":
        return False
    items, read = (i if isinstance(i, tuple) else (i,) for i in (index, value.args[1]))
    return len(items) == len(read) and all(map(_same_item, items, read))


def _same_item(a, b) -> bool:
    """Two index items that are the same int or slice (not an array: that indexes a copy)."""
    if isinstance(a, slice) and isinstance(b, slice):
        return all(map(_same_item, (a.start, a.stop, a.step), (b.start, b.stop, b.step)))
    if a is None or b is None:
        return a is b
    if type(a) is int or type(b) is int:
        return type(a) is type(b) and a == b
    return a is b and _is_int(a)


def _view_shape(target, index) -> tuple | None:
    """The shape of ``target[index]`` (ints and slices), None for each dim known only at run
    time; None for another index."""
    shape = getattr(getattr(target, "tensor", None), "shape", None)
    items = index if isinstance(index, tuple) else (index,)
    if shape is None or len(items) > len(shape) or any(i is None or i is Ellipsis for i in items):
        return None
    found = []
    for size, item in zip(shape, items):
        if isinstance(item, slice):
            bounds = (item.start, item.stop, item.step)
            known = size is not None and all(b is None or type(b) is int for b in bounds)
            found.append(len(range(*item.indices(size))) if known else None)
    return (*found, *shape[len(items) :])


def _may_match(view: tuple | None, shape: tuple) -> bool:
    """Shapes the trace saw alike, but for dims known only at run time (checked there)."""
    return view is not None and len(view) == len(shape) and \
        all(a is None or b is None or a == b for a, b in zip(view, shape))  # fmt: skip


def _python_int(node: Node) -> bool:
    return _python_type(node) == "int"


_BUILTIN_RESULTS = {int: "int", float: "float", bool: "bool", len: "int"}


def _python_type(value) -> str | None:
    """ "int", "float" or "bool" for a Python number (a constant, or a node the trace saw as
    one, or computed from them by an operator: the trace keeps no value for those); else None."""
    if not isinstance(value, Node):
        return {bool: "bool", int: "int", float: "float"}.get(type(value))
    meta = value.tensor
    if meta is not None:
        return meta.type_name if meta.kind == "python" and meta.type_name in _WEAK_EXAMPLES \
            else None  # fmt: skip
    if value.op != "call":
        return None
    if value.target in _BUILTIN_RESULTS:
        return _BUILTIN_RESULTS[value.target]
    op = operators.of_function(value.target)
    kinds = {_python_type(a) for a in value.args}
    if op is None or None in kinds or op.name == "pow":
        return None
    if value.target in operators.COMPARISONS:
        return "bool"
    if op.name == "truediv" or "float" in kinds:
        return "float" if op.name not in ("and", "or", "xor", "lshift", "rshift") else None
    return "bool" if kinds == {"bool"} and op.name in ("and", "or", "xor") else "int"


def _with_weak_converted(node: Node) -> tuple:
    """``node``'s two operands, a Python number meeting a NumPy value converted to the type
    NumPy computes in; Unsupported where numba cannot match NumPy."""
    op = operators.of_function(node.target)
    ufunc = op.ufunc if op is not None else node.target
    if not (isinstance(ufunc, np.ufunc) or node.target in _POWER):
        return node.args
    a, b = node.args
    strong = next((x for x in (a, b) if _dtype(x) is not None), None)
    weak = next((x for x in (a, b) if _is_weak(x)), None)
    if strong is None or weak is None:
        _check_python_power(node)
        if ufunc in _DIVISIONS and all(_is_weak(x) for x in (a, b)):
            return (a, _NonZero(b))  # Python raises for a zero divisor, numba would not
        return node.args
    dtype = _dtype(strong)
    example = weak if not isinstance(weak, Node) else _WEAK_EXAMPLES[_python_type(weak)]
    try:
        computed = np.result_type(dtype, example)
    except OverflowError as e:  # a constant the integer type cannot hold: NumPy raises
        raise Unsupported(f"{example!r} does not fit {dtype}") from e
    if isinstance(weak, Node) and _python_type(weak) == "int" and computed == dtype \
            and dtype.kind in "iu" and (dtype.itemsize < 8 or dtype.kind == "u") \
            and not _masked_into(weak, dtype):  # fmt: skip
        # NumPy raises for a Python int its type cannot hold, numba would wrap it
        raise Unsupported(f"a Python int variable meets a {dtype} value")
    if node.target in _POWER and dtype.kind in "iu" and not (isinstance(weak, int) and weak >= 0):
        raise Unsupported("an integer power whose exponent may be negative (NumPy raises)")
    if computed != dtype:
        return node.args
    return tuple(_Converted(x, dtype) if x is weak else x for x in node.args)


_WEAK_EXAMPLES = {"int": 0, "float": 0.0, "bool": False}


def _masked_into(value: Node, dtype: np.dtype) -> bool:
    """``value`` is ``n & mask`` with a constant mask ``dtype`` holds (``crc & 1`` meeting a
    uint8): between 0 and the mask, whatever ``n`` is, so NumPy never raises for it."""
    if value.op != "call" or value.target not in (operator.and_, np.bitwise_and):
        return False
    masks = [a for a in value.args if type(a) is int]
    return bool(masks) and 0 <= masks[0] <= np.iinfo(dtype).max


def _check_python_power(node: Node) -> None:
    """``i ** j`` of Python ints is an int only for ``j >= 0`` (a float otherwise)."""
    if node.target in _POWER and all(_is_weak(x) for x in node.args):
        exponent = node.args[1]
        if not (type(exponent) is int and exponent >= 0) and _python_type(node.args[0]) != "float":
            raise Unsupported("a Python int to a power that may be negative")


# Float dot products and sums of vectors, printed as `native_prelude`'s helpers (see `_vector_helper`).
_DOTS = (np.dot, np.matmul, operator.matmul, np.inner, np.vdot)
_SUMS = ((np.sum, "_sum"), (np.mean, "_mean"))
_VECTOR_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _vector_helper(node: Node) -> str | None:
    """The `native_prelude` helper that computes ``node`` where it is a float dot product of two
    vectors (``_dot``: within tolerance, as NumPy's BLAS is reproduced by no order) or a sum or
    mean of one (``_sum``, ``_mean``: bit for bit, NumPy's pairwise order); None for others.

        np.dot(a[:k], b[:k])  ->  _dot(a_item, b_item)      np.sum(v[i:])  ->  _sum(v_item)
    """
    result = node.tensor
    if node.op != "call" or result is None or result.kind != "scalar" \
            or result.dtype not in _VECTOR_FLOATS:  # fmt: skip
        return None
    if not all(_is_vector(a, result.dtype) for a in node.args):
        return None
    if any(node.target is fn for fn in _DOTS):
        return "_dot" if len(node.args) == 2 and not node.kwargs else None
    helper = next((name for fn, name in _SUMS if node.target is fn), None)
    if helper is None or len(node.args) != 1 or set(node.kwargs) - {"axis"} \
            or node.kwargs.get("axis") not in (None, 0, -1):  # fmt: skip
        return None
    return helper


def _is_vector(value, dtype: np.dtype) -> bool:
    meta = value.tensor if isinstance(value, Node) else None
    return meta is not None and meta.kind == "array" and len(meta.shape) == 1 \
        and meta.dtype == dtype  # fmt: skip


# Other sums of floats: in order (numba) and pairwise or by BLAS (NumPy) they round alike for
# a few elements only.
_ORDERED_SUMS = (np.sum, np.mean, np.prod, np.var, np.std, np.cumsum, np.cumprod, np.dot,
                 np.matmul, np.einsum, np.inner, np.vdot, np.tensordot, np.linalg.norm)  # fmt: skip
ORDERED_SUM_LIMIT = 128  # NumPy sums this many elements with 8 accumulators, not pairwise


def _check_float_sum(node: Node) -> None:
    """A float reduction of more than `ORDERED_SUM_LIMIT` elements: numba adds them one after
    another, NumPy pairwise, and their results part further the more there are (vectors'
    dot products and sums are `native_prelude`'s helpers)."""
    if not any(node.target is fn for fn in _ORDERED_SUMS):
        return
    for arg in node.args:
        meta = arg.tensor if isinstance(arg, Node) else None
        if meta is None or meta.kind != "array" or meta.dtype.kind not in "fc":
            continue
        size = np.prod([d if isinstance(d, int) else ORDERED_SUM_LIMIT + 1 for d in meta.shape])
        if size > ORDERED_SUM_LIMIT:
            raise Unsupported(
                f"{node.target.__name__} of {int(size)} floats (numba adds them in order, "
                "NumPy pairwise: the results would part)"
            )


def _check_store(node: Node) -> None:
    """``a[i] = v``: NumPy raises for a NaN or a Python int out of range where numba converts."""
    target, _, value = node.args
    dtype = _dtype(target)
    if dtype is None or dtype.kind not in "biu":
        return
    if _is_float(value):
        raise Unsupported(f"a float stored into a {dtype} array (NumPy raises for NaN)")
    if isinstance(value, Node) and _python_type(value) == "int" and dtype != np.int64:
        raise Unsupported(f"a Python int stored into a {dtype} array (NumPy raises out of range)")
    if type(value) is int:
        np.array(value, dtype=np.result_type(dtype, value))  # OverflowError: NumPy raises too


def _dtype(value) -> np.dtype | None:
    """The NumPy dtype of an array or NumPy scalar (a node's or a constant's); None else."""
    if isinstance(value, Node):
        meta = value.tensor
        return meta.dtype if meta is not None and meta.kind in ("array", "scalar") else None
    if isinstance(value, np.generic):
        return value.dtype
    return None


def _is_weak(value) -> bool:
    """A Python bool, int or float (NumPy's "weak" scalars: they take the other operand's type)."""
    return _python_type(value) is not None


def _is_int(value) -> bool:
    """A Python int, or a NumPy integer scalar (not an array, not a bool)."""
    if type(value) is int or _python_type(value) == "int":
        return True
    meta = value.tensor if isinstance(value, Node) else None
    return (meta is not None and meta.kind == "scalar" and meta.dtype.kind in "iu") or (
        isinstance(value, np.integer)
    )


def _float_to_int(node: Node) -> bool:
    """``a.astype(int type)`` (``np.asarray`` or ``np.array`` with a dtype alone) of a float
    array, or ``np.int32(x)`` (any NumPy integer type) of a float."""
    meta = node.tensor
    if meta is None or meta.kind not in ("array", "scalar") or meta.dtype.kind not in "iu":
        return False
    if node.target is np.ndarray.astype:
        return len(node.args) == 2 and not node.kwargs and _is_float(node.args[0])
    if node.target in (np.asarray, np.array):  # with a dtype alone: a new array, as astype
        given = len(node.args) + len(node.kwargs) == 2 and set(node.kwargs) <= {"dtype"}
        return given and meta.kind == "array" and _is_float(node.args[0])
    integer_type = isinstance(node.target, type) and issubclass(node.target, np.integer)
    return integer_type and len(node.args) == 1 and not node.kwargs and _is_float(node.args[0])


def _is_float(value) -> bool:
    dtype = _dtype(value)
    if dtype is not None:
        return dtype.kind == "f"
    return _python_type(value) == "float"


def _scalar_text(value: np.generic) -> str:
    """A NumPy scalar constant as text that makes exactly it."""
    name = numpy_name(type(value))
    if value.dtype.kind == "f":
        number = float(value)
        if math.isnan(number):
            if np.signbit(value) or value.view(f"u{value.dtype.itemsize}") != np.array(
                np.nan, value.dtype
            ).view(f"u{value.dtype.itemsize}"):
                raise Unsupported("a NaN constant with a sign or payload of its own")
            return f"{name}(np.nan)"
        if math.isinf(number):
            return f"{name}({'-' if number < 0 else ''}np.inf)"
        return f"{name}({float(value)!r})"
    return f"{name}({value.item()!r})"
