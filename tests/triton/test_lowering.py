"""The Triton backend's lowering rules, differentially: each function runs eagerly and compiled
with ``backend="triton"`` (real kernels, under Triton's interpreter without a GPU), and the
results must match NumPy's: dtype and shape exactly, integers and bools bitwise, floats within a
few ULP. Each case also names how it must lower (which kernels, no extern), so a rule that
silently fell back to NumPy fails."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from requires_triton import require_triton  # noqa: E402

require_triton()

import tcompile as tc  # noqa: E402

rng = np.random.default_rng(7)
F = rng.standard_normal((6, 10))
F32 = rng.standard_normal((5, 12)).astype(np.float32)
INTS = rng.integers(-20, 20, (6, 10))
I8 = rng.integers(-128, 127, (4, 9), dtype=np.int8)
U = rng.integers(0, 255, (4, 9), dtype=np.uint8)
B = rng.random((6, 10)) > 0.5
V = rng.standard_normal(10)
ROW = rng.standard_normal((3, 300))


def compile_and_run(fn, *args):
    """(compiled result, eager result, the compile's report); tcompile may not warn."""
    eager_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    compiled_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    expected = fn(*eager_args)
    compiled = tc.compile(fn, backend="triton", fullgraph=True)
    with warnings.catch_warnings(record=True) as caught:  # recorded: raised, the glue's eager
        warnings.simplefilter("always")  # rerun would take the exception and hide it
        got = compiled(*compiled_args)
    assert not [str(w.message) for w in caught if "tcompile" in str(w.message)]
    report = compiled.__tc_compiled__.entries[-1].report
    for e, c in zip(eager_args, compiled_args):  # in-place updates land in the caller's arrays
        assert_close(c, e)
    return got, expected, report


def assert_close(got, expected, ulps: int = 4):
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
        for g, e in zip(got, expected):
            assert_close(g, e, ulps)
        return
    assert type(got) is type(expected), (type(got), type(expected))
    if isinstance(expected, (np.ndarray, np.generic)):
        assert got.dtype == expected.dtype and np.shape(got) == np.shape(expected)
        if expected.dtype.kind in "biu":
            assert np.array_equal(got, expected)
        else:
            tolerance = ulps * np.finfo(expected.dtype).eps
            assert np.allclose(got, expected, rtol=tolerance, atol=tolerance, equal_nan=True), (
                got, expected)  # fmt: skip
    else:
        assert got == expected


def kinds(report) -> list[str]:
    return [d.kind for d in report.compiled.details if hasattr(d, "kind")]


def kernels(report) -> list[str]:
    return [k for k in kinds(report) if k != "extern"]


CASES = {
    # pointwise: ufuncs with NumPy's dtypes, broadcasting, Python scalars (NEP 50)
    "outer": (lambda v, x: (np.outer(v, x[0]) + 1, np.outer(x[:2], v[:3])), (V, F), ["pointwise"]),
    "outer_ints_and_floats": (lambda a, u: np.outer(a[0], u[0]) * 0.5, (INTS, U), ["pointwise"]),
    "chain": (lambda x, v: np.sin(x) * 2.5 + v - np.exp(-x * x), (F, V), ["pointwise"]),
    "float32_stays": (lambda x: x * 2.5 + np.float32(1) / (x + 3), (F32,), ["pointwise"]),
    "int_arith": (lambda a: (a * 7 - 3) // 4 + a % 5 - (-a) // 3, (INTS,), ["pointwise"]),
    "int8_wraps": (lambda a: a * a + np.int8(100), (I8,), ["pointwise"]),
    "uint8_mixed": (lambda u, a: u + a, (U, I8), ["pointwise"]),
    "true_divide_ints": (lambda a: a / 7, (INTS,), ["pointwise"]),
    "compare_logic": (lambda x, a: (x > 0) & (a < 3) | ~(x < -1), (F, INTS), ["pointwise"]),
    "bools": (lambda b: b ^ np.logical_not(b) | b, (B,), ["pointwise"]),
    "maximum_nan": (
        lambda x: np.maximum(x, np.nan * (x > 1)) + np.fmin(x, 0.5),
        (F,),
        ["pointwise"],
    ),
    "where": (lambda x, v: np.where(x > 0, x, v), (F, V), ["pointwise"]),
    "where_scalar": (lambda x: np.where(x > 0, 1.0, -2), (F,), ["pointwise"]),
    "clip": (lambda x: np.clip(x, -0.5, 0.25), (F,), ["pointwise"]),
    "clip_int": (lambda a: np.clip(a, -3, 4), (INTS,), ["pointwise"]),
    "astype": (lambda x: x.astype(np.float32) * 3 + x.astype(np.int16), (F * 50,), ["pointwise"]),
    "square_sqrt": (lambda x: x**2 + np.abs(x) ** 0.5, (F,), ["pointwise"]),
    "ufunc_where": (lambda x, o: np.add(x, 1, out=o, where=x > 0), (F, F * 0), ["pointwise"]),
    "divmod": (lambda a: np.divmod(a, 3), (INTS,), ["pointwise"]),
    # reductions over any axes, keepdims, dtype=
    "sum_rows": (lambda x: x.sum(axis=1), (F,), ["reduction"]),
    "sum_cols": (lambda x: x.sum(axis=0), (F,), ["reduction"]),
    "sum_all": (lambda x: x.sum(), (F,), ["reduction"]),
    "sum_keepdims": (lambda x: x.sum(axis=(0, 1), keepdims=True), (F,), ["reduction"]),
    "sum_int8": (lambda a: a.sum(axis=1), (I8,), ["reduction"]),
    "sum_bool": (lambda b: b.sum(), (B,), ["reduction"]),
    "sum_dtype": (lambda a: a.sum(axis=0, dtype=np.float32), (INTS,), ["reduction"]),
    "prod": (lambda a: (a % 3 + 1).prod(axis=1), (INTS,), ["reduction"]),
    "max_min": (lambda x: (x.max(axis=0), x.min(axis=1)), (F,), ["reduction"]),
    "max_nan": (lambda x: np.where(x > 1.5, np.nan, x).max(axis=1), (F,), ["reduction"]),
    "mean": (lambda x: x.mean(axis=0), (F,), ["reduction"]),
    "mean_int": (lambda a: a.mean(), (INTS,), ["reduction"]),
    "var_std": (lambda x: (x.var(axis=1), x.std(axis=0, ddof=1)), (F,), ["reduction"]),
    "argmax_argmin": (
        lambda x: (x.argmax(axis=1), x.argmin(axis=0), x.argmax()),
        (F,),
        ["reduction"],
    ),  # fmt: skip
    "argmax_nan": (lambda x: np.where(x > 1.5, np.nan, x).argmax(axis=1), (F,), ["reduction"]),
    "any_all": (lambda x: (np.any(x > 2, axis=1), np.all(x > -3)), (F,), ["reduction"]),
    "max_of_row_sums": (lambda x: (x.sum(axis=1).max(), x.std(axis=1).min()), (F,), ["reduction"]),
    "centred_std_min": (lambda x: (x - x.mean(axis=0)).std(axis=1).min(), (F,), ["reduction"]),
    "masked_reductions": (  # the selections' sizes follow data: reductions with a mask
        lambda x: (
            x[x > 0].sum(),
            np.mean(x[x > 0.5]),
            (x[x < 0] * 2).prod(),
            x[x > 9].any(),
            x[x > 0].max(),
            x[x < 0.5].min(),
        ),
        (F,),
        ["reduction"],
    ),
    "long_rows": (lambda r: r.sum(axis=1) / r.max(axis=1), (np.abs(ROW) + 1,), ["reduction"]),
    # views: slices (negative steps), transposes, reshapes, expand_dims, squeeze, broadcast_to
    "slices": (lambda x: x[::-1, 1:8:3] * 2, (F,), ["pointwise"]),
    "transpose": (lambda x: x.T + x.T[::2].sum(axis=0), (F,), ["pointwise", "reduction"]),
    "reshape": (lambda x: x.reshape(3, 20)[1:] + 1, (F,), ["pointwise"]),
    "expand_squeeze": (lambda x: np.squeeze(np.expand_dims(x, 1) * 2, 1), (F,), ["pointwise"]),
    "broadcast_to": (lambda v: np.broadcast_to(v, (4, 10)) * 3, (V,), ["pointwise"]),
    "int_index": (lambda x: x[2] + x[:, -1].sum(), (F,), ["pointwise", "reduction"]),
    # gathers, stores into the caller's arrays, in-place updates
    "gather": (lambda x, i: x[i] * 2, (F, np.array([0, 5, -1, 2, 2])), ["pointwise"]),
    "slice_store": (lambda x, v: _store(x, v), (F, V), ["pointwise"]),
    "inplace": (lambda x, v: _iadd(x, v), (F, V), ["pointwise"]),
    "shifted_store": (lambda x: _shift(x), (F,), ["pointwise", "pointwise"]),
    # np.add.at: atomic adds, repeated and negative indices
    "add_at": (
        lambda h, i, w: _add_at(h, i, w),
        (V, np.array([0, 3, 3, -1, 3]), V[:5]),
        ["scatter"],
    ),
    "add_at_rows": (lambda x, i: _add_at(x, i, 1.5), (F, np.array([5, 0, 5, -6])), ["scatter"]),
    "add_at_row_values": (
        lambda x, i, v: _add_at(x.T, i, v),
        (F, np.array([1, 1, 2]), V[:6]),
        ["scatter"],
    ),
    "add_at_ints": (
        lambda a, i: _add_at(a, i.astype(np.int32), a[0]),
        (INTS, np.array([2, 2, 0])),
        ["scatter"],
    ),
    "add_at_float32": (
        lambda x, i, w: _add_at(x[0], i, w),
        (F32, np.array([1, 1, 4]), F[0, :3]),
        ["scatter"],
    ),
    "add_at_reads_itself": (
        lambda h, i: _add_at(h, i, h[::-1] * 2),
        (V, np.arange(10) % 3),
        ["scatter"],
    ),
    "histogram": (lambda i: _histogram(i), (np.array([3, 1, 3, 3, 0, 7]),), ["scatter"]),
}


def _add_at(target, indices, values):
    np.add.at(target, indices, values)
    return target.sum() if target.ndim == 1 else target


def _histogram(indices):
    counts = np.zeros(8, dtype=np.int64)
    np.add.at(counts, indices, 1)
    return counts * 2


def _store(x, v):
    x[1:3] = v * 2
    return x


def _iadd(x, v):
    x += v
    x *= 2
    return x.sum()


def _shift(x):
    x[1:] = x[:-1]  # reads what it overwrites: through a temporary, as NumPy
    return x


@pytest.mark.parametrize("name", list(CASES))
def test_each_lowering_rule_matches_numpy(name):
    fn, args, expected_kinds = CASES[name]
    got, expected, report = compile_and_run(fn, *args)
    assert_close(got, expected)
    assert "extern" not in kinds(report), report.compiled.details
    for kind in set(expected_kinds):
        assert kind in kernels(report), (kind, kinds(report))


def test_what_kernels_cannot_do_runs_in_numpy_as_a_marked_extern():
    def f(x):
        return np.sort(x, axis=1) + 1, np.linalg.det(x[:3, :3])

    got, expected, report = compile_and_run(f, F)
    assert_close(got, expected)
    externs = [d for d in report.compiled.details if getattr(d, "kind", "") == "extern"]
    assert [e.name for e in externs] == ["extern sort", "extern det"]
    assert all(e.notes and e.notes[0] for e in externs)


def test_an_index_out_of_range_raises_numpys_error():
    f = tc.compile(lambda x, i: x[i] + 1, backend="triton")
    f(F, np.array([0, 1]))
    with pytest.raises(IndexError, match="out of bounds"):
        f(F, np.array([0, 60]))


@pytest.mark.parametrize("shape", [(1,), (1, 3)])
def test_an_index_into_one_element_is_checked_too(shape):
    x = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    f = tc.compile(lambda x, i: x[i] * 2, backend="triton")
    assert np.array_equal(f(x, np.array([0, -1])), x[[0, -1]] * 2)
    for bad in ([3], [-2]):
        with pytest.raises(IndexError, match="out of bounds"):
            f(x, np.array(bad))


@pytest.mark.parametrize("shape", [(5,), (1,), (4, 3)])
def test_np_add_at_out_of_range_raises_and_leaves_the_target(shape):
    def f(h, i):
        np.add.at(h, i, 1.0)
        return h

    h = np.zeros(shape)
    compiled = tc.compile(f, backend="triton")
    compiled(h, np.array([0, 0]))
    with pytest.raises(IndexError, match="out of bounds"):
        compiled(h, np.array([0, shape[0]]))
    want = np.zeros(shape)
    np.add.at(want, [0, 0], 1.0)
    try:  # NumPy itself may have added the indices before the bad one
        np.add.at(want, [0, shape[0]], 1.0)
    except IndexError:
        pass
    assert np.array_equal(h, want)


def test_an_integer_to_a_negative_power_raises_numpys_error():
    f = tc.compile(lambda a, b: a**b, backend="triton")
    assert np.array_equal(f(INTS, np.abs(INTS) % 4), INTS ** (np.abs(INTS) % 4))
    with pytest.raises(ValueError, match="negative integer powers"):
        f(INTS, INTS)


def test_a_new_shape_reuses_the_kernels():
    f = tc.compile(lambda x: np.exp(x).sum(axis=1), backend="triton", dynamic=True)
    assert_close(f(F), np.exp(F).sum(axis=1))
    assert_close(f(ROW), np.exp(ROW).sum(axis=1))
    runner = f.__tc_compiled__.entries[-1].report.compiled.fn
    sources = {c.source.text for p in runner.programs.values() for c in p.compiled.values()}
    assert len(runner.programs) == 2 and len(sources) == 1


def test_kernels_bind_names_in_statements_not_walruses():
    """Rules that name a value (floor division, modf) bind it with a walrus in their expression;
    Triton's compiler (3.6 on the H200) rejects the walrus, so the kernel's source assigns it
    in a statement of its own."""

    def f(x, y):
        return x // y, np.modf(x)[0] * np.remainder(x, y)

    got, expected, report = compile_and_run(f, F, F[0] + 2.0)
    assert_close(got, expected)
    runner = report.compiled.fn
    sources = [c.source.text for p in runner.programs.values() for c in p.compiled.values()]
    assert sources and not any(":=" in text for text in sources)


@pytest.mark.parametrize("dtype", ["f8", "f4", "i8", "i4", "i1", "u1", "u8", "?"])
def test_dtypes_of_every_kind(dtype):
    x = (F * 10).astype(dtype)

    def f(x):
        return x * 2 + 1, x.max(axis=0), x[::-1].sum()

    got, expected, _ = compile_and_run(f, x)
    assert_close(got, expected)


def test_matmul_and_scans_run_in_the_array_librarys_kernels():
    def f(x, w, v):
        return x @ w, np.dot(v, w), np.cumsum(x, axis=1), np.cumprod(INTS[:3], axis=0), x.cumsum()

    w = rng.standard_normal((10, 4))
    got, expected, report = compile_and_run(f, F, w, V)
    assert_close(got, expected, ulps=64)
    assert "extern" not in kinds(report)
    assert "torch.matmul" in report.compiled.sources["plan"]
    assert "torch.cumsum" in report.compiled.sources["plan"]


def test_copies_and_joins_are_kernels():
    def f(x, v):
        return (x.copy(), np.copy(x.T), (x * 2).flatten(), np.concatenate([x, x[:2] + 1], axis=0),
                np.stack([v, v * 2, -v], axis=1), np.concatenate((x.T, x.T), axis=1))  # fmt: skip

    got, expected, report = compile_and_run(f, F, V)
    assert_close(got, expected)
    assert "extern" not in kinds(report)


def test_joins_with_empty_parts():
    got, expected, _ = compile_and_run(lambda a, b: np.concatenate([a, b, a]), V, V[:0])
    assert_close(got, expected)
    got, expected, _ = compile_and_run(lambda a: np.concatenate([a, a]), V[:0])
    assert_close(got, expected)


def test_float16_sums_stay_close_to_numpys():
    x = np.random.default_rng(5).random(4000).astype(np.float16)
    got, expected, _ = compile_and_run(lambda x: (x.sum(), x.reshape(40, 100).sum(axis=1)), x)
    assert got[0].dtype == np.float16 and abs(float(got[0]) - float(expected[0])) <= 2.0
    assert np.allclose(got[1], expected[1], rtol=2e-3)


@pytest.mark.parametrize("rows", [3, 5000])  # one block per column, and a loop over its rows
def test_a_reduction_of_what_uses_an_earlier_one_over_the_same_rows(rows):
    """The variance's second pass reads each element again next to the first pass's mean: in
    the looped form its body depends on the rows (found at the H200's first run of bench/gpu.py,
    column_stats: the body was moved out of its loop and the kernel failed to build)."""

    def column_stats(x):
        mean = x.mean(axis=0)
        return mean, np.sqrt(((x - mean) ** 2).mean(axis=0))

    x = np.random.default_rng(3).standard_normal((rows, 3))
    got, expected, report = compile_and_run(column_stats, x)
    assert_close(got, expected, ulps=64)
    assert kernels(report) and "extern" not in kinds(report)


def test_a_reduction_over_no_axes_is_each_element_alone():
    """``np.sum(x, axis=())`` reduces each element alone: the elements in the result's dtype
    (a kernel had a reduction over zero variables, and its source named an undefined rmask)."""

    def f(x, b):
        return (np.sum(x, axis=()), np.prod(x * 2, axis=(), keepdims=True), np.max(x, axis=()),
                x.mean(axis=()), x.var(axis=()), np.any(x, axis=()), b.sum(axis=()))  # fmt: skip

    got, expected, report = compile_and_run(f, INTS, B)
    assert_close(got, expected)
    assert "extern" not in kinds(report)


def _set_first(a, y):
    a[0] = y.max()
    a[2:] = y[1]
    return a


@pytest.mark.parametrize(
    ("dtype", "good", "bad", "error"),
    [
        (np.int64, [1.5, -2.5], [np.nan, 1.0], "cannot convert float NaN"),
        (np.int64, [1.5, -2.5], [np.inf, 1.0], "cannot convert float infinity"),
        (np.int64, [1.5, -2.5], [-(2.0**63), 2.0**63], "too large to convert to C long"),
        (np.int32, np.array([7.0, -5.0], np.float32), [1.0, np.nan], "cannot convert float NaN"),
        (np.int8, np.array([127, -128]), [1, 128], "Python integer 128 out of bounds for int8"),
        (np.int8, np.array([-128, -100]), [-129, -130], "Python integer -129 out of bounds"),
        (np.int64, np.array([5, 2**63 - 1], np.uint64), [1, 2**63], "too large to convert"),
    ],
)
@pytest.mark.filterwarnings("ignore:invalid value encountered in cast")  # the interpreter's cast
def test_a_numpy_scalar_assigned_into_integers_raises_where_numpy_does(dtype, good, bad, error):
    """A NumPy scalar assigned to items converts as a Python number: NaN, infinity and values
    out of the target's range raise. The kernel checks it, raising the error flag, and the
    frame runs again in NumPy (before, the kernel cast silently)."""
    good = np.asarray(good)
    a = np.arange(4, dtype=dtype)
    got, expected, report = compile_and_run(_set_first, a, good)
    assert_close(got, expected)
    assert kernels(report) and "extern" not in kinds(report)
    compiled = tc.compile(_set_first, backend="triton")
    compiled(a.copy(), good)
    with pytest.raises((ValueError, OverflowError), match=error):
        compiled(a, np.asarray(bad, good.dtype))
    assert np.array_equal(a, np.arange(4, dtype=dtype))


def test_a_python_number_assigned_into_integers_converts_as_numpy():
    """``a[0] = 1.5`` stores 1 (the constant is converted when the plan is made; it failed in
    the kernel source, which takes integers only for an integer dtype)."""

    def f(a, b):
        a[0] = 1.5
        a[1:3] = -2.75
        b[0] = 3.9
        return a, b

    got, expected, report = compile_and_run(f, INTS[0].copy(), U[0].copy())
    assert_close(got, expected)
    assert "extern" not in kinds(report)


def test_an_extern_takes_a_numpy_scalar_computed_in_a_kernel_as_one():
    """``a.fill(y.max())`` runs in NumPy, on the NumPy scalar the trace saw: NaN into an
    integer array raises there (given the 0-d array of the kernel's result, it cast silently)."""

    def f(a, y):
        a.fill(y.max())
        return a

    a = np.arange(4)
    compiled = tc.compile(f, backend="triton")
    assert np.array_equal(compiled(a.copy(), np.array([1.0, 2.5])), [2, 2, 2, 2])
    with pytest.raises(ValueError, match="cannot convert float NaN to integer"):
        compiled(a, np.array([1.0, np.nan]))
    assert np.array_equal(a, np.arange(4))


def test_results_keep_numpys_memory_order_when_sizes_are_dynamic():
    """``x.T + 1`` and ``(x * 2).T`` are Fortran-ordered at any size: a graph traced again for
    dynamic sizes (the second shape) lays results out in the order its examples had (they came
    out C-ordered: the meta of a value of symbolic size said nothing of its layout)."""

    def f(x):
        return x.T + 1, (x * 2).T

    compiled = tc.compile(f, backend="triton")
    for shape in [(2, 3), (3, 4), (5, 6)]:
        x = np.arange(float(np.prod(shape))).reshape(shape)
        for got, want in zip(compiled(x), f(x)):
            assert_close(got, want)
            assert got.flags.c_contiguous == want.flags.c_contiguous
            assert got.flags.f_contiguous == want.flags.f_contiguous
    assert len(compiled.__tc_compiled__.entries) == 2  # one static graph, one dynamic


def test_a_view_of_a_computed_value_is_numpys_view_of_it():
    """A result NumPy makes as a view of a temporary (``np.broadcast_to(x * 2, s)``,
    ``t[::-1]``, ``t.T``) has NumPy's strides and flags: read-only and not contiguous for
    broadcast_to (it was a dense, writeable copy), and a view of ``t`` where ``t`` is
    returned too."""

    def f(x):
        t = x * 2
        return np.broadcast_to(t[0], (3, 10)), (x - 1)[::-1, ::2], (x + 1).T[1:], t, t.T

    got, expected, report = compile_and_run(f, F)
    assert_close(got, expected)
    assert "extern" not in kinds(report)
    for g, e in zip(got, expected):
        assert (g.strides, g.flags.writeable) == (e.strides, e.flags.writeable)
        assert g.flags.c_contiguous == e.flags.c_contiguous
        assert g.flags.f_contiguous == e.flags.f_contiguous
    assert np.shares_memory(got[3], got[4]) and np.shares_memory(got[0], got[3])


def test_an_extern_takes_numpys_memory_of_a_computed_value():
    """NumPy runs an extern on arrays laid out as its own would be: ``(x * 2).T`` is a
    Fortran-ordered view, so ``np.sort`` gives a Fortran-ordered result (given a C-ordered
    copy, it gave a C-ordered one)."""

    def f(x):
        return np.sort((x * 2).T, axis=1), np.sort(np.exp(x.T)[::2], axis=0)

    got, expected, report = compile_and_run(f, F)
    assert_close(got, expected)
    assert [k for k in kinds(report) if k == "extern"] == ["extern", "extern"]
    for g, e in zip(got, expected):
        assert g.flags.c_contiguous == e.flags.c_contiguous
        assert g.flags.f_contiguous == e.flags.f_contiguous


def test_a_loop_takes_a_reversed_view_of_a_computed_value_in_memory_of_its_own():
    """A loop's body takes device views, which have no negative strides: ``(x * 2)[::-1]``
    reaches it computed into memory of its own, not as a view of ``x * 2`` (as externs take
    it), which torch refused, failing the call."""

    def f(x):
        a = (x * 2)[::-1]
        s = np.zeros(3)
        for i in range(3):
            s = s + a[i]
        return s

    x = F[:4, :3].copy()
    compiled = tc.compile(f, backend="triton", fullgraph=True)
    assert_close(compiled(x), f(x))
    graph_fn = compiled.__tc_compiled__.entries[-1].report.compiled.fn
    (got,) = graph_fn(x)  # the graph itself: a failing call would run again in NumPy, unseen
    assert_close(got, f(x))


def _sum_read_by_host_and_returned(x):
    s = x.sum()
    return ascii(s), s  # ascii() runs on the host (an extern) and reads s there


def test_a_scalar_a_host_step_read_is_returned_as_a_numpy_scalar():
    # the host copy the extern read is a 0-d array: the result is the scalar the trace saw
    x = np.arange(4.0)
    text, s = tc.compile(_sum_read_by_host_and_returned, backend="triton")(x)
    assert (text, type(s), s) == ("np.float64(6.0)", np.float64, 6.0)


def test_a_scatter_reads_the_indices_it_computes_so_they_live_until_it_runs():
    # the indices' buffer was missing from the scatter's reads: the plan let go of it after the
    # kernel making it, and the scatter read whatever a new buffer held (seed-dependent)
    fn, args, _ = CASES["add_at_ints"]
    _, _, report = compile_and_run(fn, *args)
    scatter = next(line for line in report.compiled.sources["plan"].splitlines() if "k_at(" in line)
    assert "astype" in scatter.split("reads", 1)[1].split("writes")[0], scatter


def test_what_sizes_follow_data_runs_in_numpy_and_the_rest_in_kernels():
    def f(x):
        y = np.sin(x) * 2 + 1
        sel = y[y > 1.5]
        return sel * 3, len(sel), y.sum(), np.nonzero(x > 0)[0] + 1

    for x in (F, -np.abs(F)):
        got, expected, report = compile_and_run(f, x)
        assert_close(got, expected)
        steps = [(d.kind, d.notes[0] if d.notes else "") for d in report.compiled.details
                 if hasattr(d, "kind")]  # fmt: skip
        assert {"pointwise", "reduction"} & {kind for kind, _ in steps}, steps
        assert all("size follows array values" in why for kind, why in steps if kind == "extern")
