"""Masked stores in the cpu backend's native loops (issue 22): ``z[m] = f(z[m], c[m])`` traces
to ufunc calls with ``out=`` and ``where=`` and ``np.copyto(..., where=)``, printed as element
loops (`backend/cpu/native_masked.py`). Every case compares with the plain call (ints exactly,
floats within 16 ulps; complex products bit for bit) and says the loop ran as machine code."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

pytest.importorskip("numba", reason="the cpu backend needs numba: pip install 'tcompile[cpu]'")

from test_native_loops import native, same  # noqa: E402

import tcompile as tc  # noqa: E402

RNG = np.random.default_rng(41)
DTYPES = [np.int8, np.int64, np.float32, np.float64, np.complex64, np.complex128]


def data(shape, dtype):
    values = RNG.integers(-60, 60, shape)
    if np.dtype(dtype).kind in "fc":
        values = RNG.standard_normal(shape) * 3
    if np.dtype(dtype).kind == "c":
        values = values + 1j * RNG.standard_normal(shape)
    return values.astype(dtype)


def unary_and_binary(z, c, steps):
    for _ in range(steps):
        m = np.abs(z) < 40
        z[m] = -z[m]  # np.negative
        z[m] = z[m] * c[m] + c[m]  # np.multiply, np.add, into z
        z[m] = z[m] - 3  # a Python int meeting the dtype
    return z


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.parametrize("dtype", DTYPES)
def test_masked_ufuncs_of_each_arity_and_dtype(loops, dtype):
    z, c = data((7, 5), dtype), data((7, 5), dtype)
    same(unary_and_binary, lambda: (z.copy(), c.copy(), 4))
    assert native(loops) == [True]
    assert "_negative_where(" in loops[0].source and "_multiply_where(" in loops[0].source


def squares(z, steps):
    for _ in range(steps):
        big = np.abs(z) > 0.5
        z[big] = z[big] ** 2  # np.square
    return z


@pytest.mark.parametrize("dtype", [np.float64, np.complex64, np.complex128])
def test_complex_and_float_squares_are_numpy_s_bit_for_bit(loops, dtype):
    """NumPy's SIMD complex product, with fused multiply-adds where the CPU has them."""
    z = data((40,), dtype) * dtype(0.7)
    want = squares(z.copy(), 3)
    compiled = tc.compile(squares, backend="cpu")
    for _ in range(2):  # the trace, then the loop node
        got = compiled(z.copy(), 3)
        assert got.tobytes() == want.tobytes()
    assert native(loops) == [True]


def rows_doubled(x, v, steps):
    for _ in range(steps):
        m = x[:, 0] > 0  # a row mask: where= is m[..., None], broadcast over the columns
        x[m] = x[m] * 2.0 + v[m]
    return x


def test_a_row_mask_broadcasts_over_columns(loops):
    x, v = data((6, 4), np.float64), data((6, 4), np.float64)
    same(rows_doubled, lambda: (x.copy(), v.copy(), 3))
    assert native(loops) == [True]


def scaled(x, s, steps):
    for _ in range(steps):
        m = x > 0
        x[m] = x[m] * s  # a Python float of the graph: broadcast as a scalar
    return x


@pytest.mark.parametrize("mask", ["none", "all", "some"])
def test_masks_of_no_element_all_elements_and_some(loops, mask):
    x = {"none": -np.ones(30), "all": np.ones(30), "some": data((30,), np.float64)}[mask]
    same(scaled, lambda: (x.copy(), 1.5, 3))
    assert native(loops) == [True]


def stores(x, y, steps):
    for _ in range(steps):
        m = x < 0
        x[m] = 0  # np.copyto of a converted number
        x[m] = y[m]  # np.copyto of another dtype of the kind, casting="unsafe"
        y = y - 1.0
    return x, y


def test_copyto_with_where_of_numbers_and_casts(loops):
    x, y = data((20,), np.float32), data((20,), np.float64)
    same(stores, lambda: (x.copy(), y.copy(), 3))
    assert native(loops) == [True] and "_copyto_where" in loops[0].source


def overlapping(x, steps):
    for _ in range(steps):
        m = x > 0
        x[m] = x[m] + x[::-1][m]  # an operand that is out reversed: read as NumPy reads it
    return x


def test_an_operand_sharing_memory_with_out_is_read_from_a_copy(loops):
    x = data((9,), np.float64)
    same(overlapping, lambda: (x.copy(), 2))
    assert native(loops) == [True] and "_apart(a1, out)" in loops[0].source


# The benchmark's escape-time kernel (bench/loop_kernels.py).
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import loop_kernels  # noqa: E402


def test_mandelbrot_runs_as_machine_code_equal_to_numpy(loops):
    (kernel,) = [k for k in loop_kernels.KERNELS if k.name == "mandelbrot"]
    args = kernel.setup(kernel.trips)
    z, counts = kernel.fn(*args)
    compiled = tc.compile(kernel.fn, backend="cpu")
    for _ in range(2):
        got_z, got_counts = compiled(*args)
        assert got_counts.tobytes() == counts.tobytes()
        np.testing.assert_allclose(got_z, z, rtol=1e-13, equal_nan=True)
    assert native(loops) == [True]
