"""User functions with `assert` statements, kept out of test modules: pytest rewrites the asserts
of test modules (its messages then differ between any two calls), not of this helper module."""

from __future__ import annotations


def assert_on_value(x, lst):
    lst.append(x.min())
    assert x.min() >= 0, "negative entries"
    return x.sum()


def assert_without_message(x, lst):
    lst.append(len(lst))
    assert x.sum() > 0
    return x * 2


def assert_fstring_message(x):
    assert x.max() < 10, f"max too large: {x.max()}"
    return x - 1


def asserted_sweep(t):
    """An assert on data in the body of no iteration: its stand-in items may fail it."""
    n = t.shape[0]
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n):
            assert t[i + 1, j] >= 0.0
            t[i, j] = t[i + 1, j] * 0.5 + 1.0
    return t
