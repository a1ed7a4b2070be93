"""The loop's run on the trace's examples, replayed on the graph's first call
(tracer/ir/first_run.py): taken only when exact, so a long loop runs once on its first call."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tcompile as tc
from tcompile.tracer.ir import first_run, quiet
from tcompile.tracer.ir.first_run import FirstRun, run_keeping

NOTHING_IGNORED = frozenset()


def keep(run, *args, fp_ignored=NOTHING_IGNORED):
    return run_keeping(run, args, fp_ignored)


def double_in_place(a, n):
    for i in range(n):
        a[i] *= 2.0
    return (a.sum(),)


# -- replaying ------------------------------------------------------------------------------------


def test_replay_gives_the_results_and_puts_the_writes_into_the_arguments():
    trace_arg = np.arange(4.0)
    results, kept = keep(double_in_place, trace_arg, 2)
    assert isinstance(kept, FirstRun) and results == (np.float64(7.0),)
    real = np.arange(4.0)  # the caller's array: equal bits, not yet written
    assert kept.replay((real, 2)) == (np.float64(7.0),)
    assert real.tolist() == [0.0, 2.0, 2.0, 3.0]


@pytest.mark.parametrize(
    "other",
    [
        (np.arange(4.0) + 1, 2),  # other contents
        (np.arange(4.0, dtype=np.float32), 2),  # other dtype
        (np.arange(4.0).reshape(2, 2), 2),  # other shape
        (np.arange(4.0), 3),  # other count
        (np.arange(4.0), 2.0),  # other kind of number
        (np.arange(4.0),),  # other arity
    ],
)
def test_replay_misses_on_other_arguments(other):
    _, kept = keep(double_in_place, np.arange(4.0), 2)
    before = [np.copy(a) for a in other]
    assert kept.replay(other) is None
    assert all(np.array_equal(a, b) for a, b in zip(other, before, strict=True))  # untouched


@pytest.mark.parametrize(
    ("traced", "real"),
    [(0.0, -0.0), (float("nan"), -float("nan")), (np.float64(0.0), np.float64(-0.0))],
)
def test_numbers_compare_bit_for_bit(traced, real):
    _, kept = keep(lambda x: (x + 1,), traced)
    assert kept.replay((real,)) is None
    assert kept.replay((traced,)) is not None


def test_nan_arrays_with_equal_bits_match():
    x = np.array([np.nan, 1.0])
    _, kept = keep(lambda a: (a * 2,), x)
    (got,) = kept.replay((x.copy(),))
    assert np.array_equal(got, x * 2, equal_nan=True)


def test_results_are_copies_later_writes_do_not_reach():
    x = np.ones(3)
    (result,), kept = keep(lambda a: (a + 1,), x)
    result[:] = -1  # the trace goes on, writing into its example
    (got,) = kept.replay((x,))
    assert got.tolist() == [2.0, 2.0, 2.0] and got is not result


def test_an_argument_given_back_is_the_caller_object_and_repeats_are_one_object():
    def body(a):
        a += 1
        b = a * 2
        return a, b, b

    _, kept = keep(body, np.zeros(2))
    real = np.zeros(2)
    a, b, b_again = kept.replay((real,))
    assert a is real and real.tolist() == [1.0, 1.0]
    assert b is b_again and b.tolist() == [2.0, 2.0]


def test_views_of_an_argument_are_not_kept():
    assert keep(lambda a: (a[1:],), np.zeros(4))[1] is None  # a copy would not share memory
    assert keep(lambda a: (a[1:] + 1,), np.zeros(4))[1] is not None


def test_views_between_results_are_not_kept():
    def body(a):
        b = a + 1
        return b, b[1:]

    assert keep(body, np.zeros(4))[1] is None


def test_layouts_are_kept():
    x = np.ones((3, 2))
    (result,), kept = keep(lambda a: (np.asfortranarray(a * 2),), x)
    (got,) = kept.replay((x,))
    assert got.strides == result.strides and got.flags.f_contiguous


# -- what is not kept -----------------------------------------------------------------------------


def test_a_warning_is_not_kept():
    def body(a):
        warnings.warn("from the body", UserWarning, stacklevel=1)
        return (a,)

    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        _, kept = keep(body, np.ones(2))
    assert kept is None and shown == []  # dropped: it belongs to the real run


@pytest.mark.parametrize(("ignored", "is_kept"), [(NOTHING_IGNORED, False), ({"divide"}, True)])
def test_fp_errors_are_kept_only_where_eager_ignores_them(ignored, is_kept):
    _, kept = keep(lambda a: (1.0 / a,), np.zeros(2), fp_ignored=frozenset(ignored))
    assert (kept is not None) == is_kept


def test_objects_are_not_kept():
    assert keep(lambda a: (a,), np.array([None, 1], dtype=object))[1] is None
    assert keep(lambda a: (a,), [1.0])[1] is None


def test_large_runs_are_not_kept(monkeypatch):
    monkeypatch.setattr(first_run, "MAX_BYTES", 100)
    assert keep(lambda a: (a * 2,), np.zeros(10))[1] is None
    assert keep(lambda a: (a * 2,), np.zeros(5))[1] is not None


def test_noting_leaves_the_mode_as_it_was():
    with quiet.silenced():
        with quiet.noting() as noted:
            warnings.warn("noted", UserWarning, stacklevel=1)
        with warnings.catch_warnings(record=True) as shown:
            warnings.warn("silenced again", UserWarning, stacklevel=1)
    assert len(noted) == 1 and shown == []


# -- in the compiled function ---------------------------------------------------------------------


def stencil(u, steps):
    for _ in range(steps):
        u = 0.5 * u + 0.25 * (np.roll(u, 1) + np.roll(u, -1))
    return u


def residual(u, tol):
    change = 1.0
    while change > tol:
        v = 0.5 * (u + np.roll(u, 1))
        change = np.abs(v - u).max()
        u = v
    return u


def writes_argument(a):
    for i in range(1, a.shape[0]):
        a[i] += a[i - 1]
    return a


def into_empty(m):
    out = np.empty_like(m)  # its contents are whatever the memory held: they do not count
    out[0] = 1.0
    for i in range(1, m.shape[0]):
        out[i] = out[i - 1] * 0.5 + m[i]
    return out


def nested_in_place(grid):
    a = grid.copy()
    for _ in range(3):
        for i in range(1, a.shape[0]):
            a[i] += a[i - 1]  # an inner loop's run writes rows its first iteration did not
            for j in range(1, a.shape[1]):
                a[i, j] = (a[i, j] + a[i, j - 1]) / 3.0
    return a


def underflows(x):
    for _ in range(40):
        x = x * 1e-300  # underflow: NumPy ignores it unless told otherwise
    return x


@pytest.mark.parametrize(
    ("fn", "make_args"),
    [
        (stencil, lambda: (np.linspace(0, 1, 64), 30)),
        (residual, lambda: (np.linspace(0, 1, 64), 1e-3)),
        (writes_argument, lambda: (np.arange(10.0),)),
        (into_empty, lambda: (np.arange(24.0).reshape(6, 4),)),
        (nested_in_place, lambda: (np.arange(30.0).reshape(5, 6) / 7,)),
        (underflows, lambda: (np.ones(3),)),
    ],
)
def test_the_first_call_replays_the_trace_run(fn, make_args, replays):
    compiled = tc.compile(fn, backend="eager")
    eager_args, compiled_args = make_args(), make_args()
    want = fn(*eager_args)
    got = compiled(*compiled_args)
    assert replays and all(replays), "the first call ran a loop again"
    taken = len(replays)
    np.testing.assert_array_equal(got, want, strict=True)
    for a, b in zip(compiled_args, eager_args, strict=True):
        np.testing.assert_array_equal(a, b)  # the loop's writes reached the caller's arrays
    got = compiled(*make_args())  # later calls run the loop
    assert len(replays) == taken and np.array_equal(got, want)


def shown_warnings(fn, *args) -> list[str]:
    with np.errstate(under="warn"), warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        fn(*args)
    return [str(w.message) for w in shown]


def test_an_fp_warning_eager_shows_is_shown_once(replays):
    want = shown_warnings(underflows, np.ones(3))
    assert want == ["underflow encountered in multiply"]
    assert shown_warnings(tc.compile(underflows, backend="eager"), np.ones(3)) == want
    assert True not in replays  # the trace's run warned: not kept
