"""Seed 002, "Use fullgraph=True to Identify and Eliminate Graph Breaks", read for NumPy.

``fullgraph=True`` captures exactly one graph or raises ``tc.Unsupported``; the three strategies
to resolve a break are (1) rewrite the code, (2) the escape hatches ``tc.nonstrict_trace`` and
``tc.custom_op`` for pure functions, (3) move the code out of the compiled region. Every code
example of the document is here; each error names the file, line and source line of the break
and suggests the strategy the document uses to fix that example.
"""

from __future__ import annotations

import operator

import numpy as np
import pytest
from semantics_helpers import (
    all_ops,
    assert_points_at,
    assert_same,
    eager,
    explain_fresh,
    hint_text,
    line_of,
    randn,
    run_counted,
)

import tcompile as tc

# -- Strategy 1: rewrite the unsupported code ---------------------------------------------------


def test_next_on_an_input_list_iterator_raises_under_fullgraph_and_consumes_nothing():
    @tc.compile(fullgraph=True)
    def f(xs):
        a = next(xs)  # next() on an input iterator
        b = next(xs)
        return a + b

    xs = [np.array(1.0), np.array(2.0)]
    it = iter(xs)
    with pytest.raises(tc.Unsupported) as info:
        f(it)
    message = str(info.value)
    assert_points_at(message, f, "# next() on an input iterator")
    assert "rewrite" in hint_text(message).lower()  # strategy 1, the document's fix
    assert next(it) is xs[0]  # the error came at compile time: nothing ran


def test_next_on_an_input_list_iterator_without_fullgraph_matches_eager():
    def f(xs):
        a = next(xs)
        b = next(xs)
        return a + b

    xs = [np.array(1.0), np.array(2.0)]
    expected = f(iter([x.copy() for x in xs]))
    it = iter(xs)
    out = tc.compile(f)(it)
    assert_same(out, expected)
    assert next(it, "exhausted") == "exhausted"  # both elements consumed, as eagerly


def test_rewritten_to_take_a_list_compiles_into_one_graph():
    @tc.compile(fullgraph=True)
    def f_rewritten(xs):
        it = iter(xs)
        a = next(it)
        b = next(it)
        return a + b

    xs = [np.array(1.0), np.array(2.0)]
    expected = eager(f_rewritten, xs)
    out, counts = run_counted(f_rewritten, xs)
    assert_same(out, expected)  # np.float64(3.0), as NumPy returns for 0-d + 0-d
    assert counts["graphs"] == 1 and counts["graph_breaks"] == 0
    assert counts["frames_compiled"] == 1 and counts["frames_skipped"] == 0


# -- Strategy 2: escape hatches for pure functions -----------------------------------------------


def g(x):
    y = np.sin(x)
    tc.graph_break()  # g's graph break
    z = np.sin(y)
    return z


def test_g_with_a_graph_break_raises_under_fullgraph_and_suggests_nonstrict_trace():
    @tc.compile(fullgraph=True)
    def f(x):
        w = np.sin(x)
        return g(w)  # the call into g

    with pytest.raises(tc.Unsupported) as info:
        f(randn(3))
    message = str(info.value)
    assert_points_at(message, g, "# g's graph break")
    assert_points_at(message, f, "# the call into g")  # the inlined chain is shown
    assert "nonstrict_trace" in hint_text(message)  # strategy 2, the document's fix


def test_g_without_fullgraph_reports_one_break_at_gs_line_and_matches_eager():
    def f(x):
        w = np.sin(x)
        return g(w)  # the call into g

    x = randn(3)
    expected = eager(f, x)
    out = tc.compile(f)(x.copy())
    assert_same(out, expected)

    report = explain_fresh(f, x)
    assert report.graph_break_count == 1
    (record,) = report.break_reasons
    assert record.kind.id == "graph_break"
    assert record.location.funcname == "g"
    assert record.location.lineno == line_of(g, "# g's graph break")
    assert record.stack[-1] == record.location  # the stack ends at the break
    assert report.skipped_frames == []


def test_nonstrict_trace_of_g_inline_works_under_fullgraph_with_its_ops_in_the_graph():
    @tc.compile(fullgraph=True)
    def f_rewritten(x):
        w = np.sin(x)
        return tc.nonstrict_trace(g)(w)

    x = randn(3)
    expected = eager(f_rewritten, x)
    out, counts = run_counted(f_rewritten, x.copy())
    assert_same(out, expected)
    assert counts["graphs"] == 1 and counts["graph_breaks"] == 0
    assert counts["frames_skipped"] == 0

    report = explain_fresh(f_rewritten, x)
    assert report.graph_count == 1 and report.graph_break_count == 0
    assert sum("sin" in op for op in all_ops(report)) == 3  # f's sin and g's two, all visible


# A function tcompile cannot look into, standing for the document's C++ ``square_cpu`` kernel
# (``load_inline``): a C-implemented callable from the standard library.
square_cpu = operator.methodcaller("__pow__", 2)


def test_opaque_c_function_raises_under_fullgraph_then_custom_op_removes_the_break(capsys):
    def square(x):
        return square_cpu(x)  # into C code

    @tc.compile(fullgraph=True)
    def f(x):
        return square(x)

    with pytest.raises(tc.Unsupported) as info:
        f(randn(3, 3))
    message = str(info.value)
    assert_points_at(message, square, "# into C code")
    assert "custom_op" in hint_text(message)  # strategy 2 for opaque code, the document's fix

    # "Custom operators are opaque with respect to torch.compile": same f, square now an op
    @tc.custom_op("mylib::square", mutates_args=())
    def square(x):  # noqa: F811 - rebinds the name f calls, as the document does
        return square_cpu(x)

    @square.register_fake
    def _(x):
        return np.empty_like(x)

    x = randn(3, 3)
    expected = square_cpu(x.copy())
    print(expected)
    expected_printed = capsys.readouterr().out

    out, counts = run_counted(f, x.copy())
    print(out)  # print(f(torch.randn(3, 3)))  # no graph break
    assert capsys.readouterr().out == expected_printed
    assert_same(out, expected)
    assert counts["graph_breaks"] == 0 and counts["graphs"] == 1
    assert counts["frames_skipped"] == 0

    report = explain_fresh(f, x)
    assert report.graph_count == 1 and report.graph_break_count == 0
    assert len(all_ops(report)) == 1  # one opaque node


# -- Strategy 3: don't compile the code ----------------------------------------------------------


def test_np_save_raises_under_fullgraph_and_writes_nothing(tmp_path):
    @tc.compile(fullgraph=True)
    def f(x):
        y = x**2 / 2
        np.save(tmp_path / "foo.npy", y)  # disk I/O
        z = y**3 / 6
        return z

    with pytest.raises(tc.Unsupported) as info:
        f(randn(3))
    message = str(info.value)
    assert_points_at(message, f, "# disk I/O")
    # strategy 3, the document's fix
    assert "out of the compiled region" in hint_text(message).lower()
    assert not (tmp_path / "foo.npy").exists()


def test_np_save_without_fullgraph_writes_the_file_and_matches_eager(tmp_path):
    def f(x):
        y = x**2 / 2
        np.save(tmp_path / "foo.npy", y)
        z = y**3 / 6
        return z

    x = randn(3)
    expected = f(x.copy())
    expected_saved = np.load(tmp_path / "foo.npy")
    (tmp_path / "foo.npy").unlink()
    out, counts = run_counted(tc.compile(f), x.copy())
    assert_same(out, expected)
    assert_same(np.load(tmp_path / "foo.npy"), expected_saved)
    assert counts["graph_breaks"] == 1


def test_f_rewritten_with_g_and_h_compiled_separately_works_and_writes_the_file(tmp_path):
    def f_rewritten(x):
        y = g(x)
        np.save(tmp_path / "foo.npy", y)
        z = h(y)
        return z

    @tc.compile(fullgraph=True)
    def g(x):
        y = x**2 / 2
        return y

    @tc.compile(fullgraph=True)
    def h(y):
        z = y**3 / 6
        return z

    x = randn(3)
    y_expected = x**2 / 2
    z_expected = y_expected**3 / 6
    out, counts = run_counted(f_rewritten, x.copy())
    assert_same(out, z_expected)
    assert_same(np.load(tmp_path / "foo.npy"), y_expected)
    assert counts["frames_compiled"] == 2  # g and h
    assert counts["graphs"] == 2
    assert counts["graph_breaks"] == 0 and counts["frames_skipped"] == 0
