"""Graphs compiled to fused numba kernels (`backend/cpu/kernels.py`) against NumPy, one or more
cases per lowering rule family and fusion pattern: dtypes and shapes exactly, integers and
bools exactly, floats to 1e-12 (float64) or 1e-5 (float32) relative; inputs written in place
reach the caller's arrays; what the kernels cannot compute runs as an extern step."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("numba", reason="the CPU kernels need numba: pip install 'tcompile[cpu]'")

import tcompile as tc  # noqa: E402
from tcompile.backend.cpu.kernels import fused_backend  # noqa: E402

RNG = np.random.default_rng(0)


def _report(compiled):
    return compiled.__tc_compiled__.entries[-1].report.compiled


def kinds(compiled) -> list[str]:
    return [d.kind for d in _report(compiled).details if hasattr(d, "kind")]


def same(fn, *args, externs: bool = False, rtol: float | None = None):
    """``fn`` compiled to CPU kernels returns what ``fn`` returns and writes what it writes;
    unless ``externs``, nothing of it ran as an extern step. Returns the compiled function."""
    compiled = tc.compile(fn, backend=fused_backend, fullgraph=True)
    plain_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    kernel_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        want = fn(*plain_args)
        got = compiled(*kernel_args)  # (the first call runs the trace's NumPy: it may warn)
    assert_same(got, want, rtol)
    for mine, theirs in zip(kernel_args, plain_args):  # in-place writes reach the caller
        assert_same(mine, theirs, rtol)
    if not externs:
        assert "extern" not in kinds(compiled), _report(compiled).details
    return compiled


def assert_same(got, want, rtol=None):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w, rtol)
        return
    assert type(got) is type(want), (type(got), type(want))
    if not isinstance(want, np.ndarray | np.generic):
        assert got == want
        return
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype,
                                                                   want.shape)  # fmt: skip
    if want.dtype.kind == "f":
        tol = rtol if rtol is not None else (1e-12 if want.dtype.itemsize == 8 else 1e-5)
        np.testing.assert_allclose(got, want, rtol=tol, atol=0, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def floats(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def ints(*shape, dtype=np.int64, low=-100, high=100):
    return RNG.integers(low, high, shape).astype(dtype)


# -- pointwise ---------------------------------------------------------------------------------


def test_pointwise_chain_is_one_kernel():
    def f(x, y):
        return np.sin(x) * 2.5 + np.exp(-y) / (1 + x * x)

    compiled = same(f, floats(300, 70), floats(300, 70))
    assert kinds(compiled) == ["pointwise"]
    assert "np.sin" in _report(compiled).sources["kernels"]


def test_float32_stays_float32_with_python_scalars():
    def f(x):
        return np.sqrt(np.abs(x)) * 0.1 + 3

    same(f, floats(1000, dtype=np.float32))


def test_haversine_chain():
    def f(lat1, lon1, lat2, lon2):
        a = (
            np.sin((lat2 - lat1) / 2) ** 2
            + np.cos(lat1) * np.cos(lat2) * np.sin((lon2 - lon1) / 2) ** 2
        )
        return 6371.0 * 2 * np.arcsin(np.sqrt(a))

    same(f, *(floats(5000) for _ in range(4)))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint64])
def test_integer_arithmetic_wraps_as_numpy(dtype):
    def f(a, b):
        return a * b + a - b * 3, -a, a * a

    info = np.iinfo(dtype)
    a = RNG.integers(info.min, info.max, 2000, dtype=dtype, endpoint=True)
    b = RNG.integers(info.min, info.max, 2000, dtype=dtype, endpoint=True)
    same(f, a, b)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint16, np.float32, np.float64])
def test_floor_divide_and_remainder_signs_and_zero_divisors(dtype):
    def f(a, b):
        return a // b, a % b, np.fmod(a, b)

    if np.dtype(dtype).kind == "f":
        a = np.array([7.5, -7.5, 7.5, -7.5, 0.0, -0.0, np.inf, 1.0, np.nan, 3.0], dtype)
        b = np.array([2.0, 2.0, -2.0, -2.0, 3.0, 3.0, 1.0, 0.0, 1.0, np.inf], dtype)
    else:
        info = np.iinfo(dtype)
        a = np.array([7, 7, 0, 5, info.min, info.max, 9, 3, 1, 2], dtype=np.int64)
        b = np.array([2, 0, 3, 5, 1, 1, 4, 2, 1, 7], dtype=np.int64)
        if info.min < 0:
            a[[1, 3]], b[[0, 3]] = -7, -1
        a, b = a.astype(dtype), b.astype(dtype)
    same(f, a, b)


def test_int_min_divided_by_minus_one_wraps():
    def f(a, b):
        return a // b, a % b

    a = np.array([np.iinfo(np.int64).min, np.iinfo(np.int32).min], np.int64)
    same(f, a, np.array([-1, -1], np.int64))


def test_maximum_propagates_nan_and_fmax_ignores_it():
    def f(a, b):
        return np.maximum(a, b), np.minimum(a, b), np.fmax(a, b), np.fmin(a, b)

    a = np.array([1.0, np.nan, 3.0, np.nan, -0.0])
    b = np.array([np.nan, 2.0, 1.0, np.nan, 0.0])
    same(f, a, b)


def test_casts_follow_astype():
    def f(x, i):
        return (x * 300).astype(np.uint8), x.astype(np.int8), i.astype(np.float32), \
            (i > 0).astype(np.int16), x.astype(bool), (x * 1e6).astype(np.uint32)  # fmt: skip

    same(f, floats(500), ints(500))


def test_where_and_clip():
    def f(x, y, i):
        return np.where(x > 0, x, y * 2), np.clip(x, -0.5, 0.5), np.clip(i, -10, 10) * 3

    same(f, floats(64, 33), floats(64, 33), ints(64, 33))


def test_comparisons_and_logic_give_bools():
    def f(x, y):
        return (x > y) & ~(x == 0) | np.isnan(y), np.logical_xor(x > 0, y > 0)

    y = floats(200)
    y[::7] = np.nan
    same(f, floats(200), y)


# -- reductions --------------------------------------------------------------------------------


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1)])
def test_reductions_along_axes(axis):
    def f(x, i, b):
        return (x.sum(axis=axis), x.max(axis=axis), i.min(axis=axis), i.prod(axis=axis),
                b.any(axis=axis), b.all(axis=axis), x.mean(axis=axis))  # fmt: skip

    x = np.abs(floats(40, 30)) + 1  # positive: summation order changes no more than 1e-13
    same(f, x, ints(40, 30, low=-2, high=3), floats(40, 30) > -1.5)


def test_argmax_argmin_take_the_first_nan_and_the_first_extreme():
    def f(x):
        return x.argmax(axis=1), x.argmin(axis=1), x.max(axis=1), x.min(axis=1)

    x = np.array([[1.0, 3.0, 3.0, 2.0], [np.nan, 1.0, np.nan, 5.0], [2.0, 2.0, 2.0, 2.0],
                  [-np.inf, -np.inf, 0.0, np.inf]])  # fmt: skip
    same(f, x)


def test_var_and_std_keepdims():
    def f(x):
        return x.var(axis=0), x.std(axis=1, keepdims=True)

    same(f, np.abs(floats(50, 20)) + 1)


def test_softmax_rows_fuse_into_one_kernel():
    def softmax(x):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    compiled = same(softmax, floats(64, 100, dtype=np.float32))
    assert kinds(compiled) == ["reduction"]


def test_layer_norm_rows():
    def layer_norm(x, w, b):
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-5) * w + b

    same(layer_norm, floats(32, 64), floats(64), floats(64))


# -- layouts, views, broadcasts ----------------------------------------------------------------


def test_transposed_strided_and_reversed_inputs():
    def f(x, y):
        return x.T * 2 + y[::2, 1::3], x[::-1, :].sum(axis=0)

    same(f, floats(20, 30), floats(60, 60))


def test_caller_views_as_inputs():
    base = floats(50, 40)

    def f(x):
        return x * 3 + 1

    same(f, base[5:45:2, ::3])
    same(f, base.T)


def test_broadcasting_a_column_against_a_row():
    def f(col, row):
        return col[:, None] * row[None, :] + np.outer(col, row)

    same(f, floats(30), floats(17))


def test_stencil_by_slices():
    def f(u):
        return 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]) - u[1:-1, 1:-1]

    same(f, floats(70, 90))


def test_concatenate_and_stack():
    def f(a, b):
        return np.concatenate([a, b * 2], axis=1), np.stack([a, b])

    same(f, floats(10, 4), floats(10, 4))


# -- indexing and writes ---------------------------------------------------------------------


def test_gather_with_negative_indices():
    def f(x, idx):
        return x[idx] * 2

    same(f, floats(100), np.array([0, 5, -1, -100, 99, 3]))


def test_gather_out_of_range_raises_numpys_index_error():
    def f(x, idx):
        return x[idx] + 1

    compiled = tc.compile(f, backend=fused_backend)
    with pytest.raises(IndexError):
        compiled(floats(10), np.array([1, 10]))
    np.testing.assert_array_equal(compiled(np.arange(10.0), np.array([1, -10])), [2.0, 1.0])


def test_setitem_in_place_reaches_the_callers_array():
    def f(x, v):
        x[1:3] = 0
        x[:, 0] += v
        return x.sum()

    compiled = same(f, floats(6, 5), floats(6))
    x = np.ones((4, 3))
    compiled(x, np.arange(4.0))
    np.testing.assert_array_equal(x[:, 0], [1, 1, 2, 4])
    np.testing.assert_array_equal(x[1:3, 1:], 0)


def test_add_at_adds_repeated_indices():
    def f(x, idx, v):
        np.add.at(x, idx, v)
        return x

    same(f, np.zeros(10), np.array([1, 1, 3, 1, 9, 3]), floats(6))
    same(f, np.zeros(5, np.int32), np.array([0, 0, 4]), np.array([1, 2, 3], np.int32))


def test_a_scatter_keeps_the_indices_it_computes_until_it_runs():
    def f(a, i):
        np.add.at(a, i.astype(np.int32), a[0])  # indices and values computed by kernels first
        return a

    compiled = same(f, ints(600, 10), np.array([2, 2, 0, 599, 2]))
    plan = _report(compiled).sources["plan"]
    scatter = next(line for line in plan.splitlines() if "k_at(" in line)
    assert "astype" in scatter.split("reads", 1)[1], plan


def test_matmul_is_numpys_own_call():
    def f(a, b):
        return np.sin(a @ b) * 2 + 1

    compiled = same(f, floats(20, 30), floats(30, 10), externs=False)
    assert "np.matmul" in _report(compiled).sources["plan"]


# -- what runs elsewhere -----------------------------------------------------------------------


def test_an_op_numba_computes_otherwise_runs_in_numpy():
    def f(a, b):
        return np.left_shift(a, b) + 1

    compiled = same(f, ints(20, dtype=np.int32, low=0, high=40), ints(20, dtype=np.int32, low=0,
                                                                       high=40), externs=True)  # fmt: skip
    assert "extern" in kinds(compiled)


def test_errstate_raise_callers_get_numpys_error():
    def f(x):
        return x / 0.0

    compiled = tc.compile(f, backend=fused_backend)
    with np.errstate(divide="ignore"):
        compiled(np.ones(3))
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        compiled(np.ones(3))


# -- the kernels themselves ----------------------------------------------------------------------


def test_a_new_shape_reuses_the_kernel_source():
    def f(x):
        return np.cos(x) + x.max(axis=-1, keepdims=True)

    compiled = tc.compile(f, backend=fused_backend, dynamic=False)
    for shape in [(8, 5), (13, 7)]:
        x = floats(*shape)
        assert_same(compiled(x), f(x))
    runners = [e.report.compiled.fn for e in compiled.__tc_compiled__.entries]
    texts = {
        c.source.text for r in runners for p in r.programs.values() for c in p.compiled.values()
    }
    assert len(texts) == 1, texts


def test_sources_are_readable_with_the_users_lines():
    def f(x):
        return np.exp(x) * 2  # the user's line

    source = _report(same(f, floats(10))).sources["kernels"]
    assert "# the user's line" in source
    assert "* (part + 1) // parts)" in source and "@njit(nogil=True" in source
    assert "exp_float64(" in source or "np.exp(" in source  # libmvec's, where there is one


@pytest.mark.parametrize("n", [1, 3, 4, 7, 9, 130, 1000])
def test_row_reductions_of_every_length(n):
    """Rows cut into partial chains (max, min, integer sums) and pairwise blocks (float
    sums): every remainder, NaN in any position, integer sums that wrap."""

    def f(x, i):
        return x.max(axis=1), x.min(axis=1), x.sum(axis=1), i.sum(axis=1), i.prod(axis=1)

    x = floats(5, n)
    x[1, n - 1] = np.nan
    x[2, n // 2] = np.nan
    i = ints(5, n, dtype=np.int8, low=-128, high=127)
    compiled = same(f, x, i)
    np.testing.assert_array_equal(compiled(x, i)[2], f(x, i)[2])  # float sums: bit for bit


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_max_and_min_of_infinities_nans_and_zeros(dtype):
    """Float max and min run as LLVM's NaN-propagating maximum (vectorized): rows of only
    infinities, of only NaN, a NaN last, signed zeros (either zero is NumPy's too)."""

    def f(x):
        return x.max(axis=1), x.min(axis=1), x.max(), x.min(axis=0)

    rows = [[-np.inf] * 9, [np.inf] * 9, [np.nan] * 9, [1.0] * 8 + [np.nan], [-0.0, 0.0] * 4 + [0.0],
            list(range(9))]  # fmt: skip
    same(f, np.array(rows, dtype))
    same(f, np.array(rows[:2] + rows[4:], dtype))  # no NaN: the whole array's max is finite


def test_kernels_on_threads_match_numpy():
    """Spaces past `codegen.SMALL` run in parts on threads (rows; chunks with row buffers),
    smaller ones as one part: both are checked, and so is the first call (one part while
    numba compiles)."""

    def f(x, y, i):
        soft = np.exp(x - x.max(axis=1, keepdims=True))
        return (soft / soft.sum(axis=1, keepdims=True), (np.sin(x) + 2.5) * y[None, :],
                i.sum(axis=0), x.sum(), np.clip(i * 3, -50, 50))  # fmt: skip

    compiled = same(f, floats(300, 257), floats(257), ints(300, 257))
    assert "threads" in _report(compiled).sources["plan"]
    x = floats(300, 257)
    assert compiled(x, floats(257), ints(300, 257))[3] == x.sum()  # pairwise: bit for bit


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(4, 5), (4, 9), (3, 300), (300, 3)])
def test_float_sums_of_negative_zeros_are_positive_zero(dtype, shape):
    """NumPy adds its pairwise sum (started from -0.0) to the reduction's start, its identity
    +0.0: a sum of -0.0s is +0.0, in rows (pairwise), columns (in order) and whole arrays."""

    def f(x):
        return x.sum(axis=1), x.sum(axis=0), x.sum(), x.mean(axis=1), x.mean(), (x * 2).sum(axis=1)

    x = np.full(shape, -0.0, dtype)
    compiled = same(f, x)
    for got, want in zip(compiled(x), f(x)):
        assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), (got, want)


REDUCTIONS_OF_REDUCTIONS = {  # a reduction over the rows of row reductions: computed first
    "max_of_sums": lambda m: m.sum(axis=1).max(),
    "compared": lambda m: m.sum(axis=1).max() > 3.0,
    "and_the_rows": lambda m: (m.sum(axis=1).max(), m.sum(axis=1) * 2),
    "min_of_stds": lambda m: m.std(axis=1).min(),  # the std's mean inside the sum inside a min
    "centred": lambda m: (m - m.mean(axis=0)).std(axis=1).min(),
    "centred_rows": lambda m: (m - m.mean(axis=1, keepdims=True)).sum(axis=1).min(),
}


@pytest.mark.parametrize("name", list(REDUCTIONS_OF_REDUCTIONS))
def test_a_reduction_of_row_reductions(name):
    same(REDUCTIONS_OF_REDUCTIONS[name], RNG.standard_normal((40, 50)))


# -- selections reduced whole, masked ufuncs ------------------------------------------------------


def selections_reduced(x, k, t):
    m = x > t
    return ((x[m] > 0.5).any(), (x[m] < 5).all(), k[m].sum(), k[x < -t].prod(),
            x[m].sum(), np.mean(k[m]))  # fmt: skip


@pytest.mark.parametrize("t", [0.0, -10.0, 10.0], ids=["some", "all", "none"])
def test_a_selection_reduced_whole_is_a_masked_reduction(t):
    # none selected: sums give 0, prod 1, any False, all True; the mean nan (NumPy warns).
    # A float sum is NumPy's pairwise sum of the selected values alone
    compiled = same(selections_reduced, floats(40, 50), ints(40, 50, dtype=np.int32), t,
                    externs=True)  # fmt: skip
    steps = [(d.kind, d.name) for d in _report(compiled).details if hasattr(d, "kind")]
    assert "reduction" in [kind for kind, _ in steps], steps
    # the mean of ints is NumPy's (it sums float64s cast in buffers), of the selection a
    # compaction kernel makes
    assert [name for kind, name in steps if kind == "extern"] == ["extern mean"], steps
    assert "compaction" in [kind for kind, _ in steps], steps


def float_sums_of_selections(x, y, t):
    m = x > t
    return (
        x[m].sum(),
        (x[m] * 2.0 + y[m]).sum(),
        np.mean(x[m]),
        np.mean(y[x < 0].astype(np.float32)),
    )


@pytest.mark.parametrize("shape", [(7,), (40, 50), (100_001,)])
@pytest.mark.parametrize("t", [-10.0, 0.3, 10.0], ids=["all", "some", "none"])
def test_a_float_sum_of_a_selection_is_numpys_bit_for_bit(shape, t):
    """Each selected value is written to a row in order and summed pairwise (NumPy's
    ``x[m].sum()``): one kernel, no NumPy on the host, every bit NumPy's."""
    x, y = floats(*shape), floats(*shape)
    compiled = tc.compile(float_sums_of_selections, backend=fused_backend, fullgraph=True)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        want = float_sums_of_selections(x, y, t)
        for _ in range(2):  # the first call runs the trace's NumPy
            got = compiled(x, y, t)
    assert [type(v) for v in got] == [type(v) for v in want]
    assert [np.asarray(v).tobytes() for v in got] == [np.asarray(v).tobytes() for v in want]
    assert "extern" not in kinds(compiled), _report(compiled).details


def extremes_of_selections(x, k):
    m = x > 0.5
    return x[m].max(), x[m].min(), k[m].max(), k[x < 0].min(), (x[m] > 1).max()


def test_the_extremes_of_a_selection_are_masked_reductions_that_raise_where_it_is_empty():
    x, k = floats(40, 50), ints(40, 50, dtype=np.int16)
    assert "reduction" in kinds(same(extremes_of_selections, x, k))
    compiled = tc.compile(extremes_of_selections, backend=fused_backend)
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        compiled(x * 0, k)  # nothing selected: NumPy's error, from the eager rerun
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mean = tc.compile(lambda v: np.mean(v[v > 0.5]), backend=fused_backend)(x * 0)
    assert np.isnan(mean) and "Mean of empty slice" in [str(w.message) for w in caught]


def selections_then_written(k, w, m):
    t = k[m]
    u = k[m] * 3
    m[:] = True  # the selections were made before: reduced after, they still see the old mask
    w[m] = 1
    return t.sum(), u.max(), (k[m] + 1).max(), w


def test_a_selection_reduced_after_a_write_is_made_before_it():
    k = ints(300)
    compiled = same(selections_then_written, k, ints(300), k > 0, externs=True)
    steps = [(d.kind, d.name) for d in _report(compiled).details if hasattr(d, "kind")]
    assert ("extern", "extern getitem") in steps, steps  # t and u: made in NumPy, in their place
    assert "reduction" in [kind for kind, _ in steps], steps  # the last one: a masked max


def casts_to_every_integer_type(x, f):
    return (x.astype(np.int64), x.astype(np.uint64), x.astype(np.int32), x.astype(np.uint32),
            x.astype(np.int16), x.astype(np.uint8), f.astype(np.int64), f.astype(np.int8))  # fmt: skip


def cast_and_back(x, m):
    return (x.astype(np.int64) * 1.0).sum(), np.mean((x[m] * 2.0).astype(np.int64) + 1.0)


def test_a_float_cast_to_an_integer_is_numpys_past_the_integer_types_bounds():
    """NaN, infinities and 1e30 cast to an integer: NumPy gives the machine's value (with a
    warning), numba's conversion is undefined there (LLVM folded ``float(int(x))`` into ``x``:
    NaN where NumPy gave -2**63). Those calls run in NumPy; values within the bounds, in the
    kernels (negative ones into unsigned types too)."""
    x = floats(3000) * 300.0
    inside = casts_to_every_integer_type(x, x.astype(np.float32))
    same(casts_to_every_integer_type, x, x.astype(np.float32))
    same(cast_and_back, x, x > 0, externs=True)  # a selection's cast is made in NumPy
    x[::7], x[3::11], x[5::13], x[6::17], x[8::19] = np.nan, np.inf, 1e30, -3e9, -1e19
    same(casts_to_every_integer_type, x, x.astype(np.float32))
    same(cast_and_back, x, x > 0, externs=True)
    assert inside[1].max() > 2**63, "negative values were cast to uint64 in the kernels"


def writes_through_views_made_in_numpy(x, k, m):
    y = x * 2.0  # computed before the writes: the old values
    np.flip(x)[:1] = 5.0  # np.flip is no kernel: its view, written, must still be x's memory
    np.asarray(k)[m] += 2
    return y.sum(), x, k


def test_a_write_through_a_view_numpy_makes_reaches_the_array():
    x = floats(3000)
    compiled = same(writes_through_views_made_in_numpy, x, ints(3000), x > 0, externs=True)
    assert kinds(compiled) == ["extern"], "the graph runs in NumPy: no kernel writes the view"


def sized_by_data(x):
    y = np.sin(x) * 2 + 1
    sel = y[y > 1.5]  # a compaction kernel; its length, NumPy on the host
    return sel * 3, len(sel), y.sum(), np.nonzero(x > 0)[0] + 1


@pytest.mark.parametrize("positives", [True, False])
def test_what_sizes_follow_data_runs_in_numpy_and_the_rest_in_kernels(positives):
    x = np.abs(floats(3000)) * (1 if positives else -1)
    compiled = same(sized_by_data, x, externs=True)
    steps = [(d.kind, d.notes[0] if d.notes else "") for d in _report(compiled).details
             if hasattr(d, "kind")]  # fmt: skip
    assert "reduction" in [kind for kind, _ in steps] or "pointwise" in [k for k, _ in steps]
    externs = [why for kind, why in steps if kind == "extern"]
    assert externs and all("size follows array values" in why for why in externs), steps
    assert "compaction" in [kind for kind, _ in steps], steps


def masked_ufuncs(a, b, out, m):
    np.add(a, b, out=out, where=m)  # elsewhere out keeps its values
    np.multiply(a, 3, out=out, where=~m)
    return out


def test_a_ufunc_with_where_writes_only_where_the_mask_holds():
    a = floats(3000)
    same(masked_ufuncs, a, floats(3000), np.zeros(3000), a > 0)
    same(lambda k, out, m: np.add(k, 1, out=out, where=m), ints(300), np.ones(300), a[:300] > 0)
