"""Compiled functions on Dask arrays, differentially: each case runs plainly on the same Dask
arrays (Dask's own operations) and compiled (chunk kernels where the graph is chunk-local);
results must be lazy Dask arrays, bitwise equal to plain Dask's with the eager per-chunk backend
(or, where plain Dask's differs from NumPy's in the last bits, as after ``np.roll`` re-chunks
an axis that a ``cumsum`` then sums chunk by chunk, bitwise equal to NumPy's) and within
tolerance with the CPU backend, equal to NumPy's on the same data, and built from no more tasks
than plain Dask's."""

from __future__ import annotations

import re
import warnings

import dask
import dask.array as da
import numpy as np
import pytest

import tcompile as tc
from tcompile.backend.dask.runner import task_count


def softmax_rows(x):
    m = x.max(axis=1, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(axis=1, keepdims=True)


def transcendental_chain(x, y):
    return np.sqrt(np.sin(x) ** 2 + np.cos(y) ** 2 * 0.5) + np.arctan2(x, 1.5)


def column_sums(x):
    return np.sum(np.abs(x) * 2.0 + 1.0, axis=0)


def row_norms(x):
    return np.sqrt((x * x).sum(axis=1, keepdims=True))


def row_sums(x, w):
    return (np.exp(x * 0.5) * w).sum(axis=1), np.max(x + 1.0, axis=-1)


def broadcast_affine(x, w, c):
    return x * w + c


def scaled(x, alpha):
    return np.tanh(x * alpha) - alpha


def mean_and_matmul(x):
    centred = x - x.mean(axis=0, keepdims=True)
    return centred, centred.T @ centred


def roll_stencil(u, steps):
    for _ in range(steps):
        u = 0.25 * (np.roll(u, 1, 0) + 2 * u + np.roll(u, -1, 0))
    return u


def stencil_along_rows(u):
    for _ in range(3):
        u = 0.25 * (np.roll(u, 1, 1) + 2 * u + np.roll(u, -1, 1))
    inner = u[:, 2:] - 2 * u[:, 1:-1] + u[:, :-2]
    return inner, np.cumsum(u, axis=-1), np.flip(u[..., ::2], axis=1), np.diff(u, axis=1)


def periodic_heat(u, alpha):
    for _ in range(4):
        lap = np.roll(u, 1, 0) + np.roll(u, -1, 0) + np.roll(u, 1, 1) + np.roll(u, -1, 1)
        u = u + alpha * (lap - 4 * u)
    return u


def far_roll(u):
    return np.roll(u, 70, axis=0) * 2.0  # 70 > the shortest chunk (60): no halo that long


def laplacian(u):
    return u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1]


def laplacian_by_sizes(u):
    n, m = u.shape  # bounds computed from the sizes: the same slices once planned
    return u[2:n, 1 : m - 1] + u[0 : n - 2, 1 : m - 1] - 2 * u[1 : n - 1, 1 : m - 1]


def shrinking_smoother(u):
    for _ in range(3):  # each step two rows shorter: a halo of 3 rows before and after
        u = 0.25 * (u[2:] + 2 * u[1:-1] + u[:-2])
    return u


def shifted_differences(u):
    return u[:-2] * 2 + u[2:], u[1:] - u[:-1]


def slice_used_twice(u):
    a = u[2:]  # used by two regions: each of its users' windows is a grid of its own
    return a + u[:-2], a * 2


def rows_times_vector(u, w):
    return u[1:, :] * w + u[:-1]  # w (1-D) broadcast along the rows the slices cut


def slices_and_row_sums(u):
    return u[1:-1, 2:] * u[1:-1, :-2] + np.exp(u[2:, 1:-1].sum(axis=1, keepdims=True))


def tree_reductions(x):
    return ((x * x).sum(), np.max(x + 1), np.any(x > 2.5, axis=0),
            np.prod(x * 0.1 + 1, axis=0, keepdims=True), (x * 3).astype(np.int32).sum(axis=0))  # fmt: skip


def stencil_sums(u):
    return (u[2:] + u[:-2]).sum(axis=0), (np.roll(u, 1, 0) + u).sum(axis=0)


def masked_total(x):
    return x[x > 0].sum() + x.max()


def int_chain(x):
    return (x * 3 + 7) // 2 % 5


def where_clip(x):
    return np.where(x > 0, np.clip(x, 0, 0.5), x * 0.1)


def branch_on_data(x):
    if x.sum() > 0:
        return x * 2
    return x - 1


RNG = np.random.default_rng(7)
A = RNG.standard_normal((240, 90))
B = RNG.standard_normal((240, 90))
EVEN = ((60, 60, 60, 60), (90,))
UNEVEN = ((100, 80, 60), (50, 40))


# A sum across chunks adds chunk by chunk: its last bits follow the chunks. Plain Dask's
# np.roll re-chunks the axis it rolls along, and adding two shifted slices re-chunks both; the
# compiled roll and slices keep the chunks (a halo). The cases whose sums plain Dask makes over
# other chunks, and for which chunks:
SUMS_IN_OTHER_CHUNKS = {"stencil_along_rows": ("uneven",), "stencil_sums": ("even", "uneven")}


def _dask(a, chunks):
    return da.from_array(a, chunks=chunks)


CASES = {
    "softmax_rows": (softmax_rows, lambda c: (_dask(A, c),)),
    "transcendental_chain": (transcendental_chain, lambda c: (_dask(A, c), _dask(B, c))),
    "column_sums": (column_sums, lambda c: (_dask(A, c),)),
    "row_norms": (row_norms, lambda c: (_dask(A, c),)),
    "broadcast_affine": (broadcast_affine, lambda c: (
        _dask(A, c), _dask(B[:1], ((1,), c[1])), _dask(B[:, :1], (c[0], (1,))))),
    "row_sums": (row_sums, lambda c: (_dask(A, c), _dask(B[0], c[1]))),
    "scaled": (scaled, lambda c: (_dask(A, c), 0.75)),
    "mean_and_matmul": (mean_and_matmul, lambda c: (_dask(A, c),)),
    "roll_stencil": (roll_stencil, lambda c: (_dask(A, c), 3)),
    "stencil_along_rows": (stencil_along_rows, lambda c: (_dask(A, c),)),
    "periodic_heat": (periodic_heat, lambda c: (_dask(A, c), 0.1)),
    "far_roll": (far_roll, lambda c: (_dask(A, c),)),
    "laplacian": (laplacian, lambda c: (_dask(A, c),)),
    "laplacian_by_sizes": (laplacian_by_sizes, lambda c: (_dask(A, c),)),
    "shrinking_smoother": (shrinking_smoother, lambda c: (_dask(A, c),)),
    "shifted_differences": (shifted_differences, lambda c: (_dask(A, c),)),
    "slice_used_twice": (slice_used_twice, lambda c: (_dask(A, c),)),
    "rows_times_vector": (rows_times_vector, lambda c: (_dask(A, c), _dask(B[0], c[1]))),
    "slices_and_row_sums": (slices_and_row_sums, lambda c: (_dask(A, c),)),
    "tree_reductions": (tree_reductions, lambda c: (_dask(A, c),)),
    "stencil_sums": (stencil_sums, lambda c: (_dask(A, c),)),
    "masked_total": (masked_total, lambda c: (_dask(A, c),)),
    "int_chain": (int_chain, lambda c: (_dask((A * 100).astype(np.int64), c),)),
    "where_clip": (where_clip, lambda c: (_dask(A.astype(np.float32), c),)),
    "branch_on_data": (branch_on_data, lambda c: (_dask(A, c),)),
}  # fmt: skip


def _as_tuple(result):
    return result if isinstance(result, tuple) else (result,)


def _numpy_args(args):
    return tuple(np.asarray(a) if isinstance(a, da.Array) else a for a in args)


@pytest.mark.parametrize("chunking", ["even", "uneven"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_chunks_equal_plain_dask_bitwise(name, chunking):
    fn, make = CASES[name]
    chunks = {"even": EVEN, "uneven": UNEVEN}[chunking]
    args = make(chunks)
    compiled = tc.compile(fn, backend="eager")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no internal error, no fallback warning
        got = _as_tuple(compiled(*args))
        got_again = _as_tuple(compiled(*make(chunks)))
    plain = _as_tuple(fn(*args))
    numpy = _as_tuple(fn(*_numpy_args(args)))
    for g, again, p, n in zip(got, got_again, plain, numpy):
        assert type(g) is type(p)
        g, again, p = dask.compute(g, again, p)
        assert np.asarray(g).dtype == np.asarray(p).dtype
        if chunking in SUMS_IN_OTHER_CHUNKS.get(name, ()):
            np.testing.assert_allclose(g, p, rtol=1e-12, atol=1e-12)
            continue
        exact = n if not np.array_equal(g, p) and np.array_equal(g, n) else p
        np.testing.assert_array_equal(g, exact, strict=True)
        np.testing.assert_array_equal(again, exact, strict=True)
        np.testing.assert_allclose(g, p, rtol=1e-12, atol=1e-12)
    assert tc.counters()["graphs"] >= 1 and tc.counters()["recompiles"] == 0


@pytest.mark.parametrize("name", sorted(CASES))
def test_no_more_tasks_than_plain_dask(name):
    fn, make = CASES[name]
    args = make(EVEN)
    got, plain = _as_tuple(tc.compile(fn)(*args)), _as_tuple(fn(*args))
    assert task_count(got) <= task_count(plain)


def test_chunk_local_graphs_become_one_task_per_chunk():
    x = _dask(A, EVEN)
    got, plain = softmax_rows_compiled(x), softmax_rows(x)
    assert task_count((got,)) == 4 + 4  # the input's chunks, one kernel task per chunk
    assert task_count((plain,)) > task_count((got,))


def softmax_rows_compiled(x):
    return tc.compile(softmax_rows)(x)


@pytest.mark.parametrize("name", ["softmax_rows", "transcendental_chain", "column_sums",
                                  "row_norms", "int_chain", "where_clip", "laplacian",
                                  "shrinking_smoother"])  # fmt: skip
def test_cpu_chunk_kernels_match_within_tolerance(name):
    pytest.importorskip("numba")
    fn, make = CASES[name]
    args = make(UNEVEN)
    got, plain = dask.compute(_as_tuple(tc.compile(fn, backend="cpu")(*args)), _as_tuple(fn(*args)))
    for g, p in zip(got, plain):
        assert g.dtype == p.dtype and g.shape == p.shape
        if g.dtype.kind == "f":
            np.testing.assert_allclose(g, p, rtol=1e-6, atol=1e-12)
        else:
            np.testing.assert_array_equal(g, p, strict=True)


def test_calling_builds_a_lazy_graph_and_computes_nothing():
    computed = []

    class Counter(dask.callbacks.Callback):
        def _start(self, dsk):
            computed.append(len(dsk))

    x = _dask(A, EVEN)
    compiled = tc.compile(transcendental_chain)
    with Counter():
        result = compiled(x, x)
    assert isinstance(result, da.Array) and computed == []
    with Counter():
        result.compute()
    assert computed


def test_new_chunks_recompile_and_same_chunks_do_not():
    compiled = tc.compile(softmax_rows)
    for _ in range(2):
        compiled(_dask(A, EVEN))
    assert (tc.counters()["graphs"], tc.counters()["recompiles"]) == (1, 0)
    got = compiled(_dask(A, UNEVEN))
    assert (tc.counters()["graphs"], tc.counters()["recompiles"]) == (2, 1)
    np.testing.assert_array_equal(got.compute(), softmax_rows(_dask(A, UNEVEN)).compute())


def test_guard_names_the_chunks():
    text = str(tc.explain(softmax_rows)(_dask(A, EVEN)))
    assert "x is a dask array of float64 in chunks ((60, 60, 60, 60), (90,))" in text


def test_plan_names_kernels_tasks_and_chunks():
    compiled = tc.explain(softmax_rows)(_dask(A, EVEN)).reports[0].compiled
    plan = compiled.sources["plan"]
    assert "8 tasks after Dask's optimizer (plain dask.array: 28)" in plan
    assert "truediv = da.map_blocks(softmax_rows_graph_chunk_0, x)  # chunks (60, 90)" in plan
    (kernel,) = compiled.details
    assert kernel.kind == "chunk kernel"
    assert "one task per chunk: 4 x 1 chunks of (60, 90)" in kernel.notes


# -- what a Dask array is not: writes, unknown sizes, objects ---------------------------------


def add_in_place(x):
    x += 1
    return x * 2


def item_write(x):
    y = x * 1.0
    y[0] = 5.0
    return y + 1


def view_write(x):
    y = x + 0.0
    v = y[:10]
    v[:] = 0.0
    return y.sum(axis=0)


@pytest.mark.parametrize("fn", [add_in_place, item_write, view_write])
def test_writes_run_as_plain_dask(fn):
    x, y = _dask(A, EVEN), _dask(A, EVEN)
    got = fn_compiled = tc.compile(fn)(x)
    np.testing.assert_array_equal(fn_compiled.compute(), fn(y).compute(), strict=True)
    np.testing.assert_array_equal(x.compute(), A)  # as plain Dask: the caller's x unchanged
    assert isinstance(got, da.Array)
    (record,) = tc.explain(fn)(_dask(A, EVEN)).break_reasons[:1]
    assert "writes into an array computed from a Dask array" in record.explanation


def test_unknown_chunk_sizes_run_as_plain_dask():
    x = _dask(A, EVEN)
    selected = x[x > 0]  # chunk sizes unknown until computed
    got = tc.compile(row_norms_1d)(selected)
    np.testing.assert_array_equal(got.compute(), row_norms_1d(selected).compute(), strict=True)


def row_norms_1d(v):
    return np.sqrt(v * v) + 1


def test_object_arrays_run_as_plain_dask():
    x = da.from_array(np.array([1, "a", 2.5], dtype=object), chunks=2)
    got = tc.compile(lambda v: v * 2)(x)
    assert list(got.compute()) == [2, "aa", 5.0]


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_chunks_of_masked_arrays_give_plain_dasks_masked_results(backend):
    # chunks that are not plain ndarrays (np.ma here): the chunk kernels' NumPy calls dispatch
    # to them, and what is masked stays masked
    if backend == "cpu":
        pytest.importorskip("numba")
    x = da.ma.masked_greater(_dask(A, EVEN), 1.0)
    for fn in (column_sums, softmax_rows, row_norms):
        got, plain = dask.compute(tc.compile(fn, backend=backend)(x), fn(x))
        assert isinstance(got, np.ma.MaskedArray)
        np.testing.assert_array_equal(np.ma.getmaskarray(got), np.ma.getmaskarray(plain))
        tolerance = 0 if backend == "eager" else 1e-12  # eager: bitwise
        np.testing.assert_allclose(np.ma.filled(got, -7.0), np.ma.filled(plain, -7.0),
                                   rtol=tolerance, atol=0)  # fmt: skip


def test_a_mix_of_dask_and_numpy_arrays():
    x = _dask(A, EVEN)
    got = tc.compile(broadcast_affine)(x, B[0], B[:, :1])
    plain = broadcast_affine(x, B[0], B[:, :1])
    assert isinstance(got, da.Array)
    np.testing.assert_array_equal(got.compute(), plain.compute(), strict=True)


def test_calling_dask_functions_breaks_and_runs_them():
    def uses_dask(x):
        return da.exp(x) + np.sin(x)

    x = _dask(A, EVEN)
    got = tc.compile(uses_dask)(x)
    assert isinstance(got, da.Array)
    np.testing.assert_array_equal(got.compute(), uses_dask(x).compute(), strict=True)


def test_what_dask_runs_in_numpy_comes_back_as_plain_dask_returns_it():
    def sorted_rows(x):
        return np.sort(x * 2.0, axis=1)

    x = _dask(A, EVEN)
    with pytest.warns(FutureWarning, match="not implemented by Dask"):
        got = tc.compile(sorted_rows)(x)
    with pytest.warns(FutureWarning, match="not implemented by Dask"):
        plain = sorted_rows(x)
    assert type(got) is type(plain)
    np.testing.assert_array_equal(got, plain, strict=True)


# -- arrays larger than this process: the trace never computes on their sizes ----------------


def test_an_array_far_larger_than_memory_compiles_from_its_meta():
    import resource

    x = da.zeros((10**6, 10**5), chunks=(10**4, 10**5))  # 800 GB of float64, chunks of 8 GB
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = tc.compile(softmax_rows)(x)
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert isinstance(result, da.Array) and result.shape == x.shape
    assert result.chunks == x.chunks
    assert grown_mib < 200  # the trace's examples are 2 x 3, the chunk kernel's 2 x 10**5
    text = str(tc.explain(softmax_rows)(x))
    assert "x is a dask array of float64 in chunks (100 x 10000, (100000,))" in text


def test_a_size_needed_as_a_python_int_breaks_and_runs_as_plain_dask():
    def by_length(x):
        y = x * 2.0
        if x.shape[0] > 100:
            return y.sum(axis=1)
        return y

    x = _dask(A, EVEN)
    got = tc.compile(by_length)(x)
    np.testing.assert_array_equal(got.compute(), by_length(x).compute(), strict=True)
    (record,) = tc.explain(by_length)(x).break_reasons
    assert record.kind.id == "dask_size"
    assert "the size of dim 0 of x is needed as a Python int here" in record.explanation


def test_sizes_in_array_arithmetic_stay_in_the_graph():
    def normalised(x):
        head = x.sum(axis=1) * 2.0
        return x / x.shape[0] - x.mean(axis=1, keepdims=True) * x.shape[1], np.zeros(
            x.shape[0]
        ) + head

    x = _dask(A, UNEVEN)
    got = tc.compile(normalised)(x)
    assert tc.counters()["graph_breaks"] == 0
    for g, p in zip(got, normalised(x)):
        np.testing.assert_array_equal(g.compute(), p.compute(), strict=True)


def test_rolls_across_chunks_run_with_a_halo_as_long_as_the_time_loop_reaches():
    x = _dask(A, EVEN)  # rows cut in chunks of 60, columns whole
    plan = tc.explain(periodic_heat)(x, 0.1).reports[0].compiled.sources["plan"]
    assert "u_1 = da.map_overlap(periodic_heat_graph_chunk_0, u, depth={0: 4}, " in plan
    far = tc.explain(far_roll)(x).reports[0].compiled.sources["plan"]
    assert "roll = np.roll(u, shift=70, axis=0)  # dask.array" in far  # longer than a chunk


def test_reductions_across_chunks_end_their_region_with_the_chunk_step():
    x = _dask(A, EVEN)
    compiled = tc.explain(column_sums)(x).reports[0].compiled
    plan = compiled.sources["plan"]
    assert "sum__chunks = da.map_blocks(column_sums_graph_chunk_0, x)  # chunks (1, 90)" in plan
    assert "sum_ = sum__chunks.sum(axis=0)  # dask.array" in plan  # Dask's tree on the partials
    assert "9 tasks after Dask's optimizer (plain dask.array: 10)" in plan
    kernel, tree = compiled.details
    assert "one task per chunk: 4 x 1 chunks of (1, 90)" in kernel.notes
    assert "keepdims=True" in kernel.source
    assert tree.kind == "dask"


def test_slices_across_chunks_run_with_a_halo_from_the_slices():
    x = _dask(A, EVEN)  # rows cut in chunks of 60, columns whole
    report = tc.explain(laplacian)(x).reports[0]
    plan = report.compiled.sources["plan"]
    assert ("sub = da.map_blocks(laplacian_graph_chunk_0, overlap(u, depth={0: (2, 0)}, "
            "boundary='none'))  # chunks (58, 88)") in plan  # fmt: skip
    assert "18 tasks after Dask's optimizer (plain dask.array: 147)" in plan
    (kernel,) = report.compiled.details
    assert ("each chunk with a halo of its neighbours' elements for its slices (2 before and 0 "
            "after along axis 0; none at the array's ends): da.overlap") in kernel.notes  # fmt: skip
    smoother = tc.explain(shrinking_smoother)(x).reports[0].compiled.sources["plan"]
    # each step placed at its first operand's rows (u[2:]): 6 rows before, the first chunk 54
    assert "depth={0: (6, 0)}, boundary='none'))  # chunks (54, 90)" in smoother
    assert smoother.count("map_blocks") == 1


@pytest.mark.parametrize("fn", [laplacian, shrinking_smoother, shifted_differences])
def test_a_halo_longer_than_a_chunk_runs_as_plain_dask(fn):
    x = _dask(A, ((2,) * 120, (45, 45)))  # 2-row chunks: no halo of 2 rows or more
    got, plain = _as_tuple(tc.compile(fn)(x)), _as_tuple(fn(x))
    for g, p in zip(got, plain):
        np.testing.assert_array_equal(g.compute(), p.compute(), strict=True)
    assert task_count(got) <= task_count(plain)


def test_slices_by_steps_across_chunks_run_as_plain_dask():
    def every_other_row(u):
        return u[::2] + u[1::2]

    x = _dask(A, EVEN)
    got = tc.compile(every_other_row)(x)
    np.testing.assert_array_equal(got.compute(), every_other_row(x).compute(), strict=True)
    plan = tc.explain(every_other_row)(x).reports[0].compiled.sources["plan"]
    assert "u_item = u[::2]  # dask.array" in plan


def selected_length(x):
    y = x[x > 0.5]
    return y.sum() + len(y)


def concatenated_rows(x):
    y = np.concatenate([x, x])
    if y.shape[0] > 5:  # a size of an array made in the graph, as a Python int
        return y * 2
    return y


def unpacked_rows(x):
    a, b = x[:2]
    return a + b


@pytest.mark.parametrize("fn", [selected_length, concatenated_rows, unpacked_rows])
def test_sizes_dask_knows_only_when_computing_run_as_plain_dask(fn):
    x = _dask(A, EVEN)
    try:
        expected = fn(x)
    except ValueError as error:  # len() of unknown chunks: plain Dask raises, so must this
        with pytest.raises(ValueError, match=re.escape(str(error).splitlines()[0])):
            tc.compile(fn)(x)
        return
    got = tc.compile(fn)(x)
    np.testing.assert_array_equal(got.compute(), expected.compute(), strict=True)
    assert tc.explain(fn)(x).break_reasons  # a break, not an internal error
