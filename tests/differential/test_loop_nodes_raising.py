"""Loop nodes whose body raises or warns (issue 11, part 1): the error or warning happens when
the graph runs (a later iteration than the traced ones) or already while the first call is
traced; either way the call behaves as eager code does, and the loop stays one node."""

from __future__ import annotations

import numpy as np
import pytest
from diffharness import C, case_id, max_recompiles, on_every_backend
from loop_shapes import assert_loops, line, mat
from test_loop_nodes import uint8_overflow, zip_strict_uneven

import tcompile as tc

# --- exceptions and warnings inside a captured body ---------------------------------------------


def index_from_data(x, idx):
    x *= 2  # written before the loop: eager leaves it written when the loop raises
    acc = np.zeros(1)
    for i in range(4):
        acc = acc + x[idx[i]]
    return acc


def writes_then_raises(x, idx):
    """Iterations write into the argument before one raises: eager leaves those writes; the
    graph's are undone and the frame runs again eagerly (the loop node writes an input)."""
    for i in range(4):
        x[i] = x[idx[i]] * 2 + i
    return x


def view_writes_then_raises(x, idx):
    v = x[1:]
    for i in range(4):
        v[i] += x[idx[i]]
    return v


def index_past_end(x):
    acc = np.zeros(1)
    for i in range(6):
        acc = acc * 0.5 + x[i]
    return acc


def divide_raises(x, d):
    x += 1
    with np.errstate(divide="raise"):
        for i in range(6):
            x = x / (d - i)
    return x


def log_goes_negative(x):
    for i in range(6):
        x = np.log(x - i) + 3
    return x


def sqrt_goes_negative_f32(x):
    acc = np.zeros_like(x)
    for i in range(5):
        acc = acc + np.sqrt(x - i)
    return acc


def int_divide_by_index(x):
    acc = np.zeros_like(x)
    for i in range(5):
        acc = acc + x // (i - 2)  # a warning at iteration 2, on every call
    return acc


def int8_scalar_overflow(x):
    s = x[0]
    for _ in range(4):
        s = s + 20  # an int8 scalar: "overflow encountered in scalar add" from 127 on
    return s


def unused_loop_raises(x, idx):
    acc = np.zeros(1)
    for i in range(4):
        acc = acc + x[idx[i]]  # acc is never used: the loop node must not be dead code
    return x * 2


def unused_loop_warns(x):
    y = x
    for i in range(5):
        y = np.log(y - i) + 3
    return x * 2


def unused_loop_divides(x, d):
    with np.errstate(divide="raise"):
        y = x
        for i in range(6):
            y = y / (d - i)
    return x + 1


def try_around_loop(x, idx):
    try:
        acc = np.zeros(1)
        for i in range(4):
            acc = acc + x[idx[i]]
    except IndexError:
        acc = np.full(1, -1.0)
    return acc


def appends_then_loop_raises(x, idx, log):
    log.append("start")  # once, as eagerly, when the loop raises
    acc = np.zeros(1)
    for i in range(4):
        acc = acc + x[idx[i]]
    log.append("end")
    return acc


IDX_OK = np.array([0, 1, 2, 3])
IDX_BAD = np.array([0, 1, 7, 3])  # IndexError at iteration 2


def idx_ok():
    return line(5), IDX_OK.copy()


def idx_bad():
    return line(5, seed=1), IDX_BAD.copy()


def divisor_ok():
    return line(3), np.full(3, 10.5)


def divisor_bad():  # a division by zero at iteration 3
    return line(3, seed=1), np.array([10.5, 3.0, 7.5])


def log_ok():
    return np.full(3, 9.5)  # NaN from iteration 4 on


def log_bad():
    return np.array([9.5, 5.5, 3.5])  # NaN from iteration 2 on


def values_only(id, fn, *builders):
    """Builders that differ in values only: one graph (no recompile) raises or warns on some."""
    return C(id, fn, *builders, after=max_recompiles(0))


# A: no error, B: the error at a later iteration of the loop node, when the graph runs.
RAISING = [
    values_only("index_from_data", index_from_data, idx_ok, idx_bad),
    values_only("divide_raises", divide_raises, divisor_ok, divisor_bad),
    values_only("log_goes_negative", log_goes_negative, log_ok, log_bad),
    values_only("sqrt_goes_negative_f32", sqrt_goes_negative_f32,
                lambda: np.full(3, 9.5, np.float32), lambda: np.array([9.5, 2.5, 3.5], np.float32)),
    values_only("int_divide_by_index", int_divide_by_index, lambda: np.arange(-3, 3),
                lambda: np.arange(4, 10)),
    values_only("int8_scalar_overflow", int8_scalar_overflow,
                lambda: np.arange(1, 4, dtype=np.int8), lambda: np.arange(100, 103, dtype=np.int8)),
    values_only("unused_loop_raises", unused_loop_raises, idx_ok, idx_bad),
    values_only("writes_then_raises", writes_then_raises, idx_ok, idx_bad),
    values_only("view_writes_then_raises", view_writes_then_raises, idx_ok, idx_bad),
    values_only("unused_loop_warns", unused_loop_warns, log_ok, log_bad),
    values_only("unused_loop_divides", unused_loop_divides, divisor_ok, divisor_bad),
    values_only("try_around_loop", try_around_loop, idx_ok, idx_bad),
    values_only("appends_then_loop_raises", appends_then_loop_raises, lambda: (*idx_ok(), ["x"]),
                lambda: (*idx_bad(), ["x"])),
    # x[i] past the end: sizes 8 and 10 make the size symbolic, size 4 raises at i == 4.
    C("index_past_end", index_past_end, lambda: line(8), lambda: line(10, seed=1),
      lambda: line(4, seed=2), pattern="ABCAC"),
]  # fmt: skip


@pytest.mark.parametrize("case", RAISING, ids=case_id)
def test_raising_body_is_one_loop_node(case):
    assert_loops(case.fn, case.builders[0], 1, 6)


# The error (or warning) already happens while the first call is traced, in the loop node's
# example run: eager's exception and warnings, no tcompile warning, no second warning.
RAISING_FIRST = [
    C("index_from_data_first", index_from_data, idx_bad, idx_ok),
    C("divide_raises_first", divide_raises, divisor_bad, divisor_ok),
    C("log_goes_negative_first", log_goes_negative, log_bad, log_ok),
    C("uint8_overflow", uint8_overflow, lambda: np.ones(3, np.uint8)),
    C("zip_strict_uneven", zip_strict_uneven, lambda: (mat(), mat(7, seed=1)),
      lambda: (mat(7), mat(seed=1))),
]  # fmt: skip


def test_raising_while_traced_still_compiles_later_calls():
    compiled = tc.compile(index_from_data, backend="eager")
    with pytest.raises(IndexError):
        compiled(*idx_bad())
    x = line(5)
    expected = index_from_data(x.copy(), IDX_OK.copy())
    np.testing.assert_array_equal(compiled(x, IDX_OK.copy()), expected)
    assert tc.counters().get("frames_skipped", 0) == 0, tc.counters()


test_eager_backend, test_default_backend, test_cpu_backend = on_every_backend(
    RAISING + RAISING_FIRST
)


CASES = RAISING + RAISING_FIRST  # tests/triton runs them again on the triton backend
