"""``int(x)`` and ``float(x)`` of array data (issue 23): a Python number of the graph, known
when the graph runs, which indices, arithmetic and loop nodes use as it is (a histogram's bin
``hist[int(v * n)] += w`` is one loop node, a CSR row's ``range(indptr[i], indptr[i + 1])`` a
loop node's count); where it is needed as a number while tracing (a branch on it, a size) the
graph breaks there, as before. Each case runs eagerly and compiled
on several inputs, on the eager and the cpu backends: same results (bitwise), errors and
writes."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from harness import check_one_graph, check_same_calls

import tcompile as tc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from scalar_loops import histogram  # noqa: E402 - the bench's kernel


def bin_of_max(x):
    k = int(x.argmax())  # an int of the graph used as an index
    return x[k] * 2, k + 1


def scaled(x):
    return float(x.sum()) * 0.5 + float(x[0])


def rounded_down(x):
    out = np.empty(x.shape[0], dtype=np.int64)
    for i in range(x.shape[0]):
        out[i] = int(x[i] * 10.0) - 3
    return out


def csr_rows(indptr, indices, values, x):
    """``y = A @ x`` for A in CSR form: each row's range read from ``indptr`` (a loop node's
    count from data, zero for an empty row)."""
    y = np.zeros(indptr.shape[0] - 1)
    for i in range(indptr.shape[0] - 1):
        for j in range(indptr[i], indptr[i + 1]):
            y[i] += values[j] * x[indices[j]]
    return y


def csr_row_totals(indptr, indices, values, x):
    """Each row summed into a carried float64 (the inner loop, run zero times for an empty row,
    gives back its start)."""
    y = np.zeros(indptr.shape[0] - 1)
    for i in range(indptr.shape[0] - 1):
        total = np.float64(0.0)
        for j in range(indptr[i], indptr[i + 1]):
            total += values[j] * x[indices[j]]
        y[i] = total
    return y


def csr(rows: int, seed: int) -> tuple:
    rng = np.random.default_rng(seed)
    per_row = rng.integers(0, 4, rows)  # some rows empty
    indptr = np.concatenate([[0], np.cumsum(per_row)]).astype(np.int64)
    indices = rng.integers(0, rows, indptr[-1]).astype(np.int64)
    return indptr, indices, rng.random(indptr[-1]), rng.random(rows)


RNG = np.random.default_rng(41)
CSR = csr(12, 1)
ONE_GRAPH = [
    (
        histogram,
        [
            ((RNG.random(200), RNG.random(200), 16), {}),
            ((RNG.random(200), RNG.random(200), 16), {}),
        ],
    ),
    (bin_of_max, [((RNG.random(9),), {}), ((RNG.random(9),), {})]),
    (scaled, [((RNG.random(5),), {}), ((RNG.random(5),), {})]),
    (rounded_down, [((RNG.standard_normal(30),), {}), ((RNG.standard_normal(30),), {})]),
    (csr_rows, [(CSR, {}), ((*CSR[:2], CSR[2][::-1].copy(), CSR[3] + 1), {})]),
    (csr_row_totals, [(CSR, {}), ((*CSR[:2], CSR[2][::-1].copy(), CSR[3] + 1), {})]),
]


@pytest.mark.parametrize("backend", ["eager", "cpu"])
@pytest.mark.parametrize(("fn", "calls"), ONE_GRAPH, ids=[c[0].__name__ for c in ONE_GRAPH])
def test_numbers_from_data_stay_in_the_graph(fn, calls, backend):
    if backend == "cpu":
        pytest.importorskip("numba", reason="the cpu backend needs numba")
    check_one_graph(fn, calls, backend)


def needed_as_a_size(x):
    n = int(x.sum())
    return np.zeros(n)


def needed_in_a_branch(x):
    if int(x[0]) > 2:
        return x * 2
    return x


def not_a_number(x):
    out = []
    for v in x:
        out.append(int(v))  # NaN: ValueError, infinity: OverflowError, as eager
    return out


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_an_int_of_data_needed_as_a_number_breaks_there(backend):
    if backend == "cpu":
        pytest.importorskip("numba", reason="the cpu backend needs numba")
    check_same_calls(needed_as_a_size, [((np.full(3, 1.5),), {})], fullgraph=False, backend=backend)
    check_same_calls(needed_in_a_branch, [((np.array([3.5, 1.0]),), {}), ((np.array([0.5, 1.0]),), {})],
                     fullgraph=False, backend=backend)  # fmt: skip
    explained = tc.explain(needed_as_a_size)(np.full(3, 1.5))
    assert explained.graph_break_count == 1, explained
    assert "needed here as a Python value" in explained.break_reasons[0].reason


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_an_int_of_nan_or_infinity_raises_as_eager(backend):
    if backend == "cpu":
        pytest.importorskip("numba", reason="the cpu backend needs numba")
    calls = [((np.array([1.5, 2.5]),), {}), ((np.array([1.5, np.nan]),), {}),
             ((np.array([np.inf, 1.0]),), {})]  # fmt: skip
    check_same_calls(not_a_number, calls, fullgraph=False, backend=backend)


def counted_after_a_branch(a):
    """A counter a cond node made (an int of the graph), then moved by a loop of known trips."""
    n = 0
    if a.sum() > 0.0:
        n += 1
    for _ in range(2):
        n += 1
    return n


@pytest.mark.parametrize("backend", ["eager", "cpu"])
def test_a_counter_a_branch_made_is_counted_on_by_a_loop(backend):
    """Found by the break property test on 3.12: the counter's value after the loop was read
    as a Python int (an internal error, the frame ran eagerly)."""
    if backend == "cpu":
        pytest.importorskip("numba")
    calls = [((np.arange(4.0),), {}), ((-np.arange(4.0),), {})]
    check_same_calls(counted_after_a_branch, calls, fullgraph=True, backend=backend)
