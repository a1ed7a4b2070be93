"""Functions whose module globals the guard tests rebind between calls (shadowing builtins and
NumPy names, rebinding helpers), kept apart so that the rebinding touches nothing else."""

from __future__ import annotations

import numpy as np


def uses_len(x):
    return len(x) + x.sum()


def uses_abs(x):
    return abs(x.sum()) + x


def uses_max(x):
    return max(x.shape) * x


def uses_np(x):
    return np.sum(x) * 2


def uses_helper(x):
    return helper(x) + 1  # noqa: F821 (bound by the tests)


def uses_isinstance(x, k):
    if isinstance(k, float):
        return x * k
    return x - k


SCALE = 2.0  # rebound by the guard tests between calls
