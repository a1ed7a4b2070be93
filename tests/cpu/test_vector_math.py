"""libm calls vectorized through glibc's libmvec (`backend/cpu/vector_math.py`): every function
it maps, on float32 and float64, against NumPy over ordinary values, special values (zeros,
infinities, NaN), arguments outside the domain and huge ones, within a few ULP."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("numba", reason="the CPU kernels need numba: pip install 'tcompile[cpu]'")

import tcompile as tc  # noqa: E402
from tcompile.backend.cpu import vector_math  # noqa: E402
from tcompile.backend.cpu.kernels import fused_backend  # noqa: E402

ULPS = {np.float64: 4, np.float32: 8}  # libmvec's bound; float32: NumPy's own SIMD loops too
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, 1e-300, 5e-324, 1e300, -1e300,
           710.0, -745.0, 88.0, 1e-40, 3.0e38, np.pi, -np.pi / 2]  # fmt: skip
BINARY = ("atan2", "hypot")


def _values(dtype, n=4096) -> np.ndarray:
    rng = np.random.default_rng(1)
    ordinary = np.concatenate([rng.uniform(-4, 4, n // 2), rng.standard_normal(n // 4) * 100,
                               rng.uniform(-1, 1, n // 4)])  # fmt: skip
    with np.errstate(over="ignore"):
        return np.concatenate([np.array(SPECIAL), ordinary]).astype(dtype)


def assert_ulps(got, want, ulps):
    assert got.dtype == want.dtype and got.shape == want.shape
    same_nan = np.isnan(got) == np.isnan(want)
    assert same_nan.all(), np.flatnonzero(~same_nan)[:5]
    finite = np.isfinite(want)
    assert (got[~finite & ~np.isnan(want)] == want[~finite & ~np.isnan(want)]).all()
    gap = np.abs(got[finite].astype(np.float64) - want[finite])
    allowed = ulps * np.spacing(np.abs(want[finite])).astype(np.float64)
    bad = gap > allowed
    assert not bad.any(), (got[finite][bad][:5], want[finite][bad][:5])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("ufunc", sorted(vector_math.LIBM_NAMES, key=lambda u: u.__name__))
def test_each_function_matches_numpy(ufunc, dtype):
    name = vector_math.call_name(ufunc, np.dtype(dtype))
    if name is None:
        pytest.skip("no libmvec variant of this function on this machine")
    x = _values(dtype)
    args = (x, np.roll(x, 7)) if ufunc.nin == 2 else (x,)

    def f(*a):
        return ufunc(*a) * dtype(1)  # two ops: a fused kernel, not a NumPy call

    compiled = tc.compile(f, backend=fused_backend, fullgraph=True)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        want = f(*args)
        compiled(*args)  # the first call runs the trace's NumPy
        got = compiled(*args)
    assert_ulps(got, want, ULPS[dtype])
    source = compiled.__tc_compiled__.entries[-1].report.compiled.sources["kernels"]
    if not (ufunc is np.exp and dtype is np.float32):  # float32 exp: `scalar_ops.EXPF`'s own
        assert f"from tcompile.backend.cpu.vector_math import {name}" in source


def test_call_names_only_for_float_functions_libmvec_has():
    if vector_math.call_name(np.sin, np.dtype(np.float64)) is None:
        pytest.skip("no libmvec on this machine")
    assert vector_math.call_name(np.sin, np.dtype(np.float64)) == "sin_float64"
    assert vector_math.call_name(np.arctan2, np.dtype(np.float32)) == "atan2_float32"
    assert vector_math.call_name(np.sin, np.dtype(np.float16)) is None
    assert vector_math.call_name(np.add, np.dtype(np.float64)) is None
    with pytest.raises(AttributeError):
        vector_math.__getattr__("sqrt_float64")  # noqa: B009 - the module's own lookup
