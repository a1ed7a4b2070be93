"""Reductions of a boolean-mask selection (issue 23, sizes from data): ``x[m].sum()``,
``np.mean(d[(r >= a) & (r < b)])``, ``(x[m] * 2).max()``. The selection is made in the graph, an
array whose length is known only when the graph runs, and reduced there as eager code reduces
it, so the function stays one graph and its results are eager's bit for bit, whatever the mask
selects: none of the elements (``max`` raises NumPy's ValueError, ``mean`` warns and gives NaN),
all of them, rows of a 2-D array. A selection kept for later (returned, stored, used as an array)
is a size from data (`test_sizes_from_data`). Each case runs eagerly and compiled on several inputs, on the
eager and the cpu backends."""

from __future__ import annotations

import numpy as np
import pytest
from harness import check_one_graph, check_same_calls

import tcompile as tc


def total_above(x, t):
    return x[x > t].sum()


def mean_of_function(x, t):
    return np.mean(x[x > t])


def largest_scaled(x, y):
    return (x[y > 0.5] * 2.0 + 1.0).max()


def spread(x):
    return x[x > 0].var(ddof=1) + x[x < 0].std()


def where_largest(x, y):
    return x[y > 0].argmax(), np.count_nonzero(x[y > 0])


def row_totals(a, keep):
    return a[keep].sum(), np.max(a[keep])


def radial_means(data, radius, bins):
    """azimint_naive: the mean of the values in each ring, one graph (an empty ring: NaN)."""
    out = np.zeros(bins)
    for i in range(bins):
        ring = (radius >= i) & (radius < i + 1)
        out[i] = np.mean(data[ring])
    return out


RNG = np.random.default_rng(23)
X = RNG.standard_normal(64)
ONE_GRAPH = [
    (total_above, [((X, 0.5), {}), ((-X, 0.5), {}), ((X - 9.0, 0.5), {}), ((X + 9.0, 0.5), {})]),
    (mean_of_function, [((X, 0.25), {}), ((X - 9.0, 0.25), {}), ((-X, 0.25), {})]),
    (largest_scaled, [((X, RNG.random(64)), {}), ((X, np.ones(64)), {})]),
    (spread, [((X,), {}), ((RNG.standard_normal(64),), {})]),
    (where_largest, [((X, RNG.standard_normal(64)), {}), ((X, np.ones(64)), {})]),
    (row_totals, [((RNG.random((6, 3)), RNG.random(6) > 0.5), {}), ((RNG.random((6, 3)), np.ones(6, bool)), {})]),
    (radial_means, [((RNG.random(80), RNG.random(80) * 3, 3), {}), ((RNG.random(80), RNG.random(80) * 2, 3), {})]),
]  # fmt: skip


@pytest.mark.parametrize("backend", ["eager", "cpu"])
@pytest.mark.parametrize(("fn", "calls"), ONE_GRAPH, ids=[c[0].__name__ for c in ONE_GRAPH])
def test_a_reduction_of_a_selection_stays_in_the_graph(fn, calls, backend):
    if backend == "cpu":
        pytest.importorskip("numba", reason="the cpu backend needs numba")
    check_one_graph(fn, calls, backend)


def largest_above(x, t):
    return x[x > t].max()


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_an_empty_selection_raises_or_warns_as_eager(backend):
    if backend == "cpu":
        pytest.importorskip("numba", reason="the cpu backend needs numba")
    calls = [((X, 0.5), {}), ((X - 99.0, 0.5), {}), ((-X, 0.5), {})]
    check_same_calls(largest_above, calls, fullgraph=False, backend=backend)
    check_same_calls(mean_of_function, calls, backend=backend)  # "Mean of empty slice"


def kept(x):
    selected = x[x > 0]
    return selected.sum(), selected


def sized(x):
    return x[x > 0].sum() / len(x[x > 0])


@pytest.mark.parametrize("sizes_from_data", [True, False])
def test_a_selection_used_as_an_array_is_a_size_from_data(sizes_from_data, monkeypatch):
    """Kept, returned or measured, a selection is an array of its own: with sizes from data
    one graph still (`test_sizes_from_data`), without them the break at its read."""
    monkeypatch.setattr(tc.config, "sizes_from_data", sizes_from_data)
    for fn in (kept, sized):
        check_same_calls(fn, [((X,), {}), ((-X,), {})], fullgraph=False)
        explained = tc.explain(fn)(X.copy())
        if sizes_from_data:
            assert (explained.graph_count, explained.graph_break_count) == (1, 0), explained
        else:
            assert explained.graph_break_count >= 1, explained
            assert "boolean-mask indexing" in explained.break_reasons[0].reason


def test_the_graph_shows_the_selection_and_its_reduction():
    explained = tc.explain(total_above)(X.copy(), 0.0)
    graph = explained.graphs[0]
    selected = [n for n in graph.nodes if n.op == "getitem" and n.sized_by_data]
    assert len(selected) == 1 and selected[0].tensor.shape == (None,), graph


def test_with_sizes_from_data_off_a_reduced_selection_breaks_at_its_read(sizes_break):
    check_same_calls(total_above, [((X, 0.5), {})], fullgraph=False)
    explained = tc.explain(total_above)(X.copy(), 0.5)
    assert explained.graph_break_count == 1, explained
    assert "boolean-mask indexing" in explained.break_reasons[0].reason


def test_a_selection_computed_on_and_reduced_is_made_at_its_read():
    """``(x[y > 0.5] * 2.0 + 1.0).max()``: the selection first, then the operations on its
    elements, as eager code runs them (masked ufuncs over the whole array cost more: they are
    kept for values stored back, ``z[m] = z[m] * 2``)."""
    graph = tc.explain(largest_scaled)(X, RNG.random(64)).graphs[0]
    calls = [(n.op, getattr(n.target, "__name__", None), dict(n.kwargs)) for n in graph.nodes]
    assert not any("where" in kwargs or name == "empty_like" for _, name, kwargs in calls), calls
    assert [op for op, _, _ in calls if op == "getitem"] == ["getitem"], calls
