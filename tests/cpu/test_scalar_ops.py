"""Every ufunc loop the CPU kernels compute (`backend/cpu/scalar_ops.py`), compiled by numba as
the code generator writes it, against NumPy on edge values: NaN, infinities, signed zeros,
the integer types' extremes, zero divisors. Integers and bools exactly, floats within 4 ULP
(libm's transcendentals against NumPy's SIMD ones)."""

from __future__ import annotations

import importlib.util
import warnings

import numpy as np
import pytest

pytest.importorskip("numba", reason="the CPU kernels need numba: pip install 'tcompile[cpu]'")

import numba  # noqa: E402

from tcompile.backend.cpu import scalar_ops as ops  # noqa: E402
from tcompile.backend.fused.dtypes import Unlowerable  # noqa: E402

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float32", "float64"]  # fmt: skip


def _values(dtype: np.dtype) -> np.ndarray:
    if dtype.kind == "b":
        return np.array([False, True])
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        v = [0, 1, 2, 3, 7, 8, 31, 63, -1, -2, -7, info.min, info.max, info.min + 1, info.max - 1]
        return np.array([x for x in v if info.min <= x <= info.max], dtype=dtype)
    big = 1e300 if dtype.itemsize == 8 else 3e38
    return np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 7.25, 1e30, -1e30, np.inf, -np.inf,
                     np.nan, 1e-40, 2.0**52 + 0.5, big, -0.75, 100.0], dtype=dtype)  # fmt: skip


def _loops(dtype: np.dtype) -> list:
    """(ufunc, out dtype) for every ufunc whose loop takes ``dtype`` operands only."""
    found = []
    for ufunc in ops.OPS:
        for sig in ufunc.types:
            chars = sig.replace("->", "")
            ins = tuple(np.dtype(c) for c in chars[: ufunc.nin])
            if ufunc.nout != 1 or any(d != dtype for d in ins):
                continue
            out = np.dtype(chars[-1])
            try:
                ops.check_loop(ufunc, ins, (out,))
            except Unlowerable:
                continue
            found.append((ufunc, out))
            break
    return found


def _ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """How many representable floats apart (NaNs equal, infinities exact)."""
    ints = np.dtype(f"i{a.itemsize}")
    ia, ib = a.view(ints).astype(np.int64), b.view(ints).astype(np.int64)
    # map the sign-magnitude order onto integers that count floats
    ia = np.where(ia < 0, np.iinfo(ints).min - ia, ia)
    ib = np.where(ib < 0, np.iinfo(ints).min - ib, ib)
    far = np.abs(ia - ib).astype(np.float64)
    return np.where(np.isnan(a) & np.isnan(b), 0, far)


@pytest.mark.parametrize("name", DTYPES)
def test_each_loop_on_edge_values_matches_numpy(name, tmp_path):
    dtype = np.dtype(name)
    loops = _loops(dtype)
    values = _values(dtype)
    a, b = (m.ravel() for m in np.meshgrid(values, values))
    helpers: dict = {}
    lines, outs = [], []
    for k, (ufunc, out) in enumerate(loops):
        args = ["a[i]", "b[i]"][: ufunc.nin]
        lines.append(f"        o{k}[i] = {ops.op(ufunc, (dtype,) * ufunc.nin, out, args, helpers)}")
        outs.append(f"o{k}")
    source = "import numpy as np\nfrom numba import njit\n" + "".join(helpers.values())
    source += f"\ndef f(a, b, {', '.join(outs)}):\n    for i in range(a.shape[0]):\n"
    path = tmp_path / f"ops_{name}.py"
    path.write_text(source + "\n".join(lines) + "\n")
    spec = importlib.util.spec_from_file_location(f"ops_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fn = numba.njit(error_model="numpy")(module.f)
    got = [np.empty(a.shape, out) for _, out in loops]
    fn(a, b, *got)
    failures = []
    for (ufunc, out), result in zip(loops, got):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            want = ufunc(*(a, b)[: ufunc.nin], dtype=out) if ufunc.nout == 1 else None
        if out.kind == "f":
            bad = _ulps(want, result) > 4
        else:
            bad = want != result
        if bad.any():
            i = np.flatnonzero(bad)[0]
            failures.append(f"np.{ufunc.__name__}{(a[i], b[i])[: ufunc.nin]}: NumPy "
                            f"{want[i]!r}, kernel {result[i]!r}")  # fmt: skip
    assert len(loops) > 10, loops
    assert not failures, "\n".join(failures)


def _castable(src: np.dtype, dst: np.dtype, values: np.ndarray) -> np.ndarray:
    """The values whose cast NumPy defines (float to integer: the truncated value lies in the
    range C converts exactly, as for the Triton backend; elsewhere NumPy's result is the
    platform's)."""
    if src.kind != "f" or dst.kind not in "iu":
        return values
    with np.errstate(all="ignore"):
        t = np.trunc(values.astype(np.float64))
    low, high = (-(2.0**31), 2.0**31) if dst.itemsize < 4 else (-(2.0**63), 2.0**64)
    if dst == np.int32:
        high = 2.0**31
    if dst == np.uint32:
        low, high = -(2.0**63), 2.0**63
    if dst == np.int64:
        high = 2.0**63
    return values[np.isfinite(t) & (t >= low) & (t < high)]


@pytest.mark.parametrize("name", DTYPES)
def test_casts_match_astype(name, tmp_path):
    src = np.dtype(name)
    lines, outs, inputs = [], [], []
    for k, dst_name in enumerate(DTYPES):
        dst = np.dtype(dst_name)
        inputs.append(_castable(src, dst, _values(src)))
        lines.append(f"    for i in range(x{k}.shape[0]):")
        lines.append(f"        o{k}[i] = {ops.cast(f'x{k}[i]', src, dst)}")
        outs.append(f"x{k}, o{k}")
    path = tmp_path / f"casts_{name}.py"
    path.write_text("import numpy as np\n\ndef f(" + ", ".join(outs) + "):\n" + "\n".join(lines)
                    + "\n")  # fmt: skip
    spec = importlib.util.spec_from_file_location(f"casts_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fn = numba.njit(error_model="numpy")(module.f)
    got = [np.empty(x.shape, dst) for x, dst in zip(inputs, DTYPES)]
    fn(*[v for pair in zip(inputs, got) for v in pair])
    failures = []
    for x, dst, result in zip(inputs, DTYPES, got):
        with np.errstate(all="ignore"):
            want = x.astype(dst)
        same = (want == result) | ((want != want) & (result != result))
        if not same.all():
            i = np.flatnonzero(~same)[0]
            failures.append(f"{x[i]!r} -> {dst}: astype {want[i]!r}, kernel {result[i]!r}")
    assert not failures, "\n".join(failures)
