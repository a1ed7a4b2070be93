"""Tuple unpacking, starred unpacking, swaps, nested targets, unpacking arrays by their first axis,
and starred building of tuples/lists/dicts/sets."""

# Corpus code is deliberately unidiomatic: each construct is there for the bytecode it emits.
# ruff: noqa: F841, PIE800, RUF059

from . import case, raises
from .inputs import A8, M45, R8, R45, T234


def _pair(x):
    return x.min(), x.max()


@case(M45)
def unpack_shape_tuple(x):
    rows, cols = x.shape
    return x.reshape(cols, rows), rows - cols


@case(T234)
def starred_unpack_first_and_rest(x):
    first, *rest = (1, 2, 3, 4)
    *init, last = x.shape
    head, *mid, tail = x.shape
    return first, rest, init, last, mid, x.reshape(*init, last)[..., head:tail]


@case(A8, R8)
def swap_two_variables(a, b):
    a, b = b, a
    return a - b


@case(A8, R8)
def rotate_three_variables(a, b):
    c = a * b
    a, b, c = c, a, b
    return a, b, c


@case(A8)
def nested_unpack_targets(x):
    (a, b), c = (1, 2), x
    [d, (e, f)] = [3, (4.0, x[0])]
    return a + b + d + e, c * f


@case(M45)
def unpack_array_rows(m):
    r0, r1, r2, r3 = m
    first, *others = m
    return r0 + r3, r1 * r2, first, len(others), others[-1]


@case(A8)
def unpack_dict_keys_and_items(x):
    k1, k2 = {"a": 1, "b": 2}
    (n1, v1), (n2, v2) = {"p": x, "q": 2.0}.items()
    return k1 + k2, n1, v1 * v2, n2


@case(R45)
def unpack_result_of_helper(x):
    lo, hi = _pair(x)
    return (x - lo) / (hi - lo)


@case(A8, (1, 2), [3, 4])
def starred_building_of_containers(x, t, lst):
    d1 = {"a": 1}
    return (*t, 5), [*lst, *t], {**d1, "b": 2, **{"c": 3}}, {*t, *lst}, (*lst,), x[[*t]]


@case(A8)
def chained_assignment_targets(x):
    a = b = x + 1
    c = d = 3
    return a is b, c + d, a


@case(R45)
def unpack_in_for_target(x):
    out = []
    for i, (a, b) in enumerate(zip(x[0], x[1])):
        out.append(a * b + i)
    for (_k, v), w in zip({"u": 1, "v": 2}.items(), (0.5, 0.25)):
        out.append(v * w)
    return out


@case(A8)
def augmented_assignment_on_unpacked_names(x):
    a, b = x[:4], x[4:]
    a = a * 2
    b += 1
    a -= b
    return a, b


@raises(A8)
def unpack_too_many_values(x):
    a, b = (1, 2, 3)
    return x


@raises(M45)
def unpack_array_rows_wrong_count(m):
    a, b = m
    return a
