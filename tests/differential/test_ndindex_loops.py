"""``for idx in np.ndindex(shape)`` over a known shape (issue 23, "the rest": NPBench's
local_maxima): a loop node whose body makes the index tuple from the iteration's position
(``(k // m % n, k % m)``), not a break and a split loop. Each case runs eagerly and compiled
on several inputs, on the eager and the cpu backends: same results bitwise (eager), same
printed output and writes."""

from __future__ import annotations

import numpy as np
import pytest
from harness import check_same_calls

import tcompile as tc


def local_maxima(x):
    out = np.zeros(x.shape, dtype=bool)
    for i, j in np.ndindex(x.shape[0] - 2, x.shape[1] - 2):
        centre = x[i + 1, j + 1]
        out[i + 1, j + 1] = (centre > x[i, j + 1]) & (centre > x[i + 2, j + 1])
    return out


def indexed_total(x):
    total = 0.0
    for index in np.ndindex(x.shape):  # the index tuple itself
        total += x[index] * (index[0] + 1)
    return total


def three_dims(x):
    out = np.empty(x.shape)
    for i, j, k in np.ndindex(*x.shape):
        out[i, j, k] = x[i, j, k] * i - k
    return out


def numbered(x):
    out = np.zeros(x.size)
    for n, (i, j) in enumerate(np.ndindex(x.shape)):
        out[n] = x[i, j] + n
    return out


def printed_inside(x):
    s = 0.0
    for i, j in np.ndindex(2, 3):
        if i == 1 and j == 0:
            print("second row at", i, j)
        s += x[i, j]
    return s


def unrolled_into_a_list(x):
    items = []
    for i, j in np.ndindex(2, 2):
        items.append(x[i, j] * (i + j))
    return items


RNG = np.random.default_rng(5)
INDEX_LOOPS = [
    (local_maxima, [RNG.standard_normal((5, 4)), RNG.standard_normal((5, 4))], 1),
    (indexed_total, [RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))], 1),
    (three_dims, [RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 3, 4))], 1),
    (numbered, [RNG.standard_normal((3, 3)), RNG.standard_normal((3, 3))], 1),
    (unrolled_into_a_list, [RNG.standard_normal((2, 2)), RNG.standard_normal((2, 2))], 0),
]


@pytest.mark.parametrize("backend", ["eager", "cpu"])
@pytest.mark.parametrize(
    ("fn", "inputs", "loop_nodes"), INDEX_LOOPS, ids=[c[0].__name__ for c in INDEX_LOOPS]
)
def test_ndindex_loops_are_one_graph(fn, inputs, loop_nodes, backend):
    if backend == "cpu":
        pytest.importorskip("numba", reason="the cpu backend needs numba")
    check_same_calls(fn, [((x,), {}) for x in inputs], backend=backend)
    explained = tc.explain(fn)(inputs[0])
    assert (explained.graph_count, explained.graph_break_count) == (1, 0), explained
    nodes = [loop for loop in explained.loops if "loop node" in loop.describe()]
    assert len(nodes) == loop_nodes, [loop.describe() for loop in explained.loops]


def test_a_print_in_an_ndindex_loop_breaks_there_and_the_loop_goes_on():
    calls = [((RNG.standard_normal((2, 3)),), {}), ((np.ones((2, 3)),), {})]
    check_same_calls(printed_inside, calls, fullgraph=False)


def test_other_shapes_give_numpys_results():
    compiled = tc.compile(local_maxima)
    for shape in [(5, 4), (6, 7), (3, 3), (9, 4)]:
        x = RNG.standard_normal(shape)
        np.testing.assert_array_equal(compiled(x), local_maxima(x))


# -- np.ndenumerate: each position with its element, read as the loop runs ------------------


def weighted_by_position(x):
    s = 0.0
    for (i, j), v in np.ndenumerate(x):
        s += v * i - j
    return s


def kept_above(x):
    out = np.zeros_like(x)
    for index, v in np.ndenumerate(x):
        if v > 0.5:
            out[index] = v
    return out


def adds_forward(x):
    """Each element read after the iteration before wrote it: a running sum, as NumPy's flat
    iterator gives (items made up front would give the old values: no loop node here, and
    the loop breaks rather than unroll)."""
    for (i,), v in np.ndenumerate(x):
        if i + 1 < x.shape[0]:
            x[i + 1] += v
    return x


@pytest.mark.parametrize("backend", ["eager", "cpu"])
@pytest.mark.parametrize("fn", [weighted_by_position, kept_above])
def test_ndenumerate_loops_are_one_graph(fn, backend):
    if backend == "cpu":
        pytest.importorskip("numba", reason="the cpu backend needs numba")
    rng = np.random.default_rng(5)
    calls = [((rng.random((3, 4)),), {}), ((rng.random((3, 4)),), {})]
    check_same_calls(fn, calls, backend=backend, later_calls_hit_cache=True)
    explained = tc.explain(fn)(rng.random((3, 4)))
    assert (explained.graph_count, explained.graph_break_count) == (1, 0), explained
    assert [loop.captured for loop in explained.loops] == [True], explained


def test_ndenumerate_reads_each_element_as_the_loop_runs():
    rng = np.random.default_rng(6)
    check_same_calls(
        adds_forward, [((rng.random(6),), {}), ((rng.random(6),), {})], fullgraph=False
    )
    check_same_calls(lambda x: next(iter(np.ndenumerate(x))), [((np.array(2.5),), {})],
                     fullgraph=False)  # fmt: skip
