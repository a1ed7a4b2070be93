"""Cond nodes (branches on data) in the fused kernels' runtime (`backend/fused/lowering/conds.py`):
where both sides are a few element-wise operations they are computed in the kernels and chosen
element by element (a select); otherwise the predicate is read on the host and the side it
picks runs as a program of kernels of its own. Each case runs plain and compiled on calls that take each side, with NumPy's results,
writes into the caller's arrays and errors; the cases whose copy of an array could be told
apart from NumPy's (a side giving back the caller's array) run in NumPy as a whole, and say so.
``tests/triton/test_fused_conds_triton.py`` runs the same cases on the Triton backend.

PYTEST_DONT_REWRITE: the asserts of the cases must raise what plain Python raises."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("numba", reason="the CPU kernels need numba: pip install 'tcompile[cpu]'")

from test_fused_kernels import assert_same  # noqa: E402 - floats to 1e-12, the rest exactly

import tcompile as tc  # noqa: E402
from tcompile.backend.cpu.kernels import fused_backend  # noqa: E402

RNG = np.random.default_rng(3)
X = RNG.standard_normal(4000) + 0.01  # its sum is positive, -X's negative
M = RNG.standard_normal((40, 50))
# (the thresholds are constants: a float argument becomes dynamic at its second value, and a
# dynamic float runs as an extern step, which these tests do not look at)


def either_side(x):
    z = np.sin(x) * 2 + 1
    if (z - 1).sum() > 0:
        w = z * 3 + 1
    else:
        w = z - 1
    return np.cos(w) + x


def intermediate_kept(x):
    y = x - 1
    if x.sum() > 0:
        y = y * 3  # else: y as it was, an intermediate no one else reads
    return y, x.min()


def write_in_side(x):
    if x.mean() > 0:
        x[:10] = 0.0  # only where this side runs
    return x * 2


def numbers_from_sides(m):
    s = m.sum(axis=1)
    if s.max() > 3.0:
        k, scale = 1, s.min()  # an int, a NumPy scalar
    else:
        k, scale = -1, s.max()
    return s * scale, k


def nested(x):
    y = -x
    if x.sum() > 0:
        if x.max() > 1.0:
            y = x * 2
        else:
            y = x * 3
    z = y + 1  # (not the return itself: 3.12 copies a return into each side of an if)
    return z * x


def asserted(x):
    y = x * 2
    assert y.min() > -100.0, "too small"
    return y + 1


def loop_in_side(x):
    y = x * 2
    if x.sum() > 0:
        for i in range(3):  # a loop node inside the side: a loop step of the side's program
            y = y * 0.5 + i
    else:
        y = y - 1
    return y + x


def gives_back_the_input(x):
    if x.sum() > 0:
        x = x * 2  # else: the caller's own array is returned
    return x


def inner_keeps_the_input(x, y):
    if x[1] > 0:
        y = y * 0.9
    elif x[2] > 0:  # a cond inside the side that gives y back as it was
        y = y * 0.5
    return y


# name -> (function, calls (each the arguments of one call), how it runs: "select" (both
# sides in the kernels, chosen element by element), "branch" (the side taken a program of its
# own), "numpy" (the whole graph))
CASES = {
    "either_side": (either_side, [(X,), (-X,), (X,)], "select"),
    "intermediate_kept": (intermediate_kept, [(X,), (-X,)], "select"),
    "write_in_side": (write_in_side, [(X,), (-X,)], "branch"),
    "numbers_from_sides": (numbers_from_sides, [(M,), (M * 0.01,)], "branch"),
    "nested": (nested, [(X,), (X * 0.01,), (-X,)], "branch"),
    "asserted": (asserted, [(X,), (X * 100,), (X,)], "branch"),
    "loop_in_side": (loop_in_side, [(X,), (-X,), (X,)], "branch"),
    "gives_back_the_input": (gives_back_the_input, [(X,), (-X,)], "numpy"),
    "inner_keeps_the_input": (inner_keeps_the_input, [(X, X), (-X, X), (-X, -X)], "numpy"),
}


def outcome(fn, args):
    """What a call returns (or raises), the arrays it was given after it, and which of them the
    result is (NumPy gives back the very array a side left alone)."""
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no warning of tcompile's
            result = fn(*args)
    except AssertionError as error:
        result = ("raised", type(error), str(error))
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    return result, arrays, [k for k, a in enumerate(arrays) if result is a]


def run_case(name: str, backend) -> list:
    """Each call of the case plain and compiled; the compiled function's kinds of steps."""
    fn, calls, _ = CASES[name]
    compiled = tc.compile(fn, backend=backend)
    for args in calls:
        want, want_args, want_is = outcome(fn, args)
        got, got_args, got_is = outcome(compiled, args)
        assert_same(got, want)
        assert_same(tuple(got_args), tuple(want_args))
        assert got_is == want_is, (got_is, want_is)
    report = compiled.__tc_compiled__.entries[-1].report.compiled
    return [(d.kind, d.notes) for d in report.details if hasattr(d, "kind")]


def check_case(name: str, backend) -> None:
    """The case runs as NumPy does: as a select, by a cond step, or in NumPy saying why."""
    steps = run_case(name, backend)
    kinds = [kind for kind, _ in steps]
    how = CASES[name][2]
    if how == "numpy":
        assert kinds == ["extern"] and "gives back" in steps[0][1][0], steps
    else:
        assert "extern" not in kinds and ("cond" in kinds) == (how == "branch"), steps


@pytest.mark.parametrize("name", list(CASES))
def test_a_cond_runs_the_side_its_predicate_picks(name):
    check_case(name, fused_backend)


def test_the_default_cpu_backend_keeps_cond_graphs_fused():
    # inputs past the tiers' small size: the graph is planned into kernels, not run as NumPy
    big = RNG.standard_normal(100_000) + 0.01
    compiled = tc.compile(either_side, backend="cpu")
    for x in (big, -big, big):
        np.testing.assert_allclose(compiled(x), either_side(x), rtol=1e-12, atol=1e-12)
    sources = compiled.__tc_compiled__.entries[-1].report.compiled.sources
    plan = sources["plan"]  # the branch a select inside the kernels: no host step
    assert "launch k_" in plan and "extern" not in plan and "cond" not in plan, plan


def test_the_kernels_tab_shows_a_cond_step_with_the_kernels_of_its_sides():
    from tcompile.widgets import CellOptions, CellRun, CellSource
    from tcompile.widgets.kernels_tab import kernels_html

    compiled = tc.compile(write_in_side, backend=fused_backend)
    for x in (X.copy(), -X):  # each side runs once: its kernels are made
        compiled(x)
    report = compiled.__tc_compiled__.entries[-1].report
    run = CellRun(CellSource("", 1, "<cell>"), CellOptions(backend="cpu"), [report], seconds=0.1)
    page = kernels_html(run)
    assert '<span class="tc-badge tc-kind-cond">cond: the side its predicate picks</span>' in page
    assert "<code>if gt</code>" in page and "its predicate is read on the host" in page
    assert "Its sides' kernels:" in page and "<code>k_setitem</code>" in page
