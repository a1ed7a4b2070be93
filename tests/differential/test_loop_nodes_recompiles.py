"""Loop nodes across calls (issue 11, part 1): a new trip count, a new number of rows or a new
dtype recompiles (or makes the count a graph input) and keeps results right."""

from __future__ import annotations

import numpy as np
from diffharness import C, max_recompiles, on_every_backend
from loop_shapes import assert_loops, line, mat
from test_loop_nodes import enumerate_rows, rows, stencil

import tcompile as tc

# --- recompiles -------------------------------------------------------------------------------


def trip_count_arg(x, n):
    for i in range(n):
        x = x * 0.5 + i
    return x


def trip_count_with_index_after(x, n):
    for i in range(2, n, 3):
        x = x * 0.5 + i
    return x, i


def trip_count_nested(m, n):
    for r in range(m.shape[0]):
        for _ in range(n):
            m[r] = m[r] * 0.5 + r
    return m


def trip_count_and_arithmetic(x, n):
    for i in range(n):
        x = x + n * i
    return x * n


def trip_count_zip_pinned(m, n):
    acc = np.zeros(m.shape[1])
    for i, row in zip(range(n), m):
        acc = acc + row * i
    return acc


def trip_count_enumerate(x, n):
    for j, i in enumerate(range(n), 1):
        x = x - j * i
    return x


def dynamic_int_pinned(x, n):
    head = x[:n]  # a size follows n: pinned
    return head * n, np.zeros(n) + n


def dynamic_int_as_float(x, n):
    return x * (n / 4) + 1.0 / (n + 1)


def dynamic_int_slice_len(x, n):
    return x[:n].shape[0], x[n:].sum(), len(x[n - 1 :])


def dynamic_int_window(x, n):
    return x[n : n + 2].shape[0], x[n : n + 2] * 2  # one element long at the end


def dynamic_int_index(x, n):
    return x[n] * n, x * (n - 1) // 2


def back_substitution(u, b):
    """A descending range over a dynamic dim (``range(n - 1, -1, -1)``), carrying its sum."""
    n = b.shape[0]
    x = np.zeros(n)
    total = 0.0
    for i in range(n - 1, -1, -1):
        x[i] = (b[i] - u[i, i + 1 :] @ x[i + 1 :]) / u[i, i]
        total = total + x[i]
    return x, total


def countdown_arg(x, k):
    """A descending range from an int argument, by twos."""
    for i in range(k, 0, -2):
        x = x * 0.5 + i
    return x, i


def _system(n, seed=0):
    rng = np.random.default_rng(seed)
    return np.triu(rng.random((n, n))) + n * np.eye(n), rng.random(n)


def recompiled_at_least(n):
    def check_counters(counters):
        assert counters["recompiles"] >= n, counters

    return check_counters


RECOMPILES = [
    # A new trip count is a new constant: a recompile, and a new loop node.
    C(
        "trip_count_changes",
        trip_count_arg,
        lambda: (line(3), 7),
        lambda: (line(3, 1), 12),
        after=recompiled_at_least(1),
    ),
    # 0 makes n dynamic, and a count that may be 0 no loop node: the loop runs split (a
    # dynamic trip count is never unrolled), and that entry serves 1 too
    C(
        "trip_count_to_0_and_1",
        trip_count_arg,
        lambda: (line(3), 7),
        lambda: (line(3), 0),
        lambda: (line(3), 1),
        after=recompiled_at_least(1),
    ),
    # A trip count that follows an int argument: after the second value it is a graph input
    # (automatic dynamic ints), and new counts reuse that entry. Zero iterations recompile.
    C(
        "trip_count_is_an_input",
        trip_count_arg,
        lambda: (line(3), 5),
        lambda: (line(3), 7),
        lambda: (line(3, 1), 30),
        lambda: (line(3, 2), 1),
        pattern="ABCDA",
        after=max_recompiles(1),
    ),
    C(
        "trip_count_zero_after_dynamic",
        trip_count_arg,
        lambda: (line(3), 5),
        lambda: (line(3), 7),
        lambda: (line(3), 0),
        lambda: (line(3), 1),
        pattern="ABCDCB",
        after=max_recompiles(2),
    ),
    C(
        "trip_count_start_step_index_after",
        trip_count_with_index_after,
        lambda: (line(3), 9),
        lambda: (line(3), 14),
        lambda: (line(3), 3),
        lambda: (line(3), 2),
        lambda: (line(3), 40),
        pattern="ABCDEA",
    ),
    C(
        "trip_count_nested",
        trip_count_nested,
        lambda: (mat(), 3),
        lambda: (mat(), 5),
        lambda: (mat(seed=1), 9),
        pattern="ABCA",
        after=max_recompiles(1),
    ),
    C(
        "trip_count_and_arithmetic",
        trip_count_and_arithmetic,
        lambda: (line(3), 4),
        lambda: (line(3), 6),
        lambda: (line(3), 11),
        pattern="ABCB",
        after=max_recompiles(1),
    ),
    C(
        "trip_count_zip_pinned",
        trip_count_zip_pinned,
        lambda: (mat(), 3),
        lambda: (mat(), 5),
        lambda: (mat(), 9),
    ),
    C(
        "trip_count_enumerate",
        trip_count_enumerate,
        lambda: (line(3), 4),
        lambda: (line(3), 6),
        lambda: (line(3), 10),
        pattern="ABCA",
        after=max_recompiles(1),
    ),  # fmt: skip
    C(
        "dynamic_int_pinned",
        dynamic_int_pinned,
        lambda: (line(8), 2),
        lambda: (line(8), 3),
        lambda: (line(8), 5),
    ),  # fmt: skip
    C(
        "dynamic_int_window",
        dynamic_int_window,
        lambda: (line(8), 2),
        lambda: (line(8), 3),
        lambda: (line(8), 7),
        pattern="ABCB",
    ),  # fmt: skip
    C(
        "dynamic_int_index",
        dynamic_int_index,
        lambda: (line(8), 2),
        lambda: (line(8), 3),
        lambda: (line(8), 7),
        lambda: (line(8), 8),
        lambda: (line(8), -8),
        pattern="ABCDEC",
        after=max_recompiles(1),
    ),  # fmt: skip
    # New values: the same graph.
    C(
        "values_change",
        enumerate_rows,
        lambda: mat(),
        lambda: mat(seed=1),
        lambda: mat(seed=2),
        after=max_recompiles(0),
    ),
    C(
        "stencil_values_change",
        stencil,
        lambda: (line(), 0.1),
        lambda: (line(seed=1), 0.1),
        after=max_recompiles(0),
    ),
    # A descending range: over a dynamic dim (one recompile, then every size but 0 and 1
    # reuses it), and from a dynamic int argument (its guard: one iteration at least)
    C(
        "descending_over_a_dim",
        back_substitution,
        lambda: _system(5),
        lambda: _system(7, 1),
        lambda: _system(12, 2),
        lambda: _system(2, 3),
        lambda: _system(1, 4),
        after=max_recompiles(2),
    ),
    C(
        "descending_from_an_argument",
        countdown_arg,
        lambda: (line(3), 9),
        lambda: (line(3), 14),
        lambda: (line(3), 3),
        lambda: (line(3), 1),
        lambda: (line(3), 40),
        after=max_recompiles(1),
    ),
    # New numbers of rows: recompiles (then a symbolic size), right results.
    C("rows_count_changes", rows, lambda: mat(4), lambda: mat(6, seed=1), lambda: mat(9, seed=2)),
    C(
        "rows_dtype_changes",
        enumerate_rows,
        lambda: mat(),
        lambda: mat(dtype=np.float32),
        after=recompiled_at_least(1),
    ),
]


def test_dynamic_trip_count_is_a_graph_input():
    f = tc.compile(trip_count_arg, backend="eager")
    f(line(3), 5)
    f(line(3), 7)  # the second value: n becomes a graph input
    entry = f.__tc_compiled__.entries[-1]
    assert "n >= 1" in [g.describe() for g in entry.guards]
    assert not any(g.kind == "const" and g.source.name() == "n" for g in entry.guards)
    (record,) = entry.report.loops
    assert record.captured and record.count_from == "n (a graph input)", record
    assert "7 iterations here, count from n (a graph input)" in record.describe()


def test_a_descending_range_over_a_dynamic_dim_is_one_loop_node():
    f = tc.compile(back_substitution, backend="eager", fullgraph=True)
    f(*_system(5))
    f(*_system(7, 1))  # the second size: n is symbolic
    entry = f.__tc_compiled__.entries[-1]
    (record,) = entry.report.loops
    assert record.captured, record  # its first iteration peeled: ``total`` becomes a float64
    for n in (3, 9, 30):
        got, expected = f(*_system(n, n)), back_substitution(*_system(n, n))
        np.testing.assert_array_equal(got[0], expected[0])
        assert got[1] == expected[1]
    assert len(f.__tc_compiled__.entries) == 2


def test_trip_count_loop_node_per_count():
    for n, loops in ((7, 1), (12, 1), (1, 0), (0, 0)):
        assert_loops(trip_count_arg, lambda n=n: (line(3), n), loops, 4)


test_eager_backend, test_default_backend, test_cpu_backend = on_every_backend(RECOMPILES)


CASES = RECOMPILES  # tests/triton runs them again on the triton backend
