"""Loops over constants, unrolled at trace time: range/list/tuple/zip/enumerate/dict items/an array's
first axis, nested loops, break/continue, for-else, while loops with a known counter."""

# Corpus code is deliberately unidiomatic: each construct is there for the bytecode it emits.
# ruff: noqa: PERF402

import numpy as np

from . import case
from .inputs import A8, I32_45, M45, R8, R45, T234


@case(A8)
def for_range_accumulates(x):
    acc = np.zeros_like(x)
    for i in range(3):
        acc = acc + x * i
    return acc


@case(A8)
def for_range_with_start_stop_negative_step(x):
    out = []
    for i in range(6, 0, -2):
        out.append(x[i])
    for j in range(2, 4):
        out.append(x[j] * j)
    return out


@case(A8)
def for_over_list_of_constants(x):
    for k in [1.0, 2.0, 0.5]:
        x = x * k + 1
    return x


@case(A8, R8)
def for_over_tuple_of_arrays(a, b):
    total = 0
    for t in (a, b, a * b):
        total = total + t.sum()
    return total


@case(A8, R8)
def for_over_zip(a, b):
    out = a * 0
    for u, w in zip((a, b), (2.0, 3.0)):
        out = out + u * w
    return out


@case(A8)
def for_over_enumerate(x):
    parts = []
    for i, s in enumerate([0.5, 1.5, 2.5]):
        parts.append(x[i] * s)
    return parts


@case(A8)
def for_over_dict_items_keys_values(x):
    coeffs = {"a": 1, "b": 2, "c": 3}
    out = {}
    for k, v in coeffs.items():
        out[k] = x * v
    n = 0
    for v in coeffs.values():
        n += v
    names = ""
    for k in coeffs:
        names += k
    return out, n, names


@case(M45)
@case(I32_45)
def for_over_array_first_axis(m):
    rows = []
    for row in m:
        rows.append(row.sum())
    return rows, np.stack([r * 2 for r in m])


@case(T234)
def for_over_enumerated_array_rows(t):
    acc = np.zeros(t.shape[1:])
    for i, plane in enumerate(t):
        acc = acc + plane * (i + 1)
    return acc


@case(A8)
def nested_loops(x):
    out = []
    for i in range(2):
        for j in range(3):
            out.append(x[i + j] * (i - j))
    return np.array(out)


@case(A8)
def break_in_loop_over_constants(x):
    for i in range(10):
        if i == 3:
            break
        x = x + i
    return x, i


@case(A8)
def continue_in_loop_over_constants(x):
    acc = x * 0
    for i in range(6):
        if i % 2:
            continue
        acc = acc + x * i
    return acc


@case(A8)
def for_else_runs_when_no_break(x):
    for k in (1, 2, 3):
        if k > 5:
            break
    else:
        x = x * 10
    for k in (1, 2, 3):
        if k == 2:
            break
    else:
        x = x * 100
    return x, k


@case(A8)
def while_loop_with_known_counter(x):
    i = 0
    while i < 4:
        x = x * 1.5
        i += 1
    return x, i


@case(A8)
def while_true_with_break(x):
    n = 0
    while True:
        n += 1
        if n > 3:
            break
    return x * n


@case(R45)
def loop_over_shape_tuple(x):
    total = 1
    for d in x.shape:
        total *= d
    return total, x.reshape(total)


@case(R8)
def loop_with_inplace_accumulator(x):
    acc = np.zeros(4)
    for i in range(0, 8, 4):
        acc += x[i : i + 4]
    acc *= 0.5
    return acc


@case(A8)
def loop_over_sorted_and_reversed(x):
    out = []
    for k in sorted({"b": 2, "a": 1}):
        out.append(k)
    for i in reversed(range(3)):
        x = x - i
    return out, x


@case(A8)
def loop_over_string_characters(x):
    codes = []
    for ch in "abc":
        codes.append(ch.upper())
    return codes, x * len(codes)


@case(A8)
def variable_bound_only_inside_loop_used_after(x):
    for i in range(3):
        last = x * i
    return last


@case(M45)
def loop_building_dict_of_arrays(m):
    stats = {}
    for name, fn in (("mean", np.mean), ("max", np.max), ("min", np.min)):
        stats[name] = fn(m, axis=0)
    return stats


@case(A8)
def nested_loop_with_break_and_continue(x):
    hits = []
    for i in range(4):
        if i == 1:
            continue
        for j in range(4):
            if j > i:
                break
            hits.append((i, j))
    return hits, x[len(hits) % 8]


@case(R45)
def while_loop_over_python_list(x):
    todo = [0, 2, 3]
    out = []
    while todo:
        out.append(x[todo.pop()])
    return out
