"""Cond nodes (branches on data) in the fused kernels' runtime (`backend/fused/lowering/conds.py`):
the predicate is read on the host and the side it picks runs as a program of kernels of its
own. Each case runs plain and compiled on calls that take each side, with NumPy's results,
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


# name -> (function, calls (each the arguments of one call), whether kernels run it)
CASES = {
    "either_side": (either_side, [(X,), (-X,), (X,)], True),
    "intermediate_kept": (intermediate_kept, [(X,), (-X,)], True),
    "write_in_side": (write_in_side, [(X,), (-X,)], True),
    "numbers_from_sides": (numbers_from_sides, [(M,), (M * 0.01,)], True),
    "nested": (nested, [(X,), (X * 0.01,), (-X,)], True),
    "asserted": (asserted, [(X,), (X * 100,), (X,)], True),
    "loop_in_side": (loop_in_side, [(X,), (-X,), (X,)], True),
    "gives_back_the_input": (gives_back_the_input, [(X,), (-X,)], False),
}


def outcome(fn, args):
    """What a call returns (or raises), and the arrays it was given after it."""
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no warning of tcompile's
            result = fn(*args)
    except AssertionError as error:
        result = ("raised", type(error), str(error))
    return result, [a for a in args if isinstance(a, np.ndarray)]


def run_case(name: str, backend) -> list:
    """Each call of the case plain and compiled; the compiled function's kinds of steps."""
    fn, calls, _ = CASES[name]
    compiled = tc.compile(fn, backend=backend)
    for args in calls:
        want, want_args = outcome(fn, args)
        got, got_args = outcome(compiled, args)
        assert_same(got, want)
        assert_same(tuple(got_args), tuple(want_args))
    report = compiled.__tc_compiled__.entries[-1].report.compiled
    return [(d.kind, d.notes) for d in report.details if hasattr(d, "kind")]


def check_case(name: str, backend) -> None:
    """The case runs as NumPy does, by a cond step of kernels, or in NumPy saying why."""
    steps = run_case(name, backend)
    kinds = [kind for kind, _ in steps]
    if CASES[name][2]:
        assert "cond" in kinds and "extern" not in kinds, steps
    else:
        assert kinds == ["extern"] and "gives back x itself" in steps[0][1][0], steps


@pytest.mark.parametrize("name", list(CASES))
def test_a_cond_runs_the_side_its_predicate_picks(name):
    check_case(name, fused_backend)


def test_the_default_cpu_backend_keeps_cond_graphs_fused():
    # large inputs: the tiers measure kernels against NumPy instead of running NumPy's code
    compiled = tc.compile(either_side, backend="cpu")
    for _ in range(3):
        for x in (X, -X):
            np.testing.assert_allclose(compiled(x), either_side(x), rtol=1e-12)
    sources = compiled.__tc_compiled__.entries[-1].report.compiled.sources
    assert any("cond" in text for text in sources.values()), sorted(sources)
