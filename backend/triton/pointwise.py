"""NumPy's dtypes, constants and casts as Triton text, and the stand-ins for libdevice under
Triton's interpreter.

`triton_type` names a dtype's Triton type (`Unlowerable` where there is none); `constant` and
`cast` follow NumPy's scalar and ``astype`` rules. The ufuncs themselves, written on these, are
in `ufuncs`. Results are bit-for-bit NumPy's except in the libdevice transcendentals (a few ULP
apart) when kernels are built with `EXACT_OPTIONS`.
"""

from __future__ import annotations

import ast
import functools
import math
import operator
import types

import numpy as np

from ..fused.dtypes import KERNEL_DTYPES, Unlowerable, check_kernel_dtype

# What every kernel is compiled with: no ``a * b + c`` contracted into one fma (NumPy rounds
# the product), no float32 subnormals flushed to zero in libdevice and floor/ceil. Triton's
# defaults are the other way round; its interpreter ignores both.
EXACT_OPTIONS = {"enable_fp_fusion": False, "enable_reflect_ftz": False}

# ---------------------------------------------------------------------------------------------
# dtypes, constants, casts

_TRITON_TYPES = {key: "tl.int1" if name == "bool" else f"tl.{name}"
                 for key, name in KERNEL_DTYPES.items()}  # fmt: skip


def triton_type(dtype: np.dtype) -> str:
    """The Triton type of a NumPy dtype, as text.

    >>> triton_type(np.dtype(bool)), triton_type(np.dtype("uint16"))
    ('tl.int1', 'tl.uint16')
    """
    dtype = np.dtype(dtype)
    check_kernel_dtype(dtype, "Triton")  # Unlowerable, saying why
    return _TRITON_TYPES[(dtype.kind, dtype.itemsize)]


def constant(value, dtype: np.dtype) -> str:
    """An expression of exactly ``dtype`` holding ``value`` as NumPy stores it in that dtype.

    One element of shape ``[1]``, which broadcasts against blocks of any rank like a scalar:
    Triton's interpreter (Triton 3.9) mislabels a comparison of two 0-d values with the
    operands' dtype, and the result then fails in ``&``/``|``/masks (``(x < c) | (c != c)``).

    >>> constant(0.1, np.dtype(np.float32))  # the float32 nearest 0.1, written exactly
    'tl.full([1], 0.10000000149011612, tl.float32)'
    >>> constant(-np.inf, np.dtype(np.float16))
    "tl.full([1], float('-inf'), tl.float16)"
    """
    dtype = np.dtype(dtype)
    tt = triton_type(dtype)
    if dtype.kind == "b":
        return f"tl.full([1], {bool(value)}, {tt})"
    if dtype.kind in "iu":
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            value = int(value)
        value = operator.index(value)
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise Unlowerable(f"{value} does not fit {dtype} (NumPy raises OverflowError)")
        return f"tl.full([1], {value}, {tt})"
    try:
        with np.errstate(all="ignore"):
            stored = dtype.type(value)  # rounds to the dtype, as NumPy does for a Python float
            x = float(stored)
    except OverflowError:  # a Python int beyond float64
        raise Unlowerable(f"{value} does not fit {dtype} (NumPy raises OverflowError)") from None
    if math.isnan(x) or (x == 0 and math.copysign(1, x) < 0):
        # A NaN's sign and payload travel through NumPy's arithmetic: write its bits. So do
        # -0.0's (on an H200, `tl.full([1], -0.0, tl.float16)` held +0.0).
        bits = int(np.array(stored).view(f"i{dtype.itemsize}"))
        return f"tl.full([1], {bits}, tl.int{dtype.itemsize * 8}).to({tt}, bitcast=True)"
    if math.isinf(x):
        text = "float('inf')" if x > 0 else "float('-inf')"
    else:
        text = repr(x)  # exact: every float16/float32 value is a float64 value
    return f"tl.full([1], {text}, {tt})"


def cast(expr: str, src: np.dtype, dst: np.dtype) -> str:
    """``expr`` (of dtype ``src``) converted as ``ndarray.astype(dst)`` (casting="unsafe") does.

    Float to integer is C's conversion on x86, which NumPy's loops compile to: through int32
    for targets under 32 bits, wrapping (-1.0 -> uint8 is 255, 300.0 -> int8 is 44), and
    uint32 and uint64 by halves (`_x86_unsigned`). Where an integer part does not fit (NaN,
    inf, 1e30) x86 gives the lowest integer (`_x86_truncate`), where the GPU would saturate
    (into uint32 and uint64 NumPy's own results for those differ between its vector loop and
    its scalar tail).

    >>> cast("v", np.dtype(np.float32), np.dtype(bool))
    'v != 0'
    >>> cast("v", np.dtype(np.int64), np.dtype(np.float32))
    'v.to(tl.float32)'
    """
    src, dst = np.dtype(src), np.dtype(dst)
    tt, _ = triton_type(dst), triton_type(src)
    if src == dst:
        return expr
    x = atom(expr)
    if dst.kind == "b":
        return f"{x} != 0"  # NaN is true, as in NumPy
    if src.kind == "f" and dst.kind in "iu":
        wide = x if src == np.float64 else f"{x}.to(tl.float64)"  # exact, as is x - 2**31 there
        if dst.kind == "u" and dst.itemsize >= 4:
            return _x86_unsigned(wide, dst)
        converted = _x86_truncate(wide, 64 if dst.itemsize == 8 else 32)
        return converted if dst in (np.int32, np.int64) else f"{converted}.to({tt})"
    return f"{x}.to({tt})"


def _x86_truncate(wide: str, bits: int) -> str:
    """The float64 ``wide`` truncated to a signed integer of ``bits`` as x86 does
    (``cvttsd2si``): the integer part, or the lowest integer where it does not fit (NaN too)."""
    signed = np.dtype(f"i{bits // 8}")
    info = np.iinfo(signed)
    outside = _integer_part_outside(wide, np.dtype(np.float64), int(info.min), int(info.max))
    return f"tl.where({outside}, {constant(info.min, signed)}, {wide}.to({triton_type(signed)}))"


def _x86_unsigned(wide: str, dst: np.dtype) -> str:
    """The float64 ``wide`` converted to uint32 or uint64 as C compilers do on x86: below the top
    bit's value (NaN too) the signed conversion's bits, at or above it the signed conversion of
    ``wide`` minus that value, with the top bit set again (-1.0 -> 2**32 - 1, 2**32 -> 0)."""
    bits = dst.itemsize * 8
    top, f64 = 2 ** (bits - 1), np.dtype(np.float64)
    tt = triton_type(dst)
    low = _x86_truncate(wide, bits)
    high = _x86_truncate(f"({wide} - {constant(float(top), f64)})", bits)
    return (f"tl.where({wide} >= {constant(float(top), f64)}, "
            f"{high}.to({tt}) ^ {constant(top, dst)}, {low}.to({tt}))")  # fmt: skip


def _integer_part_outside(expr: str, src: np.dtype, low: int, high: int) -> str:
    """Where the integer part of the float ``expr`` lies outside [low, high], or ``expr`` is NaN:
    the value outside (low - 1, high + 1), compared in float64 (exact for every float dtype).

    >>> _integer_part_outside("v", np.dtype(np.float32), -128, 127)
    '~((v.to(tl.float64) > tl.full([1], -129.0, tl.float64)) & (v.to(tl.float64) < tl.full([1], 128.0, tl.float64)))'
    """
    x = atom(expr) if src == np.float64 else f"{atom(expr)}.to(tl.float64)"
    f64 = np.dtype(np.float64)
    # no float64 lies between -2**63 - 1 and -2**63: there, ``>= low``
    above = (f"{x} > {constant(low - 1, f64)}" if float(low - 1) == low - 1
             else f"{x} >= {constant(low, f64)}")  # fmt: skip
    return f"~(({above}) & ({x} < {constant(high + 1, f64)}))"


def unassignable(expr: str, src: np.dtype, dst: np.dtype) -> str:
    """Where NumPy raises assigning the NumPy scalar ``expr`` (of dtype ``src``) to an item of
    a signed integer array of ``dst``: it converts the number as ``int(value)`` does, so NaN
    raises ValueError, and infinity or a value whose integer part ``dst`` cannot hold raises
    OverflowError (``x[0] = np.float64(1e300)``, ``i8[0] = np.int64(400)``).

    >>> unassignable("v", np.dtype(np.uint64), np.dtype(np.int64))
    'v > tl.full([1], 9223372036854775807, tl.uint64)'
    """
    src, dst = np.dtype(src), np.dtype(dst)
    assert dst.kind == "i" and not np.can_cast(src, dst), (src, dst)
    info = np.iinfo(dst)
    if src.kind == "f":
        return _integer_part_outside(expr, src, int(info.min), int(info.max))
    x = atom(expr)
    bad = f"{x} > {constant(info.max, src)}"
    return bad if src.kind == "u" else f"({x} < {constant(info.min, src)}) | ({bad})"


def atom(expr: str) -> str:
    """``expr`` safe to use as an operand: names, numbers, calls and subscripts stay as they are."""
    expr = expr.strip()
    node = ast.parse(expr, mode="eval").body
    if isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)):
        return expr
    if isinstance(node, ast.Constant) and not expr.startswith("-"):
        return expr
    return f"({expr})"


# ---------------------------------------------------------------------------------------------
# Triton's interpreter (TRITON_INTERPRET=1) has no libdevice: these stand-ins compute the same C
# functions with NumPy. Bind a kernel module's `libdevice` to `interpreter_libdevice()`.

_LIBDEVICE_NUMPY = {
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
    "log10": np.log10, "log1p": np.log1p, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "atan2": np.arctan2,
    "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh, "hypot": np.hypot, "cbrt": np.cbrt,
    "pow": np.power, "fmod": np.fmod, "rint": np.rint, "copysign": np.copysign,
    "ldexp": np.ldexp,
    "popc": lambda x: np.bitwise_count(x.view(f"u{x.dtype.itemsize}")),  # of the bits, not |x|
}  # fmt: skip


@functools.cache
def interpreter_libdevice() -> types.SimpleNamespace:
    """A stand-in for ``triton.language.extra.libdevice`` under Triton's interpreter."""
    import triton.language as tl
    from triton.runtime.interpreter import TensorHandle, _get_np_dtype

    def stand_in(name, fn):
        def call(*args):
            first = next(a for a in args if isinstance(a, tl.tensor))
            scalar = tl.int32 if name == "popc" else first.dtype.scalar
            data = [a.handle.data if isinstance(a, tl.tensor) else a for a in args]
            with np.errstate(all="ignore"):
                out = np.asarray(fn(*data)).astype(_get_np_dtype(scalar))
            blocked = any(isinstance(a, tl.tensor) and a.type.is_block() for a in args)
            ty = tl.block_type(scalar, list(out.shape)) if blocked else scalar
            return tl.tensor(TensorHandle(out, scalar), ty)

        call.__name__ = name
        return call

    return types.SimpleNamespace(**{n: stand_in(n, f) for n, f in _LIBDEVICE_NUMPY.items()})
