"""ndarray methods and attributes: reductions, reshapes, conversions, attributes read as constants."""

import numpy as np

from . import case, raises
from .inputs import A8, C8, F32_45, F_M45, I32_45, I64_8, M45, R8, R45, SQ4, T234


@case(M45)
@case(I32_45)
def sum_and_mean_methods(x):
    return x.sum(axis=1), x.sum(0, keepdims=True), x.mean(), x.mean(axis=-1), x.sum()


@case(R45)
def max_min_argmax_argmin_methods(x):
    return (
        x.max(),
        x.max(axis=0),
        x.min(axis=1, keepdims=True),
        x.argmax(),
        x.argmax(axis=1),
        x.argmin(axis=0),
    )


@case(R45)
def prod_cumsum_cumprod_std_var_methods(x):
    return x.prod(axis=0), x.cumsum(axis=1), x.cumprod(), x.std(), x.var(ddof=1), x.std(axis=0)


@case(T234)
def transpose_attribute_and_method(x):
    return x.T, x.T.shape, x.transpose(1, 0, 2), x.transpose((2, 1, 0)), x.swapaxes(0, 1)


@case(T234)
@case(F_M45)
def shape_attributes_are_constants(x):
    return x.shape, x.ndim, x.dtype, x.size, x.itemsize, x.nbytes, len(x)


@case(F_M45)
@case(M45)
def strides_and_flags_attributes(x):
    return x.strides, x.flags.c_contiguous, x.flags.f_contiguous, x.T.strides


@case(M45)
def reshape_method_forms(x):
    return (
        x.reshape(5, 4),
        x.reshape((2, -1)),
        x.reshape(-1),
        x.reshape(2, 2, 5),
        x.reshape(20, order="F"),
    )


@case(R45)
@case(I32_45)
def astype_method_forms(x):
    return x.astype(np.float32), x.astype("int16"), x.astype(np.float64, copy=False), x.astype(bool)


@case(M45)
@case(F_M45)
def copy_ravel_flatten(x):
    return x.copy(), x.ravel(), x.flatten(), x.flatten(order="F"), x.copy(order="F")


@case(R45)
def clip_round_methods(x):
    return x.clip(-0.5, 0.5), x.clip(min=0.0), x.round(1), abs(x).round()


@case(R45)
def any_all_methods_as_array_results(x):
    pos = x > 0
    return pos.any(), pos.all(), pos.any(axis=0), pos.all(axis=1, keepdims=True), (x > -9).all()


@case(R45, M45)
def dot_method_and_matmul(a, b):
    return a.dot(b.T), a[0].dot(b[0]), b.T.dot(a)


@case(C8)
def complex_attributes_and_conj(c):
    return c.real, c.imag, c.conj(), c.conjugate().sum(), abs(c)


@case(M45)
def squeeze_and_take_methods(x):
    y = x.reshape(1, 4, 5, 1)
    return (
        y.squeeze(),
        y.squeeze(axis=0),
        x.take([0, 3]),
        x.take([1, 2], axis=1),
        x.repeat(2, axis=0),
    )


@case(R8)
def sort_argsort_methods_on_copy(x):
    y = x.copy()
    y.sort()
    return y, x.argsort(kind="stable"), y.searchsorted(0.0), y.searchsorted([-1.0, 1.0])


@case(I64_8)
def view_method_reinterprets_bits(x):
    return x.view(np.uint64), x.view(np.float64).shape, x[:4].view(np.int32)


@case(SQ4)
def trace_diagonal_methods(a):
    return a.trace(), a.diagonal(), a.diagonal(1), a.T.trace(offset=1)


@case(F32_45)
def float32_methods_keep_float32(x):
    return x.mean(axis=0), x.sum(dtype=np.float64), x.max(), x.astype(np.float16).sum()


@case(A8)
def fill_method_on_new_array(x):
    y = np.empty_like(x)
    y.fill(2.5)
    return y + x


@case(M45)
def nonzero_free_methods_chain(x):
    return x.T.reshape(-1).cumsum().reshape(5, 4).max(axis=0).argmax()


@raises(M45)
def reshape_to_wrong_size(x):
    return x.reshape(3, 3)


@raises(M45)
def astype_unknown_dtype_string(x):
    return x.astype("float33")
