"""The escape hatches and fine-grained tracing controls: ``tc.allow_in_graph``,
``tc.disallow_in_graph``, ``tc.disable`` (recursive or not), ``tc.run`` (frozen mode),
``tc.skip_frame``, ``tc.custom_op`` and the cache-limit fallback to eager.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from semantics_helpers import (
    all_ops,
    assert_points_at,
    assert_same,
    eager,
    explain_fresh,
    has_frame,
    line_of,
    randn,
    run_counted,
)

import tcompile as tc

# -- tc.allow_in_graph: one opaque node, body not traced --------------------------------------------


def test_allow_in_graph_prints_at_run_time_once_per_call_under_fullgraph(capsys):
    def noisy(x):
        print("noisy called")
        return x * 2

    allowed = tc.allow_in_graph(noisy)

    @tc.compile(fullgraph=True)
    def fn(x):
        return allowed(x) + 1

    x = randn(3)
    expected = eager(fn, x)
    assert capsys.readouterr().out == "noisy called\n"

    out, counts = run_counted(fn, x.copy())  # no Unsupported: print is inside the opaque node
    assert capsys.readouterr().out == "noisy called\n"  # at run time, not (also) at trace time
    assert_same(out, expected)
    assert counts["graphs"] == 1 and counts["graph_breaks"] == 0

    assert_same(fn(x.copy()), expected)  # cached: the body still runs on every call
    assert capsys.readouterr().out == "noisy called\n"
    assert tc.counters()["cache_hits"] >= 1

    report = explain_fresh(fn, x)
    capsys.readouterr()
    assert report.graph_count == 1 and report.graph_break_count == 0
    ops = all_ops(report)
    assert len(ops) == 2  # allowed(x) as one node, then + 1
    assert not any(" * " in op for op in ops)  # noisy's x * 2 is not traced


def test_allow_in_graph_body_decides_its_data_dependent_branch_at_run_time():
    def clip_sign(x):
        if x.sum() < 0:  # would be a graph break if traced
            return -x
        return x

    allowed = tc.allow_in_graph(clip_sign)

    @tc.compile(fullgraph=True)
    def fn(x):
        return allowed(x * 3) - 1

    positive, negative = np.abs(randn(4)), -np.abs(randn(4, seed=1))
    assert_same(fn(positive.copy()), eager(fn, positive))
    assert_same(fn(negative.copy()), eager(fn, negative))  # same graph, other branch
    counts = tc.counters()
    assert counts["frames_compiled"] == 1 and counts["recompiles"] == 0
    assert counts["graph_breaks"] == 0


def test_allow_in_graph_returns_something_that_still_works_eagerly():
    def double(x):
        return x * 2

    allowed = tc.allow_in_graph(double)
    x = randn(3)
    assert_same(allowed(x), x * 2)


# -- tc.disallow_in_graph: always a graph break ----------------------------------------------------


def test_disallow_in_graph_breaks_on_every_call_and_matches_eager():
    def helper(x):
        return x * 2

    forbidden = tc.disallow_in_graph(helper)

    @tc.compile
    def fn(x):
        y = x + 1
        z = forbidden(y)  # the disallowed call
        return z - 1

    x = randn(3)
    expected = eager(fn, x)
    out, counts = run_counted(fn, x.copy())
    assert_same(out, expected)
    assert counts["graph_breaks"] == 1
    assert counts["graphs"] == 2
    assert counts["frames_skipped"] == 0

    report = explain_fresh(fn, x)
    assert report.graph_break_count == 1
    assert report.break_reasons[0].location.lineno == line_of(fn, "# the disallowed call")
    assert not any(" * " in op for op in all_ops(report))  # helper's body is not in a graph


def test_disallow_in_graph_raises_unsupported_under_fullgraph():
    def helper(x):
        return x * 2

    forbidden = tc.disallow_in_graph(helper)

    @tc.compile(fullgraph=True)
    def fn(x):
        return forbidden(x + 1)  # the disallowed call

    with pytest.raises(tc.Unsupported) as info:
        fn(randn(3))
    assert_points_at(str(info.value), fn, "# the disallowed call")


# -- tc.disable ----------------------------------------------------------------------------------


def test_disable_is_a_break_and_its_callees_are_not_compiled():
    def callee(x):
        return x * 2

    @tc.disable
    def leaf(x):
        return callee(x) + 1

    @tc.compile
    def fn(x):
        return leaf(x - 1) * 3  # call into the disabled function

    x = randn(3)
    expected = eager(fn, x)
    out, counts = run_counted(fn, x.copy())
    assert_same(out, expected)

    report = explain_fresh(fn, x)
    assert not has_frame(report.compiled_frames, "leaf")
    assert not has_frame(report.compiled_frames, "callee")
    assert has_frame(report.compiled_frames, "fn")
    assert report.graph_break_count == 1
    assert report.break_reasons[0].location.lineno == line_of(fn, "# call into the disabled")
    assert report.graph_count == 2  # x - 1 | * 3


def test_disable_recursive_false_runs_the_frame_eagerly_but_compiles_its_callees():
    def callee(x):
        return x * 2

    @tc.disable(recursive=False)
    def leaf(x):
        return callee(x) + 1

    @tc.compile
    def fn(x):
        return leaf(x - 1) * 3

    x = randn(3)
    expected = eager(fn, x)
    out, counts = run_counted(fn, x.copy())
    assert_same(out, expected)

    report = explain_fresh(fn, x)
    assert not has_frame(report.compiled_frames, "leaf")
    assert has_frame(report.compiled_frames, "callee")
    assert has_frame(report.compiled_frames, "fn")


def test_disable_function_form_and_compile_of_a_disabled_function_never_compiles():
    def callee(x):
        return x * 2

    def leaf(x):
        return callee(x) + 1

    compiled = tc.compile(tc.disable(leaf))
    x = randn(3)
    out, counts = run_counted(compiled, x.copy())
    assert_same(out, eager(leaf, x))
    assert counts["frames_compiled"] == 0 and counts["graphs"] == 0

    compiled = tc.compile(tc.disable(leaf, recursive=False))
    out, counts = run_counted(compiled, x.copy())
    assert_same(out, eager(leaf, x))
    assert counts["frames_compiled"] == 1  # callee only
    assert counts["graphs"] == 1


def test_disable_raises_unsupported_under_fullgraph():
    @tc.disable
    def leaf(x):
        return x + 1

    @tc.compile(fullgraph=True)
    def fn(x):
        return leaf(x) * 2  # call into the disabled function

    with pytest.raises(tc.Unsupported) as info:
        fn(randn(3))
    assert_points_at(str(info.value), fn, "# call into the disabled")


# -- tc.run: frozen mode ---------------------------------------------------------------------------


def test_run_uses_prior_entries_and_runs_new_shapes_eagerly_without_compiling():
    @tc.compile
    def fn(x):
        return np.sin(x) * 2 + 1

    fn(randn(3))
    before = dict(tc.counters())
    assert before["frames_compiled"] == 1

    frozen = tc.run(fn)
    x = randn(3, seed=1)
    assert_same(frozen(x.copy()), eager(fn, x))
    hit = dict(tc.counters())
    assert hit["cache_hits"] == before["cache_hits"] + 1

    for shape in [(5,), (2, 3), (7,)]:
        y = randn(*shape, seed=2)
        assert_same(frozen(y.copy()), eager(fn, y))
    after = dict(tc.counters())
    assert after["frames_compiled"] == before["frames_compiled"]
    assert after["recompiles"] == before["recompiles"]
    assert after["graphs"] == before["graphs"]


def test_run_of_a_never_called_compiled_function_compiles_nothing():
    @tc.compile
    def fn(x):
        return np.cos(x) - 1

    frozen = tc.run(fn)
    x = randn(4)
    assert_same(frozen(x.copy()), eager(fn, x))
    assert tc.counters()["frames_compiled"] == 0


# -- tc.skip_frame -------------------------------------------------------------------------------


def test_skip_frame_runs_the_frame_eagerly_and_compiles_its_callees():
    def callee(x):
        return np.exp(x) + 1

    @tc.compile
    def fn(x):
        y = x * 2
        tc.skip_frame("give up on fn")
        return callee(y) - 1

    x = randn(3)
    expected = eager(fn, x)
    out, counts = run_counted(fn, x.copy())
    assert_same(out, expected)
    assert counts["frames_skipped"] == 1 and counts["frames_compiled"] == 1

    report = explain_fresh(fn, x)
    assert has_frame(report.skipped_frames, "fn")
    assert has_frame(report.compiled_frames, "callee")
    assert report.graph_count == 1
    assert any("exp" in op for op in all_ops(report))


def test_skip_frame_runs_eagerly_does_nothing():
    def fn(x):
        tc.skip_frame()
        return x + 1

    x = randn(3)
    assert_same(fn(x), x + 1)


# -- tc.custom_op: opaque, the fake is used while tracing --------------------------------------------


def test_custom_op_is_one_node_and_its_kernel_runs_once_per_call():
    calls = {"kernel": 0, "fake": 0}

    @tc.custom_op("semantics_tests::scaled_cumsum", mutates_args=())
    def scaled_cumsum(x):
        calls["kernel"] += 1
        return np.cumsum(x) * 0.5

    @scaled_cumsum.register_fake
    def _(x):
        calls["fake"] += 1
        return np.empty_like(x)

    @tc.compile(fullgraph=True)
    def fn(x):
        return scaled_cumsum(x + 1) * 2

    x = randn(5)
    expected = (np.cumsum(x + 1) * 0.5) * 2
    out, counts = run_counted(fn, x.copy())
    assert_same(out, expected)
    assert counts["graphs"] == 1 and counts["graph_breaks"] == 0
    assert calls["kernel"] == 1  # run time only: tracing used the fake
    assert calls["fake"] >= 1

    fake_calls = calls["fake"]
    assert_same(fn(x.copy()), expected)
    assert calls["kernel"] == 2 and calls["fake"] == fake_calls  # cached: no tracing

    report = explain_fresh(fn, x)
    assert len(all_ops(report)) == 3  # + 1 | the op | * 2
    assert not any("np.cumsum" in op for op in all_ops(report))  # the body is not traced


# -- the cache-limit fallback -----------------------------------------------------------------------


def test_cache_limit_falls_back_to_eager_with_exactly_one_warning(monkeypatch):
    monkeypatch.setattr(tc.config, "cache_size_limit", 2)

    def fn(x, k):
        return x * k

    compiled = tc.compile(fn, dynamic=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for k in range(6):
            x = randn(3, seed=k)
            assert_same(compiled(x.copy(), k), eager(fn, x, k))
    limit_warnings = [w for w in caught if "cache_size_limit" in str(w.message)]
    assert len(limit_warnings) == 1
    counts = tc.counters()
    assert counts["frames_compiled"] == 2
    assert counts["recompiles"] >= 1
