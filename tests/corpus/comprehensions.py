"""List, dict and set comprehensions (inlined in 3.12+, own code objects in 3.11): over ranges,
constants, zip, enumerate and array rows; with conditions, nesting and closures. No generators."""

import numpy as np

from . import case
from .inputs import A8, M45, R8, R45


def _helper(v):
    return v * 2 + 1


@case(A8)
def list_comprehension_over_range(x):
    return [x * i for i in range(3)]


@case()
def list_comprehension_over_constants_with_condition():
    return [v**2 for v in (1, 2, 3, 4) if v % 2 == 0], [i for i in range(10) if i % 3 == 0 if i > 0]


@case(A8)
def dict_comprehension_over_zip(x):
    return {k: x * v for k, v in zip("abc", (1, 2, 3))}


@case()
def set_comprehension_of_ints():
    return {i % 3 for i in range(7)}, sorted({c for c in "banana"})


@case(A8)
def nested_list_comprehension(x):
    grid = [[i * j for j in range(3)] for i in range(2)]
    return grid, np.array(grid) + x[:3]


@case(A8, R8)
def comprehension_over_zip_of_arrays(a, b):
    return [u * w for u, w in zip(a[:3], b[:3])], np.stack([u + w for u, w in zip((a, b), (b, a))])


@case(M45)
def comprehension_over_array_rows(m):
    return [row.max() for row in m], np.array([row.argmax() for row in m])


@case(R45)
def dict_comprehension_with_enumerate(m):
    return {i: row.sum() for i, row in enumerate(m) if i != 2}


@case(A8, 3.0)
def comprehension_reads_arguments_as_closure(x, scale):
    return [x[i] * scale for i in range(2)], {f"k{i}": x[i] + scale for i in range(2)}


@case(A8)
def comprehension_calls_helper(x):
    return [_helper(v) for v in (x, x[:2], 3)]


@case(A8)
def comprehension_variable_does_not_leak(x):
    i = 10
    vals = [i * 2 for i in range(3)]
    return i, vals, x[i % 8]


@case(M45)
def comprehension_then_stack_and_concatenate(m):
    cols = [m[:, j] * j for j in range(m.shape[1])]
    return np.stack(cols, axis=1), np.concatenate([c[:2] for c in cols])


@case(A8)
def nested_comprehension_with_inner_condition(x):
    return [(i, j) for i in range(3) for j in range(i) if (i + j) % 2], [
        x[k] for k in [i * 2 for i in range(3)]
    ]


@case(R8)
def comprehension_with_ternary_and_unpacking(x):
    pairs = [(1, "a"), (2, "b"), (3, "c")]
    return [n * 2 if name != "b" else -n for n, name in pairs], {name: x[n] for n, name in pairs}
