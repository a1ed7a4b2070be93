"""Reductions over leading axes in the cpu kernels (`backend/cpu/outer_reductions.py`): with
memory along the kept axis, the loops turn around (a row of accumulators, each reduced row read
along memory), and every result is NumPy's bit for bit: column sums, means, products, max and
min with NaN and signed zeros, integers that wrap, float32, 3-D arrays over one or two leading
axes, a transposed operand summed along its trailing axis, several reductions of one kernel,
a variance (its sum of squares a pass after its mean's), and shares of the kept axis on
threads."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("numba", reason="the CPU kernels need numba: pip install 'tcompile[cpu]'")

import tcompile as tc  # noqa: E402
from tcompile.backend.cpu.kernels import fused_backend  # noqa: E402

RNG = np.random.default_rng(11)


def _with_specials(a):
    a = a.copy()
    a[3, 7], a[5, 9], a[0, 1], a[:, 2] = np.nan, -0.0, np.inf, -0.0
    return a


A = _with_specials(RNG.standard_normal((300, 517)))
B = RNG.standard_normal((6, 40, 70))
K = RNG.integers(-(2**62), 2**62, (200, 64))  # sums wrap around
F32 = RNG.standard_normal((128, 257)).astype(np.float32)
BIG = RNG.standard_normal((400, 4096))  # past one thread's work: kept columns in shares

CASES = {
    "column_sums": (lambda a: a.sum(axis=0), A),
    "column_means": (lambda a: a.mean(axis=0), A),
    "column_max_of_twice": (lambda a: np.max(a * 2, axis=0), A),
    "column_min": (lambda a: np.min(a, axis=0), A),
    "column_products": (lambda a: np.prod(a[:20] * 0.5 + 1, axis=0), A),
    "column_std_a_pass_after_the_mean": (lambda a: (a.mean(axis=0), a.std(axis=0)), A),
    "row_stats_over_columns_of_three": (lambda b: np.var(b, axis=0), B),
    "over_two_leading_axes": (lambda b: b.sum(axis=(0, 1)), B),
    "over_the_first_of_three": (lambda b: np.max(b, axis=0), B),
    "over_the_middle_axis": (lambda b: b.sum(axis=1), B),
    "integers_that_wrap": (lambda k: k.sum(axis=0), K),
    "integer_max": (lambda k: (k // 3).max(axis=0), K),
    "float32": (lambda f: f.sum(axis=0), F32),
    "two_of_one_kernel": (lambda a: (a.sum(axis=0), np.abs(a).max(axis=0)), A),
    "transposed_trailing": (lambda a: a.T.sum(axis=1), A),
    "sqrt_chain_on_threads": (lambda x: np.sum(np.sqrt(np.abs(x)) * 2.0 + 1.0, axis=0), BIG),
}


def _bits(value):
    return [
        (v.dtype, v.shape, v.tobytes()) for v in (value if isinstance(value, tuple) else (value,))
    ]


@pytest.mark.parametrize("name", list(CASES))
def test_a_reduction_over_leading_axes_is_numpys_bit_for_bit(name):
    fn, x = CASES[name]
    compiled = tc.compile(fn, backend=fused_backend, fullgraph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NaN and infinities, in both
        want = fn(x)
        for _ in range(2):  # the first call compiles on one thread, the next runs in shares
            assert _bits(compiled(x)) == _bits(want)
    kernels = compiled.__tc_compiled__.entries[-1].report.compiled.sources["kernels"]
    assert "lo, hi = " in kernels, kernels  # the loops turned around


def test_a_reduction_along_memory_keeps_its_loop():
    compiled = tc.compile(lambda a: a.sum(axis=1), backend=fused_backend)
    assert _bits(compiled(A)) == _bits(A.sum(axis=1))
    kernels = compiled.__tc_compiled__.entries[-1].report.compiled.sources["kernels"]
    assert "lo, hi = " not in kernels and "pairwise_sum" in kernels
