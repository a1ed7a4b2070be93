"""Compaction kernels (`backend/fused/lowering/compaction.py`): a boolean-mask selection, or an
element-wise expression of selections of one mask, that is returned or read by NumPy is made by
one kernel over the whole arrays: counted per share, then written in order; so are the
positions ``np.nonzero``, ``np.where`` and ``np.flatnonzero`` give. Each case runs plain
and compiled on masks that select some, nothing and everything, and on zero-size inputs: the
same values, dtypes, shapes and errors, the arguments as NumPy leaves them, one compiled entry
per input shape (the count is data, never a guard), and a compaction step in the plan. The
Triton backend runs the same cases (``tests/triton/test_compactions_triton.py``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("numba", reason="the CPU kernels need numba: pip install 'tcompile[cpu]'")

from test_fused_kernels import assert_same  # noqa: E402

import tcompile as tc  # noqa: E402
from tcompile.backend.cpu.kernels import fused_backend  # noqa: E402

RNG = np.random.default_rng(5)
X = RNG.standard_normal(300)
Y = RNG.standard_normal(300)
A = RNG.standard_normal((12, 25))
K = RNG.integers(-50, 50, 300)
F = RNG.standard_normal(300).astype(np.float32)


def hypot_of_selected(x, y):
    m = x > 0.5
    return np.sqrt(x[m] ** 2 + y[m] ** 2)


def kept_and_reduced(x):
    d = x[x > 0.2]
    return d, d.sum(), d * 2.0 - 1.0


def largest_of_selected(x):
    d = x[x > 1.0]
    return d, d.max()  # nothing selected: NumPy's ValueError, at the user's line


def two_dims_in_c_order(a):
    return a[a > 0], a.T[a.T > 0.5] + 1.0  # the transpose's order, through its strides


def dtypes(k, f):
    b = k > 0
    return k[k % 3 == 0] * 2, b[f > 0], f[f < 0.5] * np.float32(3.0), (k[b] // 7).astype(np.int8)


def read_by_numpy(x):
    s = np.sort(x[x > 0])  # the selection a kernel's, the sort NumPy's on the host
    return s[::-1], len(s)


def written_after(x):
    y = x[x > 0] * 3.0
    y *= 2.0  # the compacted array written in place, by NumPy
    return y


def mask_from_a_reduction(x):
    return x[x > x.mean()] - x.mean()


def values_from_a_reduction(a):
    c = a - a.mean(axis=1, keepdims=True)  # a reduction in the values: made first
    return c[a > 0]


def positions(x, k, a):
    # np.nonzero's positions per dim, one kernel for both; NaN is true
    return np.nonzero(x > 0)[0] + 1, np.flatnonzero(a), np.where(a > 0.3), np.nonzero(k % 3)


def with_nan(a):
    a = a.copy()
    a[1, ::3] = np.nan
    return a


BIG = RNG.standard_normal(100_000)  # past one thread's work: shared among threads


def on_threads(x):
    return (x[x > 0.3] - 1.0) * 0.5


# name -> (function, calls)
CASES = {
    "hypot_of_selected": (hypot_of_selected, [(X, Y), (X * 0.0, Y), (X * 0.0 + 1.0, Y)]),
    "kept_and_reduced": (kept_and_reduced, [(X,), (X - 100.0,), (X + 100.0,), (X[:0],)]),
    "largest_of_selected": (largest_of_selected, [(X,), (X - 100.0,), (X,)]),
    "two_dims_in_c_order": (two_dims_in_c_order, [(A,), (-np.abs(A),), (A[:, :0],)]),
    "dtypes": (dtypes, [(K, F), (K * 3, -F), (-np.abs(K) - 1, F + 10)]),
    "read_by_numpy": (read_by_numpy, [(X,), (-np.abs(X),)]),
    "written_after": (written_after, [(X,), (-X,)]),
    "mask_from_a_reduction": (mask_from_a_reduction, [(X,), (X * 0.0,)]),
    "values_from_a_reduction": (values_from_a_reduction, [(A,), (-np.abs(A),)]),
    "on_threads": (on_threads, [(BIG,), (-np.abs(BIG),), (BIG,)]),
    "positions": (positions, [(X, K, A), (-np.abs(X), K * 3, A * 0.0), (X, K, with_nan(A))]),
}


def outcome(fn, args):
    """What a call returns (or raises), and the arrays it was given after it."""
    args = [a.copy() for a in args]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no warning of tcompile's
            result = fn(*args)
    except ValueError as error:
        result = ("raised", type(error), str(error))
    return result, args


def check_case(name: str, backend) -> list[str]:
    """Each call plain and compiled gives the same; the compiled steps' kinds."""
    fn, calls = CASES[name]
    compiled = tc.compile(fn, backend=backend, fullgraph=True)
    for args in calls:
        want, want_args = outcome(fn, args)
        got, got_args = outcome(compiled, args)
        assert_same(got, want)
        assert_same(tuple(got_args), tuple(want_args))
    shapes = {tuple(a.shape for a in args) for args in calls}
    assert len(compiled.__tc_compiled__.entries) == len(shapes)  # a count is data, no guard
    report = compiled.__tc_compiled__.entries[0].report.compiled  # the first calls' shapes
    kinds = [d.kind for d in report.details if hasattr(d, "kind")]
    assert "compaction" in kinds, report.sources["plan"]
    return kinds


# NumPy runs on the host what reads a compaction's result: the sort and ``len``, ``+ 1``; an
# array written in place, and all it is computed from after the selection
NUMPY_STEPS = {"read_by_numpy": ["extern"] * 4, "written_after": ["extern"] * 2,
               "positions": ["extern"]}  # fmt: skip


@pytest.mark.parametrize("name", list(CASES))
def test_a_selection_read_other_than_by_a_reduction_is_a_compaction_kernel(name):
    kinds = check_case(name, fused_backend)
    assert [k for k in kinds if k == "extern"] == NUMPY_STEPS.get(name, []), kinds


def test_its_one_kernel_computes_the_whole_expression_where_the_mask_holds():
    compiled = tc.compile(hypot_of_selected, backend=fused_backend, fullgraph=True)
    compiled(X, Y)
    sources = compiled.__tc_compiled__.entries[-1].report.compiled.sources
    plan = sources["plan"]
    assert plan.count("compact ") == 1 and "launch" not in plan and "extern" not in plan, plan
    kernel = sources["kernels"]
    # the square roots are computed where selected only; the count run does no other work
    root = kernel.index("np.float64(np.sqrt(")
    assert kernel.index("if fill:") < root < kernel.index("else:"), kernel


def test_the_kernels_tab_shows_a_compaction():
    from tcompile.widgets import CellOptions, CellRun, CellSource
    from tcompile.widgets.kernels_tab import kernels_html

    compiled = tc.compile(hypot_of_selected, backend=fused_backend)
    compiled(X, Y)
    report = compiled.__tc_compiled__.entries[-1].report
    run = CellRun(CellSource("", 1, "<cell>"), CellOptions(backend="cpu"), [report], seconds=0.1)
    page = kernels_html(run)
    assert "compaction: the selected elements, in order" in page, page
    assert "a first run counts each share" in page
