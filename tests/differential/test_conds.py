"""Branches on array values as cond nodes (issue 23): ``if`` statements whose test is data
(``and``/``or`` of such tests too), with both sides traced, run as one graph that takes the side
the data picks. Each case runs
eagerly and compiled on inputs that take each side (bitwise results, same printed output,
writes and errors), on the eager and the cpu backends, and its graph and cond counts are
checked; the cases that cannot be a cond node run as before (a break), still exactly.

PYTEST_DONT_REWRITE: the cases' own ``assert`` statements must raise what plain Python raises
(pytest's rewriting puts object addresses into their messages)."""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np
import pytest
from harness import check_same_calls

import tcompile as tc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from scalar_loops import count_above, running_max  # noqa: E402 - the bench's kernels
from slow_kernels import crc16_npbench as crc16  # noqa: E402


def either_side(x, t):
    if x.sum() > t:
        y = x * 2
    else:
        y = x + 1
    return y


def no_else(x, t):
    y = x - 1
    if x.max() > t:
        y = y * 3
    return y, x.min()


def clip_in_place(x, y):
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            x[i] = 0.5  # writes only where the side runs
        else:
            y[i] = -x[i]
    return x.sum() + y.sum()


def nested(x):
    total = np.float64(0)
    for i in range(x.shape[0]):
        if x[i] > 0.2:
            if x[i] > 0.6:
                total = total + x[i]
            else:
                total = total - x[i]
    return total


def elif_chain(x):
    out = np.zeros(x.shape[0], dtype=np.int64)
    for i in range(x.shape[0]):
        if x[i] < 0.25:
            code = 1
        elif x[i] < 0.5:
            code = 2
        elif x[i] < 0.75:
            code = 3
        else:
            code = 4
        out[i] = code
    return out


def untaken_side_would_raise(x, k):
    """The side not taken indexes past the end: it must not run."""
    if x[0] > 0:
        v = x[0] * 2
    else:
        v = x[k]
    return v


def untaken_side_would_warn(x):
    """Only the side taken may warn (log of negative values)."""
    if x.min() > 0:
        y = np.log(x)
    else:
        y = np.abs(x)
    return y


def temporaries_only(x):
    if x[0] > 0.5:
        scratch = x * 2  # read on this side only: no output
        x = scratch + 1
    return x


def pass_through(x):
    """The else side gives back its input itself: the caller sees the same object."""
    y = x
    if x.sum() < 0:
        y = -x
    y[0] = 7.0
    return y


def early_return(x):
    if x[0] > 0:
        return x * 2
    return x - 1


def both_return(x):
    if x.mean() > 0.5:
        return x.sum()
    else:
        return x.max()


def conditional_expression(x):
    y = x * 2 if x.sum() > 2 else x / 2
    return y + (1.0 if x[0] > 0.5 else -1.0)


def asserted(x):
    assert x.min() >= 0, "negative values"
    return np.sqrt(x)


def asserted_in_loop(rows):
    out = np.empty(rows.shape[0])
    for i in range(rows.shape[0]):
        total = rows[i].sum()
        assert total > 0, f"row {i} sums to {total}"
        out[i] = rows[i].max() / total
    return out


def side_ends_with_an_assert(x, t):
    """The side taken ends with an assert, whose raise its passing test jumps over: traced,
    the assert a cond of its own (it was taken for a side that always raises)."""
    if x.sum() > 0:
        assert x.max() < t
    return x * 2


def raises_when(x):
    if x.sum() > 100:
        raise ValueError("too large")
    return x * 2


def both_hold(x, y):
    if x.sum() > 0 and y.sum() > 0:
        z = x + y
    else:
        z = x - y
    return z


def either_holds(x, y):
    if x.max() > 0.9 or y.max() > 0.9:
        return x * 2
    return y * 2


def in_band(x):
    n = 0
    for i in range(x.shape[0]):
        if x[i] > 0.2 and x[i] < 0.8:
            n += 1
    return n


def second_test_would_raise(x):
    """``b`` of ``a and b`` runs only where ``a`` holds: here it indexes past the end."""
    if x.sum() < -100 and x[9] > 0:
        return x * 2
    return x


def from_loop_index(x):
    out = np.zeros_like(x)
    for i in range(1, x.shape[0]):
        if x[i] > x[i - 1]:
            out[i] = x[i] - x[i - 1]
        else:
            out[i] = out[i - 1]
    return out


def nested_with_else(x):
    if x.sum() > 0:
        if x.max() > 0.9:
            y = x * 2
        else:
            y = x * 3  # 3.11 jumps from here past the outer else, to the outer join
    else:
        y = -x
    z = y + 1
    return z * x


def loops_in_sides(x, n):
    if x.sum() > 0:
        for i in range(n):  # a loop node inside the then side
            x = x * 0.5 + i
    else:
        total = x * 0.0
        for row in range(3):
            total = total + x[row]
        x = total
    return x


def cond_loop_cond(x):
    for i in range(x.shape[0]):
        if x[i] > 0:  # a cond node in the loop's body, a loop in its side, a cond in that
            for j in range(3):
                if x[j] > x[i]:
                    x[i] = x[i] + x[j]
    return x


RNG = np.random.default_rng(23)
DATA = RNG.integers(0, 256, 24).astype(np.uint8)
ONE_GRAPH = [  # (fn, calls, cond nodes made)
    (either_side, [((RNG.random(8), 4.0), {}), ((RNG.random(8) + 0.5, 4.0), {})], 1),
    (no_else, [((RNG.random(8), 0.5), {}), ((RNG.random(8) * 0.4, 0.5), {})], 1),
    (running_max, [((RNG.random(50),), {}), ((-RNG.random(50),), {})], 1),
    (count_above, [((RNG.random(40), 0.5), {}), ((RNG.random(40) * 0.6, 0.5), {})], 1),
    (clip_in_place, [((RNG.random(30), np.zeros(30)), {})], 1),
    (nested, [((RNG.random(40),), {})], 2),
    (
        nested_with_else,
        [((RNG.random(8) + 0.5,), {}), ((RNG.random(8) * 0.5,), {}), ((-RNG.random(8),), {})],
        2,
    ),
    (elif_chain, [((RNG.random(40),), {})], 3),
    (crc16, [((DATA,), {}), ((DATA[::-1].copy(),), {})], 1),
    (untaken_side_would_raise, [((np.array([1.0, 2.0]), 5), {})], 1),
    (untaken_side_would_warn, [((RNG.random(6) + 0.1,), {}), ((RNG.random(6) - 2,), {})], 1),
    (temporaries_only, [((RNG.random(5) + 0.6,), {}), ((RNG.random(5) * 0.4,), {})], 1),
    (pass_through, [((RNG.random(4),), {}), ((-RNG.random(4),), {})], 1),
    (from_loop_index, [((RNG.random(30),), {})], 1),
    (
        both_hold,
        [
            ((RNG.random(4), RNG.random(4)), {}),
            ((-RNG.random(4), RNG.random(4)), {}),
            ((RNG.random(4), -RNG.random(4)), {}),
        ],
        2,
    ),
    (
        either_holds,
        [
            ((RNG.random(4) * 0.5, RNG.random(4) * 0.5), {}),
            ((RNG.random(4) + 1, RNG.random(4) * 0.5), {}),
            ((RNG.random(4) * 0.5, RNG.random(4) + 1), {}),
        ],
        2,
    ),
    (in_band, [((RNG.random(50),), {}), ((RNG.random(50),), {})], 2),
    (second_test_would_raise, [((RNG.random(3),), {})], 2),
    (early_return, [((np.ones(3),), {}), ((-np.ones(3),), {})], 1),
    (asserted, [((RNG.random(4),), {}), ((RNG.random(4) - 2,), {})], 1),  # fails: eager's error
    (
        asserted_in_loop,
        [((RNG.random((6, 3)),), {}), ((np.vstack([RNG.random((5, 3)), -np.ones((1, 3))]),), {})],
        1,
    ),
    (raises_when, [((RNG.random(4),), {}), ((np.full(4, 30.0),), {})], 1),
    (
        side_ends_with_an_assert,
        [((RNG.random(4), 5.0), {}), ((RNG.random(4) + 6, 5.0), {}), ((-RNG.random(4), 5.0), {})],
        2,
    ),
    (both_return, [((RNG.random(6) + 0.5,), {}), ((RNG.random(6) - 0.5,), {})], 1),
    (conditional_expression, [((RNG.random(6),), {}), ((RNG.random(6) + 0.5,), {})], 2),
    (loops_in_sides, [((RNG.random(4), 3), {}), ((-RNG.random(4), 3), {})], 1),
    (
        cond_loop_cond,
        [((RNG.standard_normal(8),), {}), ((RNG.standard_normal(8),), {})],
        2,
    ),
]


@pytest.mark.parametrize("backend", ["eager", "cpu"])
@pytest.mark.parametrize(
    ("fn", "calls", "conds"), ONE_GRAPH, ids=[c[0].__name__ for c in ONE_GRAPH]
)
def test_branch_on_data_is_one_graph(fn, calls, conds, backend):
    if backend == "cpu":
        pytest.importorskip("numba", reason="the cpu backend needs numba")
    tc.reset()
    check_same_calls(fn, calls, backend=backend, later_calls_hit_cache=True)
    (args, kwargs) = calls[0]
    explained = tc.explain(fn)(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    assert (explained.graph_count, explained.graph_break_count) == (1, 0), explained
    assert len(explained.conds) == conds, explained


def test_cond_node_shows_both_sides():
    explained = tc.explain(either_side)(np.arange(4.0), 1.0)
    text = str(explained)
    assert "if sum_ > 1.0:" in text and "y = x * 2" in text and "y = x + 1" in text, text
    assert "Branches:" in text and "cond node" in text, text


def test_untaken_side_error_is_not_raised_and_taken_side_error_is():
    compiled = tc.compile(untaken_side_would_raise, backend="eager")
    assert compiled(np.array([1.0, 2.0]), 5) == 2.0
    with pytest.raises(IndexError):
        compiled(np.array([-1.0, 2.0]), 5)  # the side taken indexes past the end: eager's error


# -- branches that cannot be cond nodes: a break, as before, with the reason -----------------


def kinds_differ(x):
    if x.sum() > 1:
        y = x * 2
    else:
        y = 0  # an int on this side, an array on the other
    return y


def set_on_one_side(x):
    if x[0] > 0:
        y = x + 1
    return y  # noqa: F821 - unbound when the other side runs: eager raises


def side_prints(x):
    if x[0] > 0:
        print("positive", x[0])
        y = x * 2
    else:
        y = x
    return y


def side_appends(x, log):
    if x[0] > 0:
        log.append(1)
    return x + len(log)


def returns_of_two_kinds(x):
    if x[0] > 0:
        return x * 2
    return None


def several_values(x):
    if x > 0:  # bool() of several values: NumPy's ValueError
        return x
    return -x


BREAKS = [
    (kinds_differ, [((np.ones(3),), {}), ((np.zeros(3),), {})], "one kind"),
    (set_on_one_side, [((np.ones(3),), {}), ((-np.ones(3),), {})], "one side only"),
    (side_prints, [((np.ones(3),), {}), ((-np.ones(3),), {})], ""),
    (side_appends, [((np.ones(3), []), {}), ((-np.ones(3), []), {})], "made before"),
    (returns_of_two_kinds, [((np.ones(3),), {}), ((-np.ones(3),), {})], "one kind"),
]


@pytest.mark.parametrize(("fn", "calls", "reason"), BREAKS, ids=[c[0].__name__ for c in BREAKS])
def test_branch_that_is_no_cond_node_breaks(fn, calls, reason):
    tc.reset()
    check_same_calls(fn, calls, fullgraph=False)
    (args, kwargs) = calls[0]
    explained = tc.explain(fn)(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    assert not explained.conds, explained
    hints = " ".join(h for b in explained.break_reasons for h in b.hints)
    assert reason in hints, hints


def test_predicate_of_several_values_raises_numpys_error():
    tc.reset()
    check_same_calls(several_values, [((np.ones(3),), {})], fullgraph=False)  # ValueError both
    with pytest.raises(Exception, match="several values"):
        tc.compile(several_values, fullgraph=True)(np.ones(3))


def asserts_ending_sides(x, y, n):
    """Found by the property test (3.12): each side ending with an assert; the loop splits."""
    N = x.shape[0]
    acc = np.zeros_like(x)
    s = np.float64(0.0)
    for i in range(n):
        if x[i % N] > 0:
            assert abs(s) < 40.0
        else:
            acc = acc + x * i
        if x[i % N] > 0:
            assert abs(s) < 40.0
        else:
            acc = acc + x * i
    return acc


def stores_before_an_assert(x, y, n):
    """Found by the property test (3.12, a segfault): a side that stores ``acc`` and ``s`` and
    then raises is not traced, and its stores must not unbind those locals for the code after
    the branch (a resume function then lacked them)."""
    N = x.shape[0]
    acc = np.zeros_like(x)
    s = np.float64(0.0)
    i = 0
    for i in range(n):
        if np.count_nonzero(acc > 0) > 3:
            assert abs(s) < 40.0
            acc = acc + x * i
        else:
            x[i % N] = y[i % N] * 2.0
        if x[i % N] > 0:
            if s > 1.0 or x.max() > 1.5:
                acc = acc * 0.5 + y
                s = s * 0.5
                assert abs(s) < 40.0
            else:
                x[i % N] = y[i % N] * 2.0
                s = s + 1.0 if x[i % N] > 0 else s - 1.0
    if x[i % N] > 0:
        acc = acc + x * i
    return acc, s, x, y


@pytest.mark.parametrize("fn", [asserts_ending_sides, stores_before_an_assert])
def test_branches_the_property_test_found_match_eager(fn):
    calls = []
    for k, n in enumerate((5, 7, 3, 0)):
        rng = np.random.default_rng(k)
        calls.append(((rng.standard_normal(8), rng.random(8), n), {}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_same_calls(fn, calls, fullgraph=False)
