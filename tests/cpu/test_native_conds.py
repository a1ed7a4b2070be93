"""Cond nodes inside the cpu backend's native loops (issue 23): a branch on data per element
compiles as the ``if`` it is, its sides' indices are checked once per call like the body's, a
Python int the loop counts up in a side stays unchecked machine arithmetic where it is bounded,
an ``int()`` of data is Python's, and what numba would compute otherwise than Python (a shift
past 63 bits, a count that starts past the bound, an int past int64) runs as Python. Every case compares with the plain call and says whether the
loop ran as machine code."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import tcompile as tc

pytest.importorskip("numba", reason="the cpu backend needs numba: pip install 'tcompile[cpu]'")

from test_native_loops import same  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from scalar_loops import crc16  # noqa: E402 - the bench's kernel

RNG = np.random.default_rng(31)
X200, X50, X20, X100 = (RNG.random(n) for n in (200, 50, 20, 100))
NORMAL = RNG.standard_normal(10)


def count_above(x, start):
    n = start
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            n += 2
    return n


def clip_in_place(x):
    for i in range(x.shape[0]):
        if x[i] > 0.7:
            x[i] = 0.7
        else:
            x[i] = x[i - 1] * 2  # an index in a side, checked once per call
    return x


def shifted_by(x, count):
    total = 0
    for i in range(x.shape[0]):
        if x[i] > 0:
            total += (1 << 40) >> count  # Python shifts past 63 bits to 0; LLVM's is undefined
    return total


def test_a_count_in_a_branch_is_plain_machine_arithmetic(loops):
    same(count_above, lambda: (X200.copy(), 0), lambda: (X50.copy(), 7))
    assert loops[-1].dispatcher is not None and not loops[-1].may_overflow, loops[-1].reason


def test_a_count_starting_past_the_bound_runs_as_python(loops):
    same(count_above, lambda: (X20.copy(), 2**62), lambda: (X20.copy(), 2**63 - 3))
    assert loops[-1].dispatcher is not None  # native for small starts, Python for these


def test_crc16_is_native_and_exact(loops):
    data = RNG.integers(0, 256, 64).astype(np.uint8)
    same(crc16, lambda: (data.copy(),))
    assert loops and all(loop.dispatcher is not None for loop in loops), [
        loop.reason for loop in loops
    ]


def test_indices_in_sides_are_checked_per_call(loops):
    same(clip_in_place, lambda: (X100.copy(),))
    loop = loops[-1]
    assert loop.dispatcher is not None and not loop.boundscheck, loop.reason


def test_a_shift_by_a_variable_count_runs_as_python(loops):
    same(shifted_by, lambda: (NORMAL.copy(), 70), lambda: (NORMAL.copy(), 3))
    assert loops[-1].dispatcher is None and "shifted" in loops[-1].reason, loops[-1].reason


def histogram(samples, weights, nbins):
    hist = np.zeros(nbins)
    for i in range(samples.shape[0]):
        hist[int(samples[i] * nbins)] += weights[i]
    return hist


def test_an_int_of_data_is_native_and_raises_as_python(loops):
    """``int(v)`` of a float: truncated as Python's; NaN raises ValueError, a value past int64
    runs the loop as Python (Python's int grows), infinity raises OverflowError."""
    samples, weights = X200.copy(), X200[::-1].copy()
    same(histogram, lambda: (samples.copy(), weights.copy(), 8))
    assert loops[-1].dispatcher is not None, loops[-1].reason
    huge = np.array([0.5, 1e30, 0.25])  # an index past the end after int(): IndexError
    for bad in (huge, np.array([0.5, np.nan]), np.array([np.inf, 0.5])):
        same(histogram, lambda bad=bad: (bad.copy(), np.ones(bad.shape[0]), 4))


def overflow_after_writes(y, x, start):
    n = start
    for i in range(x.shape[0]):
        row = y[i]  # written through a view, in a loop inside the loop
        for j in range(y.shape[1]):
            row[j] = x[i] * j
        n = n * 3  # a Python int outgrowing 64 bits part way: the loop runs again as Python
    return n


def test_an_overflow_undoes_the_writes_of_only_the_arrays_written(loops):
    y, x = np.zeros((30, 3)), RNG.random(30)
    same(
        overflow_after_writes, lambda: (y.copy(), x.copy(), 3**20), lambda: (y.copy(), x.copy(), 1)
    )
    loop = loops[-1]
    assert loop.dispatcher is not None and loop.may_overflow, loop.reason
    assert [loop.node.args[p].name for p in loop.written] == ["y"], loop.written  # y alone


def damped_when_busy(x, y, n):
    acc = np.zeros_like(x)
    for i in range(n):
        acc[i % 8] += x[i % 8]
        if acc.sum() > 2.0:
            y = y * 0.9 + acc * 0.1  # the other side leaves ``y`` as it came
    return acc, y


def test_a_side_that_leaves_a_carried_array_alone_gives_that_array_back(loops):
    """numba hands back the argument's own object there: it is ``y`` itself, as in Python, not
    a view of it (a body that makes no view of its inputs gives back only the inputs so)."""
    x, y = RNG.random(8), RNG.random(8)
    compiled = tc.compile(damped_when_busy, backend="cpu")
    for n in (5, 7, 3, 0):  # the native loop runs from the third call
        assert (compiled(x, y, n)[1] is y) == (damped_when_busy(x, y, n)[1] is y), n
    assert loops[-1].dispatcher is not None, loops[-1].reason
