"""Seed 000, ``programming_model.skipped_functions``, read for NumPy.

A graph break that cannot be resumed (in a loop, in a try block, in an unsupported context
manager) or ``tc.skip_frame()`` makes the whole frame run eagerly; functions it calls are still
compiled. Every code example of the document is here, with what the document says happens.
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest
from semantics_helpers import (
    all_ops,
    assert_same,
    eager,
    explain_fresh,
    has_frame,
    line_of,
    randn,
    resume_frames,
    run_counted,
)

import tcompile as tc

# -- "the skip is only applied to the current function and NOT any nested function calls" --------


def test_skip_frame_runs_fn_eagerly_but_compiles_inner1_and_inner2():
    def inner1(x):
        return x + 1

    def inner2(x):
        return x + 2

    @tc.compile
    def fn(x):
        x = inner1(x)
        tc.skip_frame()
        x = inner2(x)

    x = randn(3)
    expected = eager(fn, x)
    out, counts = run_counted(fn, x.copy())
    assert_same(out, expected)  # None, as the document's fn returns nothing
    assert counts["frames_skipped"] == 1  # fn
    assert counts["frames_compiled"] == 2  # inner1 and inner2, each when it is called
    assert counts["graphs"] == 2

    report = explain_fresh(fn, x)
    assert has_frame(report.skipped_frames, "fn")
    assert not has_frame(report.compiled_frames, "fn")
    assert has_frame(report.compiled_frames, "inner1")
    assert has_frame(report.compiled_frames, "inner2")
    assert report.graph_count == 2


def test_skip_frame_result_equals_eager_and_later_calls_reuse_the_decision():
    def inner1(x):
        return x + 1

    def inner2(x):
        return x * 2

    @tc.compile
    def fn(x):
        x = inner1(x)
        tc.skip_frame()
        return inner2(x)

    x = randn(3)
    expected = eager(fn, x)
    out, counts = run_counted(fn, x.copy())
    assert_same(out, expected)
    assert_same(fn(x.copy()), expected)
    after = tc.counters()
    assert after["frames_skipped"] == counts["frames_skipped"] == 1
    assert after["frames_compiled"] == counts["frames_compiled"] == 2
    assert after["recompiles"] == 0
    assert after["cache_hits"] > counts["cache_hits"]


# -- Graph Break in a Loop ----------------------------------------------------------------------


def test_graph_break_in_a_loop_resumes_at_the_next_iteration():
    # The seed: torch.compile "cannot resume tracing if a graph break occurs in a loop" and
    # skips the frame. tcompile goes further (SPEC, loops): the loop stays Python and its body
    # is compiled as a function of its own, so the frame is compiled and tracing resumes at
    # the next iteration.
    @tc.compile
    def fn(x):
        for i in range(5):  # the loop
            x = x + 1
            if i == 3:
                tc.graph_break()  # inside the loop
        return x

    x = randn(3)
    expected = eager(fn, x)
    out, counts = run_counted(fn, x.copy())
    assert_same(out, expected)
    assert counts["frames_skipped"] == 0 and counts["cache_limit_hits"] == 0
    assert counts["graphs"] >= 2  # the frame's, and its body's

    report = explain_fresh(fn, x)
    loop = line_of(fn, "# the loop")
    assert has_frame(report.compiled_frames, "fn") and not report.skipped_frames
    assert any(q.endswith(f"fn (loop body at line {loop})") for q in report.compiled_frames)
    first = report.break_reasons[0]
    assert first.location.lineno == line_of(fn, "# inside the loop")
    assert f"the loop at line {loop} runs in Python" in first.explanation


def test_unrolled_loop_with_nonlocal_x_is_not_skipped_and_every_inner_call_is_compiled():
    @tc.compile
    def fn(x):
        def inner(i):
            nonlocal x
            x = x + 1
            if i == 3:
                tc.graph_break()

        inner(0)
        inner(1)
        inner(2)
        inner(3)
        inner(4)
        return x

    x = randn(3)
    expected = eager(fn, x)
    out, counts = run_counted(fn, x.copy())
    assert_same(out, expected)
    assert counts["frames_skipped"] == 0
    assert counts["graph_breaks"] >= 1

    report = explain_fresh(fn, x)
    assert report.skipped_frames == []
    assert has_frame(report.compiled_frames, "fn")
    # the five ``x = x + 1`` of the five inner calls are all in compiled graphs
    assert sum(" + " in op for op in all_ops(report)) == 5
    assert report.graph_count >= 2
    assert report.graph_break_count >= 1
    assert any(r.location.lineno == line_of(fn, "tc.graph_break()") for r in report.break_reasons)


# -- Graph Break in a Context Manager -----------------------------------------------------------


class CustomCtxManager:
    def __enter__(self):
        pass

    def __exit__(self, exc_type, exc_value, traceback):
        pass


def test_graph_break_in_a_custom_context_manager_skips_the_frame():
    @tc.compile
    def fn(x):
        with CustomCtxManager():
            x = x + 1
            tc.graph_break()  # inside the with block
            return x + 1

    x = randn(3)
    expected = eager(fn, x)
    out, counts = run_counted(fn, x.copy())
    assert_same(out, expected)
    assert counts["frames_skipped"] == 1
    assert counts["graph_breaks"] == 1
    assert counts["graphs"] == 0

    report = explain_fresh(fn, x)
    assert has_frame(report.skipped_frames, "fn")
    assert not has_frame(report.compiled_frames, "fn")
    assert report.graph_count == 0
    assert report.break_reasons[0].location.lineno == line_of(fn, "# inside the with block")


def test_graph_break_moved_out_of_the_custom_context_manager_resumes_with_two_graphs():
    @tc.compile
    def fn(x):
        with CustomCtxManager():
            x = x + 1
        tc.graph_break()  # between the two with blocks
        with CustomCtxManager():
            return x + 1

    x = randn(3)
    expected = eager(fn, x)
    out, counts = run_counted(fn, x.copy())
    assert_same(out, expected)
    assert counts["frames_skipped"] == 0
    assert counts["graphs"] == 2
    assert counts["graph_breaks"] == 1

    report = explain_fresh(fn, x)
    assert report.skipped_frames == []
    assert has_frame(report.compiled_frames, "fn")
    assert len(resume_frames(report.compiled_frames)) == 1
    assert report.graph_count == 2
    assert report.graph_break_count == 1
    assert report.break_reasons[0].location.lineno == line_of(fn, "# between the two with")


def test_graph_break_inside_nullcontext_and_errstate_resumes_inside_them():
    # torch.no_grad() read as np.errstate(all="ignore"): a supported context manager
    @tc.compile
    def fn(x):
        with contextlib.nullcontext():
            with np.errstate(all="ignore"):
                x = x + 1
                tc.graph_break()  # inside both with blocks
                return x + 1

    x = randn(3)
    expected = eager(fn, x)
    out, counts = run_counted(fn, x.copy())
    assert_same(out, expected)
    assert counts["frames_skipped"] == 0
    assert counts["graphs"] == 2
    assert counts["graph_breaks"] == 1

    report = explain_fresh(fn, x)
    assert report.skipped_frames == []
    assert has_frame(report.compiled_frames, "fn")
    assert len(resume_frames(report.compiled_frames)) == 1
    assert report.graph_count == 2
    assert report.graph_break_count == 1
    assert report.break_reasons[0].location.lineno == line_of(fn, "# inside both with")


def test_errstate_is_still_in_effect_after_resuming_inside_it():
    @tc.compile
    def fn(x):
        with contextlib.nullcontext():
            with np.errstate(all="ignore"):
                x = x + 1
                tc.graph_break()
                return x / np.zeros(3)  # silent only under errstate(all="ignore")

    x = randn(3)
    before = np.geterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # divide by zero would be an error here
        expected = eager(fn, x)
        out, counts = run_counted(fn, x.copy())
    assert_same(out, expected)
    assert np.geterr() == before  # and the errstate is left again on return
    assert counts["frames_skipped"] == 0


def test_errstate_raise_after_resuming_raises_what_eager_raises():
    @tc.compile
    def fn(x):
        with np.errstate(divide="raise"):
            x = x + 1
            tc.graph_break()
            return x / np.zeros(3)

    x = randn(3)
    with pytest.raises(FloatingPointError) as eager_error:
        eager(fn, x)
    with pytest.raises(FloatingPointError) as compiled_error:
        fn(x.copy())
    assert str(compiled_error.value) == str(eager_error.value)
    assert np.geterr()["divide"] != "raise"
    assert tc.counters()["frames_skipped"] == 0


# -- Graph Break in a Try Block -----------------------------------------------------------------


def test_graph_break_in_a_try_block_skips_the_frame():
    @tc.compile
    def fn(x):
        try:
            x = x + 1
            tc.graph_break()  # inside the try block
            return x + 1
        except Exception as e:  # noqa: F841 - as in the document
            pass

    x = randn(3)
    expected = eager(fn, x)
    out, counts = run_counted(fn, x.copy())
    assert_same(out, expected)
    assert counts["frames_skipped"] == 1
    assert counts["graph_breaks"] == 1
    assert counts["graphs"] == 0

    report = explain_fresh(fn, x)
    assert has_frame(report.skipped_frames, "fn")
    assert not has_frame(report.compiled_frames, "fn")
    assert report.break_reasons[0].location.lineno == line_of(fn, "# inside the try block")


def test_graph_break_in_a_with_block_inside_a_try_block_skips_the_frame():
    # The with-block's exit handler is covered by a cleanup handler, which the try protects:
    # the break is inside the try, and resuming would run the rest outside it (the raise
    # would escape the except).
    def boom(y):
        raise ValueError("boom")

    @tc.compile
    def fn(x):
        try:
            with contextlib.nullcontext():
                y = x + 1
                tc.graph_break()  # inside the with, inside the try
                boom(y)
        except ValueError:
            return -1
        return y

    x = randn(3)
    assert eager(fn, x) == -1
    assert fn(x.copy()) == -1
    report = explain_fresh(fn, x)
    assert has_frame(report.skipped_frames, "fn")
    assert not has_frame(report.compiled_frames, "fn")


def test_graph_break_moved_out_of_the_try_block_resumes_with_two_graphs():
    @tc.compile
    def fn(x):
        try:
            x = x + 1
        except Exception as e:  # noqa: F841 - as in the document
            pass
        tc.graph_break()  # between the two try blocks
        try:
            return x + 1
        except Exception as e:  # noqa: F841 - as in the document
            pass

    x = randn(3)
    expected = eager(fn, x)
    out, counts = run_counted(fn, x.copy())
    assert_same(out, expected)
    assert counts["frames_skipped"] == 0
    assert counts["graphs"] == 2
    assert counts["graph_breaks"] == 1

    report = explain_fresh(fn, x)
    assert report.skipped_frames == []
    assert has_frame(report.compiled_frames, "fn")
    assert len(resume_frames(report.compiled_frames)) == 1
    assert report.graph_count == 2
    assert report.break_reasons[0].location.lineno == line_of(fn, "# between the two try")


# -- Dealing with Skipped Functions: isolate the problem in its own function ---------------------


def test_isolating_skip_frame_in_its_own_function_skips_only_that_function():
    def inner1(x):
        return x + 1

    def inner2(x):
        return x + 2

    @tc.compile
    def fn(x):
        x = inner1(x)

        def problematic_code():
            tc.skip_frame()

        problematic_code()  # the isolated call
        x = inner2(x)

    x = randn(3)
    expected = eager(fn, x)
    out, counts = run_counted(fn, x.copy())
    assert_same(out, expected)
    assert counts["frames_skipped"] == 1  # problematic_code only

    report = explain_fresh(fn, x)
    assert has_frame(report.skipped_frames, "problematic_code")
    assert not has_frame(report.skipped_frames, "fn")
    assert has_frame(report.compiled_frames, "fn")
    assert len(resume_frames(report.compiled_frames)) == 1  # fn resumes after problematic_code()
    # inner1's x + 1 is compiled in the graph before the call; fn returns None, so inner2's
    # x + 2 after it is dead code and may be dropped from the resumed graph
    assert report.graph_count >= 1
    assert len(report.ops_per_graph[0]) == 1
    assert report.graph_break_count == 1
    (record,) = report.break_reasons
    assert line_of(fn, "# the isolated call") in [loc.lineno for loc in record.stack]


def test_isolated_problem_keeps_the_result_of_the_surrounding_code():
    def inner1(x):
        return x + 1

    def inner2(x):
        return x * 3

    @tc.compile
    def fn(x):
        x = inner1(x)

        def problematic_code():
            tc.skip_frame()

        problematic_code()
        return inner2(x)

    x = randn(3)
    expected = eager(fn, x)
    out, counts = run_counted(fn, x.copy())
    assert_same(out, expected)
    assert counts["frames_skipped"] == 1
    assert counts["graphs"] == 2
