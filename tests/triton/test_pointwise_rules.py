"""The pointwise rules against NumPy: every supported (ufunc, loop) runs as a Triton kernel on
special and random values and must give NumPy's dtype and NumPy's bits (transcendentals: a few
ULP, table below). Without a GPU the kernels run under Triton's interpreter, where libdevice is
`pointwise.interpreter_libdevice()`: there the transcendentals are NumPy's own functions and the
test checks everything around them (dtypes, float16 via float32, composed formulas)."""

from __future__ import annotations

import os
import re
import zlib

import numpy as np
import pytest
from requires_triton import require_triton  # noqa: E402

torch = require_triton()
import triton  # noqa: E402

from tcompile.backend import source_files  # noqa: E402
from tcompile.backend.triton import let_bindings, ufuncs  # noqa: E402
from tcompile.backend.triton import pointwise as pw  # noqa: E402
from tcompile.backend.triton.pointwise import Unlowerable  # noqa: E402

INTERPRETING = os.environ.get("TRITON_INTERPRET") == "1"
DEVICE = "cpu" if INTERPRETING else "cuda"

BOOL, F16, F32, F64 = (np.dtype(t) for t in (np.bool_, np.float16, np.float32, np.float64))
INTS = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64)]
UINTS = [np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64)]
FLOATS = [F16, F32, F64]
ALL_DTYPES = [BOOL, *INTS, *UINTS, *FLOATS]

# Max ULP from NumPy per ufunc whose result is not bit-exact: (measured under the interpreter,
# CUDA's documented float32 bound for its libdevice function; for log one more, as NumPy's own
# float32 log is itself 1 ULP off at places: 2 ULP apart on an H200). Every other ufunc is
# bit-exact.
ULP = {
    np.exp: (0, 2), np.exp2: (0, 2), np.expm1: (0, 1), np.log: (0, 2), np.log2: (0, 1),
    np.log10: (0, 2), np.log1p: (0, 1), np.logaddexp: (2, 3), np.logaddexp2: (2, 3),
    np.sin: (0, 2), np.cos: (0, 2), np.tan: (0, 4), np.arcsin: (0, 2), np.arccos: (0, 2),
    np.arctan: (0, 2), np.arctan2: (0, 3), np.sinh: (0, 3), np.cosh: (0, 2), np.tanh: (0, 2),
    np.arcsinh: (0, 3), np.arccosh: (0, 4), np.arctanh: (0, 3), np.hypot: (0, 3),
    np.cbrt: (0, 1), np.power: (0, 4), np.float_power: (1, 2),
}  # fmt: skip

# A float16 result of these may also be 1 ULP off: NumPy computes it with its own float32
# function, whose last bit may differ, and rounds that to float16.
#
# logaddexp cancels (log(e^-0.3 + e^-1.5) = -0.04): its error is counted in ULP of the larger
# of its operands and result, where an error in exp or log1p shows.
MAGNITUDE_ULP = {np.logaddexp, np.logaddexp2}

# NumPy's own fmin/fmax keep either zero on a (-0.0, 0.0) tie depending on its code path.
ZERO_SIGN_FREE = {np.fmin, np.fmax}

SEED = 0  # of the random inputs

SUPPORTED = sorted(ufuncs.RULES, key=lambda u: u.__name__)


# ---------------------------------------------------------------------------------------------
# inputs: special values first, then seeded random ones


def specials(dtype: np.dtype) -> np.ndarray:
    if dtype == BOOL:
        return np.array([False, True])
    if dtype.kind in "iu":
        info, bits = np.iinfo(dtype), dtype.itemsize * 8
        values = [0, 1, -1, 2, -2, 3, 7, -7, 100, -100, bits - 1, bits, bits + 1]
        values += [info.min, info.min + 1, info.max, info.max - 1, -bits]
        return np.array([v for v in values if info.min <= v <= info.max], dtype)
    fi = np.finfo(dtype)
    values = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, 2.0, 3.0, -7.0, 7.0]
    values += [10.0, 100.0, 0.1, -0.3, 1 / 3, np.pi, -np.e, np.nan, np.inf, -np.inf]
    values += [fi.max, -fi.max, fi.smallest_normal, -fi.smallest_normal]
    values += [fi.smallest_subnormal, -fi.smallest_subnormal, 3 * fi.smallest_subnormal]
    values += [2.0 ** (fi.nmant + 1) + 2, 2.0**fi.nmant + 0.5, 1 - fi.epsneg, 1 + fi.eps]
    values += [0.5 - fi.epsneg / 2, 1e4, -1e4, 65504.0, 0.75, -0.999, 1.0001]
    with np.errstate(all="ignore"):
        return np.array(values, np.float64).astype(dtype)


def randoms(dtype: np.dtype, n: int, rng: np.random.Generator) -> np.ndarray:
    if dtype == BOOL:
        return rng.integers(0, 2, n).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        wide = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        small = rng.integers(max(info.min, -20), 21, n).astype(dtype)
        return np.where(rng.random(n) < 0.5, wide, small)
    fi = np.finfo(dtype)
    magnitude = 10.0 ** rng.uniform(
        np.log10(float(fi.smallest_subnormal)), np.log10(float(fi.max)), n
    )
    spread = magnitude * rng.choice([-1.0, 1.0], n)
    near = np.where(rng.random(n) < 0.5, rng.uniform(-1.2, 1.2, n), rng.uniform(-30, 30, n))
    halves = rng.integers(-40, 40, n) / 2  # ties for rint, exact quotients for floor_divide
    pick = rng.integers(0, 3, n)
    with np.errstate(all="ignore"):
        return np.choose(pick, [spread, near, halves]).astype(dtype)


def inputs_for(ufunc: np.ufunc, ins: tuple[np.dtype, ...]) -> list[np.ndarray]:
    rng = np.random.default_rng([SEED, zlib.crc32(f"{ufunc.__name__}{ins}".encode())])
    if len(ins) == 1:
        (dtype,) = ins
        return [np.concatenate([specials(dtype), randoms(dtype, 256, rng)])]
    first, second = specials(ins[0]), specials(ins[1])
    if ufunc is np.ldexp:
        info = np.iinfo(ins[1])
        counts = [0, 1, -1, 5, -24, 24, 126, 127, 128, -126, -149, -150, -1022, -1074, -1075]
        counts += [1023, 1024, 3000, -3000, info.min, info.max]
        second = np.array(np.clip(counts, info.min, info.max), ins[1])
    if ufunc is np.power and ins[1].kind in "iu":
        second = second[second >= 0]  # NumPy raises on negative integer exponents
    a, b = (x.ravel() for x in np.meshgrid(first, second))
    ra, rb = randoms(ins[0], 512, rng), randoms(ins[1], 512, rng)
    if ufunc is np.power and ins[1].kind in "iu":
        rb = np.where(rb < 0, ~rb, rb)
    if ins[0].kind == "f" and ins[0] == ins[1]:  # exact multiples: remainder 0 and its sign
        with np.errstate(all="ignore"):
            ra = np.where(rng.random(512) < 0.3, rb * rng.integers(-9, 9, 512), ra).astype(ins[0])
    return [np.concatenate([a, ra]), np.concatenate([b, rb])]


# ---------------------------------------------------------------------------------------------
# running expressions as kernels

HEADER = """import triton
import triton.language as tl
from triton.language.extra import libdevice
"""

KERNEL = """
@triton.jit
def {name}({params}, n, BLOCK: tl.constexpr):
    off = tl.arange(0, BLOCK)
    mask = off < n
{loads}{stores}"""


def kernel_text(name: str, n_in: int, exprs: list[str], out_types: list[str]) -> str:
    params = [f"in{i}" for i in range(n_in)] + [f"out{j}" for j in range(len(exprs))]
    loads = "".join(f"    a{i} = tl.load(in{i} + off, mask=mask)\n" for i in range(n_in))
    stores = ""
    for j, (expr, tt) in enumerate(zip(exprs, out_types)):
        stores += "".join(f"    {line}\n" for line in let_bindings.assignments(f"r{j}", expr))
        stores += f"    tl.static_assert(r{j}.dtype == {tt}, 'result dtype')\n"
        stores += f"    tl.store(out{j} + off, r{j}, mask=mask)\n"
    return KERNEL.format(name=name, params=", ".join(params), loads=loads, stores=stores)


def load_kernels(source: str):
    module = source_files.load_module(source)
    if INTERPRETING:
        module.libdevice = pw.interpreter_libdevice()
    return module


def launch(kernel, inputs: list[np.ndarray], out_dtypes) -> list[np.ndarray]:
    n = len(inputs[0])
    outs = [np.zeros(n, d) for d in out_dtypes]
    tensors = [torch.from_numpy(np.ascontiguousarray(x)).to(DEVICE) for x in inputs + outs]
    with np.errstate(all="ignore"):
        kernel[(1,)](*tensors, n, BLOCK=triton.next_power_of_2(n), **pw.EXACT_OPTIONS)
    return [t.cpu().numpy() for t in tensors[len(inputs) :]]


def loops_of(ufunc: np.ufunc):
    """NumPy's loops for ``ufunc`` that Triton can hold, each once."""
    seen = []
    for ins_outs in sorted(ufuncs._numpy_loops(ufunc), key=str):
        ins_outs = tuple(np.dtype(d.name) for d in ins_outs)  # "Q" -> "uint64", for torch
        if all(d in ALL_DTYPES for d in ins_outs) and ins_outs not in seen:
            seen.append(ins_outs)
    return [(io[: ufunc.nin], io[ufunc.nin :]) for io in seen]


def run_ufunc(ufunc: np.ufunc):
    """(loop, inputs, kernel outputs) for every loop, all kernels in one generated module."""
    loops = loops_of(ufunc)
    source = HEADER
    for i, (ins, outs) in enumerate(loops):
        exprs = ufuncs.ufunc_expr(ufunc, ins, outs, [f"a{k}" for k in range(len(ins))])
        source += kernel_text(f"k{i}", len(ins), exprs, [pw.triton_type(d) for d in outs])
    module = load_kernels(source)
    for i, (ins, outs) in enumerate(loops):
        inputs = inputs_for(ufunc, ins)
        yield (ins, outs), inputs, launch(getattr(module, f"k{i}"), inputs, outs)


# ---------------------------------------------------------------------------------------------
# comparison


def ulp_distance(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    signed = np.dtype(f"i{x.dtype.itemsize}")

    def ordered(v):  # floats in order as integers; -0.0 and 0.0 both map to 0
        i = v.view(signed).astype(object)
        return np.where(i < 0, -(i - np.iinfo(signed).min), i)

    return np.abs(ordered(x) - ordered(y)).astype(np.float64)


def differences(got, want, ulp=0, zero_sign_free=False, magnitude=None):
    """Indices where ``got`` is not NumPy's ``want``, and the largest ULP distance seen; with
    ``magnitude``, distances are in ULP of ``magnitude`` instead of ``want``."""
    if got.dtype.kind != "f":
        return np.flatnonzero(got != want), 0
    nan = np.isnan(got) | np.isnan(want)
    bad = np.isnan(got) != np.isnan(want)
    if ulp == 0:
        same = got.view(f"u{got.dtype.itemsize}") == want.view(f"u{want.dtype.itemsize}")
        if zero_sign_free:
            same |= (got == 0) & (want == 0)
        return np.flatnonzero(bad | (~nan & ~same)), 0
    g, w = np.where(nan, 0, got), np.where(nan, 0, want)
    if magnitude is None:
        distance = ulp_distance(g, w)
    else:
        with np.errstate(all="ignore"):
            distance = np.nan_to_num(
                np.abs(g.astype(np.float64) - w) / np.spacing(magnitude.astype(got.dtype))
            )
    inf = np.isinf(got) | np.isinf(want)
    distance = np.where(nan | inf, 0, distance)
    bad |= (distance > ulp) | (inf & ~nan & (got != want))
    return np.flatnonzero(bad), float(distance.max(initial=0))


def describe(ufunc, loop, inputs, got, want, idx) -> str:
    rows = [f"np.{ufunc.__name__} {tuple(map(str, loop[0]))}->{tuple(map(str, loop[1]))}:"]
    for i in idx[:6]:
        args = ", ".join(repr(x[i]) for x in inputs)
        rows.append(f"  ({args}) -> got {got[i]!r}, NumPy {want[i]!r}")
    return "\n".join(rows + [f"  ... {len(idx)} differences"])


def numpy_result(ufunc, loop, inputs) -> list[np.ndarray]:
    natural = ufunc.resolve_dtypes(loop[0] + (None,) * ufunc.nout) == loop[0] + loop[1]
    with np.errstate(all="ignore"):  # (int64, uint64) comparisons have no `signature=` spelling
        result = ufunc(*inputs) if natural else ufunc(*inputs, signature=loop[0] + loop[1])
    return list(result) if ufunc.nout > 1 else [result]


# ---------------------------------------------------------------------------------------------
# the ufuncs


@pytest.mark.usefixtures("strict_interpreter")
@pytest.mark.parametrize("ufunc", SUPPORTED, ids=lambda u: u.__name__)
def test_ufunc_matches_numpy_on_every_loop(ufunc):
    tolerance = ULP.get(ufunc, (0, 0))[0 if INTERPRETING else 1]
    failures, checked = [], 0
    for loop, inputs, got in run_ufunc(ufunc):
        for g, w in zip(got, numpy_result(ufunc, loop, inputs)):
            assert g.dtype == w.dtype
            ulp = tolerance if g.dtype.kind == "f" else 0
            if g.dtype == F16 and ufunc in ULP:  # NumPy's float32 function vs ours, rounded again
                ulp = max(ulp, 1)
            scale = (
                np.maximum.reduce([np.abs(x) for x in [*inputs, w]])
                if ufunc in MAGNITUDE_ULP
                else None
            )
            idx, _ = differences(g, w, ulp, ufunc in ZERO_SIGN_FREE, scale)
            if len(idx):
                failures.append(describe(ufunc, loop, inputs, g, w, idx))
            checked += 1
    assert checked, f"np.{ufunc.__name__}: no loop was run"
    assert not failures, "\n".join(failures)


def test_every_numpy_ufunc_has_a_rule_or_a_reason():
    every = {u for u in vars(np).values() if isinstance(u, np.ufunc)}
    for u in every - set(ufuncs.RULES):
        assert u in ufuncs._NO_RULE or u.signature is not None, (
            f"np.{u.__name__}: no rule, no reason"
        )
        with pytest.raises(Unlowerable, match=f"np.{u.__name__} has no Triton rule: "):
            ufuncs.ufunc_loop(u, (F64,) * u.nin)


# ---------------------------------------------------------------------------------------------
# casts and constants


# Values that wrap through int32 or int64, and values beyond both (NaN, inf and these give x86's
# "integer indefinite", which pw.cast reproduces, where the GPU saturates). Into uint32 and
# uint64 NumPy itself gives such values different results in its vector loop and in its scalar
# tail (-inf -> uint32 is 2**31 or 0 by its place in the array): only defined values there.
FLOATS_TO_WRAP = [300.0, -1.0, -1.5, -129.7, 65535.9, 70000.0, 2.0**31 - 1, -(2.0**31), -2147483648.5,
                  2.0**31, 3e9, 5e9, -5e9, 2.0**63, -(2.0**63), 1e19, 2.0**64, -1e19, 1e30, -1e30,
                  np.nan, np.inf, -np.inf]  # fmt: skip


def cast_inputs(src: np.dtype, dst: np.dtype) -> np.ndarray:
    values = np.concatenate([specials(src), randoms(src, 128, np.random.default_rng(7))])
    if src.kind == "f" and dst.kind in "iu":
        with np.errstate(all="ignore"):
            values = np.concatenate([values, np.array(FLOATS_TO_WRAP).astype(src)])
            if dst.kind == "u" and dst.itemsize >= 4:
                t = np.trunc(values.astype(np.float64))
                bits = dst.itemsize * 8
                values = values[np.isfinite(t) & (t >= -(2.0 ** (bits - 1))) & (t < 2.0**bits)]
    return values


@pytest.mark.parametrize("src", ALL_DTYPES, ids=str)
def test_cast_matches_astype_for_every_target(src):
    targets = [d for d in ALL_DTYPES if d != src]
    source = HEADER
    for j, dst in enumerate(targets):
        source += kernel_text(f"to{j}", 1, [pw.cast("a0", src, dst)], [pw.triton_type(dst)])
    module = load_kernels(source)
    failures = []
    for j, dst in enumerate(targets):
        x = cast_inputs(src, dst)
        (got,) = launch(getattr(module, f"to{j}"), [x], [dst])
        with np.errstate(all="ignore"):
            want = x.astype(dst)
        idx, _ = differences(got, want)
        if len(idx):
            failures.append(f"{src}->{dst}: {x[idx[:5]]} -> {got[idx[:5]]}, NumPy {want[idx[:5]]}")
    assert not failures, "\n".join(failures)


def test_cast_of_a_dtype_to_itself_is_the_expression():
    assert pw.cast("v3", F32, F32) == "v3"


def test_cast_wraps_operators_in_parentheses():
    assert pw.cast("a + b", np.dtype(np.int8), F32) == "(a + b).to(tl.float32)"


CONSTANTS = {
    BOOL: [True, False],
    np.dtype(np.int8): [-128, 127, 0, -1],
    np.dtype(np.int64): [-(2**63), 2**63 - 1, 12345678901234],
    np.dtype(np.uint64): [2**64 - 1, 2**63, 0],
    np.dtype(np.uint32): [2**32 - 1, 7],
    F16: [np.inf, -np.inf, np.nan, -0.0, 0.1, 65504.0, 1e-7, 70000.0],
    F32: [np.inf, -np.inf, np.nan, -0.0, 0.1, 1 / 3, 3.4028234663852886e38, 1e-45, 16777217.0],
    F64: [np.inf, -np.inf, np.nan, -0.0, 0.1, 5e-324, 1.7976931348623157e308, np.float32(0.1)],
}


@pytest.mark.parametrize("dtype", list(CONSTANTS), ids=str)
def test_constant_has_numpys_value_and_dtype(dtype):
    values = CONSTANTS[dtype]
    body = "".join(
        f"    c{i} = {pw.constant(v, dtype)}\n"
        f"    tl.static_assert(c{i}.dtype == {pw.triton_type(dtype)}, 'constant dtype')\n"
        f"    tl.store(out0 + {i} + tl.zeros([1], tl.int32), c{i})\n"
        for i, v in enumerate(values)
    )
    source = HEADER + f"\n@triton.jit\ndef consts(out0, n, BLOCK: tl.constexpr):\n{body}"
    out = torch.from_numpy(np.zeros(len(values), dtype)).to(DEVICE)
    load_kernels(source).consts[(1,)](out, len(values), BLOCK=1, **pw.EXACT_OPTIONS)
    got = out.cpu().numpy()
    with np.errstate(all="ignore"):
        want = np.array([dtype.type(v) for v in values], dtype)
    idx, _ = differences(got, want)
    assert not len(idx), f"{dtype}: {np.array(values)[idx]} -> {got[idx]}, NumPy {want[idx]}"


def test_constant_out_of_range_integer_is_unlowerable_as_numpy_refuses_it():
    with pytest.raises(OverflowError):
        np.zeros(2, np.int8) + 1000
    with pytest.raises(Unlowerable, match="1000 does not fit int8.*OverflowError"):
        pw.constant(1000, np.dtype(np.int8))


def test_float32_constant_is_the_float32_value():
    assert pw.constant(0.1, F32) == f"tl.full([1], {float(np.float32(0.1))!r}, tl.float32)"
    # -0.0 by its bits: on an H200 a float16 `tl.full` of -0.0 held +0.0
    assert pw.constant(-0.0, F64) == (
        "tl.full([1], -9223372036854775808, tl.int64).to(tl.float64, bitcast=True)")  # fmt: skip


# ---------------------------------------------------------------------------------------------
# loop resolution (NEP 50) and what cannot be lowered

SCALARS = {int: 3, float: 2.5, bool: True}


@pytest.mark.parametrize(
    "ufunc", [np.add, np.true_divide, np.less, np.left_shift, np.arctan2], ids=lambda u: u.__name__
)
def test_ufunc_loop_is_the_loop_numpy_runs(ufunc):
    operands = ALL_DTYPES + list(SCALARS)
    checked = 0
    for first in ALL_DTYPES:
        for second in operands:
            try:
                ins, outs = ufuncs.ufunc_loop(ufunc, (first, second))
            except Unlowerable:
                with pytest.raises(TypeError), np.errstate(all="ignore"):
                    ufunc(
                        np.ones(2, first),
                        np.ones(2, second) if second not in SCALARS else SCALARS[second],
                    )
                continue
            value = SCALARS[second] if second in SCALARS else np.ones(2, second)
            with np.errstate(all="ignore"):
                result = ufunc(np.ones(2, first), value)
            assert (result.dtype,) == outs, (first, second)
            checked += 1
    assert checked > 50


@pytest.mark.parametrize(
    ("ufunc", "operands", "loop"),
    [
        (np.add, (np.dtype(np.int8), int), ((np.int8, np.int8), (np.int8,))),
        (np.multiply, (F32, float), ((np.float32, np.float32), (np.float32,))),
        (np.add, (np.dtype(np.int8), float), ((np.float64, np.float64), (np.float64,))),
        (np.add, (bool, np.dtype(np.int8)), ((np.int8, np.int8), (np.int8,))),
        (np.add, (int, int), ((np.int64, np.int64), (np.int64,))),
        (np.true_divide, (np.dtype(np.int16),) * 2, ((np.float64, np.float64), (np.float64,))),
        (np.less, (np.dtype(np.uint64), np.dtype(np.int64)), ((np.uint64, np.int64), (np.bool_,))),
        (
            np.add,
            (np.dtype(np.uint64), np.dtype(np.int64)),
            ((np.float64, np.float64), (np.float64,)),
        ),
        (np.sin, (np.dtype(np.int8),), ((np.float16,), (np.float16,))),
        (np.ldexp, (F32, np.dtype(np.int8)), ((np.float32, np.int32), (np.float32,))),
        (np.frexp, (F16,), ((np.float16,), (np.float16, np.int32))),
    ],
)
def test_ufunc_loop_follows_nep50(ufunc, operands, loop):
    expected = tuple(tuple(np.dtype(t) for t in part) for part in loop)
    assert ufuncs.ufunc_loop(ufunc, operands) == expected


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: ufuncs.ufunc_loop(np.add, (np.dtype(np.complex64), np.dtype(np.int8))),
            "complex64 has no Triton type: complex numbers",
        ),
        (
            lambda: ufuncs.ufunc_loop(np.multiply, (F32, complex)),
            "complex64 has no Triton type: complex numbers",
        ),
        (
            lambda: ufuncs.ufunc_expr(
                np.add, (np.dtype(np.complex128),) * 2, (np.dtype(np.complex128),), ["a", "b"]
            ),
            "complex128 has no Triton type",
        ),
        (lambda: pw.triton_type(np.dtype(np.complex64)), "complex numbers run in NumPy"),
        (lambda: pw.triton_type(np.dtype(np.longdouble)), "extended precision"),
        (lambda: pw.triton_type(np.dtype("datetime64[s]")), "datetimes"),
        (lambda: pw.triton_type(np.dtype(">f4")), "byte order"),
        (
            lambda: ufuncs.ufunc_loop(np.gcd, (np.dtype(np.int32),) * 2),
            "np.gcd has no Triton rule: .*loop",
        ),
        (
            lambda: ufuncs.ufunc_loop(np.matmul, (F32, F32)),
            "np.matmul has no Triton rule: not elementwise",
        ),
        (
            lambda: ufuncs.ufunc_loop(np.bitwise_and, (F32, F32)),
            "NumPy has no np.bitwise_and loop for",
        ),
        (
            lambda: ufuncs.ufunc_expr(np.bitwise_and, (F32, F32), (F32,), ["a", "b"]),
            "NumPy has no np.bitwise_and loop",
        ),
    ],
)
def test_unlowerable_says_what_was_wrong(call, message):
    with pytest.raises(Unlowerable, match=message):
        call()


# ---------------------------------------------------------------------------------------------
# the CUDA compiler: stricter types than the interpreter, and the instructions that are exact

try:
    from triton._C.libtriton import ir
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.compiler.compiler import make_backend
    from triton.runtime.jit import JITFunction
except ImportError:  # pragma: no cover - a Triton without the CUDA backend
    GPUTarget = None

TARGET = GPUTarget("cuda", 90, 32) if GPUTarget else None
needs_cuda_compiler = pytest.mark.skipif(TARGET is None, reason="Triton without the CUDA backend")
uses_cuda_compiler = pytest.mark.usefixtures("pristine_triton_language")


def cuda_kernel(inputs: list[np.dtype], results: list[tuple[str, np.dtype]]) -> ASTSource:
    """A kernel for the CUDA compiler: loads ``a{k}`` of ``inputs[k]``, stores each result."""
    signature = {f"in{k}": "*" + _signature_type(d) for k, d in enumerate(inputs)}
    signature |= {f"out{j}": "*" + _signature_type(d) for j, (_, d) in enumerate(results)}
    body = "".join(f"    a{k} = tl.load(in{k} + off)\n" for k in range(len(inputs)))
    for j, (expr, dtype) in enumerate(results):
        body += "".join(f"    {line}\n" for line in let_bindings.assignments(f"r{j}", expr))
        body += f"    tl.static_assert(r{j}.dtype == {pw.triton_type(dtype)}, 'result dtype')\n"
        body += f"    tl.store(out{j} + off, r{j})\n"
    head = f"\n@triton.jit\ndef k({', '.join(signature)}):\n    off = tl.arange(0, 64)\n"
    fn = source_files.load_kernel(HEADER + head + body, "k")
    fn = fn if isinstance(fn, JITFunction) else JITFunction(fn.fn)  # the interpreter wraps it
    return ASTSource(fn, signature, constexprs={})


def _signature_type(dtype: np.dtype) -> str:  # *fp32, *i8, *u64, *i1
    name = pw.triton_type(dtype).removeprefix("tl.")
    floats = {"float16": "fp16", "float32": "fp32", "float64": "fp64"}
    return floats.get(name) or name.replace("uint", "u").replace("int", "i")


def ufunc_kernel(ufunc: np.ufunc, loops) -> ASTSource:
    inputs, results = [], []
    for ins, outs in loops:
        names = [f"a{len(inputs) + k}" for k in range(len(ins))]
        results += zip(ufuncs.ufunc_expr(ufunc, ins, outs, names), outs)
        inputs += ins
    return cuda_kernel(inputs, results)


def type_check(kernel: ASTSource) -> None:
    """The CUDA compiler's front end, Python to TTIR: where Triton checks types, more strictly
    than its interpreter."""
    backend = make_backend(TARGET)
    options = backend.parse_options(pw.EXACT_OPTIONS)
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    codegen = backend.get_codegen_implementation(options)
    kernel.make_ir(TARGET, options, codegen, backend.get_module_map(), context)


@needs_cuda_compiler
@uses_cuda_compiler
@pytest.mark.parametrize("ufunc", SUPPORTED, ids=lambda u: u.__name__)
def test_every_loop_type_checks_in_the_cuda_compiler(ufunc):
    type_check(ufunc_kernel(ufunc, loops_of(ufunc)))


@needs_cuda_compiler
@uses_cuda_compiler
def test_casts_and_constants_type_check_in_the_cuda_compiler():
    casts = [(pw.cast(f"a{i}", s, d), d) for i, s in enumerate(ALL_DTYPES) for d in ALL_DTYPES]
    constants = [(pw.constant(v, d), d) for d, values in CONSTANTS.items() for v in values]
    type_check(cuda_kernel(ALL_DTYPES, casts + constants))


# Exact float ops built from Triton's own operations (libdevice's fmod and rint are exact too,
# but their code holds approximations that it then corrects).
EXACT_FLOAT_OPS = [
    np.add, np.subtract, np.multiply, np.true_divide, np.reciprocal, np.square, np.sqrt,
    np.floor, np.ceil, np.trunc, np.ldexp, np.frexp, np.modf, np.nextafter, np.spacing,
    np.minimum, np.fmax, np.sign, np.absolute, np.negative, np.degrees, np.heaviside, np.less,
]  # fmt: skip


@needs_cuda_compiler
@uses_cuda_compiler
def test_exact_float_ops_and_casts_compile_to_correctly_rounded_instructions():
    kernels = {
        f"np.{u.__name__}": ufunc_kernel(u, [io for io in loops_of(u) if io[0][0].kind == "f"])
        for u in EXACT_FLOAT_OPS
    }
    casts = [(pw.cast(f"a{i}", s, d), d) for i, s in enumerate(ALL_DTYPES) for d in ALL_DTYPES]
    kernels["casts"] = cuda_kernel(ALL_DTYPES, casts)
    for what, kernel in kernels.items():
        ptx = triton.compile(kernel, target=TARGET, options=pw.EXACT_OPTIONS).asm["ptx"]
        inexact = re.findall(r"\b[a-z]+(?:\.\w+)*\.(?:approx|full|ftz)\b[.\w]*", ptx)
        assert not inexact, f"{what}: {sorted(set(inexact))}"
