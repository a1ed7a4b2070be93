"""The public API: argument checking, explain, counters, logs, errors that point at user code."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import tcompile as tc


def helper_that_prints(x):
    y = x + 1
    print(y)  # the break line
    return y


def calls_helper(x):
    return helper_that_prints(x * 2)


@pytest.mark.parametrize(
    "call, error, text",
    [
        (lambda: tc.compile(42), TypeError, "needs a Python function"),
        (lambda: tc.compile(lambda x: x, backend="nope"), ValueError, "unknown backend 'nope'"),
        (lambda: tc.compile(lambda x: x, fullgraph="yes"), TypeError, "must be True or False"),
        (
            lambda: tc.compile(lambda x: x, dynamic="sometimes"),
            TypeError,
            "must be None, True or False",
        ),
        (
            lambda: tc.compile(lambda x: x, backend=3),
            TypeError,
            "backend must be a name or a callable",
        ),
        (lambda: tc.set_logs(nonsense=True), ValueError, "unknown log artifact"),
        (lambda: tc.explain(3), TypeError, "needs a function"),
    ],
)
def test_bad_api_arguments_fail_at_once(call, error, text):
    with pytest.raises(error, match=text):
        call()


def test_decorator_with_and_without_arguments_keeps_the_name():
    @tc.compile
    def plain(x):
        return x + 1

    @tc.compile(fullgraph=True, backend="eager")
    def configured(x):
        return x + 1

    assert plain.__name__ == "plain" and configured.__wrapped__.__name__ == "configured"
    assert np.array_equal(plain(np.ones(2)), configured(np.ones(2)))


def test_fullgraph_error_names_file_line_source_and_inlined_chain():
    f = tc.compile(calls_helper, fullgraph=True)
    with pytest.raises(tc.Unsupported) as info:
        f(np.ones(2))
    text = str(info.value)
    assert "call to print()" in text
    assert __file__ in text and "print(y)  # the break line" in text
    assert "in calls_helper" in text and "in helper_that_prints" in text
    assert "Try:" in text and "fullgraph=False" in text
    assert isinstance(info.value, tc.TCompileError)
    assert info.value.record.location.lineno == helper_that_prints.__code__.co_firstlineno + 2


def test_graph_break_in_a_callee_resumes_in_both_frames_and_is_counted_once(capsys):
    f = tc.compile(calls_helper)
    out = f(np.ones(2))
    assert np.array_equal(out, np.full(2, 3.0))
    assert capsys.readouterr().out == "[3. 3.]\n"
    counts = tc.counters()
    assert counts["graph_breaks"] == 1 and counts["frames_skipped"] == 0
    assert counts["graphs"] == 2  # x * 2 in calls_helper, x + 1 in helper_that_prints


def test_explain_counts_graphs_ops_breaks_and_guards(capsys):
    report = tc.explain(calls_helper)(np.ones(2))
    assert report.graph_count == 2 and report.graph_break_count == 1
    assert report.break_reasons[0].location.funcname == "helper_that_prints"
    assert "Graph Break Count: 1" in str(report) and "print(y)" in str(report)

    report = tc.explain(tc.compile(lambda x: np.sin(x) + 1))(np.ones(3))
    assert report.graph_count == 1 and report.graph_break_count == 0
    assert report.ops_per_graph == [["sin = np.sin(x)", "add = sin + 1"]]
    assert any(g.describe() == "x.shape == (3,)" for g in report.out_guards)


def test_graph_break_function_is_a_break():
    def f(x):
        tc.graph_break()
        return x + 1

    with pytest.raises(tc.Unsupported, match="tc.graph_break"):
        tc.compile(f, fullgraph=True)(np.ones(1))
    assert np.array_equal(tc.compile(f)(np.ones(1)), [2.0])


def test_generator_functions_run_eagerly_or_raise_under_fullgraph():
    def gen(x):
        yield x

    assert list(tc.compile(gen)(1)) == [1]
    with pytest.raises(tc.Unsupported, match="generator"):
        tc.compile(gen, fullgraph=True)(1)


def test_logs_print_breaks_and_recompiles(caplog):
    tc.set_logs(graph_breaks=True, recompiles=True)
    try:
        with caplog.at_level(logging.DEBUG, logger="tcompile"):
            logging.getLogger("tcompile").propagate = True
            f = tc.compile(calls_helper)
            f(np.ones(2))
            g = tc.compile(lambda x: x + 1)
            g(np.ones(2))
            g(np.ones(3))
    finally:
        tc.set_logs(graph_breaks=False, recompiles=False)
    text = caplog.text
    assert "call to print()" in text and "Recompiling function" in text


def test_compile_times_and_reset():
    tc.compile(lambda x: x * 2)(np.ones(2))
    assert "trace" in tc.compile_times() and tc.compile_times(repr="dict")["trace"]
    tc.reset()
    assert tc.counters()["frames_compiled"] == 0 and tc.compile_times(repr="dict") == {}


def test_user_backend_receives_graph_and_examples():
    seen = []

    def backend(graph, example_inputs):
        seen.append((graph.python_code(), [e.shape for e in example_inputs]))
        namespace = {}
        exec(graph.python_code(namespace), namespace)
        return namespace[graph.name]

    f = tc.compile(lambda x: np.cos(x) * 3, backend=backend)
    assert np.array_equal(f(np.zeros(4)), np.full(4, 3.0))
    assert "np.cos(x)" in seen[0][0] and seen[0][1] == [(4,)]


def test_printed_graph_is_python_with_types_and_locations():
    f = tc.compile(lambda x: np.exp(x).sum(axis=0))
    f(np.ones((2, 3), dtype=np.float32))
    graph = f.__tc_compiled__.entries[0].graph
    graph.lint()
    text = graph.python_code()
    assert "exp = np.exp(x)" in text and "# f32[2, 3]" in text and "test_api_and_errors.py:" in text
    compile(text, "<graph>", "exec")


def test_tcompile_logs_environment_variable_switches_artifacts_on(monkeypatch):
    from tcompile.tracer import report

    monkeypatch.setenv("TCOMPILE_LOGS", "graph_breaks,recompiles")
    try:
        report.configure_from_environment()
        assert report.LOGS["graph_breaks"].isEnabledFor(logging.DEBUG)
        assert report.LOGS["recompiles"].isEnabledFor(logging.DEBUG)
        assert not report.LOGS["graph"].isEnabledFor(logging.DEBUG)
    finally:
        tc.set_logs(graph_breaks=False, recompiles=False)


def test_trace_numpy_off_runs_eagerly():
    tc.config.trace_numpy = False
    try:
        f = tc.compile(lambda x: x + 1)
        assert np.array_equal(f(np.ones(2)), [2.0, 2.0])
        assert f.__tc_compiled__.entries == []
    finally:
        tc.config.trace_numpy = True
