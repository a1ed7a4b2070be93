"""The eager backend's memory plan (backend/memory_plan.py): values are released after their last
use and element-wise ufuncs write into operands that die there, never into anything a caller,
a view, a side effect or a later frame can see; results stay bitwise eager's."""

from __future__ import annotations

import re
import tracemalloc

import numpy as np
import pytest
from harness import check_same

import tcompile as tc


def graph_code(fn, *args) -> str:
    compiled = tc.compile(fn, backend="eager")
    compiled(*args)
    return compiled.__tc_compiled__.entries[-1].report.sources["backend"]


def out_buffers(code: str) -> list[str]:
    return re.findall(r"out=(\w+)\)", code)


def chain(x, y):
    d = np.radians(x - y)
    return np.sin(d / 2) ** 2 + np.cos(x) * np.cos(y)


def test_the_printed_graph_shows_the_plan_and_runs_it():
    x, y = np.linspace(0, 1, 50), np.linspace(1, 2, 50)
    code = graph_code(chain, x, y)
    assert "out=" in code and "\n    del " in code
    assert "x" not in out_buffers(code) and "y" not in out_buffers(code)
    check_same(chain, x, y, calls=2)


def writes_after_return(x):
    a = x + 1
    b = a * 2
    return a, b


def view_kept(x):
    a = x + 1
    v = a[1:]
    b = a * 2
    return v, b


def captured_by_side_effect(x, log):
    a = x * 3
    log.append(a)
    b = a + 1
    return b


def alive_across_a_break(x):
    a = x + 1
    print("break")
    b = a * 2
    return a, b


def reshaped_alias(x):
    a = x - 1
    r = a.reshape(-1)
    b = np.exp(a)
    return r, b


@pytest.mark.parametrize(
    "fn, args, fullgraph",
    [
        (writes_after_return, (np.arange(6.0),), True),
        (view_kept, (np.arange(6.0),), True),
        (captured_by_side_effect, (np.arange(6.0), []), True),
        (alive_across_a_break, (np.arange(6.0),), False),
        (reshaped_alias, (np.arange(6.0).reshape(2, 3),), True),
    ],
)
def test_visible_arrays_are_never_reused(fn, args, fullgraph):
    check_same(fn, *args, fullgraph=fullgraph, calls=2)
    code = graph_code(fn, *args)
    assert "a" not in out_buffers(code)


def inputs_never_written(x, y):
    return np.sin(x) + np.cos(y) * x


def test_inputs_are_never_buffers():
    x, y = np.arange(4.0), np.arange(4.0) + 1
    check_same(inputs_never_written, x, y, calls=2)
    assert not {"x", "y"} & set(out_buffers(graph_code(inputs_never_written, x, y)))


def layouts_and_dtypes(x, mask):
    a = x * 2  # Fortran order, like x
    b = np.exp(a)  # may reuse a: same layout
    c = (b > 1) & mask  # bool: a different dtype, no reuse of b
    s = x.sum()
    t = np.sin(s) * 2  # NumPy scalars: no out= (it would return a 0-d array)
    return b, c, t


def test_layouts_dtypes_and_scalars_stay_eagers():
    x = np.asfortranarray(np.arange(12.0).reshape(3, 4) / 10)
    mask = np.arange(12).reshape(3, 4) % 2 == 0
    check_same(layouts_and_dtypes, x, mask, calls=2)
    code = graph_code(layouts_and_dtypes, x, mask)
    assert "np.exp(a, out=a)" in code and "out=b" not in code


def stencil(u):
    for _ in range(8):
        v = u.copy()
        v[1:-1] = 0.5 * (u[:-2] + u[2:])
        u = v
    return u


def peak_bytes(fn, *args) -> int:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        fn(*args)
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_an_unrolled_loop_holds_no_more_memory_than_eager():
    u = np.random.default_rng(0).standard_normal(100_000)
    compiled = tc.compile(stencil, backend="eager", fullgraph=True)
    check_same(stencil, u, calls=2)
    compiled(u)
    assert peak_bytes(compiled, u) <= peak_bytes(stencil, u) * 1.05


def rooted(x):
    return np.sqrt(np.abs(x)) * 2.0 + 1.0


def outer_sum(a, b):
    t = np.exp(a)  # (n, 1)
    return t + np.exp(b)  # broadcast against (1, m): t is no buffer for the (n, m) sum


def test_symbolic_sizes_reuse_a_dying_operand_and_hold_no_more_memory_than_eager():
    """Where sizes are symbolic (a second size, a Dask chunk's graph) the layouts are not in
    the metas: an element-wise ufunc of one dense fresh array still writes into it (an abs,
    sqrt, scale and shift of a chunk held one temporary more than plain NumPy)."""
    compiled = tc.compile(rooted, backend="eager")
    for n in (1000, 3000, 200_000):  # the second size makes the dims symbolic
        x = np.random.default_rng(n).standard_normal(n)
        np.testing.assert_array_equal(compiled(x), rooted(x))
    entry = compiled.__tc_compiled__.entries[-1]
    assert entry.report.graphs[0].nodes[0].tensor.strides is None  # symbolic
    code = entry.report.sources["backend"]
    assert len(out_buffers(code)) == 3, code
    assert peak_bytes(compiled, x) <= peak_bytes(rooted, x) * 1.05


def test_symbolic_sizes_never_reuse_an_operand_that_broadcasts():
    a, b = np.arange(3.0).reshape(3, 1), np.arange(4.0).reshape(1, 4)
    check_same(outer_sum, a, b, calls=1)
    compiled = tc.compile(outer_sum, backend="eager")
    compiled(a, b)
    compiled(np.arange(5.0).reshape(5, 1), np.arange(6.0).reshape(1, 6))  # symbolic now
    got = compiled(np.arange(7.0).reshape(7, 1), np.arange(2.0).reshape(1, 2))
    np.testing.assert_array_equal(got, outer_sum(np.arange(7.0).reshape(7, 1),
                                                 np.arange(2.0).reshape(1, 2)))  # fmt: skip
    code = compiled.__tc_compiled__.entries[-1].report.sources["backend"]
    assert "out=t" not in code and "out=exp" not in code.replace("out=exp_1", ""), code
