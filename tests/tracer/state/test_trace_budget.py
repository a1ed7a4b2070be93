"""A trace that outgrows its budget (tc.config.trace_max_ops / trace_max_seconds) stops: the
frame runs eagerly with the same results, and explain says why."""

from __future__ import annotations

import time

import numpy as np
import pytest

import tcompile as tc
from tcompile.tracer.ir.graph import Graph
from tcompile.tracer.state.trace_budget import TraceBudget


@pytest.fixture
def budget():
    saved = (tc.config.trace_max_ops, tc.config.trace_max_seconds)
    tc.reset()
    yield tc.config
    tc.config.trace_max_ops, tc.config.trace_max_seconds = saved
    tc.reset()


def running_sum(x, steps):
    total = np.zeros_like(x)
    for i in range(steps):
        if i % 2:  # a branch on the loop index: the loop is unrolled
            total = total + x * i
    return total


def test_a_trace_over_the_op_budget_runs_eagerly_with_the_reason(budget):
    budget.trace_max_ops = 50
    x = np.arange(4.0)
    report = tc.explain(running_sum)(x, 200)
    assert report.graph_count == 0
    assert report.skipped_frames == ["running_sum"]
    (reason,) = report.break_reasons
    assert reason.kind.id == "trace_budget"
    assert "tc.config.trace_max_ops" in reason.explanation
    np.testing.assert_array_equal(tc.compile(running_sum)(x, 200), running_sum(x, 200))


def test_the_same_loop_within_the_budget_compiles_into_one_graph(budget):
    report = tc.explain(running_sum)(np.arange(4.0), 200)
    assert report.graph_count == 1
    assert report.break_reasons == []


def test_a_trace_over_the_time_budget_stops(budget):
    budget.trace_max_seconds = 1e-9
    report = tc.explain(running_sum)(np.arange(4.0), 200)
    assert report.graph_count == 0
    (reason,) = report.break_reasons
    assert "tc.config.trace_max_seconds" in reason.explanation


def test_fullgraph_raises_with_what_to_change(budget):
    budget.trace_max_ops = 50
    with pytest.raises(tc.Unsupported, match="trace_max_ops"):
        tc.compile(running_sum, fullgraph=True)(np.arange(4.0), 200)


def test_a_short_trace_is_never_over_budget(budget):
    budget.trace_max_ops = 1
    spent = TraceBudget()
    graph = Graph("g")
    assert all(spent.spend(graph) is None for _ in range(1000))  # an empty graph: 0 ops


@pytest.mark.parametrize(
    "value, error",
    [(0.0, ValueError), (-1.0, ValueError), (float("nan"), ValueError), (True, TypeError),
     ("5", TypeError)],
)  # fmt: skip
def test_trace_max_seconds_must_be_a_positive_number(budget, value, error):
    with pytest.raises(error, match="trace_max_seconds must be a number > 0"):
        budget.trace_max_seconds = value


def test_trace_max_seconds_takes_an_int_as_seconds(budget):
    budget.trace_max_seconds = 3
    assert budget.trace_max_seconds == 3.0 and type(budget.trace_max_seconds) is float


def row_sums(m):
    out = []
    for row in m:
        out.append(row.sum())  # a list made before the loop: the loop is unrolled
    return out


def test_a_loop_over_more_rows_than_the_budget_stops_before_making_them(budget):
    budget.trace_max_ops = 50
    m = np.arange(200.0).reshape(100, 2)
    report = tc.explain(row_sums)(m)
    (reason,) = report.break_reasons
    assert reason.kind.id == "trace_budget" and "100 rows" in reason.explanation
    assert tc.compile(row_sums)(m) == row_sums(m)


def long_loop_then_more(u, steps):
    for _ in range(steps):  # a loop node: the trace runs it once on the examples
        u = np.sqrt(u * u + 1.0) - 0.5
    total = 0
    for k in range(40):  # unrolled after it: hundreds of instructions traced
        if k % 2:
            total = total + k
    return u * total


def test_a_loop_nodes_run_on_the_examples_is_not_tracing_time(budget):
    """A loop node's run on the examples is as long as the user's loop (seconds, minutes for
    a simulation): the budget leaves it out, and so does the "trace" phase ("loop run")."""
    u = np.random.default_rng(0).random(200_000)
    start = time.perf_counter()
    expected = long_loop_then_more(u, 600)
    budget.trace_max_seconds = (time.perf_counter() - start) / 3  # the run takes 3 budgets
    with tc.CompileProfiler() as profiler:
        report = tc.explain(long_loop_then_more)(u, 600)
    assert report.graph_count == 1 and not report.skipped_frames, report.skip_reasons
    np.testing.assert_array_equal(report.result, expected)
    (phases,) = [r.phases for r in profiler.reports]
    assert phases["loop run"] > budget.trace_max_seconds > phases["trace"], phases
