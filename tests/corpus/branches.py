"""`if` statements whose condition is known at trace time: shapes, ndim, dtypes, constants,
`is None`, isinstance, string arguments; elif chains and early returns."""

import numpy as np

from . import case
from .inputs import A8, F32_8, F32_45, I8_8, I64_8, M45, R45, T234

MODE = "fast"


@case(M45)
@case(A8)
@case(T234)
def if_on_ndim(x):
    if x.ndim == 2:
        return x.sum(axis=1)
    elif x.ndim == 1:
        return x.cumsum()
    else:
        return x.max()


@case(M45)
@case(A8)
def if_on_shape_values(x):
    if x.shape[0] > 4:
        y = x[:4]
    else:
        y = x * 2
    if len(x.shape) == 2 and x.shape[1] == 5:
        y = y.T
    return y


@case(F32_8)
@case(A8)
@case(I64_8)
def if_on_dtype_equality(x):
    if x.dtype == np.float32:
        return x * np.float32(0.5)
    if x.dtype == np.float64:
        return x / 2
    return x // 2


@case(I8_8)
@case(F32_45)
def if_on_dtype_kind_and_issubdtype(x):
    if np.issubdtype(x.dtype, np.floating):
        kind = "float"
    elif x.dtype.kind == "i":
        kind = "int"
    else:
        kind = "other"
    return kind, x.dtype.itemsize, x.astype(np.float64) if x.dtype.itemsize < 4 else x


@case(A8, None)
@case(A8, 2.0)
def if_argument_is_none(x, bias):
    if bias is None:
        return x
    return x + bias


@case(A8, True)
@case(A8, False)
def if_on_bool_argument(x, flag):
    if flag:
        x = -x
    if not flag:
        x = x + 1
    return x


@case(R45, "sum")
@case(R45, "max")
@case(R45, "other")
def if_on_string_argument(x, mode):
    if mode == "sum":
        return x.sum(axis=0)
    elif mode == "max":
        return x.max(axis=0)
    return x


@case(A8)
def if_on_global_string_constant(x):
    if MODE == "fast":
        return x * 2
    return x


@case(A8, 3)
@case(A8, 2.5)
def if_isinstance_of_argument(x, k):
    if isinstance(k, float):
        return x * k
    return x + k


@case(A8)
@case(F32_8)
def if_dtype_in_tuple(x):
    if x.dtype in (np.float32, np.float16):
        return x.astype(np.float64)
    return x


@case(M45)
def nested_ifs_and_early_return(x):
    if x.ndim == 2:
        if x.shape[0] == x.shape[1]:
            return x.T
        if x.shape[0] < x.shape[1]:
            return x @ x.T
    return x


@case(M45, 0)
@case(M45, 3)
def if_with_and_or_conditions(x, n):
    if n > 0 and x.ndim == 2 or n < -5:
        return x[: n or 1]
    if not (n or x.size < 5):
        return x.sum()
    return None


@case(A8, 2)
def pass_in_branch_and_ternary_inside(x, n):
    if n == 2:
        pass
    else:
        x = x + 1
    return x if n > 1 else -x


@case(A8, (2, 3))
@case(A8, [4])
def if_on_len_and_type_of_container(x, dims):
    if len(dims) == 1:
        return x[: dims[0]]
    if type(dims) is tuple:
        return x[: dims[0] * dims[1]].reshape(dims)
    return x
