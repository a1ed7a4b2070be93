"""NumPy's scalar semantics as numba source text: constants of an exact dtype, ``astype``'s casts,
and each ufunc loop as a call of the ufunc itself on operands already of its loop's dtypes
(numba compiles NumPy's ufuncs on scalars; `OPS` lists the loops it computes as NumPy does,
checked against NumPy by tests/cpu/test_scalar_ops.py). A loop not listed makes the lowering
refuse the op: it runs as an extern NumPy step.

    >>> constant(0.1, np.dtype(np.float32))
    'np.float32(0.10000000149011612)'
    >>> cast("v", np.dtype(np.float64), np.dtype(np.uint8))
    'np.uint8(np.int32(v))'
"""

from __future__ import annotations

import math

import numpy as np

from ..fused.dtypes import Unlowerable
from . import vector_math

# The loops numba computes as NumPy does, by ufunc: the operand kinds ("b", "i", "u", "f") of
# the loops it takes; "f" alone for math that is only defined on floats. Measured with numba
# 0.68 (tests/cpu/test_scalar_ops.py runs each loop on edge values against NumPy).
_ALL, _INTS, _NUM = "biuf", "iu", "iuf"
OPS: dict[np.ufunc, str] = {
    np.add: _ALL, np.subtract: _NUM, np.multiply: _ALL, np.true_divide: "f",
    np.floor_divide: _NUM, np.remainder: _NUM, np.fmod: _NUM, np.power: "f",
    np.float_power: "f", np.negative: _NUM, np.positive: _NUM, np.absolute: _NUM,
    np.fabs: "f", np.sign: "if", np.square: _NUM, np.reciprocal: "f", np.sqrt: "f",
    np.cbrt: "f", np.exp: "f", np.exp2: "f", np.expm1: "f", np.log: "f", np.log2: "f",
    np.log10: "f", np.log1p: "f", np.logaddexp: "f", np.logaddexp2: "f", np.sin: "f",
    np.cos: "f", np.tan: "f", np.arcsin: "f", np.arccos: "f", np.arctan: "f", np.arctan2: "f",
    np.sinh: "f", np.cosh: "f", np.tanh: "f", np.arcsinh: "f", np.arccosh: "f",
    np.arctanh: "f", np.hypot: "f", np.degrees: "f", np.radians: "f", np.rad2deg: "f",
    np.deg2rad: "f", np.floor: "f", np.ceil: "f", np.trunc: "f", np.rint: "f",
    np.copysign: "f", np.nextafter: "f", np.signbit: "f", np.isnan: "f",
    np.isinf: "f", np.isfinite: "f", np.maximum: _ALL, np.minimum: _ALL, np.fmax: _ALL,
    np.fmin: _ALL, np.less: _ALL, np.less_equal: _ALL, np.greater: _ALL,
    np.greater_equal: _ALL, np.equal: _ALL, np.not_equal: _ALL, np.logical_and: _ALL,
    np.logical_or: _ALL, np.logical_xor: _ALL, np.logical_not: _ALL, np.bitwise_and: "biu",
    np.bitwise_or: "biu", np.bitwise_xor: "biu", np.invert: "biu",
}  # fmt: skip

# Loops numba computes otherwise than NumPy, within a kind it takes: (ufunc, kind, bits).
_REFUSED: set = set()

_WHY = {
    np.spacing: "numba's np.spacing(-0.0) is negative, NumPy's positive",
    np.heaviside: "numba has no np.heaviside",
    np.ldexp: "numba's np.ldexp takes other exponent types than NumPy's loops",
    np.left_shift: "numba shifts by the type's width or more as C does, NumPy gives 0",
    np.right_shift: "numba shifts by the type's width or more as C does, NumPy gives 0",
    np.bitwise_count: "numba has no np.bitwise_count",
    np.gcd: "numba's np.gcd is not NumPy's loop",
    np.lcm: "numba's np.lcm is not NumPy's loop",
}


INTRINSIC = "from tcompile.backend.cpu.intrinsics import {name}"  # a helper's import


def check_loop(ufunc: np.ufunc, ins: tuple | None, outs: tuple | None) -> None:
    """`Unlowerable` where numba does not compute ``ufunc``'s loop as NumPy does."""
    name = f"np.{ufunc.__name__}"
    kinds = OPS.get(ufunc)
    if kinds is None:
        why = _WHY.get(ufunc, "not elementwise" if ufunc.signature else "no numba rule")
        raise Unlowerable(f"{name} has no CPU kernel rule: {why}")
    if ins is None:
        return
    if ufunc.nout != 1:
        raise Unlowerable(f"{name} has {ufunc.nout} outputs")
    first = ins[0]
    if first.kind not in kinds or (ufunc, first.kind, first.itemsize * 8) in _REFUSED:
        raise Unlowerable(f"{name} on {first} runs in NumPy (numba computes it otherwise)")


def type_name(dtype: np.dtype) -> str:
    """The NumPy scalar type's name in the source: ``np.float32``; bool is ``np.bool_``."""
    dtype = np.dtype(dtype)
    return "np.bool_" if dtype.kind == "b" else f"np.{dtype.name}"


def constant(value, dtype: np.dtype, helpers: dict | None = None) -> str:
    """An expression of exactly ``dtype`` holding ``value`` as NumPy stores it in that dtype.
    A NaN is a module constant of its bits (its sign and payload travel through NumPy's
    arithmetic), added to ``helpers``.

    >>> constant(-np.inf, np.dtype(np.float64)), constant(300, np.dtype(np.uint16))
    ('np.float64(-np.inf)', 'np.uint16(300)')
    """
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return "True" if bool(value) else "False"
    if dtype.kind in "iu":
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            value = int(value)
        number = int(value)
        info = np.iinfo(dtype)
        if not info.min <= number <= info.max:
            raise Unlowerable(f"{value} does not fit {dtype} (NumPy raises OverflowError)")
        return f"{type_name(dtype)}({number})"
    with np.errstate(all="ignore"):
        x = float(dtype.type(value))  # rounded to the dtype, as NumPy does
    if math.isnan(x) and helpers is not None:
        bits = int(np.array(dtype.type(value)).view(f"u{dtype.itemsize}"))
        name = f"_nan_{dtype.name}_{bits:x}"
        helpers[name] = (f"\n{name} = np.array([{bits:#x}], np.uint{dtype.itemsize * 8})"
                         f".view(np.{dtype.name})[0]\n")  # fmt: skip
        return name
    if math.isnan(x):
        text = "-np.nan" if math.copysign(1, x) < 0 else "np.nan"
    elif math.isinf(x):
        text = "np.inf" if x > 0 else "-np.inf"
    else:
        text = repr(x)  # exact: every float32 value is a float64 value
    return f"{type_name(dtype)}({text})"


def cast(expr: str, src: np.dtype, dst: np.dtype) -> str:
    """``expr`` (of dtype ``src``) converted as ``ndarray.astype(dst)`` does: float to a narrow
    integer through int32 (unsigned 32 through int64) as C compilers do, so -1.0 -> uint8 is
    255; bool from a comparison with zero (NaN is true).

    >>> cast("v", np.dtype(np.float32), np.dtype(bool))
    '(v != 0)'
    """
    src, dst = np.dtype(src), np.dtype(dst)
    if src == dst:
        return expr
    if dst.kind == "b":
        return f"({expr} != 0)"
    to = type_name(dst)
    if src.kind == "f" and dst.kind in "iu":
        if dst.itemsize < 4:
            return f"{to}(np.int32({expr}))"
        if dst == np.uint32:
            return f"np.uint32(np.int64({expr}))"
        if dst == np.uint64:
            return (f"(np.uint64(np.int64({expr})) if {expr} < 9223372036854775808.0 "
                    f"else np.uint64({expr}))")  # fmt: skip
    return f"{to}({expr})"


def integer_bounds(dst: np.dtype) -> tuple[float, float]:
    """The open interval of floats whose integer part the integer type ``dst`` holds,
    (min - 1, max + 1) in float64: no float64 lies between -2**63 - 1 and -2**63, so int64's
    low end is the float below -2**63.

    >>> integer_bounds(np.dtype(np.int8))
    (-129.0, 128.0)
    """
    info = np.iinfo(dst)
    low = float(info.min - 1)
    if low == info.min:  # rounded up onto the minimum itself
        low = float(np.nextafter(low, -np.inf))
    return low, float(info.max + 1)


def cast_bounds(dst: np.dtype) -> tuple[float, float]:
    """The open interval of floats that `cast` converts to ``dst`` as NumPy does: within what
    the conversion goes through (int32, int64; uint64 up to 2**64). Past it (NaN, infinities,
    1e30) NumPy's value is the machine's, with a warning, and numba's is undefined (LLVM may
    fold ``float(int(x))`` into ``x``, and give NaN).

    >>> cast_bounds(np.dtype(np.int8))
    (-2147483649.0, 2147483648.0)
    """
    dst = np.dtype(dst)
    if dst.itemsize == 8:  # through int64 (uint64 from 2**63 on by its halves)
        return integer_bounds(np.int64)[0], integer_bounds(dst)[1]
    return integer_bounds(np.int32)[0], integer_bounds(np.uint32 if dst == np.uint32 else np.int32)[
        1
    ]


def outside(expr: str, src: np.dtype, bounds: tuple[float, float]) -> str:
    """A condition: the float ``expr`` lies outside the open interval ``bounds`` (NaN too),
    compared in float64 (exact for every float dtype).

    >>> outside("v", np.dtype(np.float64), cast_bounds(np.dtype(np.int32)))
    'not ((v > -2147483649.0) and (v < 2147483648.0))'
    """
    x = expr if np.dtype(src) == np.float64 else f"np.float64({expr})"
    low, high = bounds
    return f"not (({x} > {low!r}) and ({x} < {high!r}))"


def unassignable(expr: str, src: np.dtype, dst: np.dtype) -> str:
    """A condition: NumPy raises assigning the NumPy scalar ``expr`` to an item of a signed
    integer array of ``dst`` (NaN, infinity, an integer part ``dst`` cannot hold).

    >>> unassignable("v", np.dtype(np.int64), np.dtype(np.int8))
    '(v < -128) or (v > 127)'
    """
    src, dst = np.dtype(src), np.dtype(dst)
    if src.kind == "f":
        return outside(expr, src, integer_bounds(dst))
    info = np.iinfo(dst)
    if src.kind == "u":
        return f"{expr} > {info.max}"
    return f"({expr} < {info.min}) or ({expr} > {info.max})"


def op(ufunc: np.ufunc, in_dtypes: tuple, out_dtype: np.dtype, args: list[str],
       helpers: dict) -> str:  # fmt: skip
    """``ufunc`` on operands of its loop's dtypes, its result made ``out_dtype`` (numba may
    type a ufunc's scalar result wider than NumPy's loop does). Divisions numba computes
    otherwise (or traps on: ``MIN % -1``) call a helper of NumPy's algorithm, added to
    ``helpers`` (name -> source).

    >>> op(np.add, (np.dtype(np.int8),) * 2, np.dtype(np.int8), ["a", "b"], {})
    'np.int8(np.add(a, b))'
    """
    if ufunc is np.exp and in_dtypes[0] == np.float32:
        helpers["_expf"] = EXPF
        return f"np.float32(_expf({args[0]}))"
    vector = vector_math.call_name(ufunc, in_dtypes[0])
    if vector is not None:  # a libm call that vectorizes (glibc's libmvec)
        helpers[vector] = f"\nfrom tcompile.backend.cpu.vector_math import {vector}\n"
        return f"{type_name(out_dtype)}({vector}({', '.join(args)}))"
    kind = in_dtypes[0].kind
    helper = _DIVISIONS.get((ufunc, "f" if kind == "f" else "i" if kind == "i" else "u"))
    if helper is not None:
        name = f"_{ufunc.__name__}_{in_dtypes[0].name}"
        helpers[name] = helper.format(name=name, T=type_name(in_dtypes[0]))
        return f"{type_name(out_dtype)}({name}({', '.join(args)}))"
    return f"{type_name(out_dtype)}(np.{ufunc.__name__}({', '.join(args)}))"


# NumPy's integer divisions: a zero divisor gives 0, MIN // -1 wraps (a machine division would
# trap); numba's ``//`` and ``%`` on integers floor as Python's do.
_SIGNED_FLOOR_DIVIDE = """
@njit(inline="always", cache=True)
def {name}(a, b):
    if b == 0:
        return {T}(0)
    if b == -1:
        return {T}(-a)
    return {T}(a // b)
"""
_UNSIGNED_FLOOR_DIVIDE = """
@njit(inline="always", cache=True)
def {name}(a, b):
    if b == 0:
        return {T}(0)
    return {T}(a // b)
"""
_SIGNED_REMAINDER = """
@njit(inline="always", cache=True)
def {name}(a, b):
    if b == 0 or b == -1:
        return {T}(0)
    return {T}(a % b)
"""
_UNSIGNED_REMAINDER = """
@njit(inline="always", cache=True)
def {name}(a, b):
    if b == 0:
        return {T}(0)
    return {T}(a % b)
"""
_SIGNED_FMOD = """
@njit(inline="always", cache=True)
def {name}(a, b):
    if b == 0 or b == -1:
        return {T}(0)
    r = a % b
    if r != 0 and (r < 0) != (a < 0):
        r = r - b
    return {T}(r)
"""
# NumPy's npy_divmod (npymath), in the operands' float type.
_FLOAT_DIVMOD = """
@njit(inline="always", cache=True)
def {name}(a, b):
    mod = {T}(np.fmod(a, b))
    if b == 0:
        return ON_ZERO
    div = {T}({T}(a - mod) / b)
    if mod != 0:
        if (b < 0) != (mod < 0):
            mod = {T}(mod + b)
            div = {T}(div - {T}(1.0))
    else:
        mod = {T}(np.copysign({T}(0.0), b))
    if div != 0:
        floordiv = {T}(np.floor(div))
        if div - floordiv > {T}(0.5):
            floordiv = {T}(floordiv + {T}(1.0))
    else:
        floordiv = {T}(np.copysign({T}(0.0), {T}(a / b)))
    return RESULT
"""
_DIVISIONS = {
    (np.floor_divide, "i"): _SIGNED_FLOOR_DIVIDE,
    (np.floor_divide, "u"): _UNSIGNED_FLOOR_DIVIDE,
    (np.remainder, "i"): _SIGNED_REMAINDER,
    (np.remainder, "u"): _UNSIGNED_REMAINDER,
    (np.fmod, "i"): _SIGNED_FMOD,
    (np.fmod, "u"): _UNSIGNED_REMAINDER,
    (np.floor_divide, "f"): _FLOAT_DIVMOD.replace("ON_ZERO", "{T}(a / b)").replace(
        "RESULT", "floordiv"
    ),
    (np.remainder, "f"): _FLOAT_DIVMOD.replace("ON_ZERO", "mod").replace("RESULT", "mod"),
}


# float32 exp in float32 arithmetic alone (Cephes' expf: 2**k times a degree-7 polynomial of
# the remainder), so that a loop of them vectorizes: libm's expf is a call per element, 5x
# slower than NumPy's SIMD exp. Within 3 ULP of NumPy's (libm's is within 2).
EXPF = """
from tcompile.backend.cpu.intrinsics import int32_as_float32  # expf v1


@njit(inline="always", cache=True, error_model="numpy")
def _expf(x):
    f = np.float32
    k = f(np.floor(f(x * f(1.4426950408889634)) + f(0.5)))
    r = f(f(x - f(k * f(0.693359375))) - f(k * f(-2.12194440e-4)))
    p = f(f(f(1.9875691500e-4) * r) + f(1.3981999507e-3))
    p = f(f(p * r) + f(8.3334519073e-3))
    p = f(f(p * r) + f(4.1665795894e-2))
    p = f(f(p * r) + f(1.6666665459e-1))
    p = f(f(p * r) + f(5.0000001201e-1))
    p = f(f(f(p * f(r * r)) + r) + f(1.0))
    n = np.int32(k if k == k else f(0.0))
    n = max(min(n, np.int32(254)), np.int32(-252))
    half = n // 2  # 2**n in two factors: a subnormal result rounds once, at the end
    y = f(f(p * int32_as_float32(np.int32((half + 127) << 23)))
          * int32_as_float32(np.int32((n - half + 127) << 23)))
    if x > f(88.72283935546875):
        y = f(np.inf)
    if x < f(-103.972084):
        y = f(0.0)
    if x != x:
        y = x
    return y
"""


def reduction_start(kind: str, dtype: np.dtype) -> str:
    """A reduction's accumulator's start (``kind``: sum, prod, max, min, any, all, argmax,
    argmin), as a constant of ``dtype``."""
    # NumPy's reductions start from the ufunc's identity, +0.0 for a float sum (a sum of
    # -0.0s is +0.0); its pairwise sums start from -0.0 inside, added to that start
    if kind in ("sum", "prod"):
        return constant(0 if kind == "sum" else 1, dtype)
    if dtype.kind == "f":
        return constant(-np.inf if kind in ("max", "argmax") else np.inf, dtype)
    if dtype.kind == "b":
        return constant(kind not in ("max", "argmax"), dtype)
    info = np.iinfo(dtype)
    return constant(info.min if kind in ("max", "argmax") else info.max, dtype)
