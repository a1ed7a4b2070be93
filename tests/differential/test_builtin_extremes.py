"""Builtin ``max``/``min`` of NumPy scalars of one dtype in a loop body captured as a loop node:
a node of the graph calling Python's own ``max`` (each item replaces the one kept where it
compares greater: the first of equal items is kept, a NaN only where it comes first, ``-0.0``
against ``0.0`` as given), so the loop is one node instead of a split loop. Each function runs
eagerly and compiled (bitwise, `check_same_calls`), on the eager and cpu backends."""

from __future__ import annotations

import numpy as np
import pytest
from harness import check_same_calls

import tcompile as tc


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
PROGRAMS = [
    (running_max, [((INTS,), {}), ((INTS[::-1].copy(),), {})]),
    (running_max, [((FLOATS,), {}), ((-FLOATS,), {})]),
    (running_min_of_three, [((INTS, INTS[::-1].copy()), {}), ((FLOATS[:8], -FLOATS[:8]), {})]),
    (keeps_the_first, [((FLOATS,), {}), ((FLOATS[::-1].copy(),), {})]),
]


@pytest.mark.parametrize("backend", ["eager", "cpu"])
@pytest.mark.parametrize("case", range(len(PROGRAMS)))
def test_max_of_scalars_in_a_loop_is_one_loop_node(case, backend):
    if backend == "cpu":
        pytest.importorskip("numba", reason="the cpu backend needs numba")
    fn, calls = PROGRAMS[case]
    tc.reset()
    check_same_calls(fn, calls, backend=backend)
    assert tc.counters()["graph_breaks"] == 0
    args = [a.copy() for a in calls[0][0]]
    report = str(tc.explain(fn, backend=backend)(*args))
    assert "loop node" in report and "Graph Count: 1" in report, report
