"""Ways of making arrays the tracer did not trace (issue 23, "the rest"): NumPy's index tricks
on constant bounds (``np.mgrid[0:n, 0:m]``, ``np.ogrid``, ``np.r_``, ``np.c_``: NPBench's
mandelbrot2 and stockham_fft unpack ``np.mgrid``) as graph nodes that make their arrays on
every call, as eager code does; the ``np.ndarray(shape, dtype)`` constructor (NPBench's vadv)
as ``np.empty``.

They were folded at trace time into one constant array: unpacking it broke the graph, and a
caller writing into a returned grid changed what the next call returned (the same object on
every call). Each case runs eagerly and compiled on several inputs: same results bitwise,
same writes; one graph, no break."""

from __future__ import annotations

import numpy as np
import pytest
from harness import check_same_calls

import tcompile as tc


def grid_unpacked(x):
    n, m = x.shape
    xi, yi = np.mgrid[0:n, 0:m]
    return x * xi + yi


def grid_of_complex_steps(z):
    re, im = np.mgrid[-2:1:5j, -1:1:4j]  # complex steps: numbers of points, floats
    return z + (re + 1j * im)


def grid_rows_in_a_loop(x):
    total = x.copy()
    for row in np.mgrid[0:3, 0 : x.shape[1]]:
        total = total + row[: x.shape[0]]
    return total


def open_grid(x):
    a, b = np.ogrid[0 : x.shape[0], 0 : x.shape[1]]
    return x * a + b


def concatenated(x):
    return x + np.r_[1:4, 7]


def grid_written_then_returned(x):
    xi, yi = np.mgrid[0:2, 0:3]
    xi[0, 0] = 7  # a write into the grid: an operation of the graph
    return x + xi, yi


def constructed_then_filled(x):
    out = np.ndarray(x.shape, x.dtype)  # uninitialised, as np.empty
    out[:] = x * 2
    fortran = np.ndarray((2, 3), dtype=np.float32, order="F")
    fortran.fill(1.5)
    return out, fortran


MAKERS = [
    (grid_unpacked, [np.arange(6.0).reshape(2, 3), np.ones((2, 3)) * 0.5]),
    (grid_of_complex_steps, [np.zeros((5, 4), complex), np.full((5, 4), 1 + 2j)]),
    (grid_rows_in_a_loop, [np.arange(6.0).reshape(2, 3), np.ones((2, 3))]),
    (open_grid, [np.arange(6.0).reshape(2, 3), np.ones((2, 3))]),
    (concatenated, [np.arange(4.0), np.ones(4)]),
    (grid_written_then_returned, [np.ones((2, 3)), np.zeros((2, 3))]),
    (constructed_then_filled, [np.arange(6.0).reshape(2, 3), np.ones(4, np.int32)]),
]


@pytest.mark.parametrize(("fn", "inputs"), MAKERS, ids=[c[0].__name__ for c in MAKERS])
def test_index_tricks_are_one_graph_with_eager_results(fn, inputs):
    check_same_calls(fn, [((x,), {}) for x in inputs])
    explained = tc.explain(fn)(inputs[0])
    assert (explained.graph_count, explained.graph_break_count) == (1, 0), explained


def whole_grid(n):
    return np.mgrid[0:n, 0:n]


def test_a_returned_grid_is_a_new_array_on_every_call():
    compiled = tc.compile(whole_grid)
    first = compiled(3)
    first[0, 0, 0] = 99  # the caller's array now: the next call is not affected
    second = compiled(3)
    assert second is not first
    np.testing.assert_array_equal(second, whole_grid(3))


def over_a_buffer(x):
    view = np.ndarray((2,), dtype=x.dtype, buffer=x)  # a view of x's memory
    view[0] = 5
    return x * 2


def test_the_ndarray_constructor_over_a_buffer_breaks_and_runs_eagerly():
    check_same_calls(over_a_buffer, [((np.arange(4.0),), {})], fullgraph=False)
    explained = tc.explain(over_a_buffer)(np.arange(4.0))
    assert explained.graph_break_count == 1
    assert "over a buffer" in explained.break_reasons[0].reason


def test_a_constructed_array_keeps_its_order():
    got = tc.compile(constructed_then_filled, fullgraph=True)(np.ones(3))[1]
    assert got.flags.f_contiguous and not got.flags.c_contiguous
