"""A for loop node inside a loop body prints as the body's own ``for`` statement in the eager
backend's code (`tracer/ir/inline_loops.py`), not as a call of its function per iteration:
results bitwise eager's (`check_same_calls`), inner loops of no iteration, names the inner body
shares with the enclosing one, carried values made in place, loops three deep, and an inner
loop that gives back nothing."""

from __future__ import annotations

import numpy as np
import pytest
from harness import check_same_calls

import tcompile as tc


def crc8(data):
    crc = 0
    for i in range(len(data)):
        crc ^= data[i]
        for _ in range(8):  # a conditional expression: a cond node
            crc = ((crc << 1) ^ 0x07) & 0xFF if crc & 0x80 else (crc << 1) & 0xFF
    return int(crc)


def triangle(m):
    acc = np.zeros(m.shape[1])
    for i in range(m.shape[0]):
        total = acc * 0.5
        for j in range(i):  # no iteration for i == 0
            total = total + m[j]  # `total` is a name of both bodies
        acc = acc + total
    return acc


def three_deep(x):
    s = x[0] * 0.0
    for i in range(3):
        for j in range(2):
            for k in range(2):
                s = s + x[i] * (j + 1) - k
    return s


def rows_written(a):
    for i in range(a.shape[0]):
        for j in range(1, a.shape[1]):  # gives back nothing: it writes the row
            a[i, j] = a[i, j] + a[i, j - 1]
    return a


PROGRAMS = [
    (crc8, [((np.arange(40) * 7 % 256,), {}), ((np.arange(3),), {})]),
    (triangle, [((np.arange(12.0).reshape(4, 3),), {})]),
    (three_deep, [((np.arange(3.0),), {})]),
    (rows_written, [((np.arange(12.0).reshape(3, 4),), {})]),
]


@pytest.mark.parametrize("case", range(len(PROGRAMS)))
def test_an_inner_loop_is_a_for_statement_of_the_outer_body(case):
    fn, calls = PROGRAMS[case]
    tc.reset()
    check_same_calls(fn, calls)
    assert tc.counters()["graph_breaks"] == 0
    compiled = tc.compile(fn)
    compiled(*[a.copy() for a in calls[0][0]])
    code = compiled.__tc_compiled__.entries[-1].report.compiled.sources["python"]
    functions = code.count("def _loop")
    assert functions == 1 or (fn is crc8 and functions == 2), code  # crc8: its first byte's own
    assert "_fn_loop_fn" not in code, code  # no inner loop's function is called


def offset_rows(a, shift):
    for i in range(a.shape[0]):
        for j in range(i + 1, a.shape[1]):  # the item is ``k + (i + 1)``: the for's own variable
            a[i, j] = a[i, j - 1] * 0.5 + shift
        for j in range(2, a.shape[1]):  # shifted by a constant
            a[i, j] = a[i, j] - a[i, j - 2]
    return a


def test_an_inner_loop_over_a_shifted_range_iterates_its_items():
    calls = [((np.arange(20.0).reshape(4, 5), 1.5), {}), ((np.ones((3, 6)), -2.0), {})]
    check_same_calls(offset_rows, calls)
    compiled = tc.compile(offset_rows)
    compiled(np.arange(20.0).reshape(4, 5), 1.5)
    code = compiled.__tc_compiled__.entries[-1].report.compiled.sources["python"]
    inner = [line.strip() for line in code.splitlines() if line.startswith("        for ")]
    assert len(inner) == 2, code
    assert inner[0].startswith("for j") and " in range(add, add + " in inner[0], code
    assert " in range(2, 2 + " in inner[1], code
    assert not any(" + add " in line or "k_" in line for line in code.splitlines()), code
