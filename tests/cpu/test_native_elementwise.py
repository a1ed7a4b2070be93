"""Element-wise array statements in the cpu backend's native loops, fused into one loop nest
(`native_elementwise`): each case compares with the plain call (`same`), says whether the
loop ran as machine code, and whether its statements were fused, or why not (a write between
them, a value read between them, other shapes)."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

pytest.importorskip("numba", reason="the cpu backend needs numba: pip install 'tcompile[cpu]'")

from test_native_loops import native, same  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from loop_kernels import heat_steps as heat  # noqa: E402 - the bench's kernel

import tcompile as tc  # noqa: E402
from tcompile.backend.cpu.native_elementwise import groups_of  # noqa: E402

RNG = np.random.default_rng(7)
GRID, SMALL = RNG.random((12, 9)), RNG.random((4, 3))
X40, X10, X16, X30, N30 = (
    RNG.random(40),
    RNG.random(10),
    RNG.random(16),
    RNG.random(30),
    RNG.integers(-9, 9, 30),
)
A54, ROW4, Z76, B85 = (
    RNG.random((5, 4)),
    RNG.random(4),
    RNG.standard_normal((7, 6)),
    RNG.random((8, 5)),
)


def nests(loop) -> int:
    """How many fused loop nests the loop's function holds."""
    return sum(line.lstrip().startswith("for __tc_i0 in") for line in loop.lines)


def test_a_stencil_step_is_one_nest_and_bitwise(loops):
    """Sums and products element by element in one pass are NumPy's own, bit for bit."""
    same(heat, lambda: (GRID.copy(), 5), lambda: (GRID.copy(), 0), lambda: (SMALL.copy(), 7))
    assert native(loops) == [True] and nests(loops[0]) == 1
    assert "_copy_into(v[1:-1, 1:-1], " in "\n".join(loops[0].lines)  # fresh, of the view's shape
    got = tc.compile(heat, backend="cpu")(GRID.copy(), 9)
    assert got.tobytes() == heat(GRID.copy(), 9).tobytes()


def carried_in_place(u, steps):
    """The carried ``u`` is made under its own name: the nest must read the old one."""
    for _ in range(steps):
        u = u * 0.5 + u[::-1] * 0.25 - 1.0
    return u


def test_a_carried_value_made_by_a_nest_is_read_as_it_was(loops):
    same(carried_in_place, lambda: (X40.copy(), 6))
    assert native(loops) == [True] and nests(loops[0]) == 1


def written_between(a, steps):
    """A write between two operations: the second must see it, the first must not."""
    total = np.zeros_like(a)
    for k in range(steps):
        t = a * 2.0
        a[k] = 5.0
        total = total + t * a
    return total, a


def test_a_write_between_operations_splits_them(loops):
    same(written_between, lambda: (X10.copy(), 4))
    assert native(loops) == [True]


def read_between(a, steps):
    out = np.zeros(a.shape[0] - 1)
    for _ in range(steps):
        t = a + 1.0
        head = t[1:]  # a view of a value of the group
        out = out + head * 2.0
    return out


def test_a_value_read_between_operations_is_made_first(loops):
    same(read_between, lambda: (X16.copy(), 3))
    assert native(loops) == [True]


def typed(x32, n64, steps):
    """float32 with Python floats (NEP 50: float32), int64 wrap-around, comparisons kept."""
    flags = n64 > 0
    for _ in range(steps):
        x32 = x32 * 1.5 + 0.25 - np.sqrt(np.abs(x32))
        n64 = n64 * 6364136223846793005 + 1442695040888963407
        flags = (n64 > 0) & flags
        flags = x32 < 10.0
    return x32, n64, flags


def test_numpy_s_types_element_by_element(loops):
    same(typed, lambda: (X30.astype(np.float32), N30.copy(), 5))
    assert native(loops) == [True] and nests(loops[0]) >= 1


def broadcast(a, row, steps):
    for _ in range(steps):
        a = a + row * 0.5  # other shapes: ``row * 0.5`` a nest, ``a + ...`` numba's broadcast
    return a


def test_operations_of_other_shapes_are_not_fused(loops):
    same(broadcast, lambda: (A54.copy(), ROW4, 3))
    assert native(loops) == [True] and nests(loops[0]) == 1
    assert any(line.strip().startswith("a = a + mul") for line in loops[0].lines)


def rows_into(a, row, steps):
    """A nest's array broadcast into a view of more rows: NumPy's broadcasting store."""
    for k in range(steps):
        a[1:] = row * 2.0 + k
        a[k % 2] = row + a[2]
    return a


def test_a_fresh_array_broadcast_into_a_view_is_numpy_s_store(loops):
    same(rows_into, lambda: (A54.copy(), ROW4, 3))
    assert native(loops) == [True] and nests(loops[0]) == 2
    assert "_assign(a[1:], " in "\n".join(loops[0].lines)


def prefix_scaled(a, w):
    """Shapes known only at run time: ``a[:k]`` and ``w[:k]`` are one nest, stored into
    ``out[:k]`` by a copy; where ``w`` holds one element, NumPy broadcasts it and the frame
    runs as NumPy (the nest checks the shapes as it runs)."""
    out = np.zeros_like(a)
    for k in range(1, a.shape[0]):
        out[:k] = a[:k] * w[:k] + 1.0
    return out


def test_shapes_known_only_at_run_time_are_checked_by_the_nest(loops):
    same(prefix_scaled, lambda: (X10.copy(), X16), lambda: (X10.copy(), X16[:1].copy()),
         lambda: (X10.copy(), X16[:1].copy()), lambda: (X10.copy(), X16), calls=4)  # fmt: skip
    assert native(loops)[0] and nests(loops[0]) == 1
    assert "_copy_into1(out[:k_1], " in "\n".join(loops[0].lines), loops[0].lines


def in_place(a, steps):
    """``a[i] += ...`` (a view updated in place from a fresh array), ``a *= 0.9`` (a number)."""
    for _ in range(steps):
        for i in range(1, a.shape[0]):
            a[i] += a[i - 1] * 0.5 + 1.0
        a *= 0.9
    return a


def test_in_place_updates_are_nests(loops):
    same(in_place, lambda: (A54.copy(), 3))
    assert native(loops) == [True]
    lines = [line.strip() for line in loops[0].lines]
    assert "a[__tc_i0, __tc_i1] = __tc_mul" in lines  # a *= 0.9
    assert "a_item[__tc_i0] = __tc_add_1" in lines  # a[i] += (a fresh array)


def rows_updated(a, idx, steps):
    """``a[i, 1:] += ...`` stores its own view back (nothing to do); ``a[idx] += 1`` indexes a
    copy by an array, whose store is NumPy's fancy assignment."""
    for _ in range(steps):
        for i in range(1, a.shape[0]):
            a[i, 1:] += a[i - 1, :-1] * 0.5
        a[idx] += 1.0
    return a


def test_an_updated_view_stored_back_is_no_statement(loops):
    same(rows_updated, lambda: (A54.copy(), np.array([0, 2, 2]), 3))
    assert native(loops) == [True]
    lines = [line.split("#")[0].strip() for line in loops[0].lines]
    assert "pass" in lines and not any(line.startswith("_assign(a[_at(i,") for line in lines)


def in_place_overlapping(a, steps):
    """``a[1:] += a[:-1]``: the value shares memory with the target (NumPy buffers it)."""
    for _ in range(steps):
        a[1:] += a[:-1]
    return a


def test_an_in_place_update_reads_a_view_of_its_target_as_numpy_does(loops):
    """Not a nest; numba's ``+=`` read the elements it had written (a wrong result before)."""
    same(in_place_overlapping, lambda: (X10.copy(), 3))
    assert native(loops) == [True] and nests(loops[0]) == 0
    assert "a_item += _apart(a_item_1, a_item)" in [
        line.split("#")[0].strip() for line in loops[0].lines
    ]


def transcendental(x, steps):
    for _ in range(steps):
        x = np.tanh(np.sin(x) * 0.9 + np.cos(x) * 0.1) + np.exp(-x * x)
    return x


def test_a_transcendental_chain_within_tolerance(loops):
    same(transcendental, lambda: (Z76.copy(), 4))
    assert native(loops) == [True] and nests(loops[0]) == 1


def in_a_branch(x, limit):
    for i in range(x.shape[0]):
        if x[i, 0] > limit:
            x[i] = x[i] * 0.5 + x[i] * x[i]
    return x


def test_a_nest_in_a_cond_side(loops):
    same(in_a_branch, lambda: (B85.copy(), 0.4))
    assert native(loops) == [True]


def test_groups_stop_at_writes_and_at_readers():
    """`groups_of` on a traced body: the cases above, group by group."""
    (graph,) = tc.explain(written_between)(X10.copy(), 2).graphs
    (loop,) = [n for n in graph.nodes if n.op == "loop"]
    groups = groups_of(loop.target.body.nodes)
    # ``t = a * 2.0`` alone before the write; ``t * a`` and ``total + ...`` after it
    assert [[m.name for m in g.members] for g in groups.values()] == [["t"], ["mul", "total_1"]]
    (graph,) = tc.explain(read_between)(X16.copy(), 2).graphs
    (loop,) = [n for n in graph.nodes if n.op == "loop"]
    first, group = groups_of(loop.target.body.nodes).values()
    # ``t = a + 1.0`` is read by the view ``t[1:]``: alone; the two after the view are a group
    assert [m.name for m in first.members] == ["t"] and first.kept == first.members
    assert [m.name for m in group.members] == ["mul", "out_1"] and group.kept == [group.members[1]]
