"""A branch on the loop's index inside a loop body (``if j - 1 >= 0:``, ``if j % 2 == 0:``,
``if i < j - 1 and j > 2:``) is a cond node of the body, its test a bool of the graph: the loop
is one node instead of being unrolled (the index was pinned to each iteration's value). Each
function runs eagerly and compiled on fresh copies (bitwise, `check_same_calls`) on the eager
and cpu backends, with trip counts that take both sides and neither."""

from __future__ import annotations

import numpy as np
import pytest
from harness import check_same_calls

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
PROGRAMS = [
    (guarded_prefix, [((X,), {}), ((X[:1].copy(),), {}), ((X[:0].copy(),), {})]),
    (even_and_odd, [((X,), {}), ((X[:3].copy(),), {})]),
    (chained_tests, [((X, 1), {}), ((X, 10), {})]),
    (index_picks_a_number, [((X,), {}), ((-X,), {})]),
]


@pytest.mark.parametrize("backend", ["eager", "cpu"])
@pytest.mark.parametrize("case", range(len(PROGRAMS)))
def test_a_branch_on_the_loop_index_keeps_the_loop_one_node(case, backend):
    if backend == "cpu":
        pytest.importorskip("numba", reason="the cpu backend needs numba")
    fn, calls = PROGRAMS[case]
    tc.reset()
    check_same_calls(fn, calls, backend=backend)
    assert tc.counters()["graph_breaks"] == 0
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in calls[0][0]]
    report = str(tc.explain(fn, backend=backend)(*args))
    assert "loop node" in report and "Graph Count: 1" in report, report
