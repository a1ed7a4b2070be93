"""The differential harness notices every kind of difference it promises to (no tracer needed):
types, dtypes, bytes, layout flags, signed zeros, dict order, stdout, exceptions, mutations, aliasing."""

from __future__ import annotations

import numpy as np
import pytest
from harness import (
    Outcome,
    alias_signature,
    assert_same,
    assert_same_outcome,
    cross_call_sharing,
    fresh_args,
    perturbed,
)


def outcome(result=None, exc=None, stdout="", args=(), kwargs=None) -> Outcome:
    return Outcome(result, exc, stdout, args, kwargs or {})


def differs(eager, compiled) -> bool:
    try:
        assert_same(eager, compiled)
    except AssertionError:
        return True
    return False


class Obj:
    def __init__(self, w):
        self.w = w


@pytest.mark.parametrize(
    "eager, compiled",
    [
        (np.arange(3.0), np.arange(3.0).astype(np.float32)),  # dtype
        (np.arange(4.0), np.arange(4.0).reshape(2, 2)),  # shape
        (np.arange(3.0), np.nextafter(np.arange(3.0), 10.0)),  # one ulp
        (np.ones((2, 3)), np.asfortranarray(np.ones((2, 3)))),  # layout flags
        (np.broadcast_to(np.ones(3), (2, 3)), np.ones((2, 3))),  # read-only view vs copy
        (np.float64(1.0), np.float32(1.0)),  # NumPy scalar type
        (np.float64(1.0), 1.0),  # NumPy scalar vs Python float
        (np.array(1.0), np.float64(1.0)),  # 0-d array vs scalar
        (0.0, -0.0),  # sign of zero
        (1, True),  # int vs bool
        (1, 1.0),  # int vs float
        ((1, 2), [1, 2]),  # tuple vs list
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}),  # dict order
        ([np.zeros(2)], [np.ones(2)]),  # nested contents
        (Obj(np.zeros(2)), Obj(np.ones(2))),  # user-object attributes
        (complex(1, 0.0), complex(1, -0.0)),
    ],
)
def test_assert_same_detects_difference(eager, compiled):
    assert differs(eager, compiled)


@pytest.mark.parametrize(
    "value",
    [
        np.array([np.nan, 1.0]),
        float("nan"),
        np.float32("nan"),
        (np.arange(3), {"k": [1, "s", None]}, np.dtype("int8"), slice(1, 2), range(3)),
        Obj(np.arange(2.0)),
    ],
)
def test_assert_same_accepts_identical_values(value):
    assert not differs(value, fresh_args((value,), {})[0][0])


def test_outcomes_with_different_stdout_exceptions_or_mutations_differ():
    base = outcome(result=1, stdout="a\n", args=(np.zeros(2),))
    with pytest.raises(AssertionError, match="stdout"):
        assert_same_outcome(base, outcome(result=1, stdout="b\n", args=(np.zeros(2),)))
    with pytest.raises(AssertionError, match="exception"):
        assert_same_outcome(outcome(exc=ValueError("x")), outcome(exc=ValueError("y")))
    with pytest.raises(AssertionError, match="exception"):
        assert_same_outcome(outcome(exc=ValueError("x")), outcome(exc=TypeError("x")))
    with pytest.raises(AssertionError, match="args"):
        assert_same_outcome(base, outcome(result=1, stdout="a\n", args=(np.ones(2),)))


def test_returning_the_input_itself_differs_from_returning_a_copy():
    x, y = np.arange(3.0), np.arange(3.0)
    assert alias_signature(outcome(result=x, args=(x,))) != alias_signature(
        outcome(result=y.copy(), args=(y,))
    )


def test_returning_a_view_differs_from_returning_a_copy():
    x, y = np.arange(4.0), np.arange(4.0)
    eager, compiled = outcome(result=x[1:], args=(x,)), outcome(result=y[1:].copy(), args=(y,))
    with pytest.raises(AssertionError, match="aliasing"):
        assert_same_outcome(eager, compiled)


def test_one_array_returned_twice_differs_from_two_equal_arrays():
    a = np.ones(2)
    assert alias_signature(outcome(result=(a, a))) != alias_signature(outcome(result=(a, a.copy())))


def test_fresh_args_keep_layout_and_aliasing():
    f = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    shared = np.arange(3.0)
    (cf, box, s1, s2), _ = fresh_args((f, Obj(f), shared, shared), {})
    assert cf.flags.f_contiguous and not cf.flags.c_contiguous
    assert box.w.flags.f_contiguous
    assert s1 is s2 and s1 is not shared
    assert np.shares_memory(cf, box.w)  # one object in the original, one object in the copy


def test_perturbed_keeps_types_layout_and_aliasing_but_changes_values():
    f = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    shared = np.arange(4, dtype=np.uint8)
    mask = np.array([True, False])
    ro = np.broadcast_to(np.arange(3.0), (2, 3)).copy()
    ro.flags.writeable = False
    args = (f, [shared, shared], {"m": mask}, 3, ro)
    (pf, (s1, s2), d, n, pro), _ = perturbed(args, {})
    for old, new in ((f, pf), (shared, s1), (mask, d["m"]), (ro, pro)):
        assert (type(new), new.dtype, new.shape) == (type(old), old.dtype, old.shape)
        assert new.flags.c_contiguous == old.flags.c_contiguous
        assert new.flags.f_contiguous == old.flags.f_contiguous
        assert new.flags.writeable == old.flags.writeable
        assert new.tobytes() != old.tobytes()
    assert s1 is s2 and n == 3


def test_a_buffer_reused_across_calls_is_visible():
    cached = np.zeros(3)
    assert cross_call_sharing(outcome(result=cached), outcome(result=(cached,))) == [[True]]
    assert cross_call_sharing(outcome(result=np.zeros(3)), outcome(result=np.zeros(3))) == [[False]]
