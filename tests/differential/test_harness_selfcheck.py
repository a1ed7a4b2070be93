"""The differential harness itself: each aspect it compares really fails when a "compiled"
function deviates from eager in that aspect alone (a fake compiled function stands in for
tc.compile here), and identical behaviour passes."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from diffharness import check, max_recompiles


def plain(x, lst):
    lst.append(1)
    return x * 2


def fake(deviation):
    """A stand-in for the compiled function that differs from `plain` in one aspect."""

    def run(x, lst):
        if deviation == "result":
            lst.append(1)
            return x * 2 + 1e-300
        if deviation == "exception_message":
            lst.append(1)
            raise ValueError("other message")
        if deviation == "stdout":
            print("extra")
            lst.append(1)
            return x * 2
        if deviation == "warning":
            warnings.warn("extra", RuntimeWarning, stacklevel=1)
            lst.append(1)
            return x * 2
        if deviation == "tcompile_warning":
            warnings.warn("tcompile: something happened", UserWarning, stacklevel=1)
            lst.append(1)
            return x * 2
        if deviation == "mutation":
            lst.append(2)
            return x * 2
        if deviation == "array_mutation":
            x[0] = 5.0
            lst.append(1)
            return x * 2
        if deviation == "aliasing":
            lst.append(1)
            x *= 2
            return x  # the argument itself, not a new array
        if deviation == "identity":
            lst.append(1)
            return x * 2, list(lst)
        if deviation == "dtype":
            lst.append(1)
            return (x * 2).astype(np.float32)
        if deviation == "flags":
            lst.append(1)
            r = x * 2
            r.flags.writeable = False
            return r
        raise AssertionError(deviation)

    return run


def identity_plain(x, lst):
    lst.append(1)
    return x * 2, lst


DEVIATIONS = [
    "result",
    "exception_message",
    "stdout",
    "warning",
    "tcompile_warning",
    "mutation",
    "array_mutation",
    "aliasing",
    "dtype",
    "flags",
]


@pytest.mark.parametrize("deviation", DEVIATIONS)
def test_harness_reports_a_deviation(deviation):
    with pytest.raises(AssertionError):
        check(
            plain,
            lambda: (np.arange(3.0), []),
            make_compiled=lambda fn: fake(deviation),
        )


def test_harness_reports_returned_list_identity():
    with pytest.raises(AssertionError, match="object identity differs"):
        check(
            identity_plain,
            lambda: (np.arange(3.0), []),
            make_compiled=lambda fn: fake("identity"),
        )


def test_harness_reports_negative_zero():
    def zero(x):
        return x * 0.0

    def negzero(x):
        return x * -0.0

    with pytest.raises(AssertionError, match="array contents differ"):
        check(zero, lambda: (np.ones(2),), make_compiled=lambda fn: negzero)


def test_harness_reports_shared_result_buffers():
    buf = np.zeros(2)

    def fresh(x):
        return x * 0

    def shared(x):
        buf[...] = x * 0
        return buf

    with pytest.raises(AssertionError, match="share memory with the previous call"):
        check(fresh, lambda: (np.ones(2),), make_compiled=lambda fn: shared)


def test_harness_reports_recompile_limit():
    counters = {"recompiles": 3}
    with pytest.raises(AssertionError, match="3 recompiles"):
        max_recompiles(2)(counters)


def test_harness_passes_identical_behaviour():
    check(plain, lambda: (np.arange(3.0), []), make_compiled=lambda fn: plain)
