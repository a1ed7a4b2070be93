"""Loop bodies that stay one loop node (`check_same_calls`: bitwise eager's, on the eager and
cpu backends, with trip counts that take every side and none):

- a branch on the loop's index (``if j - 1 >= 0:``, ``if j % 2 == 0:``, ``if i < j - 1 and
  j > 2:``) is a cond node of the body, its test a bool of the graph (the index was pinned to
  each iteration's value, and the loop unrolled);
- builtin ``max``/``min`` of NumPy scalars of one dtype is a node calling Python's own ``max``
  (each item replaces the one kept where it compares greater: the first of equal items is kept,
  a NaN only where it comes first, ``-0.0`` against ``0.0`` as given; the loop was split at
  it)."""

from __future__ import annotations

import numpy as np
import pytest
from harness import check_without_breaks

import tcompile as tc


def guarded_prefix(t):
    for j in range(t.shape[0]):
        if j - 1 >= 0:
            t[j] = t[j] + t[j - 1]
    return t


def even_and_odd(t):
    out = np.zeros_like(t)
    for j in range(t.shape[0]):
        if j % 2 == 0:
            out[j] = t[j] * 2.0
        else:
            out[j] = -t[j]
    return out


def chained_tests(t, i):
    for j in range(1, t.shape[0]):
        if i < j - 1 and j > 2:
            t[j] = t[j - 1] * 0.5
    return t


def index_picks_a_number(t):
    total = 0.0
    for j in range(t.shape[0]):
        total = total + (t[j] if j < 3 else -t[j])
    return total


X = np.arange(1.0, 9.0)
INDEX_BRANCHES = [
    (guarded_prefix, [((X,), {}), ((X[:1].copy(),), {}), ((X[:0].copy(),), {})]),
    (even_and_odd, [((X,), {}), ((X[:3].copy(),), {})]),
    (chained_tests, [((X, 1), {}), ((X, 10), {})]),
    (index_picks_a_number, [((X,), {}), ((-X,), {})]),
]


def running_max(t):
    for j in range(1, t.shape[0]):
        t[j] = max(t[j], t[j - 1])
    return t


def running_min_of_three(t, u):
    for j in range(1, t.shape[0]):
        t[j] = min(t[j], t[j - 1], u[j])
    return t


def keeps_the_first(t):
    out = np.empty_like(t)
    for j in range(1, t.shape[0]):
        out[j] = max(t[j - 1], t[j])  # NaN and signed zeros: whichever Python keeps
    return out[1:]


INTS = np.array([3, 1, 4, 1, 5, 9, 2, 6], np.int32)
FLOATS = np.array([0.0, -0.0, np.nan, 1.0, -0.0, 0.0, np.nan, np.nan, 2.0])
EXTREMES = [
    (running_max, [((INTS,), {}), ((INTS[::-1].copy(),), {})]),
    (running_max, [((FLOATS,), {}), ((-FLOATS,), {})]),
    (running_min_of_three, [((INTS, INTS[::-1].copy()), {}), ((FLOATS[:8], -FLOATS[:8]), {})]),
    (keeps_the_first, [((FLOATS,), {}), ((FLOATS[::-1].copy(),), {})]),
]

PROGRAMS = INDEX_BRANCHES + EXTREMES


@pytest.mark.parametrize("backend", ["eager", "cpu"])
@pytest.mark.parametrize("case", range(len(PROGRAMS)))
def test_the_loop_stays_one_loop_node(case, backend):
    fn, calls = PROGRAMS[case]
    check_without_breaks(fn, calls, backend)
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in calls[0][0]]
    report = str(tc.explain(fn, backend=backend)(*args))
    assert "loop node" in report and "Graph Count: 1" in report, report
