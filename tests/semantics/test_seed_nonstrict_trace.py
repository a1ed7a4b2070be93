"""Seed 004, "Use torch._dynamo.nonstrict_trace", read for NumPy.

A call to a ``tc.nonstrict_trace``'d function is traced by running it on proxy arrays instead of
reading its bytecode, so what would break bytecode tracing (here an explicit ``tc.graph_break()``)
does not break the graph, and ``fullgraph=True`` holds. The three examples of the document, and
what happens when the function needs an array's value (which non-strict tracing cannot give).
"""

from __future__ import annotations

import numpy as np
import pytest
from semantics_helpers import (
    all_ops,
    assert_points_at,
    assert_same,
    eager,
    explain_fresh,
    hint_text,
    rand,
    randn,
    run_counted,
)

import tcompile as tc


def test_graph_break_in_get_magic_num_raises_under_fullgraph():
    def get_magic_num():
        # This explicit graph break call is meant to emulate any kind of graph break, e.g.,
        # the function is implemented in C, or uses some python language feature tcompile
        # doesn't yet support.
        tc.graph_break()  # the emulated break
        return np.array([42])

    @tc.compile(fullgraph=True)
    def func(x):
        n = get_magic_num()
        return x + n

    with pytest.raises(tc.Unsupported) as info:
        func(rand(10))
    message = str(info.value)
    assert_points_at(message, get_magic_num, "# the emulated break")
    assert "nonstrict_trace" in hint_text(message)  # the fix the document goes on to show


def test_nonstrict_trace_decorator_removes_the_break_under_fullgraph(capsys):
    @tc.nonstrict_trace
    def get_magic_num():
        tc.graph_break()
        return np.array([42])

    @tc.compile(fullgraph=True)
    def func(x):
        n = get_magic_num()
        return x + n

    x = rand(10)
    expected = eager(func, x)
    print(expected)
    expected_printed = capsys.readouterr().out

    out, counts = run_counted(func, x.copy())
    print(out)  # print(func(torch.rand(10)))  -- No graph break and no error.
    assert capsys.readouterr().out == expected_printed
    assert_same(out, expected)
    assert counts["graphs"] == 1 and counts["graph_breaks"] == 0
    assert counts["frames_skipped"] == 0

    report = explain_fresh(func, x)
    assert report.graph_count == 1 and report.graph_break_count == 0


def test_nonstrict_trace_inline_form_removes_the_break_under_fullgraph(capsys):
    def get_magic_num():
        tc.graph_break()
        return np.array([42])

    @tc.compile(fullgraph=True)
    def func(x):
        n = tc.nonstrict_trace(get_magic_num)()
        return x + n

    x = rand(10)
    expected = eager(func, x)
    print(expected)
    expected_printed = capsys.readouterr().out

    out, counts = run_counted(func, x.copy())
    print(out)  # No graph break and no error.
    assert capsys.readouterr().out == expected_printed
    assert_same(out, expected)
    assert counts["graphs"] == 1 and counts["graph_breaks"] == 0

    report = explain_fresh(func, x)
    assert report.graph_count == 1 and report.graph_break_count == 0


def test_nonstrict_traced_function_with_array_inputs_puts_its_ops_in_the_graph():
    @tc.nonstrict_trace
    def normalise(v, eps):
        tc.graph_break()  # stands for anything bytecode tracing cannot do
        return (v - v.mean()) / (v.std() + eps)

    @tc.compile(fullgraph=True)
    def func(x):
        return normalise(np.exp(x), 1e-6) * 2

    x = randn(8)
    expected = eager(func, x)
    out, counts = run_counted(func, x.copy())
    assert_same(out, expected)
    assert counts["graphs"] == 1 and counts["graph_breaks"] == 0

    report = explain_fresh(func, x)
    ops = all_ops(report)
    assert any("mean" in op for op in ops) and any("std" in op for op in ops)  # visible, not opaque


def test_nonstrict_traced_function_returns_the_right_result_for_new_inputs():
    @tc.nonstrict_trace
    def scale(v):
        tc.graph_break()
        return v * 3.0

    @tc.compile(fullgraph=True)
    def func(x):
        return scale(x) + 1

    for seed in (0, 1, 2):
        x = randn(5, seed=seed)
        assert_same(func(x.copy()), eager(func, x))
    assert tc.counters()["frames_compiled"] == 1  # the same graph, new values


# -- needing an array's value inside a non-strict traced function -------------------------------


def test_branch_on_an_array_value_inside_nonstrict_trace_raises_naming_the_line():
    @tc.nonstrict_trace
    def keep_if_positive(v):
        if v.sum() > 0:  # needs the value
            return v
        return -v

    @tc.compile(fullgraph=True)
    def func(x):
        return keep_if_positive(x) * 2

    with pytest.raises(tc.TCompileError) as info:
        func(randn(4))
    message = str(info.value)
    assert_points_at(message, keep_if_positive, "# needs the value")
    assert "nonstrict_trace" in hint_text(message)


def test_float_of_an_array_inside_nonstrict_trace_raises_naming_the_line():
    @tc.nonstrict_trace
    def divide_by_max(v):
        top = float(v.max())  # needs the value
        return v / top

    @tc.compile(fullgraph=True)
    def func(x):
        return divide_by_max(x) + 1

    with pytest.raises(tc.TCompileError) as info:
        func(randn(4))
    message = str(info.value)
    assert_points_at(message, divide_by_max, "# needs the value")
    assert "nonstrict_trace" in hint_text(message)
