"""Kinds of results: NumPy scalars of each type, Python scalars, None, 0-d arrays, the input itself,
one array returned twice, and nested tuples/lists/dicts mixing arrays and constants."""

import numpy as np

from . import case
from .inputs import A8, B8, C8, F16_8, F32_8, I8_8, I64_8, M45, U8_8


@case(A8)
def numpy_float64_scalar(x):
    return x.sum()


@case(A8)
def numpy_scalar_times_python_scalar(x):
    return x.sum() * 2, 2 * x.max(), x.mean() + 1.5, x.min() - 1


@case(F32_8)
def float32_scalar_arithmetic(x):
    s = x.sum()
    return s, s * 2, s + np.float32(1.0), s / 3, s * np.float64(2.0), s + s


@case(F16_8)
def float16_scalar_results(x):
    return x.sum(), x.max() * 2, x[1] + x[2]


@case(I64_8, I8_8, U8_8)
def integer_scalar_types(i, i8, u8):
    return i.sum(), i8.max(), u8.min(), i8[0] * 2, u8[1] + 1, i.argmax(), i8.sum()


@case(B8, C8)
def bool_and_complex_scalars(b, c):
    return b[0], b.any(), b.all(), b.sum(), c.sum(), c[1] * 2j, abs(c[2])


@case(A8)
def numpy_scalar_with_numpy_scalar(x):
    return (
        np.float32(1.0) + np.float64(2.0),
        np.int8(1) + np.int64(2),
        np.float32(2) * x.sum(),
        x[0] + x[1],
    )


@case(M45)
def python_int_and_float_results(x):
    return x.shape[0] * 2, x.ndim / 2, x.size - 1.0, x.shape[1] // 2


@case(M45)
def python_bool_results(x):
    return x.ndim == 2, x.shape[0] > 10, x.dtype == np.float64


@case(A8)
def returns_none(x):
    y = x + 1
    del y


@case(A8)
def returns_explicit_none_in_tuple(x):
    return None, (x * 2, None)


@case(A8)
def returns_the_input_itself(x):
    return x


@case(A8)
def returns_same_new_array_twice(x):
    y = x + 1
    return y, y, [y]


@case(A8)
def returns_view_of_input(x):
    return x[2:5], x.reshape(2, 4), x.T


@case(A8)
def returns_mixed_tuple(x):
    return (x, 1, "a", None, 2.5, x.dtype, x.shape, True, np.float32)


@case(A8)
def returns_nested_list(x):
    return [x.sum(), x.shape, [1, 2, [x[:2]]], []]


@case(M45)
def returns_nested_dict(x):
    return {
        "y": x * 2,
        "meta": {"shape": x.shape, "dtype": x.dtype, "tags": ["a", "b"]},
        "vals": [x.max(), 3],
    }


@case(A8)
def returns_empty_containers(x):
    return (), [], {}, x[:0]


@case(A8)
def returns_zero_dim_arrays(x):
    return np.array(2.5), x[3, ...], np.asarray(x.sum()), np.zeros(())


@case(C8)
def returns_complex_results(c):
    return c.sum(), c * 2, c.real.max(), complex(2, 3)


@case(A8)
def returns_range_slice_and_strings(x):
    return range(1, 5), slice(1, None, 2), f"{x.shape[0]}-{x.dtype}", b"bytes"


@case(A8)
def returns_set_and_frozenset(x):
    return {1, 2, x.shape[0]}, frozenset({"a"})
