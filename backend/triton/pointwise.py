"""NumPy's dtypes, constants and casts as Triton text, and the stand-ins for libdevice under
Triton's interpreter.

`triton_type` names a dtype's Triton type (`Unlowerable` where there is none); `constant` and
`cast` follow NumPy's scalar and ``astype`` rules. The ufuncs themselves, written on these, are
in `ufuncs`. Results are bit-for-bit NumPy's except in the libdevice transcendentals (a few ULP
apart) when kernels are built with ``enable_fp_fusion=False`` (else ``a * b + c`` becomes one
fma) and ``enable_reflect_ftz=False`` (else libdevice and floor/ceil flush float32 subnormals
to zero).
"""

from __future__ import annotations

import ast
import functools
import math
import operator
import types

import numpy as np

from ..fused.dtypes import KERNEL_DTYPES, Unlowerable, check_kernel_dtype

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

    Float to integer truncates and then wraps as C does on x86 while the truncated value lies in
    int32's range for targets under 32 bits, in [-2**31, 2**32) for uint32 and in [-2**63, 2**64)
    for 64-bit targets: -1.0 -> uint8 is 255, 300.0 -> int8 is 44. Beyond that, and for NaN and
    inf, NumPy's result is the platform's ("integer indefinite" on x86) and the GPU saturates.

    >>> cast("v", np.dtype(np.float32), np.dtype(bool))
    'v != 0'
    >>> cast("v", np.dtype(np.float64), np.dtype(np.uint8))
    'v.to(tl.int32).to(tl.uint8)'
    """
    src, dst = np.dtype(src), np.dtype(dst)
    tt, _ = triton_type(dst), triton_type(src)
    if src == dst:
        return expr
    x = atom(expr)
    if dst.kind == "b":
        return f"{x} != 0"  # NaN is true, as in NumPy
    if src.kind == "f" and dst.kind in "iu":
        # C compilers convert to a narrow integer through int32 (unsigned 32 through int64), so
        # NumPy wraps in-range negatives: -1.0 -> uint8 255.
        if dst.itemsize < 4:
            return f"{x}.to(tl.int32).to({tt})"
        if dst == np.uint32:
            return f"{x}.to(tl.int64).to(tl.uint32)"
        if dst == np.uint64:
            low = f"{x}.to(tl.int64).to(tl.uint64)"
            return f"tl.where({x} < 9223372036854775808.0, {low}, {x}.to(tl.uint64))"
    return f"{x}.to({tt})"


def unassignable(expr: str, src: np.dtype, dst: np.dtype) -> str:
    """Where NumPy raises assigning the NumPy scalar ``expr`` (of dtype ``src``) to an item of
    a signed integer array of ``dst``: it converts the number as ``int(value)`` does, so NaN
    raises ValueError, and infinity or a value whose integer part ``dst`` cannot hold raises
    OverflowError (``x[0] = np.float64(1e300)``, ``i8[0] = np.int64(400)``).

    >>> unassignable("v", np.dtype(np.float32), np.dtype(np.int8))
    '~((v.to(tl.float64) > tl.full([1], -129.0, tl.float64)) & (v.to(tl.float64) < tl.full([1], 128.0, tl.float64)))'
    >>> unassignable("v", np.dtype(np.uint64), np.dtype(np.int64))
    'v > tl.full([1], 9223372036854775807, tl.uint64)'
    """
    src, dst = np.dtype(src), np.dtype(dst)
    assert dst.kind == "i" and not np.can_cast(src, dst), (src, dst)
    info = np.iinfo(dst)
    if src.kind == "f":
        x = atom(expr) if src == np.float64 else f"{atom(expr)}.to(tl.float64)"
        f64 = np.dtype(np.float64)
        # The integer part lies in [min, max] where the value lies in (min - 1, max + 1); no
        # float64 lies between -2**63 - 1 and -2**63, so for int64 that is ``>= -2**63``.
        low = info.min - 1
        above = (f"{x} > {constant(low, f64)}" if float(low) == low
                 else f"{x} >= {constant(info.min, f64)}")  # fmt: skip
        return f"~(({above}) & ({x} < {constant(info.max + 1, f64)}))"
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
