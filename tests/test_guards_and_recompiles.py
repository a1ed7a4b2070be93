"""Guards, recompiles, the cache limit and automatic dynamic shapes."""

from __future__ import annotations

import collections
import warnings

import numpy as np
import pytest

import tcompile as tc

SCALE = 2.0


def scaled(x):
    return x * SCALE


def test_same_inputs_hit_the_cache():
    f = tc.compile(scaled)
    f(np.ones(3))
    f(np.ones(3))
    counts = tc.counters()
    assert counts["cache_misses"] == 1 and counts["cache_hits"] == 1 and counts["recompiles"] == 0


def test_dtype_change_recompiles_and_names_the_failing_guard():
    f = tc.compile(scaled)
    with tc.CompileProfiler() as prof:
        f(np.ones(3))
        out = f(np.ones(3, dtype=np.float32))
    assert out.dtype == np.float32
    assert tc.counters()["recompiles"] == 1
    assert "array x dtype mismatch: expected float64, actual float32" in prof.report()


def test_global_change_recompiles(monkeypatch):
    f = tc.compile(scaled)
    assert f(np.ones(2))[0] == 2.0
    monkeypatch.setitem(globals(), "SCALE", 3.0)
    with tc.CompileProfiler() as prof:
        assert f(np.ones(2))[0] == 3.0
    assert "G['SCALE'] == 2.0 failed: actual 3.0" in prof.report()


def test_closure_change_recompiles():
    k = 1

    def add_k(x):
        return x + k

    f = tc.compile(add_k)
    assert f(np.zeros(1))[0] == 1
    k = 5
    assert f(np.zeros(1))[0] == 5
    assert tc.counters()["recompiles"] == 1


def test_second_size_makes_the_dim_dynamic():
    f = tc.compile(lambda x: (x * 2).sum(axis=1))
    for rows in (2, 3, 4, 9):
        assert np.array_equal(f(np.ones((rows, 5))), np.full(rows, 10.0))
    compiled = f.__tc_compiled__
    assert len(compiled.entries) == 2 and tc.counters()["recompiles"] == 1
    assert "x.shape == (s>=2, 5)" in [g.describe() for g in compiled.entries[-1].guards]


def test_dynamic_false_recompiles_per_size():
    f = tc.compile(lambda x: x + 1, dynamic=False)
    for n in (2, 3, 4):
        f(np.ones(n))
    assert len(f.__tc_compiled__.entries) == 3


def test_dynamic_true_compiles_once_for_all_sizes():
    f = tc.compile(lambda x: x.reshape(x.shape[0], -1) + 1, dynamic=True)
    for n in (2, 3, 7):
        assert np.array_equal(f(np.ones((n, 2))), np.full((n, 2), 2.0))
    assert len(f.__tc_compiled__.entries) == 1


def test_sizes_zero_and_one_stay_static_under_dynamic():
    f = tc.compile(lambda x: x + 1, dynamic=True)
    f(np.ones(1))
    assert "x.shape == (1,)" in [g.describe() for g in f.__tc_compiled__.entries[0].guards]


def test_size_used_as_python_int_is_specialised():
    def halves(x):
        return x[: x.shape[0] // 2] * [1.0, 2.0, 3.0][x.shape[0] - 3]

    f = tc.compile(halves, dynamic=True)
    assert np.array_equal(f(np.ones(3)), np.full(1, 1.0))
    assert np.array_equal(f(np.ones(4)), np.full(2, 2.0))
    assert len(f.__tc_compiled__.entries) == 2


def test_a_loop_over_a_dynamic_size_counts_in_the_graph():
    def loop(x):
        for i in range(x.shape[0]):
            x = x + i
        return x

    f = tc.compile(loop, dynamic=True)
    assert np.array_equal(f(np.zeros(3)), np.full(3, 3.0))
    assert np.array_equal(f(np.zeros(4)), np.full(4, 6.0))
    assert len(f.__tc_compiled__.entries) == 1


def test_cache_limit_falls_back_to_eager_with_one_warning():
    f = tc.compile(lambda x, n: x * n if n >= 0 else x)  # the branch pins n (no dynamic int)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = [f(np.ones(1), n)[0] for n in range(tc.config.cache_size_limit + 3)]
    assert results == [float(n) for n in range(tc.config.cache_size_limit + 3)]
    limit_warnings = [w for w in caught if "cache_size_limit" in str(w.message)]
    assert len(limit_warnings) == 1 and "n == 0 failed" in str(limit_warnings[0].message)
    assert len(f.__tc_compiled__.entries) == tc.config.cache_size_limit


def test_list_length_and_item_types_are_guarded():
    f = tc.compile(lambda xs: xs[0] + xs[-1])
    assert f([np.ones(2), np.ones(2)])[0] == 2.0
    assert f([np.ones(2), np.ones(2), np.zeros(2)])[0] == 1.0
    assert tc.counters()["recompiles"] == 1


def test_user_object_attribute_change_recompiles():
    class Box:
        def __init__(self, w):
            self.w = w

    box = Box(np.ones(2))
    f = tc.compile(lambda b, x: b.w * x)
    f(box, np.ones(2))
    box.w = np.ones(3)
    assert f(box, np.ones(3)).shape == (3,)
    assert tc.counters()["recompiles"] == 1


def test_wrong_argument_count_raises_the_eager_type_error():
    f = tc.compile(lambda x: x)
    with pytest.raises(TypeError, match="positional argument"):
        f()


class Queue(collections.deque):
    """Its methods are deque's (C descriptors), bound anew on every read."""


def test_a_builtin_method_read_from_an_object_does_not_recompile_each_call():
    """``queue.copy`` is a new bound object on every read: the guard is on the class's function
    (and that the object does not shadow it), not on the bound object's identity."""

    def f(queue, x):
        copy = queue.copy
        return x * 2, copy()

    compiled = tc.compile(f)
    for n in range(1, 5):
        queue = Queue(range(n))
        (y, copied), (y_eager, copied_eager) = compiled(queue, np.ones(3)), f(queue, np.ones(3))
        assert np.array_equal(y, y_eager) and copied == copied_eager
    assert len(compiled.__tc_compiled__.entries) == 1  # f itself compiled once
