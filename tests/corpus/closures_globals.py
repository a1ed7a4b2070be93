"""Closures (enclosing variables, nested defs and lambdas, nonlocal writes) and module globals
(constants, arrays, dicts, helper functions) read by compiled functions."""

import numpy as np

from . import case, register
from .inputs import A8, M45, R8

SCALE = 2.5
OFFSETS = np.arange(8) / 3.0
CONFIG = {"eps": 1e-3, "axis": 1, "names": ("a", "b")}
WEIGHTS = (0.5, 0.25, 0.125)
DEBUG = False


def _global_helper(x):
    return x * SCALE + 1


def _global_helper_calling_helper(x):
    return _global_helper(x) - OFFSETS


@case(A8)
def reads_global_constant_and_array(x):
    return x * SCALE + OFFSETS


@case(M45)
def reads_global_dict_entries(x):
    return x.sum(axis=CONFIG["axis"]) + CONFIG["eps"], CONFIG["names"][1]


@case(A8)
def calls_global_helper(x):
    return _global_helper(x), _global_helper(x[:2])


@case(A8)
def global_helper_calls_global_helper(x):
    return _global_helper_calling_helper(x)


@case(R8)
def global_tuple_weights(x):
    return x[0] * WEIGHTS[0] + x[1] * WEIGHTS[1] + x[2] * WEIGHTS[-1]


@case(A8)
def global_numpy_module_attribute_constants(x):
    return x * np.pi + np.e, np.inf > x, x + np.float32(np.euler_gamma)


@case(A8, 3.0)
def nested_def_reads_enclosing_variables(x, k):
    def inner(y):
        return y * k + x.shape[0]

    return inner(x) + inner(x + 1)


@case(A8)
def lambda_defined_and_called_inside(x):
    sq = lambda v: v * v
    shift = lambda v, s=1.0: v + s
    return sq(x) + sq(2), shift(x), shift(x, s=-1.0)


@case(A8)
def nonlocal_write_in_inner_function(x):
    count = 0

    def bump(step=1):
        nonlocal count
        count += step

    bump()
    bump(2)
    return x * count, count


@case(M45)
def closure_over_array_argument(x):
    def total():
        return x.sum(axis=0)

    def shifted(k):
        return x + k

    return total(), shifted(1.0).max()


@case(A8)
def closure_sees_value_assigned_after_definition(x):
    y = 1.0

    def get():
        return y

    y = 3.0
    return get() * x


@case(A8)
def two_level_nested_closures(x):
    base = 2.0

    def outer(a):
        def inner(b):
            return a * b * base

        return inner(x) + inner(1.0)

    return outer(0.5)


@case(A8)
def nested_def_with_defaults_and_kwonly(x):
    def f(v, k=3, *, bias=0.5):
        return v * k + bias

    return f(x), f(x, 2), f(x, bias=-1.0), f(v=x, k=1)


@case(R8)
def lambda_as_sort_key_on_constants(x):
    pairs = [(2, "b"), (0, "a"), (1, "c")]
    ordered = sorted(pairs, key=lambda p: p[0])
    return ordered, max(pairs, key=lambda p: p[1]), x[ordered[0][0]]


@case(A8)
def closure_captured_in_comprehension(x):
    k = 2.0
    return [x * k * i for i in range(3)]


@case(A8)
def cell_variable_rebound_by_inner_and_read_after(x):
    acc = x * 0

    def add(v):
        nonlocal acc
        acc = acc + v

    for i in range(3):
        add(x * i)
    return acc


@case(A8)
@case(M45)
def global_flag_constant_branch(x):
    if DEBUG:
        return x * 0
    return x + 1


def _make_scaler(factor):
    def scaled(x):
        return x * factor + OFFSETS[: x.shape[0]]

    return scaled


register(_make_scaler(3.0), A8, id="closure_built_by_factory")
register(_make_scaler(0.5), A8[:4], id="closure_built_by_factory_other_cell")
