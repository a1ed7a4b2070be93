"""Seed 003, "Toggling error_on_graph_break", read for NumPy.

``tc.error_on_graph_break(flag)`` (decorator and context manager) decides at trace time whether
a graph break raises ``tc.Unsupported`` (True) or is compiled around (False). It nests, the
innermost setting wins, and it has lower precedence than ``fullgraph``: once ``fullgraph=True``,
breaks below always raise. Unlike ``fullgraph=True``, ``error_on_graph_break=True`` does not
guarantee one graph. All nine examples of the document, then its summary table.
"""

from __future__ import annotations

import pytest
from semantics_helpers import (
    assert_not_pointing_at,
    assert_points_at,
    assert_same,
    eager,
    explain_fresh,
    line_of,
    randn,
    run_counted,
)

import tcompile as tc

# -- error_on_graph_break(False) example ----------------------------------------------------------


def test_error_on_graph_break_false_on_a_callee_allows_its_break_under_true():
    @tc.error_on_graph_break(False)
    def code_with_a_difficult_graph_break(x):
        x = x + 1
        tc.graph_break()
        return x + 2

    def inner(x):
        return code_with_a_difficult_graph_break(x)

    # NOTE: fullgraph=False
    @tc.error_on_graph_break(True)
    @tc.compile
    def fn(x):
        return inner(x)

    x = randn(3)
    expected = eager(fn, x)
    out, counts = run_counted(fn, x.copy())  # No error, but there is a graph break
    assert_same(out, expected)
    assert counts["graph_breaks"] >= 1
    assert counts["frames_skipped"] == 0


def test_without_the_callees_false_the_same_break_raises_under_true():
    # The control for the example above: error_on_graph_break(True) alone errors on the break.
    def code_with_a_difficult_graph_break(x):
        x = x + 1
        tc.graph_break()  # not allowed here
        return x + 2

    def inner(x):
        return code_with_a_difficult_graph_break(x)

    @tc.error_on_graph_break(True)
    @tc.compile
    def fn(x):
        return inner(x)

    with pytest.raises(tc.Unsupported) as info:
        fn(randn(3))
    assert_points_at(str(info.value), code_with_a_difficult_graph_break, "# not allowed here")


def test_error_on_graph_break_false_as_a_context_manager_inside_compiled_code():
    # NOTE: fullgraph=False
    @tc.error_on_graph_break(True)
    @tc.compile
    def fn(x):
        x = x + 1
        with tc.error_on_graph_break(False):
            tc.graph_break()  # no error
        return x + 2

    x = randn(3)
    expected = eager(fn, x)
    out, counts = run_counted(fn, x.copy())  # No error, but there is a graph break
    assert_same(out, expected)
    assert counts["graph_breaks"] == 1
    assert counts["graphs"] == 2  # tracing resumes inside the supported context manager
    assert counts["frames_skipped"] == 0


def test_error_on_graph_break_false_monkey_patched_onto_a_third_party_method():
    class ThirdPartyModule:  # torch.nn.Module read as a plain class with forward
        def forward(self, x):
            x = x + 1
            tc.graph_break()
            return x + 2

    tp_mod = ThirdPartyModule()
    tp_mod.forward = tc.error_on_graph_break(False)(tp_mod.forward)

    @tc.error_on_graph_break(True)
    @tc.compile
    def fn(x):
        return tp_mod.forward(x)

    x = randn(3)
    expected = ThirdPartyModule().forward(x.copy())
    out, counts = run_counted(fn, x.copy())  # No error, but there is a graph break
    assert_same(out, expected)
    assert counts["graph_breaks"] >= 1
    assert counts["frames_skipped"] == 0


def test_unpatched_third_party_method_raises_under_true():
    # The control for the monkey-patching example.
    class ThirdPartyModule:
        def forward(self, x):
            x = x + 1
            tc.graph_break()  # third-party break
            return x + 2

    tp_mod = ThirdPartyModule()

    @tc.error_on_graph_break(True)
    @tc.compile
    def fn(x):
        return tp_mod.forward(x)

    with pytest.raises(tc.Unsupported) as info:
        fn(randn(3))
    assert_points_at(str(info.value), ThirdPartyModule.forward, "# third-party break")


# -- error_on_graph_break(True) example ------------------------------------------------------------


def test_error_on_graph_break_true_on_a_callee_raises_under_false():
    @tc.error_on_graph_break(True)
    def inner2(x):
        x = x + 1
        tc.graph_break()  # error
        return x + 2

    def inner(x):
        return inner2(x)

    # fullgraph=False, error_on_graph_break=False
    @tc.compile
    def fn(x):
        x = x + 4
        tc.graph_break()  # no error
        return inner(x)

    with pytest.raises(tc.Unsupported) as info:
        fn(randn(3))
    message = str(info.value)
    assert_points_at(message, inner2, "# error")
    assert_not_pointing_at(message, fn, "# no error")


def test_the_first_break_under_false_is_allowed_before_the_callee_raises():
    # The same fn with a callee that does not raise: the break in fn itself is compiled around.
    def inner(x):
        return x + 2

    @tc.compile
    def fn(x):
        x = x + 4
        tc.graph_break()  # no error
        return inner(x)

    x = randn(3)
    expected = eager(fn, x)
    out, counts = run_counted(fn, x.copy())
    assert_same(out, expected)
    assert counts["graph_breaks"] == 1 and counts["graphs"] == 2


# -- error_on_graph_break nesting behavior -------------------------------------------------------


def test_error_on_graph_break_false_in_a_callee_context_manager_applies_to_nested_calls():
    def inner(x):
        x = x + 1
        tc.graph_break()
        return x + 2

    def inner2(x):
        with tc.error_on_graph_break(False):
            return inner(x)

    @tc.error_on_graph_break(True)
    @tc.compile
    def fn(x):
        return inner2(x)

    x = randn(3)
    expected = eager(fn, x)
    out, counts = run_counted(fn, x.copy())  # no error
    assert_same(out, expected)
    assert counts["graph_breaks"] >= 1
    assert counts["frames_skipped"] == 0


def test_innermost_error_on_graph_break_region_wins():
    def inner(x):
        x = x + 1
        with tc.error_on_graph_break(False):
            tc.graph_break()
        return x + 2

    def inner2(x):
        with tc.error_on_graph_break(True):
            return inner(x)

    @tc.compile
    def fn(x):
        return inner2(x)

    x = randn(3)
    expected = eager(fn, x)
    out, counts = run_counted(fn, x.copy())  # no error
    assert_same(out, expected)
    assert counts["graph_breaks"] >= 1
    assert counts["frames_skipped"] == 0


def test_a_break_outside_the_innermost_false_region_still_raises():
    # The control for the nesting example: the True region applies to inner's other lines.
    def inner(x):
        x = x + 1
        with tc.error_on_graph_break(False):
            tc.graph_break()
        tc.graph_break()  # outside the False region
        return x + 2

    def inner2(x):
        with tc.error_on_graph_break(True):
            return inner(x)

    @tc.compile
    def fn(x):
        return inner2(x)

    with pytest.raises(tc.Unsupported) as info:
        fn(randn(3))
    assert_points_at(str(info.value), inner, "# outside the False region")


# -- Interaction with fullgraph -----------------------------------------------------------------


def test_fullgraph_true_takes_precedence_over_error_on_graph_break_false():
    @tc.error_on_graph_break(False)
    def inner(x):
        x = x + 1
        tc.graph_break()  # fullgraph wins
        return x + 2

    @tc.compile(fullgraph=True)
    def fn(x):
        return inner(x)

    with pytest.raises(tc.Unsupported) as info:
        fn(randn(3))
    assert_points_at(str(info.value), inner, "# fullgraph wins")


def test_fullgraph_true_cannot_be_toggled_back_by_a_fullgraph_false_callee():
    @tc.compile(fullgraph=False)
    def inner(x):
        x = x + 1
        tc.graph_break()  # inner's break
        return x + 2

    @tc.compile(fullgraph=True)
    def fn(x):
        return inner(x)

    with pytest.raises(tc.Unsupported) as info:
        fn(randn(3))
    assert_points_at(str(info.value), inner, "# inner's break")


def test_a_fullgraph_true_callee_errors_even_from_a_fullgraph_false_caller():
    @tc.compile(fullgraph=True)
    def inner(x):
        x = x + 1
        tc.graph_break()  # inner's break
        return x + 2

    @tc.compile(fullgraph=False)
    def fn(x):
        return inner(x)

    with pytest.raises(tc.Unsupported) as info:
        fn(randn(3))
    assert_points_at(str(info.value), inner, "# inner's break")


def test_error_on_graph_break_as_a_context_manager_around_a_call():
    @tc.compile
    def fn(x):
        x = x + 1
        tc.graph_break()  # raises only inside the with block
        return x + 2

    with tc.error_on_graph_break(True):
        with pytest.raises(tc.Unsupported) as info:
            fn(randn(3))
    assert_points_at(str(info.value), fn, "# raises only inside")

    tc.reset()
    x = randn(3)
    expected = eager(fn, x)
    with tc.error_on_graph_break(False):
        assert_same(fn(x.copy()), expected)
    assert tc.counters()["graph_breaks"] == 1


# -- Summary of fullgraph=True/False vs error_on_graph_break ---------------------------------------


def two_breaks(x):
    x = x + 1
    tc.graph_break()  # first break
    x = x * 2
    tc.graph_break()  # second break
    return x - 3


def toggled_off(x):
    x = x + 1
    with tc.error_on_graph_break(False):
        tc.graph_break()  # allowed break
    return x - 3


def toggled_on(x):
    x = x + 1
    with tc.error_on_graph_break(True):
        tc.graph_break()  # forbidden break
    return x - 3


def no_break(x):
    x = x + 1
    x = x * 2
    return x - 3


TABLE = pytest.mark.parametrize(
    "fullgraph, error_on_graph_break",
    [(True, True), (True, False), (False, True), (False, False)],
    ids=[
        "fullgraph-eogb",
        "fullgraph-no_eogb",
        "no_fullgraph-eogb",
        "no_fullgraph-no_eogb",
    ],
)


def build(fn, fullgraph, error_on_graph_break):
    return tc.error_on_graph_break(error_on_graph_break)(tc.compile(fn, fullgraph=fullgraph))


@TABLE
def test_table_breaks_error_reporting_only_the_first_or_all_are_reported(
    fullgraph, error_on_graph_break
):
    f = build(two_breaks, fullgraph, error_on_graph_break)
    x = randn(3)
    if fullgraph or error_on_graph_break:
        # "Graph breaks result in errors. Only the first graph break will be reported."
        with pytest.raises(tc.Unsupported) as info:
            f(x.copy())
        assert_points_at(str(info.value), two_breaks, "# first break")
        assert_not_pointing_at(str(info.value), two_breaks, "# second break")
    else:
        # "Will continue to compile after encountering graph breaks. All graph breaks will be
        # reported."
        expected = eager(two_breaks, x)
        out, counts = run_counted(f, x.copy())
        assert_same(out, expected)
        assert counts["graph_breaks"] == 2 and counts["graphs"] == 3
        report = explain_fresh(two_breaks, x)
        assert [r.location.lineno for r in report.break_reasons] == [
            line_of(two_breaks, "# first break"),
            line_of(two_breaks, "# second break"),
        ]


@TABLE
def test_table_one_graph_guarantee_only_with_fullgraph(fullgraph, error_on_graph_break):
    f = build(toggled_off, fullgraph, error_on_graph_break)
    x = randn(3)
    if fullgraph:
        # "One graph guarantee. fullgraph cannot be toggled to False."
        with pytest.raises(tc.Unsupported) as info:
            f(x.copy())
        assert_points_at(str(info.value), toggled_off, "# allowed break")
    else:
        # "No one graph guarantee. error_on_graph_break can be toggled to False."
        expected = eager(toggled_off, x)
        out, counts = run_counted(f, x.copy())
        assert_same(out, expected)
        assert counts["graphs"] == 2 and counts["graph_breaks"] == 1
        assert counts["frames_skipped"] == 0


@TABLE
def test_table_error_on_graph_break_can_always_be_toggled_to_true(fullgraph, error_on_graph_break):
    f = build(toggled_on, fullgraph, error_on_graph_break)
    with pytest.raises(tc.Unsupported) as info:
        f(randn(3))
    assert_points_at(str(info.value), toggled_on, "# forbidden break")


@TABLE
def test_table_code_without_breaks_is_one_graph_in_every_mode(fullgraph, error_on_graph_break):
    f = build(no_break, fullgraph, error_on_graph_break)
    x = randn(3)
    expected = eager(no_break, x)
    out, counts = run_counted(f, x.copy())
    assert_same(out, expected)
    assert counts["graphs"] == 1 and counts["graph_breaks"] == 0
