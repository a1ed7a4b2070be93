"""Operations that raise for some values only, after the graph already wrote an argument.

A graph that raises at run time makes the frame run again eagerly; the input arrays it wrote
before the failing node must be put back first, or the eager run applies those writes twice
(``x += 1; np.add.at(x, idx, 1)`` with an index out of range left 2, not 1). Which nodes can
fail is their risk (tracer/state/effects.py): every operation here must be "raise". Each case writes
an argument (in-place operator, item assignment, ``out=``, ``np.copyto``, a method) and then
runs an operation whose arguments make it fail on one builder and not on the other: ufunc
methods that index (``at``, ``reduceat``), integer powers through ufunc methods, functions
failing on values (all-NaN slices, weights summing to zero, a zero bound or spacing), numbers
assigned into integer arrays that cannot hold them (NaN, infinity, too large), and dynamic
Python numbers that NumPy cannot convert to an integer type (an int out of the operands'
range, NEP 50; a float NaN, infinite or too large). Operations that
were already marked are here too, after each kind of write.
"""

from __future__ import annotations

import numpy as np
import pytest
from diffharness import C, case_id

NAN = float("nan")


def floats(n=4):
    return np.arange(float(n))


def ints(n=4, dtype=np.int64):
    return np.arange(n).astype(dtype)


# -- ufunc methods that index ------------------------------------------------------------------


def add_at_after_iadd(x, idx):
    x += 1
    np.add.at(x, idx, 1)
    return x


def subtract_at_after_item_write(x, y, idx):
    y[0] += 5.0
    np.subtract.at(y, idx, x[: len(idx)])
    return y.sum()


def multiply_at_after_out(x, idx):
    np.multiply(x, 2.0, out=x)
    np.multiply.at(x, idx, 3.0)
    return x


def maximum_at_2d_after_copyto(m, rows, cols):
    np.copyto(m, m + 1.5)
    np.maximum.at(m, (rows, cols), 7.0)
    return m


def at_in_try(x, idx, log):
    x -= 2
    try:
        np.add.at(x, idx, 10.0)
        log.append("added")
    except IndexError as e:
        log.append(str(e))
    return x


def add_at_on_second_argument(x, y, idx):
    x += 1
    np.add.at(y, idx, x[0])
    return x + y.sum()


def add_reduceat_after_iadd(x, idx):
    x += 1
    return np.add.reduceat(x, idx)


def maximum_reduceat_axis1(m, idx):
    m[:, 0] -= 1.0
    return np.maximum.reduceat(m, idx, axis=1)


def multiply_reduceat_after_sort(x, idx):
    x *= -1
    x.sort()
    return np.multiply.reduceat(x, idx)


# -- integer powers through ufunc methods -------------------------------------------------------


def power_reduce(x, e):
    x += 1
    return np.power.reduce(e)


def power_accumulate(x, e):
    x[1] += 9.0
    return np.power.accumulate(e)


def power_outer(x, e):
    x *= 3
    return np.power.outer(e, e)


def power_reduceat(x, e):
    x += 1
    return np.power.reduceat(e, [0, 2])


def power_at(x, e, p):
    x += 1
    np.power.at(e, [0], p)
    return e


# -- functions that fail on values --------------------------------------------------------------


def average_weights(x, w):
    x += 1
    return np.average(x, weights=w)


def average_rows(m, w):
    m[0] += 10
    return np.average(m, axis=1, weights=w)


def nanargmax_all_nan(x, y):
    x += 1
    return np.nanargmax(y)


def nanargmin_rows(x, m):
    np.negative(x, out=x)
    return np.nanargmin(m, axis=1)


def searchsorted_method_sorter(x, sorter):
    x += 1
    return x.searchsorted(2.5, sorter=sorter)


def searchsorted_function_sorter(x, sorter):
    x[0] -= 1.0
    return np.searchsorted(x, 0.5, sorter=sorter)


def geomspace_from(x, start):
    x += 1
    return np.geomspace(start, 10.0, 4) + x[0]


def fftfreq_spacing(x, d):
    x += 1
    return np.fft.fftfreq(4, d)


def rfftfreq_spacing(x, d):
    x[2] += 0.5
    return np.fft.rfftfreq(6, d)


def interp_period(x, period):
    x += 1
    return np.interp(x, np.arange(4.0), np.arange(4.0) * 2, period=period)


# -- numbers assigned into integer arrays -------------------------------------------------------


def set_float_scalar_item(a, y):
    a += 1
    a[0] = y.max()
    return a


def set_float_scalar_slice(a, y):
    a *= 2
    a[1:3] = y.min()
    return a


def set_wide_int_scalar(a8, y):
    a8 += 1
    a8[1] = y.sum()
    return a8


def set_item_read_from_other(a, y):
    a[3] += 7
    a[0] = y[1]
    return a


def fill_float_scalar(a, y):
    a += 1
    a.fill(y.mean())
    return a


def fill_wide_int_scalar(a8, y):
    a8[0] += 3
    a8.fill(y.sum())
    return a8


def fill_after_out(a, y):
    np.add(a, 1, out=a)
    a.fill(y.max())
    return a


def set_dynamic_float(a, s):
    a += 1
    a[0] = s
    return a


def fill_dynamic_float(a, s):
    a -= 1
    a.fill(s)
    return a


# -- dynamic Python ints NumPy must convert (NEP 50) --------------------------------------------


def int8_plus_n(x, a8, n):
    x += 1
    return a8 + n


def uint8_minus_n(x, u8, n):
    x += 1
    return u8 - n


def int8_iadd_n(x, a8, n):
    x += 1
    a8 += n
    return a8


def int8_setitem_n(a8, n):
    a8 += 1
    a8[0] = n
    return a8


def full_uint8(x, n):
    x += 1
    return np.full(2, n, dtype=np.uint8)


def int8_scalar_of_n(x, n):
    x += 1
    return np.int8(n)


def int16_maximum_n(x, a16, n):
    x[0] += 4.0
    return np.maximum(a16, n)


def uint8_fill_n(u8, n):
    u8 += 1
    u8.fill(n)
    return u8


def int8_scalar_times_n(x, a8, n):
    x += 1
    return a8[0] * n


def loop_adds_n_to_int8(x, a8, n):
    x += 1
    for _ in range(3):
        a8 = a8 + n
    return a8


def int64_scalar_of_s(x, s):
    x += 1
    return np.int64(s)


def int32_array_of_s(x, s):
    x[0] += 1
    return np.array(s, dtype=np.int32)


def int16_array_of_list(x, s):
    x *= 2
    return np.asarray([s, 1.0], dtype=np.int16)


def uint8_scalar_of_s(x, s):
    x += 1
    return np.uint8(s)


def float_array_times_s(x, s):  # a control: a float array takes any float
    x += 1
    return x * s


def float_array_plus_n(x, n):  # a control: a float array takes any int
    x += 1
    return x + n


# -- already marked, after each kind of write ---------------------------------------------------


def take_after_out(x, idx):
    np.add(x, 1, out=x)
    return np.take(x, idx)


def fancy_index_after_copyto(x, idx):
    np.copyto(x, x * 3)
    return x[idx]


def choose_after_iadd(x, c):
    x += 1
    return np.choose(c, [x, x * 2])


def put_after_sort(x, idx):
    x -= 1
    x.sort()
    np.put(x, idx, -1.0)
    return x


def inv_after_item_write(x, m):
    x[0] += 9.0
    return np.linalg.inv(m)


def percentile_after_iadd(x, q):
    x += 1
    return np.percentile(x, q)


def digitize_after_iadd(x, bins):
    x += 1
    return np.digitize(x, bins)


def integer_power_after_iadd(x, e):
    x += 1
    return e**e


def take_along_axis_after_iadd(x, idx):
    x += 1
    return np.take_along_axis(x, idx, 0)


def put_along_axis_after_iadd(x, idx):
    x += 1
    np.put_along_axis(x, idx, 0.0, 0)
    return x


def scalar_index_after_iadd(x, y):
    x += 1
    return x[y.argmax() * 3]


def dynamic_index_after_iadd(x, i):
    x += 1
    x[i] = 0.0
    return x


def partition_after_iadd(x, k):
    x += 1
    return np.partition(x, k)


ROWS_OK, ROWS_BAD = np.array([0, 1]), np.array([0, 2])


def dyn(name, fn, make, good1, good2, bad):
    """A case over a dynamic Python number: ``good1``, then ``good2`` (the number becomes a
    graph input), then ``bad`` (the value the graph fails on)."""
    builders = (lambda: make(good1), lambda: make(good2), lambda: make(bad))
    return C(name, fn, *builders, pattern="AABBCCA")


CASES = [
    C("add_at_after_iadd", add_at_after_iadd,
      lambda: (floats(), np.array([0, 1])), lambda: (floats(), np.array([0, 5]))),
    C("add_at_negative_out_of_range", add_at_after_iadd,
      lambda: (floats(), np.array([-1])), lambda: (floats(), np.array([-5]))),
    C("subtract_at_after_item_write", subtract_at_after_item_write,
      lambda: (floats(3), floats(), np.array([2, 3])),
      lambda: (floats(3), floats(), np.array([2, 4]))),
    C("multiply_at_after_out", multiply_at_after_out,
      lambda: (floats(), np.array([3])), lambda: (floats(), np.array([4]))),
    C("maximum_at_2d_after_copyto", maximum_at_2d_after_copyto,
      lambda: (np.zeros((2, 3)), ROWS_OK, np.array([0, 2])),
      lambda: (np.zeros((2, 3)), ROWS_BAD, np.array([0, 2]))),
    C("at_in_try", at_in_try,
      lambda: (floats(), np.array([1]), []), lambda: (floats(), np.array([8]), [])),
    C("add_at_on_second_argument", add_at_on_second_argument,
      lambda: (floats(), floats(3), np.array([2])), lambda: (floats(), floats(3), np.array([3]))),
    C("add_reduceat_after_iadd", add_reduceat_after_iadd,
      lambda: (floats(), np.array([0, 2])), lambda: (floats(), np.array([0, 5]))),
    C("add_reduceat_negative", add_reduceat_after_iadd,
      lambda: (floats(), np.array([1, 3])), lambda: (floats(), np.array([0, -1]))),
    C("maximum_reduceat_axis1", maximum_reduceat_axis1,
      lambda: (np.ones((2, 4)), np.array([0, 2])), lambda: (np.ones((2, 4)), np.array([0, 4]))),
    C("multiply_reduceat_after_sort", multiply_reduceat_after_sort,
      lambda: (floats()[::-1].copy(), np.array([0, 1])),
      lambda: (floats()[::-1].copy(), np.array([0, 9]))),
    C("power_reduce", power_reduce,
      lambda: (floats(), np.array([2, 3])), lambda: (floats(), np.array([2, -1]))),
    C("power_accumulate", power_accumulate,
      lambda: (floats(), np.array([2, 1, 2])), lambda: (floats(), np.array([2, 1, -2]))),
    C("power_outer", power_outer,
      lambda: (floats(), np.array([2, 1])), lambda: (floats(), np.array([2, -1]))),
    C("power_reduceat", power_reduceat,
      lambda: (floats(), np.array([2, 1, 3])), lambda: (floats(), np.array([2, -1, 3]))),
    C("power_at", power_at,
      lambda: (floats(), np.array([1, 2, 1]), np.array([2])),
      lambda: (floats(), np.array([1, 2, 1]), np.array([-2]))),
    C("average_weights", average_weights,
      lambda: (floats(), np.ones(4)), lambda: (floats(), np.array([1.0, -1.0, 0.0, 0.0]))),
    C("average_rows", average_rows,
      lambda: (np.ones((2, 3)), np.ones(3)), lambda: (np.ones((2, 3)), np.zeros(3))),
    C("nanargmax_all_nan", nanargmax_all_nan,
      lambda: (floats(), np.array([1.0, NAN])), lambda: (floats(), np.array([NAN, NAN]))),
    C("nanargmin_rows", nanargmin_rows,
      lambda: (floats(), np.array([[1.0, NAN], [NAN, 2.0]])),
      lambda: (floats(), np.array([[1.0, 2.0], [NAN, NAN]]))),
    C("searchsorted_method_sorter", searchsorted_method_sorter,
      lambda: (floats(), np.array([0, 1, 2, 3])), lambda: (floats(), np.array([0, 1, 7, 3]))),
    C("searchsorted_function_sorter", searchsorted_function_sorter,
      lambda: (floats(), np.array([0, 1, 2, 3])), lambda: (floats(), np.array([0, 9, 2, 3]))),
    dyn("geomspace_from", geomspace_from, lambda s: (floats(), s), 1.0, 2.0, 0.0),
    dyn("fftfreq_spacing", fftfreq_spacing, lambda d: (floats(), d), 0.5, 2.0, 0.0),
    dyn("rfftfreq_spacing", rfftfreq_spacing, lambda d: (floats(), d), 0.5, 2.0, 0.0),
    dyn("interp_period", interp_period, lambda p: (floats(), p), 3.0, 5.0, 0.0),
    C("set_float_scalar_item_nan", set_float_scalar_item,
      lambda: (ints(), np.ones(2)), lambda: (ints(), np.array([1.0, NAN]))),
    C("set_float_scalar_item_inf", set_float_scalar_item,
      lambda: (ints(), np.ones(2)), lambda: (ints(), np.array([1.0, np.inf]))),
    C("set_float_scalar_item_huge", set_float_scalar_item,
      lambda: (ints(), np.ones(2)), lambda: (ints(), np.array([1.0, 1e300]))),
    C("set_float32_scalar_slice", set_float_scalar_slice,
      lambda: (ints(dtype=np.int32), np.ones(2, np.float32)),
      lambda: (ints(dtype=np.int32), np.array([1.0, NAN], np.float32))),
    C("set_wide_int_scalar", set_wide_int_scalar,
      lambda: (ints(dtype=np.int8), np.ones(2, np.int64)),
      lambda: (ints(dtype=np.int8), np.array([200, 200]))),
    C("set_item_read_from_other", set_item_read_from_other,
      lambda: (ints(dtype=np.int8), np.array([1, 2], np.int64)),
      lambda: (ints(dtype=np.int8), np.array([1, 256], np.int64))),
    C("fill_float_scalar", fill_float_scalar,
      lambda: (ints(), np.ones(2)), lambda: (ints(), np.array([np.inf, 1.0]))),
    C("fill_wide_int_scalar", fill_wide_int_scalar,
      lambda: (ints(dtype=np.int16), np.ones(2, np.int64)),
      lambda: (ints(dtype=np.int16), np.array([40000, 1]))),
    C("fill_after_out", fill_after_out,
      lambda: (ints(dtype=np.int32), np.ones(2)), lambda: (ints(dtype=np.int32), np.array([NAN, 1.0]))),
    dyn("set_dynamic_float", set_dynamic_float, lambda s: (ints(), s), 1.5, 2.5, NAN),
    dyn("fill_dynamic_float", fill_dynamic_float, lambda s: (ints(), s), 1.5, 2.5, np.inf),
    dyn("int8_plus_n", int8_plus_n, lambda n: (floats(), ints(3, np.int8), n), 5, 7, 300),
    dyn("uint8_minus_n", uint8_minus_n, lambda n: (floats(), ints(3, np.uint8), n), 1, 2, -1),
    dyn("int8_iadd_n", int8_iadd_n, lambda n: (floats(), ints(3, np.int8), n), 5, 7, 1000),
    dyn("int8_setitem_n", int8_setitem_n, lambda n: (ints(3, np.int8), n), 5, 7, -129),
    dyn("full_uint8", full_uint8, lambda n: (floats(), n), 5, 7, -1),
    dyn("int8_scalar_of_n", int8_scalar_of_n, lambda n: (floats(), n), 5, 7, 128),
    dyn("int16_maximum_n", int16_maximum_n, lambda n: (floats(), ints(3, np.int16), n),
        5, 7, 70000),
    dyn("uint8_fill_n", uint8_fill_n, lambda n: (ints(3, np.uint8), n), 5, 7, 256),
    dyn("int8_scalar_times_n", int8_scalar_times_n, lambda n: (floats(), ints(3, np.int8), n),
        5, 7, 500),
    dyn("loop_adds_n_to_int8", loop_adds_n_to_int8,
        lambda n: (floats(6), ints(3, np.int8), n), 5, 7, 300),
    dyn("float_array_plus_n", float_array_plus_n, lambda n: (floats(), n), 5, 7, 10**18),
    dyn("int64_scalar_of_s", int64_scalar_of_s, lambda s: (floats(), s), 1.5, 2.5, NAN),
    dyn("int32_array_of_s", int32_array_of_s, lambda s: (floats(), s), 1.5, 2.5, np.inf),
    dyn("int16_array_of_list", int16_array_of_list, lambda s: (floats(), s), 1.5, 2.5, NAN),
    dyn("uint8_scalar_of_s", uint8_scalar_of_s, lambda s: (floats(), s), 1.5, 2.5, -1.0),
    dyn("float_array_times_s", float_array_times_s, lambda s: (floats(), s), 1.5, 2.5, NAN),
    C("take_after_out", take_after_out,
      lambda: (floats(), np.array([3])), lambda: (floats(), np.array([4]))),
    C("fancy_index_after_copyto", fancy_index_after_copyto,
      lambda: (floats(), np.array([0, 3])), lambda: (floats(), np.array([0, -5]))),
    C("choose_after_iadd", choose_after_iadd,
      lambda: (floats(), np.array([0, 1, 0, 1])), lambda: (floats(), np.array([0, 2, 0, 1]))),
    C("put_after_sort", put_after_sort,
      lambda: (floats()[::-1].copy(), np.array([1])),
      lambda: (floats()[::-1].copy(), np.array([6]))),
    C("inv_after_item_write", inv_after_item_write,
      lambda: (floats(), np.eye(2)), lambda: (floats(), np.ones((2, 2)))),
    C("percentile_after_iadd", percentile_after_iadd,
      lambda: (floats(), np.array(50.0)), lambda: (floats(), np.array(150.0))),
    C("digitize_after_iadd", digitize_after_iadd,
      lambda: (floats(), np.array([0.0, 2.0, 4.0])), lambda: (floats(), np.array([0.0, 4.0, 2.0]))),
    C("integer_power_after_iadd", integer_power_after_iadd,
      lambda: (floats(), np.array([2, 1])), lambda: (floats(), np.array([2, -1]))),
    C("take_along_axis_after_iadd", take_along_axis_after_iadd,
      lambda: (floats(), np.array([1])), lambda: (floats(), np.array([4]))),
    C("put_along_axis_after_iadd", put_along_axis_after_iadd,
      lambda: (floats(), np.array([1])), lambda: (floats(), np.array([-9]))),
    C("scalar_index_after_iadd", scalar_index_after_iadd,
      lambda: (floats(), np.array([1.0, 0.0])), lambda: (floats(), np.array([0.0, 1.0]))),
    dyn("dynamic_index_after_iadd", dynamic_index_after_iadd, lambda i: (floats(), i), 1, 2, 4),
    dyn("partition_after_iadd", partition_after_iadd, lambda k: (floats(), k), 1, 2, 4),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_a_graph_failing_on_values_writes_its_arguments_once(case):
    case.run()
