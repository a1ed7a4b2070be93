"""Dynamic shapes meeting Python arithmetic (`x.sum() + 1 // n` with n == 0 after a recompile for
another shape, divisions by sizes that become zero), and masked arrays in arithmetic. Besides
matching eager, no warning from tcompile itself may appear (the harness fails on any warning whose
message starts with "tcompile").
"""

from __future__ import annotations

import numpy as np
import pytest
from diffharness import C, case_id


def sum_plus_floordiv(x, n):
    return x.sum() + 1 // n


def sum_plus_mod(x, n):
    return x.sum() + 1 % n


def divmod_n(x, n):
    return divmod(x.shape[0], n), x.sum()


def shape_floordiv(x, n):
    return x.shape[0] // n


def slice_by_shape_div(x, n):
    return x[: x.shape[0] // n]


def arange_shape_div(x, n):
    return np.arange(x.shape[0] // n)


def true_div_int(x, n):
    return x.sum() + 1 / n


def npscalar_div_int(x, n):
    return x.sum() / n


def shape_minus_three_div(x):
    k = x.shape[0] - 3
    return x.sum() + 1 // k


def shape_mod_k(x):
    k = x.shape[0] - 4
    return x.shape[0] % k if k else -1, x.mean()


def len_div(x, lst):
    return x.sum() / len(lst) if lst else x.sum() // len(lst)


def reshape_by_shape(x):
    n = x.shape[0]
    return x.reshape(n // 2, -1) if n % 2 == 0 else x.reshape(1, n)


def shape_product(x):
    return x.size // (x.shape[0] - 2) + x.sum()


def int_conversion_of_shape(x):
    return float(x.shape[0]) / (x.shape[0] - 3) if x.shape[0] != 3 else float("inf")


def vectorized_int_div(x, n):
    return x.astype(np.int64) // n


# --- masked arrays -----------------------------------------------------------------------------


def masked_plus(m):
    return m + 1, (m + 1).sum()


def masked_times_array(m, x):
    return m * x, (m * x).mean()


def masked_divide_zeros(m, d):
    return m / d


def masked_log(m):
    return np.ma.log(m), np.ma.log(m).sum()


def masked_filled(m):
    return m.filled(0), m.filled(-1.0).sum()


def masked_where_inside(x):
    m = np.ma.masked_where(x < 0, x)
    return m.sum(axis=0), m.mean()


def masked_compare(m):
    return (m > 0).sum(), m[m > 0]


def masked_sqrt_negative(m):
    return np.ma.sqrt(m), np.sqrt(m)


def masked_reduce_axis(m):
    return m.sum(axis=0), m.max(axis=1), m.argmax()


def masked_inplace(m):
    m += 2
    m[0] = np.ma.masked
    return m.count()


def masked_with_plain_ufunc(m, x):
    return np.add(m, x), np.maximum(m, x)


def masked_shape_change(m):
    return m.reshape(-1)[::2], m.T


M23 = np.array([[1.0, -2.0, 0.0], [4.0, 0.0, -1.0]])


def ma23(mask):
    return np.ma.array(M23.copy(), mask=mask)


CASES = [
    C(
        "sum_plus_floordiv_zero_after_dynamic",
        sum_plus_floordiv,
        lambda: (np.arange(3.0), 1),
        lambda: (np.arange(4.0), 2),
        lambda: (np.arange(5.0), 0),
        pattern="ABCABC",
    ),
    C(
        "sum_plus_mod_zero_after_dynamic",
        sum_plus_mod,
        lambda: (np.arange(3.0), 1),
        lambda: (np.arange(4.0), 3),
        lambda: (np.arange(5.0), 0),
        pattern="ABCABC",
    ),
    C(
        "divmod_zero_after_dynamic",
        divmod_n,
        lambda: (np.arange(3.0), 2),
        lambda: (np.arange(4.0), 2),
        lambda: (np.arange(5.0), 0),
        pattern="ABCC",
    ),
    C(
        "shape_floordiv",
        shape_floordiv,
        lambda: (np.arange(3.0), 1),
        lambda: (np.arange(6.0), 4),
        lambda: (np.arange(7.0), 0),
        pattern="ABCAB",
    ),
    C(
        "slice_by_shape_div",
        slice_by_shape_div,
        lambda: (np.arange(4.0), 2),
        lambda: (np.arange(6.0), 4),
        lambda: (np.arange(5.0), 0),
        pattern="ABCAB",
    ),
    C(
        "arange_shape_div",
        arange_shape_div,
        lambda: (np.arange(4.0), 2),
        lambda: (np.arange(9.0), 3),
        lambda: (np.arange(5.0), 0),
        pattern="ABCAB",
    ),
    C(
        "true_div_int_zero",
        true_div_int,
        lambda: (np.arange(3.0), 2),
        lambda: (np.arange(4.0), 4),
        lambda: (np.arange(5.0), 0),
        pattern="ABCAB",
    ),
    C(
        "npscalar_div_int_zero_warns",
        npscalar_div_int,
        lambda: (np.arange(3.0), 2),
        lambda: (np.arange(4.0), 4),
        lambda: (np.arange(5.0) + 1, 0),
        pattern="ABCAB",
    ),
    C(
        "shape_minus_three_div",
        shape_minus_three_div,
        lambda: (np.arange(4.0),),
        lambda: (np.arange(5.0),),
        lambda: (np.arange(3.0),),
        pattern="ABCAB",
    ),
    C(
        "shape_mod_k",
        shape_mod_k,
        lambda: (np.arange(5.0),),
        lambda: (np.arange(7.0),),
        lambda: (np.arange(4.0),),
        pattern="ABCAB",
    ),
    C(
        "len_div",
        len_div,
        lambda: (np.arange(3.0), [1, 2]),
        lambda: (np.arange(4.0), [1]),
        lambda: (np.arange(5.0), []),
        pattern="ABCA",
    ),
    C(
        "reshape_by_shape",
        reshape_by_shape,
        lambda: (np.arange(4.0),),
        lambda: (np.arange(6.0),),
        lambda: (np.arange(5.0),),
        pattern="ABCAB",
    ),
    C(
        "shape_product",
        shape_product,
        lambda: (np.ones((4, 3)),),
        lambda: (np.ones((5, 3)),),
        lambda: (np.ones((2, 3)),),
        pattern="ABCAB",
    ),
    C(
        "int_conversion_of_shape",
        int_conversion_of_shape,
        lambda: (np.arange(4.0),),
        lambda: (np.arange(6.0),),
        lambda: (np.arange(3.0),),
        pattern="ABCAB",
    ),
    C(
        "vectorized_int_div_zero",
        vectorized_int_div,
        lambda: (np.arange(3.0), 2),
        lambda: (np.arange(4.0), 3),
        lambda: (np.arange(5.0), 0),
        pattern="ABCAB",
    ),
    C(
        "masked_plus",
        masked_plus,
        lambda: (ma23([[0, 1, 0], [0, 0, 1]]),),
        lambda: (ma23([[1, 1, 0], [0, 0, 0]]),),
    ),
    C(
        "masked_times_array",
        masked_times_array,
        lambda: (ma23([[0, 1, 0], [0, 0, 1]]), M23 * 2),
        lambda: (ma23(False), -M23),
    ),
    C(
        "masked_divide_zeros",
        masked_divide_zeros,
        lambda: (ma23([[0, 1, 0], [0, 0, 1]]), M23),
        lambda: (ma23(False), M23 + 1),
    ),
    C(
        "masked_log",
        masked_log,
        lambda: (ma23([[0, 1, 0], [0, 0, 1]]),),
        lambda: (ma23([[0, 0, 0], [0, 1, 0]]),),
    ),
    C(
        "masked_filled",
        masked_filled,
        lambda: (ma23([[0, 1, 0], [0, 0, 1]]),),
        lambda: (ma23([[1, 0, 0], [0, 0, 0]]),),
    ),
    C("masked_where_inside", masked_where_inside, lambda: (M23.copy(),), lambda: (-M23,)),
    C(
        "masked_compare",
        masked_compare,
        lambda: (ma23([[0, 1, 0], [0, 0, 1]]),),
        lambda: (ma23([[1, 0, 0], [0, 0, 0]]),),
    ),
    C(
        "masked_sqrt_negative",
        masked_sqrt_negative,
        lambda: (ma23([[0, 1, 0], [0, 0, 1]]),),
        lambda: (ma23(False),),
    ),
    C(
        "masked_reduce_axis",
        masked_reduce_axis,
        lambda: (ma23([[0, 1, 0], [0, 0, 1]]),),
        lambda: (ma23([[1, 0, 0], [1, 0, 0]]),),
    ),
    C(
        "masked_inplace",
        masked_inplace,
        lambda: (ma23([[0, 1, 0], [0, 0, 1]]),),
        lambda: (ma23(False),),
    ),
    C(
        "masked_with_plain_ufunc",
        masked_with_plain_ufunc,
        lambda: (ma23([[0, 1, 0], [0, 0, 1]]), M23[::-1].copy()),
        lambda: (ma23(False), M23 * 0),
    ),
    C(
        "masked_shape_change",
        masked_shape_change,
        lambda: (ma23([[0, 1, 0], [0, 0, 1]]),),
        lambda: (np.ma.array(np.arange(8.0).reshape(2, 4), mask=np.eye(2, 4)),),
    ),
]


# --- sizes that become 0 or 1 after a dimension went dynamic -----------------------------------


def add_two(x, y):
    return x + y


def outer_difference(x):
    return x[:, None] - x[None, :]


def max_of(x):
    return x.max()


def mean_of(x):
    return x.mean()


def reshape_pairs(x):
    return x.reshape(-1, 2)


def last_element(x):
    return x[len(x) - 1]


def sum_over_length(x):
    return x.sum() / x.shape[0], x.shape[0] and 1 / x.shape[0]


def same_length(x, y):
    return x.shape[0] == y.shape[0], x[:1] * y[:1]


def concat_and_stack(x, y):
    return np.concatenate([x, y]), np.stack([x, x])


def masked_invalid_sum(x):
    m = np.ma.masked_invalid(x)
    return m.sum(), m.count()


def masked_set_mask_inside(m):
    m.mask = m.data < 0
    return m.sum()


def masked_constant_arith(x):
    return np.ma.masked + 1, (np.ma.masked * x).mask


def masked_hard_mask(m):
    m.harden_mask()
    m[:] = 5.0
    return m


def sizes(*ns):
    return [lambda n=n: (np.arange(float(n)),) for n in ns]


CASES += [
    C(
        "broadcast_size_one_after_dynamic",
        add_two,
        lambda: (np.ones(3), np.arange(3.0)),
        lambda: (np.ones(4), np.arange(4.0)),
        lambda: (np.ones(1), np.arange(5.0)),
        lambda: (np.ones(6), np.ones(1)),
        pattern="ABCDABCD",
    ),
    C("outer_difference_sizes", outer_difference, *sizes(3, 4, 1, 0), pattern="ABCDABCD"),
    C("max_of_empty_after_dynamic", max_of, *sizes(3, 4, 0), pattern="ABCABC"),
    C("mean_of_empty_after_dynamic", mean_of, *sizes(3, 4, 0), pattern="ABCABC"),
    C("reshape_pairs_odd", reshape_pairs, *sizes(4, 6, 5), pattern="ABCABC"),
    C("last_element_of_empty", last_element, *sizes(3, 4, 0), pattern="ABCABC"),
    C("sum_over_zero_length", sum_over_length, *sizes(3, 4, 0), pattern="ABCABC"),
    C(
        "same_length_branch",
        same_length,
        lambda: (np.ones(3), np.ones(3)),
        lambda: (np.ones(4), np.ones(5)),
        lambda: (np.ones(5), np.ones(5)),
        pattern="ABCABC",
    ),
    C(
        "concat_and_stack_sizes",
        concat_and_stack,
        lambda: (np.ones(3), np.ones(2)),
        lambda: (np.ones(4), np.ones(0)),
        lambda: (np.ones(0), np.ones(1)),
        pattern="ABCABC",
    ),
    C(
        "masked_invalid_sum",
        masked_invalid_sum,
        lambda: (np.array([1.0, np.nan, 2.0]),),
        lambda: (np.array([np.inf, 1.0, 2.0]),),
    ),
    C(
        "masked_set_mask_inside",
        masked_set_mask_inside,
        lambda: (ma23(False),),
        lambda: (np.ma.array(-M23),),
    ),
    C("masked_constant_arith", masked_constant_arith, lambda: (M23.copy(),)),
    C(
        "masked_hard_mask",
        masked_hard_mask,
        lambda: (ma23([[0, 1, 0], [0, 0, 1]]),),
        lambda: (ma23(False),),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_dynamic_shapes_and_masked_arrays_match_eager(case):
    case.run()
