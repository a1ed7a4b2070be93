"""Ufunc calls with ``out=`` and ``where=``, and ``np.copyto(dst, src, where=)``, in native loops:
how the tracer writes masked stores (``z[m] = z[m] ** 2 + c[m]``, tracer/state/masked.py). numba
takes neither keyword, so each call is printed as a helper of the loop's module, an element loop
over ``out``'s shape with NumPy's semantics::

    np.square(z, out=pow_, where=bounded)   ->  _square_where(z, pow_, bounded)

    def _square_where(a0, out, where):
        ...
        for i0 in range(out.shape[0]):
            for i1 in range(out.shape[1]):
                if where[i0, i1]:
                    x0 = a0[i0, i1]
                    out[i0, i1] = _complex128_square(x0)

Where the mask is False ``out`` keeps its contents; operands and the mask broadcast to ``out``'s
shape (the trace's shapes, printed as indices); an operand sharing memory with ``out`` other than
element for element is read from a copy, as NumPy reads it. Each element is computed in NumPy's
loop dtypes (``ufunc.resolve_dtypes``) by `scalar_ops` (the fused kernels' exact per-element
rules), cast as NumPy casts; complex loops are NumPy's formulas (a product as NumPy's SIMD loop
computes it, with or without fused multiply-adds: probed, `_complex_product`). What has no exact
spelling here is `Unsupported` (the loop runs as Python).
"""

from __future__ import annotations

import functools
from fractions import Fraction

import numpy as np

from tcompile.tracer.ir import operators
from tcompile.tracer.ir.node import Node

from ..fused.dtypes import Unlowerable
from . import scalar_ops as ops

_DECORATOR = '@numba.njit(error_model="numpy", {options})'  # NumPy's x / 0.0, no raise


class MaskedStores:
    """The helpers one module's masked calls need, by name -> source (``{options}``: numba's
    caching, as in the prelude)."""

    def __init__(self):
        self.helpers: dict[str, str] = {}

    def statement(self, printer, node: Node, unsupported: type[Exception]) -> str:
        """``node`` (a ufunc call with ``out=``, or ``np.copyto``) as a call of its helper."""
        try:
            name, args = self._helper(node)
        except Unlowerable as why:
            raise unsupported(str(why)) from why
        return f"{name}({', '.join(printer.arg(a) for a in args)})"

    def text(self) -> str:
        """The helpers' module text (``{options}``: numba's caching)."""
        text = "".join(self.helpers.values())
        return ("\nfrom numba import njit\n" if "@njit(" in text else "") + text

    def _helper(self, node: Node) -> tuple[str, list]:
        kwargs = dict(node.kwargs)
        if node.target is np.copyto:
            bound = dict(zip(("dst", "src"), node.args))
            bound.update((k, kwargs.pop(k)) for k in ("dst", "src") if k in kwargs)
            if set(bound) != {"dst", "src"}:
                raise Unlowerable("np.copyto without its two arrays")
            dst, src = bound["dst"], bound["src"]
            if set(kwargs) - {"casting", "where"} or kwargs.get("casting", "same_kind") not in (
                "unsafe",
                "same_kind",
                "safe",
                "equiv",
                "no",
            ):
                raise Unlowerable("np.copyto with other keywords than casting= and where=")
            operands, out, where = [src], dst, kwargs.get("where", True)
            if _dtype_of(src) is None or _dtype_of(dst) is None:
                raise Unlowerable("np.copyto of other than arrays and NumPy scalars")
            if not np.can_cast(_dtype_of(src), _dtype_of(dst), kwargs.get("casting", "same_kind")):
                raise Unlowerable("np.copyto of a cast its casting= refuses (NumPy raises)")
            ufunc, loop = None, None
        else:
            ufunc = node.target
            if not isinstance(ufunc, np.ufunc) or ufunc.nout != 1 or ufunc.signature:
                raise Unlowerable(f"{getattr(ufunc, '__name__', ufunc)!s} with out= is no ufunc")
            if set(kwargs) - {"out", "where"} or len(node.args) != ufunc.nin:
                raise Unlowerable(f"np.{ufunc.__name__} with other keywords than out=, where=")
            operands, out, where = list(node.args), kwargs["out"], kwargs.get("where", True)
            given = tuple(_resolvable(a) for a in operands) + (_dtype_of(out),)
            try:
                loop = ufunc.resolve_dtypes(given)
            except Exception as why:  # noqa: BLE001 - no loop, or a cast NumPy refuses
                raise Unlowerable(f"np.{ufunc.__name__}: {why}") from why
        out_meta = _array_meta(out)
        if out_meta is None:
            raise Unlowerable("a masked store into other than an array of a known shape")
        shape = out_meta.shape
        if where is not True and _dtype_of(where) != np.bool_:
            raise Unlowerable("where= of other than booleans (NumPy raises)")
        dtypes = [_dtype_of(v) for v in [*operands, out]]
        if any(d is not None and d.char in "egG" for d in dtypes):
            raise Unlowerable("float16 and long doubles (numba has no loops of them)")
        indexes = [_element_index(a, shape) for a in [*operands, where]]
        apart = [index is not None and not _apart(a, out) for a, index in
                 zip([*operands, where], indexes)]  # fmt: skip
        source = self._source(ufunc, loop, operands, out_meta.dtype, indexes, apart, len(shape))
        name = self._name(ufunc.__name__ if ufunc is not None else "copyto", source)
        return name, [*operands, out, where]

    def _source(self, ufunc, loop, operands, out_dtype, indexes, checked, ndim: int) -> str:
        """The helper's source, its name a placeholder ``NAME``; ``checked``: the operands
        that may share memory with ``out`` (read from a copy where they do)."""
        count = len(operands)
        params = [f"a{k}" for k in range(count)]
        positions = [f"i{d}" for d in range(ndim)]
        lines = [f"def NAME({', '.join([*params, 'out', 'where'])}):"]
        for name, check in zip([*params, "where"], checked):
            if check:
                lines.append(f"    {name} = _apart({name}, out)")
        indent = "    "
        for d in range(ndim):
            lines.append(f"{indent}for i{d} in range(out.shape[{d}]):")
            indent += "    "
        here = ", ".join(positions) if ndim else "()"
        mask = "where" if indexes[-1] is None else f"where[{indexes[-1](positions)}]"
        lines.append(f"{indent}if {mask}:")
        indent += "    "
        values = []
        for k, index in enumerate(indexes[:-1]):
            read = params[k] if index is None else f"{params[k]}[{index(positions)}]"
            lines.append(f"{indent}x{k} = {read}")
            values.append(f"x{k}")
        value = self._element(ufunc, loop, operands, out_dtype, values)
        lines.append(f"{indent}out[{here}] = {value}")
        return "\n".join(lines)

    def _element(self, ufunc, loop, operands, out_dtype: np.dtype, values: list[str]) -> str:
        """One element's text: the operands cast to the loop's dtypes, the loop, its result
        cast to ``out``'s dtype."""
        if ufunc is None:  # np.copyto
            return _cast(values[0], _numba_dtype(operands[0]), out_dtype)
        *ins, result = loop
        args = [_cast(v, _numba_dtype(a), t) for v, a, t in zip(values, operands, ins)]
        if result.kind == "c" or any(t.kind == "c" for t in ins):
            text = self._complex(ufunc, ins, result, args)
        else:
            ops.check_loop(ufunc, tuple(ins), (result,))
            helpers: dict[str, str] = {}
            text = ops.op(ufunc, tuple(ins), result, args, helpers)
            for name, source in helpers.items():
                self.helpers.setdefault(name, source.replace("cache=True", "{options}"))
        return _cast(text, result, out_dtype)

    def _complex(self, ufunc, ins, result, args: list[str]) -> str:
        if any(t != result for t in ins) or ufunc not in _COMPLEX:
            raise Unlowerable(f"np.{ufunc.__name__} on {ins[0]} has no native rule")
        template = _COMPLEX[ufunc]
        if "_product" in template:
            name, how = f"_{result.name}_product", _complex_product(result)
            if how is None:
                raise Unlowerable(f"NumPy's {result} product is neither formula known here")
            self.helpers.setdefault(name, _PRODUCT.format(name=name, T=ops.type_name(result),
                                                          formula=_PRODUCTS[how]))  # fmt: skip
            template = template.replace("_product", name)
        return template.format(*args)

    def _name(self, base: str, source: str) -> str:
        """A helper's name: ``_<ufunc>_where``, numbered where one of another source has it."""
        for n in range(len(self.helpers) + 1):
            name = f"_{base}_where" + (f"{n}" if n else "")
            text = f"\n\n{_DECORATOR}\n" + source.replace("NAME", name) + "\n"
            if self.helpers.get(name, text) == text:
                self.helpers[name] = text
                return name
        raise AssertionError(base)


# Complex loops, NumPy's formulas (numpy/_core/src/umath/loops_arithm_fp.dispatch.c.src): sums
# and differences part by part, products as `_complex_product` finds NumPy computes them.
_COMPLEX = {
    np.add: "{0} + {1}",
    np.subtract: "{0} - {1}",
    np.negative: "-{0}",
    np.positive: "{0}",
    np.conjugate: "{0}.conjugate()",
    np.multiply: "_product({0}, {1})",
    np.square: "_product({0}, {0})",
}

_PRODUCTS = {
    "fused": "complex(fma(ar, br, -(ai * bi)), fma(ar, bi, ai * br))",
    "plain": "complex(ar * br - ai * bi, ar * bi + ai * br)",
}
_PRODUCT = """

from tcompile.backend.cpu.intrinsics import fma


@numba.njit(inline="always", error_model="numpy", {{options}})
def {name}(a, b):
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    return {T}({formula})
"""


@functools.cache
def _complex_product(dtype: np.dtype) -> str | None:
    """How NumPy multiplies complex numbers of ``dtype`` on this machine: "fused" (its SIMD loop
    with fused multiply-adds: real ``fma(ar, br, -(ai * bi))``, imag ``fma(ar, bi, ai * br)``),
    "plain" (``ar * br - ai * bi``, ``ar * bi + ai * br``), None (neither)."""
    part = np.dtype(dtype.char.lower())
    tiny = part.type(2.0 ** -(np.finfo(part).nmant // 2 + 1))
    a = np.full(16, part.type(1) + tiny, part) + np.full(16, 1j, dtype)
    got = np.empty_like(a)
    np.multiply(a, a, out=got, where=np.ones(16, bool))  # the path masked stores take
    ar, ai = a.real[0], a.imag[0]
    fused = part.type(float(Fraction(float(ar)) ** 2 - Fraction(float(ai)) ** 2))  # exact here
    plain = part.type(ar * ar) - part.type(ai * ai)
    if fused == plain:  # the probe does not tell them apart
        return None
    real = got.real[0]
    return "fused" if real == fused else "plain" if real == plain else None


# Calls that give a new array: what they give shares no memory with another array.
_ALLOCATORS = (np.empty, np.empty_like, np.zeros, np.zeros_like, np.ones, np.ones_like, np.full,
               np.full_like)  # fmt: skip


def _apart(value, out) -> bool:
    """Whether ``value`` is known to share no memory with ``out`` other than element for element
    (``out`` itself; or one made anew in this iteration, the other too or the loop's input):
    no check needed. Checks cost compile time (0.2 s per pair of array types)."""
    if value is out:
        return True
    ends = [_fresh(value), _fresh(out)]
    inputs = [isinstance(v, Node) and v.op == "input" for v in (value, out)]
    return any(ends) and all(f or i for f, i in zip(ends, inputs))


def _fresh(node) -> bool:
    """A node whose array the body makes anew (an allocation, a ufunc or operator's result)."""
    if not isinstance(node, Node) or node.op != "call" or "out" in node.kwargs:
        return False
    meta = node.tensor
    if meta is None or meta.kind != "array":
        return False
    target = node.target
    return (
        any(target is f for f in _ALLOCATORS)
        or isinstance(target, np.ufunc)
        or (operators.of_function(target) is not None and not operators.is_inplace(target))
    )


def _resolvable(value):
    """What ``ufunc.resolve_dtypes`` takes for an operand: its dtype, or a Python number's type
    (NEP 50: weak)."""
    dtype = _dtype_of(value)
    return dtype if dtype is not None else _kind_of(value)


def _kind_of(value) -> type:
    """The Python number type of an operand that has no dtype."""
    kind = _python_kind(value)
    if kind is None:
        raise Unlowerable(f"a masked operand of unknown type: {value!r}")
    return kind


def _dtype_of(value) -> np.dtype | None:
    """The dtype of an array or NumPy scalar (a node's, a constant's, or a Python number the
    printer converts to one); None else."""
    if isinstance(value, Node):
        meta = value.tensor
        return meta.dtype if meta is not None and meta.kind in ("array", "scalar") else None
    dtype = getattr(value, "dtype", None)
    return np.dtype(dtype) if isinstance(dtype, np.dtype) else None


def _python_kind(value) -> type | None:
    if isinstance(value, Node):
        meta = value.tensor
        name = meta.type_name if meta is not None and meta.kind == "python" else None
        return {"bool": bool, "int": int, "float": float}.get(name)
    return type(value) if type(value) in (bool, int, float) else None


def _numba_dtype(value) -> np.dtype:
    """The dtype numba holds ``value`` in: its own, or int64/float64/bool for Python numbers."""
    dtype = _dtype_of(value)
    if dtype is not None:
        return dtype
    return np.dtype({bool: np.bool_, int: np.int64, float: np.float64}[_kind_of(value)])


def _cast(text: str, src: np.dtype, dst: np.dtype) -> str:
    """``text`` of ``src`` as ``dst``, as NumPy casts (complex to real refused: it drops the
    imaginary part with a warning)."""
    if src == dst:
        return text
    if dst.kind == "c":
        if src.kind == "c":
            return f"{ops.type_name(dst)}({text})"
        as_float = ops.cast(text, src, np.dtype(np.float64 if dst.itemsize == 16 else np.float32))
        return f"{ops.type_name(dst)}({as_float})"
    if src.kind == "c" or src.kind not in "biuf" or dst.kind not in "biuf":
        raise Unlowerable(f"a cast from {src} to {dst}")
    return ops.cast(text, src, dst)


def _array_meta(value):
    meta = value.tensor if isinstance(value, Node) else None
    if meta is None or meta.kind != "array" or not all(type(d) is int for d in meta.shape):
        return None
    return meta


def _element_index(value, shape: tuple):
    """How an element of ``value`` is read at ``out``'s position (a function of the position
    names), broadcast to ``shape``; None for a scalar (read whole)."""
    if isinstance(value, (bool, np.bool_)) or (not isinstance(value, Node) and _dtype_of(value)
                                                is not None and np.ndim(value) == 0):  # fmt: skip
        return None
    if not isinstance(value, Node):
        if _python_kind(value) is not None:
            return None
        raise Unlowerable(f"a masked operand of unknown type: {value!r}")
    meta = value.tensor
    if meta is not None and meta.kind in ("scalar", "python"):
        return None
    if _array_meta(value) is None:
        raise Unlowerable("a masked operand of unknown shape")
    own = meta.shape
    if len(own) > len(shape) or any(
        d not in (1, s) for d, s in zip(reversed(own), reversed(shape))
    ):
        raise Unlowerable(f"an operand of shape {own} does not broadcast to {shape}")
    if not own:
        return lambda positions: "()"
    skip = len(shape) - len(own)

    def index(positions: list[str]) -> str:
        parts = [("0" if d == 1 and s != 1 else p) for d, s, p in
                 zip(own, shape[skip:], positions[skip:])]  # fmt: skip
        return ", ".join(parts)

    return index
