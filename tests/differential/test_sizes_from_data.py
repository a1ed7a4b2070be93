"""Sizes that come from data (issue 23): ``x[mask]``, ``np.nonzero``, one-argument ``np.where``,
``np.unique``, ``np.bincount``, ``np.repeat`` with array counts stay in the graph, their results'
sizes known only when it runs (`tracer/state/data_sizes.py`). Later operations take those sizes
as they are (``len(sel)`` is an int of the graph), so the function is one graph, the same entry
serves calls whose data select other counts (empty and full selections too), and the results
are eager's bit for bit. Where the trace needs such a size as a Python number (a ``range``, a
branch, a size it makes) it breaks there and says why; with ``tc.config.sizes_from_data =
False`` it breaks at the operation, as before. Each case runs eagerly and compiled on the eager
and the cpu backends."""

from __future__ import annotations

import numpy as np
import pytest
from harness import check_one_graph, check_same_calls

import tcompile as tc


def selected_twice(x):
    sel = x[x > 0]
    return sel * 2, len(sel), sel.shape


def gathered_by_nonzero(x):
    i = np.nonzero(x > 0)[0]
    return x[i] * 2 + i


def where_positive(x):
    w = np.where(x > 0)
    return x[w], w[0].size


def distinct(x):
    u = np.unique(x)
    return u.size, u.sum(), u[::-1]


def frequencies(k):
    c = np.bincount(k)
    return c / c.sum()


def repeated_cumsum(x, counts):
    return np.repeat(x, counts).cumsum()


def rows_above(a):
    rows = a[a[:, 0] > 0.5]
    return rows.mean(axis=0), rows.shape, rows.T @ rows


def thresholds(x):
    total = 0.0
    for t in range(3):
        s = x[x > t * 0.5]
        total += s.sum() + s.size
    return total


def kept_masked_update(x):
    hits = np.flatnonzero(x < 0)
    x[hits] = 0.0
    return hits


RNG = np.random.default_rng(31)


def normal(n):
    return RNG.standard_normal(n)


ONE_GRAPH = [
    (selected_twice, [((normal(20),), {}), ((normal(20),), {}), ((-np.ones(20),), {}), ((np.ones(20),), {})]),
    (gathered_by_nonzero, [((normal(20),), {}), ((normal(20),), {}), ((-np.ones(20),), {})]),
    (where_positive, [((normal(20),), {}), ((normal(20),), {})]),
    (distinct, [((RNG.integers(0, 5, 20).astype(float),), {}), ((RNG.integers(0, 9, 20).astype(float),), {})]),
    (frequencies, [((RNG.integers(0, 5, 20),), {}), ((RNG.integers(0, 9, 20),), {})]),
    (repeated_cumsum, [((RNG.random(5), RNG.integers(0, 3, 5)), {}), ((RNG.random(5), np.zeros(5, np.int64)), {})]),
    (rows_above, [((RNG.random((8, 3)),), {}), ((RNG.random((8, 3)),), {})]),
    (thresholds, [((normal(30),), {}), ((normal(30),), {})]),
    (kept_masked_update, [((normal(12),), {}), ((normal(12),), {})]),
]  # fmt: skip


@pytest.mark.parametrize("backend", ["eager", "cpu"])
@pytest.mark.parametrize(("fn", "calls"), ONE_GRAPH, ids=[c[0].__name__ for c in ONE_GRAPH])
def test_a_size_from_data_stays_in_the_graph(fn, calls, backend):
    if backend == "cpu":
        pytest.importorskip("numba", reason="the cpu backend needs numba")
    check_one_graph(fn, calls, backend)


def summed_in_python(x):
    sel = x[x > 0]
    t = 0.0
    for i in range(len(sel)):
        t += sel[i]
    return t


def sized_zeros(x):
    return np.zeros(len(x[x > 0]))


def branch_on_count(x):
    sel = x[x > 0]
    if sel.shape[0] > 3:
        return sel
    return -sel


@pytest.mark.parametrize("fn", [summed_in_python, sized_zeros, branch_on_count])
def test_a_size_from_data_needed_as_a_number_breaks_there(fn):
    check_same_calls(fn, [((normal(20),), {}), ((normal(6) - 1,), {})], fullgraph=False)
    explained = tc.explain(fn)(normal(20))
    assert explained.graph_break_count == 1, explained
    reason = explained.break_reasons[0].reason
    assert "comes from array values" in reason and "needed here as a Python number" in reason


def test_lengths_that_no_longer_fit_raise_numpys_error():
    def added(x, y):
        return x[x > 0] + y

    calls = [((np.array([1.0, -1.0, 2.0]), np.ones(2)), {}),
             ((np.array([1.0, 1.0, 2.0]), np.ones(2)), {})]  # fmt: skip
    check_same_calls(added, calls)


def test_turned_off_it_breaks_at_the_operation(monkeypatch):
    monkeypatch.setattr(tc.config, "sizes_from_data", False)
    check_same_calls(gathered_by_nonzero, [((normal(20),), {})], fullgraph=False)
    explained = tc.explain(gathered_by_nonzero)(normal(20))
    assert explained.graph_break_count == 1, explained
    assert "depends on array values" in explained.break_reasons[0].reason


def test_the_graph_holds_no_size_for_it():
    explained = tc.explain(selected_twice)(normal(20))
    (graph,) = explained.graphs
    selection = next(n for n in graph.nodes if n.op == "getitem" and n.sized_by_data)
    assert selection.tensor.shape == (None,)
    doubled = next(n for n in graph.nodes if n.sized_by_data and n is not selection)
    assert doubled.tensor.shape == (None,) and doubled.risk == "raise"


def test_explain_names_the_operations_that_make_such_sizes():
    explained = tc.explain(thresholds)(normal(20))  # its loop unrolls: a selection per iteration
    made = [size.operation for size in explained.data_sizes]
    assert made == ["s = x[gt]", "s_1 = x[gt_1]", "s_2 = x[gt_2]"], explained
    assert "Sizes from data:" in str(explained) and "known only when the graph runs" in str(
        explained
    )
    explained = tc.explain(gathered_by_nonzero)(normal(20))
    # np.nonzero makes the size; x[i] and what follows only carry it
    assert [size.operation.split(" = ")[1] for size in explained.data_sizes] == ["np.nonzero(gt)"]
