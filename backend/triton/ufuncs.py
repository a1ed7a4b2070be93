"""NumPy's elementwise ufuncs as Triton expression text, with NumPy's dtypes and NumPy's results.

`ufunc_loop` asks NumPy which loop runs (NEP 50 included); `ufunc_expr` writes that loop as one
Triton expression per output from `RULES`, one entry per ufunc, on the dtypes, constants and
casts of `pointwise`. Results are bit-for-bit NumPy's except in the libdevice transcendentals
(a few ULP apart).
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..fused.dtypes import numpy_loops as _numpy_loops
from ..fused.dtypes import operand, resolve_loop
from ..fused.dtypes import show as _show
from .let_bindings import let
from .pointwise import Unlowerable, atom, constant, triton_type

# ---------------------------------------------------------------------------------------------
# loops


def ufunc_loop(
    ufunc: np.ufunc, operand_types: tuple
) -> tuple[tuple[np.dtype, ...], tuple[np.dtype, ...]]:
    """NumPy's loop for ``ufunc`` on these operands (`fused.dtypes.resolve_loop`), where a
    Triton rule computes it: (input dtypes, output dtypes).

    >>> ufunc_loop(np.multiply, (np.dtype(np.float32), float))
    ((dtype('float32'), dtype('float32')), (dtype('float32'),))
    """
    name = f"np.{ufunc.__name__}"
    if ufunc not in RULES:
        raise Unlowerable(f"{name} has no Triton rule: {_NO_RULE.get(ufunc, 'not elementwise')}")
    ins, outs = resolve_loop(ufunc, operand_types)
    try:
        for dtype in ins + outs:
            triton_type(dtype)
    except Unlowerable as e:
        operands = tuple(operand(t) for t in operand_types)
        raise Unlowerable(
            f"{name} on {_show(operands)} runs a {_show(ins + outs)} loop: {e}"
        ) from None
    return ins, outs


def ufunc_expr(ufunc: np.ufunc, in_dtypes: tuple, out_dtypes: tuple, args: list[str]) -> list[str]:
    """One Triton expression per output of ``ufunc``'s loop ``in_dtypes -> out_dtypes``, on
    operands ``args`` already of ``in_dtypes``. Operands may appear more than once in the text:
    pass names, not loads.

    >>> ufunc_expr(np.add, (np.dtype(bool),) * 2, (np.dtype(bool),), ["a", "b"])
    ['a | b']
    """
    name = f"np.{ufunc.__name__}"
    rule = RULES.get(ufunc)
    if rule is None:
        raise Unlowerable(f"{name} has no Triton rule: {_NO_RULE.get(ufunc, 'not elementwise')}")
    ins, outs = tuple(map(np.dtype, in_dtypes)), tuple(map(np.dtype, out_dtypes))
    if len(args) != ufunc.nin:
        raise ValueError(f"{name} takes {ufunc.nin} operands, got {len(args)}")
    for dtype in ins + outs:
        triton_type(dtype)
    if ins + outs not in _numpy_loops(ufunc):
        raise Unlowerable(f"NumPy has no {name} loop {_show(ins)} -> {_show(outs)}")
    args = [atom(a) for a in args]
    f16, f32 = np.dtype(np.float16), np.dtype(np.float32)
    if f16 not in ins or ufunc in _F16_NATIVE:
        return _listed(rule(_Loop(ins, outs, name, tuple(args)), *args))
    # NumPy computes float16 loops in float32 and rounds once at the end; for + - * / sqrt the
    # float32 result rounds to the correctly rounded float16 one (24 >= 2 * 11 + 2 bits).
    args = [f"{a}.to(tl.float32)" if d == f16 else a for a, d in zip(args, ins)]
    up = _Loop(
        tuple(f32 if d == f16 else d for d in ins),
        tuple(f32 if d == f16 else d for d in outs),
        name,
        tuple(args),
    )
    exprs = _listed(rule(up, *args))
    return [f"{atom(e)}.to(tl.float16)" if d == f16 else e for e, d in zip(exprs, outs)]


def _listed(result) -> list[str]:
    return [result] if isinstance(result, str) else list(result)


@dataclass(frozen=True)
class _Loop:
    """What a rule sees: the loop's dtypes (float16 already widened unless the rule is native)."""

    ins: tuple[np.dtype, ...]
    outs: tuple[np.dtype, ...]
    ufunc: str
    args: tuple[str, ...]

    @property
    def kind(self) -> str:  # of the first operand: "b", "i", "u" or "f"
        return self.ins[0].kind

    @property
    def tl(self) -> str:
        return triton_type(self.ins[0])

    @property
    def bits(self) -> int:
        return self.ins[0].itemsize * 8

    def c(self, value, dtype=None) -> str:
        return constant(value, dtype or self.ins[0])

    def uint(self) -> str:  # the unsigned type of the same width, for bit manipulation
        return f"tl.uint{self.bits}"

    def names(self, *tags: str) -> list[str]:
        """Fresh names for `let`, the same for the same expression so that sources stay stable."""
        key = hashlib.sha1(repr((self.ufunc, self.ins, self.args)).encode()).hexdigest()[:6]
        return [f"_{key}_{tag}" for tag in tags]


# ---------------------------------------------------------------------------------------------
# rules: (loop, *operand texts) -> text, or a tuple of texts for two outputs

Rule = Callable[..., "str | tuple[str, ...]"]


def _by_kind(**rules: Rule) -> Rule:
    """Dispatch on the first operand's kind; keys are kind letters, e.g. ``iu=...``."""

    def rule(loop: _Loop, *args):
        for kinds, fn in rules.items():
            if loop.kind in kinds:
                return fn(loop, *args)
        raise Unlowerable(f"{loop.ufunc} has no rule for {loop.ins[0]}")

    return rule


def _same(loop, a):
    return a


def _infix(op: str) -> Rule:
    return lambda loop, a, b: f"{a} {op} {b}"


def _lib(name: str) -> Rule:
    return lambda loop, *xs: f"libdevice.{name}({', '.join(xs)})"


def _div(loop, a, b):
    # Triton's float32 `/` is div.full.f32 (2 ULP); div_rn is IEEE division.
    return f"tl.div_rn({a}, {b})" if loop.bits == 32 else f"{a} / {b}"


def _sqrt(loop, a):
    return f"tl.sqrt_rn({a})" if loop.bits == 32 else f"tl.sqrt({a})"


def _safe_divisor(loop, b):
    # A zero divisor gives 0 in NumPy but is undefined in C and on the GPU; MIN // -1 overflows.
    # Dividing by 1 instead makes both exact: x // 1 == x and x % 1 == 0.
    if loop.kind == "i":
        return f"tl.where(({b} == 0) | ({b} == -1), 1, {b})"
    return f"tl.where({b} == 0, 1, {b})"


def _int_floor_divide(loop, a, b):
    q = f"{a} // {_safe_divisor(loop, b)}"  # Triton divides as C does: toward zero
    if loop.kind == "u":
        return f"tl.where({b} == 0, 0, {q})"
    inexact = f"({a} % {_safe_divisor(loop, b)} != 0) & (({a} < 0) != ({b} < 0))"
    floor = f"{q} - ({inexact}).to({loop.tl})"
    return f"tl.where({b} == 0, 0, tl.where({b} == -1, -{a}, {floor}))"


def _int_remainder(loop, a, b):
    r = f"{a} % {_safe_divisor(loop, b)}"  # C's sign: the dividend's; NumPy's: the divisor's
    if loop.kind == "u":
        return r
    return f"tl.where((({r}) != 0) & ((({r}) < 0) != ({b} < 0)), ({r}) + {b}, {r})"


def _int_fmod(loop, a, b):
    return f"{a} % {_safe_divisor(loop, b)}"


def _float_divmod(loop, a, b):
    """NumPy's npy_divmod (CPython's float divmod): fmod, fix the sign, snap the quotient."""
    m, d, fix, q = loop.names("m", "d", "fix", "q")
    zero = loop.c(0.0)
    div = _div(loop, f"({a} - {m})", b)  # a - mod is very nearly a multiple of b
    bindings = [
        (m, f"libdevice.fmod({a}, {b})"),
        (fix, f"({m} != 0) & (({b} < 0) != ({m} < 0))"),
        (d, f"tl.where({fix}, {div} - 1, {div})"),
        (q, f"tl.floor({d})"),
    ]
    floordiv = (
        f"tl.where({b} == 0, {_div(loop, a, b)}, tl.where({d} != 0, "
        f"tl.where({d} - {q} > 0.5, {q} + 1, {q}), libdevice.copysign({zero}, {_div(loop, a, b)})))"
    )
    mod = (
        f"tl.where(({m} != 0) & ({b} != 0), tl.where({fix}, {m} + {b}, {m}), "
        f"tl.where({b} == 0, {m}, libdevice.copysign({zero}, {b})))"
    )
    return let(bindings, floordiv), let(bindings, mod)


def _int_power(loop, a, b):
    # Square-and-multiply unrolled over the exponent's bits (an expression has no loop).
    # Negative exponents are not checked: NumPy raises for them, this computes garbage.
    e, s, r = loop.names("e", "s", "r")
    bindings = [(e, b), (s, a), (r, f"tl.where(({e} & 1) != 0, {s}, 1)")]
    for bit in range(1, loop.bits - (loop.kind == "i")):
        bindings += [(s, f"{s} * {s}"), (r, f"tl.where((({e} >> {bit}) & 1) != 0, {r} * {s}, {r})")]
    return let(bindings, r)


def _int_sign(loop, a):
    if loop.kind == "u":
        return f"({a} > 0).to({loop.tl})"
    return f"({a} > 0).to({loop.tl}) - ({a} < 0).to({loop.tl})"


def _float_sign(loop, a):
    return f"tl.where({a} > 0, 1.0, tl.where({a} < 0, -1.0, tl.where({a} == 0, 0.0, {a})))"


def _float_negative(loop, a):
    # the sign bit flipped, as C's -x: Triton's -x is 0 - x, which makes -(0.0) +0.0
    sign = loop.c(1 << (loop.bits - 1), np.dtype(f"u{loop.bits // 8}"))
    return f"({a}.to({loop.uint()}, bitcast=True) ^ {sign}).to({loop.tl}, bitcast=True)"


def _int_reciprocal(loop, a):
    # NumPy computes 1.0 / x and converts back: 1 and -1 survive, 0 becomes inf converted to
    # the integer type, which is platform-defined; take this machine's NumPy conversion.
    with np.errstate(all="ignore"):
        at_zero = loop.c(int(np.array(np.inf).astype(loop.ins[0])))
    survives = f"({a} == 1) | ({a} == -1)" if loop.kind == "i" else f"{a} == 1"
    return f"tl.where({survives}, {a}, tl.where({a} == 0, {at_zero}, 0))"


def _float_reciprocal(loop, a):
    return _div(loop, loop.c(1.0), a)


def _min_max(op: str, nan_propagates: bool) -> Rule:
    """maximum/minimum (NaN wins) and fmax/fmin (NaN loses). On a tie of -0.0 and 0.0 NumPy
    keeps the second operand for float32/64 and the first for float16 (its fmin/fmax for
    float32/64 differ between their SIMD and scalar paths; this keeps the second)."""

    def rule(loop, a, b):
        if loop.kind == "b":
            return f"{a} {'&' if op == '<' else '|'} {b}"
        if loop.kind in "iu":
            return f"tl.where({a} {op} {b}, {a}, {b})"
        test = f"{a} {op}= {b}" if loop.bits == 16 else f"{a} {op} {b}"
        nan = a if nan_propagates else b
        return f"tl.where(({test}) | ({nan} != {nan}), {a}, {b})"

    return rule


_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


def _compare(op: str) -> Rule:
    def rule(loop, a, b):
        if loop.ins == (_U64, _I64):
            return _mixed_compare(_FLIPPED[op], b, a)
        if loop.ins == (_I64, _U64):
            return _mixed_compare(op, a, b)
        return f"{a} {op} {b}"

    return rule


_I64, _U64 = np.dtype(np.int64), np.dtype(np.uint64)


def _mixed_compare(op: str, s: str, u: str) -> str:
    """int64 ``s`` against uint64 ``u`` without wrapping: a negative ``s`` is below every ``u``."""
    wide = f"{s}.to(tl.uint64, bitcast=True) {op} {u}"
    if op in ("<", "<=", "!="):
        return f"({s} < 0) | ({wide})"
    return f"({s} >= 0) & ({wide})"


def _truth(loop, x) -> str:
    return x if loop.kind == "b" else f"({x} != 0)"


def _logical(op: str) -> Rule:
    return lambda loop, a, b: f"{_truth(loop, a)} {op} {_truth(loop, b)}"


def _shift_ok(loop, b) -> str:
    if loop.kind == "u":
        return f"{b} < {loop.bits}"
    return f"({b} >= 0) & ({b} < {loop.bits})"


def _left_shift(loop, a, b):
    # NumPy gives 0 for a count outside [0, bits); LLVM's shift is undefined there.
    return f"tl.where({_shift_ok(loop, b)}, {a} << ({b} & {loop.bits - 1}), 0)"


def _right_shift(loop, a, b):
    if loop.kind == "u":
        return f"tl.where({_shift_ok(loop, b)}, {a} >> ({b} & {loop.bits - 1}), 0)"
    # Out of range NumPy keeps only the sign: -1 or 0, which is a shift by bits - 1.
    return f"{a} >> tl.where({_shift_ok(loop, b)}, {b}, {loop.bits - 1})"


def _rounded(fn: str) -> Rule:
    return _by_kind(biu=_same, f=lambda loop, a: f"{fn}({a})")


def _trunc(loop, a):
    return f"tl.where({a} < 0, tl.ceil({a}), tl.floor({a}))"


def _times(value64: float, value32: float) -> Rule:
    return lambda loop, a: f"{a} * {loop.c(value64 if loop.bits == 64 else value32)}"


# NumPy's C source divides in the loop's precision: 180.0f / NPY_PIf for float32.
_RAD2DEG = (180.0 / math.pi, float(np.float32(180.0) / np.float32(math.pi)))
_DEG2RAD = (math.pi / 180.0, float(np.float32(math.pi) / np.float32(180.0)))


def _logaddexp(base2: bool) -> Rule:
    """NumPy's npy_logaddexp / npy_logaddexp2, step for step."""

    def rule(loop, a, b):
        (t,) = loop.names("t")
        if base2:  # log2(1 + y) as NumPy writes it: LOG2E * log1p(y)
            exp, scale, same = "libdevice.exp2", f"{loop.c(1 / math.log(2))} * ", f"{a} + 1"
        else:
            exp, scale, same = "libdevice.exp", "", f"{a} + {loop.c(math.log(2))}"
        body = (
            f"tl.where({a} == {b}, {same}, "
            f"tl.where({t} > 0, {a} + {scale}libdevice.log1p({exp}(-{t})), "
            f"tl.where({t} <= 0, {b} + {scale}libdevice.log1p({exp}({t})), {t})))"
        )
        return let([(t, f"{a} - {b}")], body)

    return rule


def _nextafter(loop, a, b):
    """By the bits, so that float16 needs no float32 detour and subnormals never flush."""
    u = loop.uint()
    bits = f"{a}.to({u}, bitcast=True)"
    tiny = f"(({b}.to({u}, bitcast=True) & {1 << (loop.bits - 1)}) | 1).to({loop.tl}, bitcast=True)"
    step = f"tl.where(({a} < {b}) == ({a} > 0), {bits} + 1, {bits} - 1).to({loop.tl}, bitcast=True)"
    # On x == y (-0.0 and 0.0) C returns y, and so does NumPy's float16 from NumPy 2.5 on
    equal = a if loop.bits == 16 and not _float16_nextafter_returns_y() else b
    return (
        f"tl.where(({a} != {a}) | ({b} != {b}), {a} + {b}, "
        f"tl.where({a} == {b}, {equal}, tl.where({a} == 0, {tiny}, {step})))"
    )


@functools.cache
def _float16_nextafter_returns_y() -> bool:
    return math.copysign(1.0, float(np.nextafter(np.float16(-0.0), np.float16(0.0)))) > 0


def _hypot(loop, a, b):
    # libdevice's hypot overflowed on an H200 for results near the largest float (hypot(1.8e308,
    # 1.0) gave inf): past 2**(maxexp - 24) the operands are scaled down by a power of two, and
    # the result back up, exactly
    maxexp = int(np.finfo(loop.ins[0]).maxexp)
    down, up = loop.c(2.0 ** -(maxexp // 2 - 32)), loop.c(2.0 ** (maxexp // 2 - 32))
    big = loop.c(2.0 ** (maxexp - 24))
    scaled = f"libdevice.hypot({a} * {down}, {b} * {down}) * {up}"
    return (f"tl.where((tl.abs({a}) > {big}) | (tl.abs({b}) > {big}), {scaled}, "
            f"libdevice.hypot({a}, {b}))")  # fmt: skip


def _spacing(loop, a):
    if loop.bits == 16:
        return _half_spacing(a)
    # The gap to the next float away from zero, negative for negative x; NaN for inf; the
    # smallest subnormal for either zero.
    up = f"({a}.to({loop.uint()}, bitcast=True) + 1).to({loop.tl}, bitcast=True)"
    tiny = loop.c(float(np.finfo(loop.ins[0]).smallest_subnormal))
    return (
        f"tl.where(tl.abs({a}) == {loop.c(np.inf)}, {loop.c(np.nan)}, "
        f"tl.where({a} == 0, {tiny}, tl.where({a} != {a}, {a}, {up} - {a})))"
    )


def _half_spacing(a):
    # npy_half_spacing, on the bits: always positive, and for a negative power of two the gap
    # toward zero.
    h, e = f"{a}.to(tl.uint16, bitcast=True)", f"({a}.to(tl.uint16, bitcast=True) & 0x7C00)"
    negative_boundary = f"(({h} & 0x8000) != 0) & (({h} & 0x03FF) == 0)"
    below = (
        f"tl.where({e} > 0x2C00, {e} - 0x2C00, tl.where({e} > 0x0400, 1 << (({e} >> 10) - 2), 1))"
    )
    above = (
        f"tl.where({e} > 0x2800, {e} - 0x2800, tl.where({e} > 0x0400, 1 << (({e} >> 10) - 1), 1))"
    )
    bits = (
        f"tl.where({e} == 0x7C00, 0x7E00, tl.where({h} == 0x7BFF, 0x7C00, "
        f"tl.where({negative_boundary}, {below}, {above})))"
    )
    return f"({bits}).to(tl.uint16).to(tl.float16, bitcast=True)"


def _frexp(loop, a):
    """Mantissa in [0.5, 1) and exponent from the bits; subnormals are scaled up first."""
    mant, bias, mask, scale = (52, 1022, 0x7FF, 54) if loop.bits == 64 else (23, 126, 0xFF, 24)
    sub, bits, exp = loop.names("sub", "bits", "exp")
    tiny = loop.c(float(np.finfo(loop.ins[0]).smallest_normal))
    bindings = [
        (sub, f"(tl.abs({a}) < {tiny}) & ({a} != 0)"),
        (bits, f"tl.where({sub}, {a} * {loop.c(2.0**scale)}, {a}).to({loop.uint()}, bitcast=True)"),
        (
            exp,
            f"(({bits} >> {mant}) & {mask}).to(tl.int32) - tl.where({sub}, {bias + scale}, {bias})",
        ),
    ]
    special = f"({a} == 0) | ~(tl.abs({a}) < {loop.c(np.inf)})"  # zero, inf, nan: (x, 0)
    keep = ((1 << loop.bits) - 1) ^ (mask << mant)
    mantissa = f"(({bits} & {keep}) | {bias << mant}).to({loop.tl}, bitcast=True)"
    return (
        let(bindings, f"tl.where({special}, {a}, {mantissa})"),
        let(bindings, f"tl.where({special}, 0, {exp})"),
    )


def _modf(loop, a):
    (t,) = loop.names("t")
    frac = f"libdevice.copysign(tl.where(tl.abs({a}) == {loop.c(np.inf)}, 0.0, {a} - {t}), {a})"
    return let([(t, _trunc(loop, a))], frac), let([(t, _trunc(loop, a))], t)


def _ldexp(loop, x, n):
    if loop.bits == 64:
        # Any |n| > 2200 saturates anyway; libdevice takes an int32.
        return f"libdevice.ldexp({x}, tl.minimum(tl.maximum({n}, -2200), 2200).to(tl.int32))"
    # float32: x * 2**n is exact in float64 for |n| <= 300 and beyond saturates the same way, so
    # rounding it once to float32 is ldexpf, subnormal results included.
    k = f"tl.minimum(tl.maximum({n}, -300), 300)"
    two_to_the_k = f"(({k} + 1023).to(tl.int64) << 52).to(tl.float64, bitcast=True)"
    return f"({x}.to(tl.float64) * {two_to_the_k}).to(tl.float32)"


def _heaviside(loop, x, h0):
    step = f"tl.where({x} < 0, {loop.c(0.0)}, {loop.c(1.0)})"
    return f"tl.where({x} != {x}, {x}, tl.where({x} == 0, {h0}, {step}))"


def _bitwise_count(loop, a):
    # popcount of |a| (NumPy's rule for signed types), counted in 32 or 64 bits
    wide = "tl.int64" if loop.bits == 64 else "tl.int32"
    x = f"tl.where({a} < 0, -{a}, {a})" if loop.kind == "i" else a
    return f"libdevice.popc({atom(x)}.to({loop.uint()}, bitcast=True).to({wide})).to(tl.uint8)"


def _isinf(loop, a):
    return f"tl.abs({a}) == {loop.c(np.inf)}" if loop.kind == "f" else f"{a} != {a}"


def _isfinite(loop, a):
    return f"tl.abs({a}) < {loop.c(np.inf)}" if loop.kind == "f" else f"{a} == {a}"


RULES: dict[np.ufunc, Rule] = {
    # arithmetic
    np.add: _by_kind(b=_infix("|"), iuf=_infix("+")),
    np.subtract: _infix("-"),
    np.multiply: _by_kind(b=_infix("&"), iuf=_infix("*")),
    np.true_divide: _div,
    np.floor_divide: _by_kind(
        iu=_int_floor_divide, f=lambda loop, a, b: _float_divmod(loop, a, b)[0]
    ),
    np.remainder: _by_kind(iu=_int_remainder, f=lambda loop, a, b: _float_divmod(loop, a, b)[1]),
    np.divmod: _by_kind(
        iu=lambda loop, a, b: (_int_floor_divide(loop, a, b), _int_remainder(loop, a, b)),
        f=_float_divmod,
    ),
    np.fmod: _by_kind(iu=_int_fmod, f=_lib("fmod")),
    np.power: _by_kind(iu=_int_power, f=_lib("pow")),
    np.float_power: _lib("pow"),
    np.negative: _by_kind(iu=lambda loop, a: f"-{a}", f=_float_negative),
    np.positive: _same,
    np.conjugate: _same,
    np.absolute: _by_kind(
        bu=_same,
        i=lambda loop, a: f"tl.where({a} < 0, -{a}, {a})",
        f=lambda loop, a: f"tl.abs({a})",
    ),
    np.fabs: lambda loop, a: f"tl.abs({a})",
    np.sign: _by_kind(iu=_int_sign, f=_float_sign),
    np.reciprocal: _by_kind(iu=_int_reciprocal, f=_float_reciprocal),
    np.square: lambda loop, a: f"{a} * {a}",
    np.sqrt: _sqrt,
    np.cbrt: _lib("cbrt"),
    # exponentials and logarithms
    np.exp: _lib("exp"),
    np.exp2: _lib("exp2"),
    np.expm1: _lib("expm1"),
    np.log: _lib("log"),
    np.log2: _lib("log2"),
    np.log10: _lib("log10"),
    np.log1p: _lib("log1p"),
    np.logaddexp: _logaddexp(base2=False),
    np.logaddexp2: _logaddexp(base2=True),
    # trigonometry
    np.sin: _lib("sin"),
    np.cos: _lib("cos"),
    np.tan: _lib("tan"),
    np.arcsin: _lib("asin"),
    np.arccos: _lib("acos"),
    np.arctan: _lib("atan"),
    np.arctan2: _lib("atan2"),
    np.sinh: _lib("sinh"),
    np.cosh: _lib("cosh"),
    np.tanh: _lib("tanh"),
    np.arcsinh: _lib("asinh"),
    np.arccosh: _lib("acosh"),
    np.arctanh: _lib("atanh"),
    np.hypot: _hypot,
    np.degrees: _times(*_RAD2DEG),
    np.rad2deg: _times(*_RAD2DEG),
    np.radians: _times(*_DEG2RAD),
    np.deg2rad: _times(*_DEG2RAD),
    # rounding and floating-point structure
    np.floor: _rounded("tl.floor"),
    np.ceil: _rounded("tl.ceil"),
    np.trunc: _by_kind(biu=_same, f=_trunc),
    np.rint: _lib("rint"),
    np.copysign: _lib("copysign"),
    np.nextafter: _nextafter,
    np.spacing: _spacing,
    np.ldexp: _ldexp,
    np.frexp: _frexp,
    np.modf: _modf,
    np.heaviside: _heaviside,
    np.signbit: lambda loop, a: f"{a}.to(tl.int{loop.bits}, bitcast=True) < 0",
    np.isnan: lambda loop, a: f"{a} != {a}",
    np.isinf: _isinf,
    np.isfinite: _isfinite,
    # extrema
    np.maximum: _min_max(">", nan_propagates=True),
    np.minimum: _min_max("<", nan_propagates=True),
    np.fmax: _min_max(">", nan_propagates=False),
    np.fmin: _min_max("<", nan_propagates=False),
    # comparisons and logic
    np.less: _compare("<"),
    np.less_equal: _compare("<="),
    np.greater: _compare(">"),
    np.greater_equal: _compare(">="),
    np.equal: _compare("=="),
    np.not_equal: _compare("!="),
    np.logical_and: _logical("&"),
    np.logical_or: _logical("|"),
    np.logical_xor: _logical("^"),
    np.logical_not: lambda loop, a: f"{a} == 0",
    # bits
    np.bitwise_and: _infix("&"),
    np.bitwise_or: _infix("|"),
    np.bitwise_xor: _infix("^"),
    np.invert: lambda loop, a: f"~{a}",
    np.left_shift: _left_shift,
    np.right_shift: _right_shift,
    np.bitwise_count: _bitwise_count,
}

# Rules written for float16 itself (bit patterns, or NumPy's float16 tie rules); every other
# float16 loop runs in float32 and rounds once.
_F16_NATIVE = frozenset({np.nextafter, np.spacing, np.maximum, np.minimum, np.fmax, np.fmin})

_NO_RULE = {
    np.gcd: "Euclid's algorithm needs a loop",
    np.lcm: "it needs gcd, and gcd needs a loop",
    np.isnat: "datetimes run in NumPy",
}
