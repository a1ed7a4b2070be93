"""Masked stores without a graph break (issue 11, part 4): ``a[mask] = v`` for a number ``v``,
and ``z[m] = f(z[m], c[m])`` for element-wise ``f``, stay in the graph; every other use of
``z[m]`` breaks where it is read, as before.

Each case runs eagerly and compiled over fresh arguments (results bitwise, mutated inputs,
exceptions, warnings), and the supported forms also under ``fullgraph=True`` and with their
graph and break counts asserted.
"""

from __future__ import annotations

import numpy as np
import pytest
from diffharness import C, case_id, check

import tcompile as tc

# --- builders ------------------------------------------------------------------------------


def floats(n=8, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(n) * 3


def mask_of(n=8, seed=0):
    return np.random.default_rng(seed + 100).random(n) > 0.4


def grid(shape=(4, 5), seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def mandel_inputs(n=24, seed=0):
    rng = np.random.default_rng(seed)
    c = (rng.uniform(-2.0, 0.8, n) + 1j * rng.uniform(-1.2, 1.2, n)).astype(np.complex128)
    return np.zeros(n, np.complex128), c


def special_floats():
    return np.array([np.nan, np.inf, -np.inf, -0.0, 1e300, -2.5, 3.0, 0.0])


ALL = np.ones(8, bool)
NONE = np.zeros(8, bool)


def b(*parts):
    """A builder: fresh copies of the arrays among ``parts``, the other values as they are."""
    return lambda: tuple(p.copy() if isinstance(p, np.ndarray) else p for p in parts)


F0, F1, F2, F3, SP = floats(), floats(8, 1), floats(8, 2), floats(8, 3), special_floats()
M0, M1, M2 = mask_of(), mask_of(8, 1), mask_of(8, 2)
I8, G0, G1 = np.arange(8), grid(), grid(seed=1)
Z0, C0 = mandel_inputs()
Z1, C1 = mandel_inputs(24, 1)
ROWS = np.array([True, False, True, True])


# --- a[mask] = number ----------------------------------------------------------------------


def store_float(a, mask):
    a[mask] = 2.5
    return a


def store_float_into_int(a, mask):
    a[mask] = 2.7  # truncated, as item assignment converts it
    return a


def store_negative_float_into_uint(a, mask):
    a[mask] = -1.5
    return a


def store_nan(a, mask):
    a[mask] = np.nan
    return a


def store_inf(a, mask):
    a[mask] = -np.inf
    return a


def store_complex(a, mask):
    a[mask] = 1.5 - 2j
    return a


def store_bool(a, mask):
    a[mask] = True
    return a


def store_int_into_float(a, mask):
    a[mask] = 7
    return a


def store_argument(a, mask, v):
    a[mask] = v
    return a


def store_numpy_scalar(a, mask):
    a[mask] = a.max()
    return a


def store_twice(a, m1, m2):
    a[m1] = 1.0
    a[m2] = -1.0
    return a.sum()


def store_into_view(a, mask):
    v = a[::2]
    v[mask] = 0.0
    return a


def store_rows(a, rows):
    a[rows] = -1.0
    return a


def store_rows_3d(a, mask2d):
    a[mask2d] = 5
    return a


def store_computed_mask(a):
    a[a < 0] = 0.0
    return a


def store_then_compute(a, mask):
    a[mask] = 0.0
    return a * 2 + 1


SCALAR_STORES = [
    C("float", store_float, b(F0, M0), b(F1, M1)),
    C("float_all_none", store_float, b(F0, ALL), b(F1, NONE)),
    C("float_into_int", store_float_into_int, b(I8, M0), b(I8 * 3, M1)),
    C("float_into_int8", store_float_into_int, b(I8.astype(np.int8), M0), b(I8, NONE)),
    C(
        "neg_float_into_uint8",
        store_negative_float_into_uint,
        b(I8.astype(np.uint8), M0),
        b(I8.astype(np.uint8), NONE),
    ),
    C("nan", store_nan, b(F0, M0), b(SP, M1)),
    C("nan_into_int_raises", store_nan, b(I8, M0), b(I8, NONE)),
    C("inf_into_float32", store_inf, b(F0.astype(np.float32), M0), b(F1.astype(np.float32), ALL)),
    C("inf_into_int_raises", store_inf, b(I8, M0), b(I8, ALL)),
    C("complex_into_complex", store_complex, b(F0 + 0j, M0), b(F1.astype(np.complex64), M1)),
    C("complex_into_float_raises", store_complex, b(F0, M0), b(F0, NONE)),
    C("bool", store_bool, b(np.zeros(8, bool), M0), b(F0, M1)),
    C("int_into_float", store_int_into_float, b(F0, M0), b(I8.astype(np.int16), M1)),
    C("python_float_argument", store_argument, b(F0, M0, 0.5), b(F1, M1, -3.25)),
    C("python_float_into_int", store_argument, b(I8, M0, 0.5), b(I8, M1, float("nan"))),
    C(
        "python_int_overflow",
        store_argument,
        b(I8.astype(np.int8), M0, 100),
        b(I8.astype(np.int8), M0, 300),
    ),
    C(
        "numpy_nan_into_int",
        store_argument,
        b(I8, M0, np.float64(np.nan)),
        b(I8, NONE, np.float64(np.nan)),
    ),
    C(
        "float64_overflows_float32",
        store_argument,
        b(F0.astype(np.float32), M0, np.float64(1e300)),
        b(F0.astype(np.float32), NONE, np.float64(1e300)),
    ),
    C("zero_d_safe_cast", store_argument, b(F0, M0, np.array(3)), b(F1, NONE, np.array(-2))),
    C(
        "zero_d_unsafe_cast",
        store_argument,
        b(I8, M0, np.array(np.nan)),
        b(I8, NONE, np.array(2.5)),
    ),
    C("numpy_scalar_from_data", store_numpy_scalar, b(F0, M0), b(I8, M1)),
    C("two_masks", store_twice, b(F0, M0, M1), b(F1, ALL, NONE)),
    C("through_a_view", store_into_view, b(floats(16), M0), b(floats(16, 1), M1)),
    C("rows_of_2d", store_rows, b(G0, ROWS), b(G1, ~ROWS)),
    C("2d_mask_of_2d", store_float, b(G0, grid(seed=2) > 0), b(G1, grid(seed=3) > 0)),
    C(
        "2d_mask_of_3d",
        store_rows_3d,
        b(np.zeros((3, 4, 2), np.int32), grid((3, 4)) > 0),
        b(np.ones((3, 4, 2), np.int32), grid((3, 4), 1) > 0),
    ),
    C("computed_mask", store_computed_mask, b(F0), b(SP)),
    C("then_compute", store_then_compute, b(F0, M0), b(F1, M1)),
    C("readonly_raises", store_float, b(F0, M0), lambda: (_readonly(floats()), mask_of())),
    C("wrong_mask_shape_raises", store_float, b(F0, M0), b(F0, mask_of(6))),
]


def _readonly(a):
    a.flags.writeable = False
    return a


@pytest.mark.parametrize("case", SCALAR_STORES, ids=case_id)
def test_store_of_a_number_matches_eager(case):
    case.run()


# --- z[m] = f(z[m], c[m]) ------------------------------------------------------------------


def mandelbrot(z, c):
    for _ in range(6):
        m = np.abs(z) <= 2.0
        z[m] = z[m] ** 2 + c[m]
    return z


def escape_time(c, steps=5):
    z = np.zeros_like(c)
    counts = np.zeros(c.shape, np.int64)
    for i in range(steps):
        m = np.abs(z) <= 2.0
        z[m] = z[m] * z[m] + c[m]
        counts[m] = i
    return z, counts


def augmented(a, m):
    a[m] += 1
    a[m] *= 0.5
    return a


def augmented_int(a, m):
    a[m] += 3
    a[m] //= 2
    return a


def augmented_int_by_float_raises(a, m):
    a[m] /= 2
    return a


def log_of_selection(z, m):
    z[m] = np.log(z[m])  # z is negative where m is false: no warning there
    return z


def divide_selection(z, m):
    z[m] = 1.0 / z[m]
    return z


def int_division(a, b, m):
    a[m] = a[m] // b[m]
    return a


def int_power_negative(a, b, m):
    a[m] = a[m] ** b[m]
    return a


def overflow_int8(a, m):
    a[m] = a[m] + 300
    return a


def ufunc_chain(z, c, m):
    z[m] = np.sin(z[m]) * np.exp(-c[m]) + np.maximum(z[m], 0.5) - abs(c[m])
    return z


def comparison_into_bool(flags, z, m):
    flags[m] = z[m] > 0.5
    return flags


def float32_times_float64(z, c, m):
    z[m] = z[m] * c[m]  # float64 result, cast back into float32 as item assignment does
    return z


def into_other_array(out, z, m):
    out[m] = np.sqrt(np.abs(z[m])) - 1
    return out


def same_array_twice(z, m):
    z[m] = z[m] * z[m] - z[m]
    return z


def with_numpy_scalar(z, m):
    s = z.mean()
    z[m] = (z[m] - s) * np.float32(2.0)
    return z


def with_zero_d(z, m, k):
    z[m] = z[m] ** 3 - k
    return z


def rows_of_2d_update(z, c, rows):
    z[rows] = z[rows] * 2 + c[rows]
    return z


def square_of(x):
    return x * x


def helper_function(z, c, m):
    z[m] = square_of(z[m]) + c[m]
    return z


def step(z, c, m):
    z[m] = z[m] ** 2 + c[m]


def calls_a_step(z, c):
    m = np.abs(z) < 2
    step(z, c, m)
    return z.real.sum()


def kept_in_locals(z, c, m):
    zm = z[m]
    cm = c[m]
    z[m] = zm * zm + cm
    return z


def alias_then_inplace(z, w, m):
    t = z[m]
    u = t
    t += 1.0
    w[m] = u
    return z, w


def stored_then_reused(z, w, m):
    t = z[m] * 2
    z[m] = t  # t is z's dtype: computed straight into z
    w[m] = t + 1
    return z, w


def stored_then_z_written(z, w, m):
    t = z[m] * 2
    z[m] = t
    z[m] = 0.0
    w[m] = t  # made from z before the second write: a break where t is read
    return z, w


def mask_spelled_twice(a):
    a[a > 0] = a[a > 0] ** (-1.5)  # NPBench's nbody: one mask written out twice
    return a


def mask_spelled_twice_rows(g, c):
    g[(g[:, 0] > 0) & (c[:, 0] < 1)] = g[(g[:, 0] > 0) & (c[:, 0] < 1)] * 2.0 + 1.0
    return g


def mask_recomputed_after_a_write(a, w):
    t = a[a > 0] * 2.0
    a[0] = -a[0]  # ``a > 0`` differs now: the two masks are two selections
    w[a > 0] = t
    return a, w


def other_mask_spelled_alike(a):
    a[a > 1] = a[a > 0] + 1.0  # another bound: sizes may differ, NumPy raises
    return a


def errstate_raise(z, m):
    with np.errstate(divide="raise"):
        z[m] = 1.0 / z[m]
    return z


def _zeros_unmasked(n=8, seed=0):
    z = floats(n, seed)
    m = mask_of(n, seed)
    z[~m] = 0.0
    return z, m


def _negative_unmasked(n=8, seed=0):
    z = np.abs(floats(n, seed)) + 0.1
    m = mask_of(n, seed)
    z[~m] = -1.0
    return z, m


UPDATES = [
    C("mandelbrot", mandelbrot, b(Z0, C0), b(Z1, C1)),
    C("escape_time", escape_time, b(C0), b(C1)),
    C("augmented", augmented, b(F0, M0), b(F1, NONE)),
    C("augmented_int", augmented_int, b(I8, M0), b(I8.astype(np.int16), ALL)),
    C("augmented_int_by_float_raises", augmented_int_by_float_raises, b(I8, M0), b(I8, NONE)),
    C(
        "log_no_warning_outside",
        log_of_selection,
        b(*_negative_unmasked()),
        b(*_negative_unmasked(8, 1)),
    ),
    C("log_warns_inside", log_of_selection, b(F0, M0), b(-np.abs(F1), ALL)),
    C("divide_zeros_outside", divide_selection, b(*_zeros_unmasked()), b(np.zeros(8), M1)),
    C("divide_nan_inf", divide_selection, b(SP, ALL), b(SP, M0)),
    C("int_division_by_zero", int_division, b(I8, I8 % 3, M0), b(I8, np.ones(8, int), ALL)),
    C(
        "int_negative_power_raises",
        int_power_negative,
        b(I8, I8 % 3, M0),
        b(I8, I8 - 4, M1),
        b(I8, I8 - 4, NONE),
    ),
    C(
        "overflow_int8_raises",
        overflow_int8,
        b(I8.astype(np.int8), M0),
        b(I8.astype(np.int8), NONE),
    ),
    C("ufunc_chain", ufunc_chain, b(F0, F1, M0), b(SP, F2, M2)),
    C(
        "comparison_into_bool",
        comparison_into_bool,
        b(np.zeros(8, bool), F0, M0),
        b(np.ones(8, bool), SP, ALL),
    ),
    C(
        "float32_times_float64",
        float32_times_float64,
        b(F0.astype(np.float32), F1 * 1e38, M0),
        b(F2.astype(np.float32), F3, M1),
    ),
    C(
        "into_other_array",
        into_other_array,
        b(np.zeros(8), F0, M0),
        b(np.ones(8, np.float32), SP, M1),
    ),
    C("same_array_twice", same_array_twice, b(F0, M0), b(I8, M1)),
    C("numpy_scalar_operand", with_numpy_scalar, b(F0, M0), b(F1.astype(np.float32), M1)),
    C("zero_d_operand", with_zero_d, b(F0, M0, np.array(2.0)), b(F1, M1, np.array(3, np.int8))),
    C("rows_of_2d", rows_of_2d_update, b(G0, G1, ROWS), b(grid(seed=2), grid(seed=3), ~ROWS)),
    C("helper_function", helper_function, b(F0, F1, M0), b(F2, F3, M1)),
    C("update_in_a_callee", calls_a_step, b(Z0, C0), b(Z1, C1)),
    C("kept_in_locals", kept_in_locals, b(F0, F1, M0), b(F2, F3, ALL)),
    C("stored_then_reused", stored_then_reused, b(F0, np.zeros(8), M0), b(F1, np.ones(8), M1)),
    C(
        "stored_then_z_written",
        stored_then_z_written,
        b(F0, np.zeros(8), M0),
        b(F1, np.ones(8), M1),
    ),
    C("alias_then_inplace", alias_then_inplace, b(F0, np.zeros(8), M0), b(F1, np.ones(8), M1)),
    C("mask_spelled_twice", mask_spelled_twice, b(F0), b(SP), b(-np.abs(F1))),
    C("mask_spelled_twice_rows", mask_spelled_twice_rows, b(G0, G1), b(grid(seed=2), G0)),
    C(
        "mask_recomputed_after_a_write",
        mask_recomputed_after_a_write,
        b(np.abs(F0), np.zeros(8)),
        b(F1, np.ones(8)),
    ),
    C("other_mask_spelled_alike", other_mask_spelled_alike, b(F0), b(np.full(8, 2.0))),
    C("errstate_raise_outside_mask", errstate_raise, b(*_zeros_unmasked()), b(np.zeros(8), M1)),
    C("complex64", mandelbrot, b(np.zeros(24, np.complex64), C0.astype(np.complex64)), b(Z1, C1)),
]


@pytest.mark.parametrize("case", UPDATES, ids=case_id)
def test_masked_update_matches_eager(case):
    case.run()


def aliased(z, c, m):
    z[m] = c[m] * 2
    return z


def test_update_reads_an_argument_that_is_the_written_array():
    def same():
        z = floats()
        return z, z, mask_of()

    def overlapping():
        base = floats(9)
        return base[1:], base[:-1], mask_of()

    check(aliased, same, overlapping)


# --- graph counts: the supported forms are one graph, no break, also with fullgraph=True ----

ONE_GRAPH = [
    (store_float, (floats(), mask_of())),
    (store_float_into_int, (np.arange(8), mask_of())),
    (store_argument, (np.arange(8), mask_of(), 0.5)),
    (store_argument, (floats(), mask_of(), np.float32(2))),
    (store_rows, (grid(), np.array([True, False, True, False]))),
    (store_rows_3d, (np.zeros((3, 4, 2)), grid((3, 4)) > 0)),
    (store_computed_mask, (floats(),)),
    (store_into_view, (floats(16), mask_of())),
    (mandelbrot, mandel_inputs()),
    (escape_time, (mandel_inputs()[1],)),
    (augmented, (floats(), mask_of())),
    (augmented_int, (np.arange(8), mask_of())),
    (log_of_selection, _negative_unmasked()),
    (ufunc_chain, (floats(), floats(8, 1), mask_of())),
    (comparison_into_bool, (np.zeros(8, bool), floats(), mask_of())),
    (float32_times_float64, (floats().astype(np.float32), floats(8, 1), mask_of())),
    (into_other_array, (np.zeros(8), floats(), mask_of())),
    (with_numpy_scalar, (floats(), mask_of())),
    (rows_of_2d_update, (grid(), grid(seed=1), np.array([1, 0, 1, 1], bool))),
    (helper_function, (floats(), floats(8, 1), mask_of())),
    (calls_a_step, mandel_inputs()),
    (kept_in_locals, (floats(), floats(8, 1), mask_of())),
    (alias_then_inplace, (floats(), np.zeros(8), mask_of())),
    (stored_then_reused, (floats(), np.zeros(8), mask_of())),
    (mask_spelled_twice, (floats(),)),
    (mask_spelled_twice_rows, (grid(), grid(seed=1))),
]


@pytest.mark.parametrize("fn, args", ONE_GRAPH, ids=[f.__name__ for f, _ in ONE_GRAPH])
def test_supported_forms_are_one_graph_without_a_break(fn, args):
    fresh = b(*args)
    report = tc.explain(fn)(*fresh())
    assert report.graph_count == 1, str(report)
    assert report.graph_break_count == 0, str(report)
    tc.reset()
    expected, got = fn(*fresh()), tc.compile(fn, fullgraph=True, backend="eager")(*fresh())
    assert tc.counters()["graph_breaks"] == 0 and tc.counters()["frames_skipped"] == 0
    pairs = zip(*(r if isinstance(r, tuple) else (r,) for r in (expected, got)))
    assert all(e.dtype == g.dtype and e.tobytes() == g.tobytes() for e, g in pairs)


FULLGRAPH = [
    C("fullgraph_store", store_float_into_int, b(I8, M0), b(I8 * 2, NONE), fullgraph=True),
    C("fullgraph_mandelbrot", mandelbrot, b(Z0, C0), b(Z1, C1), fullgraph=True),
    C("fullgraph_escape_time", escape_time, b(C0), b(mandel_inputs(32, 1)[1]), fullgraph=True),
    C("fullgraph_rows", rows_of_2d_update, b(G0, G1, ROWS), b(G1, G0, ALL[:4]), fullgraph=True),
    C(
        "fullgraph_dynamic_float",
        store_argument,
        b(F0, M0, 0.5),
        b(F1, M1, 1.25),
        b(F2, M2, -7.0),
        fullgraph=True,
    ),
]


@pytest.mark.parametrize("case", FULLGRAPH, ids=case_id)
def test_supported_forms_under_fullgraph(case):
    case.run()


def test_new_sizes_stay_correct():
    """A second size makes the dims symbolic: masked writes still match eager."""
    check(
        mandelbrot,
        lambda: mandel_inputs(16),
        lambda: mandel_inputs(40, 1),
        lambda: mandel_inputs(7, 2),
        pattern="AABBCCA",
    )
    check(
        store_float_into_int,
        lambda: (np.arange(8), mask_of()),
        lambda: (np.arange(13), mask_of(13, 1)),
        lambda: (np.arange(5), mask_of(5, 2)),
        lambda: (np.arange(13), mask_of(12, 1)),
        pattern="AABBCCDA",
    )


# --- other uses of z[m]: eager's results, with the break where z[m] is read -------------------


def returned(x):
    return x[x > 0]


def reduced(x, m):
    t = x[m]
    return t.sum(), len(t), t.shape


def used_by_non_ufunc(z, m):
    z[m] = np.clip(z[m], -1, 1)
    return z


def different_masks(z, m1, m2):
    z[m1] = z[m2] * 2
    return z


def mixed_masks(z, c, m1, m2):
    z[m1] = z[m1] + c[m2]
    return z


def read_after_write(z, w, m):
    t = z[m]
    z[m] = 0.0
    w[m] = t  # z's values before the write
    return z, w


def mask_written(z, w, m):
    t = z[m] * 2
    m[:] = True
    w[m] = 1.0
    return t.sum(), w


def printed(z, m):
    print(z[m])
    z[m] = 1.0
    return z


def put_in_a_list(z, m):
    parts = [z[m]]
    return parts


def branch_on_it(z, m):
    if (z[m] > 0).any():
        return 1
    return 0


def indexes_it(z, m):
    t = z[m]
    return t[0] if t.size else None


def full_array_operand(z, c, m):
    z[m] = z[m] + c  # c is not selected: eager broadcasts (or raises) on the gathered shape
    return z


def float_into_int_update(a, m):
    a[m] = a[m] * 0.5  # float64 into int64: not a same-kind cast, left to eager code
    return a


def complex_into_float(x, z, m):
    x[m] = z[m]
    return x


def float16_update(h, m):
    h[m] = np.sin(h[m])
    return h


def traced_exponent(z, m, e):
    z[m] = z[m] ** e
    return z


def stored_into_a_slice(z, w, m):
    w[:3] = z[m][:3]
    return w


OTHER_USES = [
    C("returned", returned, b(F0), b(SP)),
    C("reduced", reduced, b(F0, M0), b(F1, NONE)),
    C("non_ufunc", used_by_non_ufunc, b(F0, M0), b(F1, ALL)),
    C("different_masks", different_masks, b(F0, M0, M0[::-1]), b(F1, M1, M1[::-1])),
    C("mixed_masks", mixed_masks, b(F0, F1, M0, M0[::-1]), b(F2, F3, M1, M1[::-1])),
    C("read_after_write", read_after_write, b(F0, np.zeros(8), M0), b(F1, np.ones(8), M1)),
    C("mask_written", mask_written, b(F0, np.zeros(8), M0), b(F1, np.ones(8), M1)),
    C("printed", printed, b(F0, M0), b(F1, NONE)),
    C("put_in_a_list", put_in_a_list, b(F0, M0), b(F1, M1)),
    C("branch_on_it", branch_on_it, b(F0, M0), b(-np.abs(F0), M0)),
    C("indexed", indexes_it, b(F0, M0), b(F1, NONE)),
    C("full_array_operand", full_array_operand, b(F0, F1, M0), b(F2, F3, I8 == 0)),
    C("float_into_int_update", float_into_int_update, b(I8, M0), b(I8 - 3, M1)),
    C("complex_into_float", complex_into_float, b(F0, F1 + 1j, M0), b(F2, F3 + 0j, NONE)),
    C(
        "float16_update",
        float16_update,
        lambda: (floats(16).astype(np.float16)[::2], mask_of()),
        b(F1.astype(np.float16), M1),
    ),
    C("traced_exponent", traced_exponent, b(F0, M0, 2.0), b(F1, M1, 0.5)),
    C("stored_into_a_slice", stored_into_a_slice, b(F0, np.zeros(8), ALL), b(F1, np.ones(8), M1)),
    C("mask_is_the_target", store_bool, b(np.zeros(8, bool), np.zeros(8, bool)), b(M0, M0)),
]


@pytest.mark.parametrize("case", OTHER_USES, ids=case_id)
def test_other_uses_match_eager(case):
    case.run()


def self_masked(b):
    b[b] = False
    return b


def test_a_mask_that_is_the_written_array_matches_eager():
    check(self_masked, lambda: (mask_of(),), lambda: (mask_of(8, 1),))


@pytest.mark.parametrize(
    "fn, args",
    [
        (returned, (floats(),)),
        (reduced, (floats(), mask_of())),
        (different_masks, (floats(), mask_of(), mask_of()[::-1].copy())),
    ],
)
def test_other_uses_break_where_the_selection_is_read(fn, args, sizes_break):
    """With sizes from data turned off (on, the first two are one graph each:
    `test_sizes_from_data`)."""
    report = tc.explain(fn)(*args)
    assert report.graph_break_count >= 1, str(report)
    assert "boolean-mask indexing" in str(report), str(report)
    with pytest.raises(tc.Unsupported, match="boolean-mask indexing"):
        tc.compile(fn, fullgraph=True, backend="eager")(*args)


# tests/triton runs every differential module's CASES again on the Triton backend
CASES = SCALAR_STORES + UPDATES + FULLGRAPH + OTHER_USES
