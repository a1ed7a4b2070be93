"""Python operators on arrays and scalars: arithmetic, unary, comparisons, bitwise, mixed operand
kinds in both orders, NEP 50 promotion across int/float/complex/bool and small dtypes."""

import numpy as np

from . import case, raises
from .inputs import (
    A8,
    B8,
    B8_2,
    C8,
    F16_8,
    F32_8,
    F32_45,
    I8_8,
    I32_45,
    I64_8,
    M45,
    POS8,
    R8,
    R45,
    R54,
    U8_8,
)


@case(POS8, R8)
@case(F32_8, POS8.astype(np.float32))
def arithmetic_binary_operators(a, b):
    return a + b, a - b, a * b, a / b, a // b, a % b, a**2, a**b, a**0.5


@case(R45, R54)
def matmul_operator_shapes(a, b):
    return a @ b, b @ a, a[0] @ b, a @ b[:, 0], a[0] @ a[1]


@case(I64_8)
@case(I32_45)
def integer_array_operators(i):
    return i // 3, i % 3, i**2, -i, ~i, i << 1, i >> 1, i & 3, i | 4, i ^ 5, i / 2


@case(R8, I64_8)
def unary_operators(x, i):
    return -x, +x, abs(x), -i, +i, ~i, abs(i)


@case(B8, B8_2)
def bool_array_logic_operators(a, b):
    return a & b, a | b, a ^ b, ~a, a == b, a != b, a + b, a * b


@case(R8, A8)
def comparisons_produce_bool_arrays(x, y):
    return x < y, x <= 0.5, x == y, x != y, x >= y, x > 0, 0 < x, 0.5 >= y


@case(R8, A8)
def combined_masks_with_bitwise(x, y):
    return (x > 0) & (y < 0.5), (x < -1) | (y > 0.9), (x > 0) ^ (y > 0.5), ~(x > 0)


@case(A8)
@case(I64_8 + 4)
def python_scalar_on_both_sides(x):
    return 2 + x, x + 2, 2.5 * x, x * 2.5, 3 - x, x - 3, 2**x, x**2, 10 // (x + 1), 1.5 / (x + 1)


@case(F32_8)
@case(F16_8)
def python_float_keeps_small_float_dtype(x):
    # NEP 50: Python scalars are "weak", so float32/float16 stay float32/float16
    return x * 2.0, 3.0 - x, x / 3, x + 1, x**2, 1e3 * x


@case(F32_8, A8)
def numpy_scalar_operands_promote(x32, x64):
    return (
        x32 * np.float64(2.0),
        np.float64(2.0) * x32,
        x64 * np.float32(2.0),
        x32 + np.float32(1.5),
        np.int64(3) * x32,
    )


@case(I8_8, U8_8)
def small_int_dtypes_wrap_and_promote(i8, u8):
    return (
        i8 + 100,
        i8 * 3,
        u8 + 10,
        u8 + np.uint8(10),
        i8 + u8,
        i8 + i8.astype(np.int16),
        u8 - np.uint8(1),
    )


@case(I64_8, I8_8)
def int_array_true_divide_gives_float64(i, i8):
    return i / 2, i / i8.astype(np.int64).clip(1, None), i8 / np.int8(2), (i8 / 4).dtype


@case(F16_8, F32_8)
def float16_float32_promotion(h, f):
    return h + f, h * h, h + np.float16(1), h.astype(np.float32) + f, f + np.float16(0.5)


@case(C8, R8)
def complex_operands(c, x):
    return c * (1 + 2j), c + x, c / (1 + 1j), c * c.conj(), 2j * x, x + 1j


@case(B8, I8_8)
def bool_arrays_in_arithmetic(b, i8):
    return b + b, b * 3, b * 1.5, b + i8, -i8 * b, b.sum(), b.astype(np.int8) - b


@case(I64_8)
def python_scalar_with_numpy_scalar(i):
    s = i[3]
    return (
        s + 2,
        2 - s,
        s * 1.5,
        np.float32(1.5) + 2,
        np.int8(5) * 2,
        np.float64(2.0) ** 2,
        np.int8(7) // 2,
    )


@case(R8)
def builtin_divmod_and_pow_on_arrays(x):
    return divmod(x, 0.3), pow(x, 2), divmod(7, 3), pow(2, 5), pow(2, -1)


@case(R8)
def modulo_and_floordiv_with_negatives(x):
    return (-x) % 0.3, x // -0.25, -7 % 3, -7 // 2, 7.5 % -2


@case(M45, A8)
def broadcasting_in_operators(m, v):
    return m + m[0], m * m[:, :1], m - v[:5], m[:, None, :] + m[None, :, :]


@case(F32_45, M45)
def mixed_dtype_array_operands(a32, b64):
    return a32 + b64, a32 * a32, (a32 @ b64.T).dtype, a32 > b64


@case(I32_45)
def integer_division_by_zero_free(i):
    return i // 7, i % 7, -i // 3, i.astype(np.uint16) >> 2


@raises(I8_8)
def int8_array_plus_out_of_range_python_int(x):
    return x + 300


@raises(U8_8)
def uint8_array_plus_negative_python_int(x):
    return x + (-1)


@raises(I64_8)
def int_array_to_negative_int_power(i):
    return i**-1


@raises(A8, M45)
def broadcast_mismatch_in_operator(a, m):
    return a + m
