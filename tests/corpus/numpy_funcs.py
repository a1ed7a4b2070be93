"""NumPy functions called from compiled code: reductions, creation, shape ops, linear algebra,
elementwise math, sorting, ufunc methods, dtype-typed constants."""

import numpy as np

from . import case, raises
from .inputs import (
    A8,
    B8,
    C8,
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
    RT234,
    SQ4,
    T234,
)

# --- reductions --------------------------------------------------------------------------------


@case(M45)
@case(R45)
def reductions_along_axes(x):
    return np.sum(x, axis=0), np.mean(x, axis=1), np.max(x, axis=-1, keepdims=True), np.min(x, 0)


@case(M45)
def reductions_to_numpy_scalars(x):
    return np.sum(x), np.mean(x), np.max(x), np.min(x), np.argmin(x), np.prod(x + 1.0)


@case(R45)
def argmax_prod_cumsum(x):
    return np.argmax(x, axis=1), np.prod(x, axis=0), np.cumsum(x, axis=1), np.cumsum(x)


@case(RT234)
def std_var_with_keepdims_and_ddof(x):
    return np.std(x, axis=(0, 2), keepdims=True), np.var(x, axis=1, ddof=1), np.std(x)


@case(I64_8)
@case(I8_8)
def integer_sum_with_dtype_kwarg(x):
    return np.sum(x), np.sum(x, dtype=np.float32), np.cumsum(x), np.prod(x, dtype=np.int16)


@case(F32_45)
def float32_reductions_keep_float32(x):
    return x.sum(), np.mean(x, axis=0), np.var(x), np.max(x, axis=1)


@case(R45)
def any_all_count_nonzero_along_axis(x):
    return np.any(x > 1.0, axis=0), np.all(x > -3.0, axis=1), np.count_nonzero(x > 0, axis=0)


@case(R8)
def nan_aware_reductions(x):
    return np.nansum(x), np.nanmax(x), np.nanmean(x)


# --- selection ---------------------------------------------------------------------------------


@case(A8, R8)
def where_three_arguments(x, y):
    return np.where(x > 0.5, x, y)


@case(M45)
def where_with_scalar_branches(x):
    return np.where(x > 1.0, 1.0, -x), np.where(x < 0.5, 0, 1)


@case(R8)
def clip_with_scalars_and_none(x):
    return np.clip(x, -0.5, 0.5), np.clip(x, None, 0.0), np.clip(x, 0.1, None)


@case(R45, M45)
def clip_with_array_bounds(x, hi):
    return np.clip(x, -hi, hi)


@case(R45, M45)
def maximum_minimum_broadcasting(a, b):
    return np.maximum(a, b), np.minimum(a, 0.0), np.maximum(a, b[0]), np.fmax(a, b)


# --- joining and reshaping ---------------------------------------------------------------------


@case(M45, R45)
def concatenate_on_both_axes(a, b):
    return np.concatenate([a, b]), np.concatenate((a, b), axis=1), np.concatenate([a, b], axis=None)


@case(A8, R8)
def stack_hstack_vstack(a, b):
    return np.stack([a, b]), np.stack((a, b), axis=-1), np.hstack((a, b)), np.vstack([a, b])


@case(M45, R45)
def stack_two_dimensional(a, b):
    return (
        np.stack([a, b, a], axis=1),
        np.hstack([a, b]),
        np.vstack((a, b)),
        np.column_stack((a[0], b[0])),
    )


@case(T234)
def reshape_transpose_swapaxes(x):
    return np.reshape(x, (6, 4)), np.transpose(x, (2, 0, 1)), np.swapaxes(x, 0, 2), np.transpose(x)


@case(T234)
def moveaxis_and_ravel(x):
    return np.moveaxis(x, 0, -1), np.ravel(x), np.reshape(x, -1), np.atleast_2d(x[0, 0])


@case(A8)
def expand_dims_and_squeeze(x):
    e = np.expand_dims(x, 0)
    return e, np.squeeze(e), np.squeeze(e[:, :, None], axis=2), np.expand_dims(x, (0, 2))


@case(A8)
def broadcast_to_is_readonly_view(x):
    return np.broadcast_to(x, (3, 8)), np.broadcast_to(x[:1], (2, 4))


@case(M45)
def split_into_list_of_views(x):
    return np.split(x, 2), np.split(x, [1, 3], axis=1), np.array_split(x, 3, axis=1)


@case(A8, M45)
def tile_and_repeat_with_int_counts(x, m):
    return np.tile(x, 2), np.tile(x, (2, 1)), np.repeat(x, 3), np.repeat(m, 2, axis=1)


@case(M45)
def flip_and_roll(x):
    return np.flip(x), np.flip(x, axis=1), np.roll(x, 2), np.roll(x, -1, axis=0), np.fliplr(x)


@case(R45)
def diff_tril_triu(x):
    return np.diff(x), np.diff(x, n=2, axis=0), np.tril(x), np.triu(x, k=1), np.tril(x, -1)


@case(M45)
def pad_constant(x):
    return np.pad(x, 1), np.pad(x, ((0, 1), (2, 0)), constant_values=-1.0)


# --- creation ----------------------------------------------------------------------------------


@case()
def creation_functions():
    return (
        np.zeros(3),
        np.ones((2, 3), dtype=np.int32),
        np.full((2, 2), 7.5),
        np.arange(5),
        np.arange(1, 10, 3),
        np.arange(0.0, 1.0, 0.25),
        np.linspace(0.0, 1.0, 5),
        np.eye(3),
        np.eye(3, 4, k=1, dtype=np.float32),
        np.identity(2),
    )


@case(M45)
@case(I32_45)
def creation_like(x):
    return (
        np.zeros_like(x),
        np.ones_like(x, dtype=np.int8),
        np.full_like(x, 2),
        np.zeros(x.shape[1]),
    )


@case(A8)
def array_from_constants_and_shapes(x):
    return (
        np.array([1.0, 2.0, 3.0]),
        np.array([[1, 2], [3, 4]], dtype=np.int16),
        np.asarray(x.shape),
    )


@case(A8)
def array_from_list_of_arrays(x):
    return np.array([x, x * 2]), np.asarray(x, dtype=np.float32), np.ascontiguousarray(x[::2])


# --- linear algebra ----------------------------------------------------------------------------


@case(M45, R54)
def dot_matmul_operator(a, b):
    return np.dot(a, b), a @ b, np.matmul(a, b), np.dot(a[0], b[:, 0])


@case(M45, R54)
def einsum_forms(a, b):
    return np.einsum("ij,jk->ik", a, b), np.einsum("ij->j", a), np.einsum("ij,ij->", a, b.T)


@case(T234, R45)
def tensordot_and_outer(t, m):
    return (
        np.tensordot(t, m[:, :4].T, axes=1),
        np.tensordot(t, t, axes=([1, 2], [1, 2])),
        np.outer(m[0], m[1]),
    )


@case(R45)
def linalg_norms(x):
    return (
        np.linalg.norm(x),
        np.linalg.norm(x, axis=1),
        np.linalg.norm(x, ord=1),
        np.linalg.norm(x[0], ord=np.inf),
    )


@case(SQ4)
def linalg_inv_det_solve(a):
    return np.linalg.inv(a), np.linalg.det(a), np.linalg.solve(a, np.ones(4))


@case(SQ4)
def trace_diag_diagonal(a):
    return np.trace(a), np.diag(a), np.diag(a[0]), np.diagonal(a, offset=1)


# --- elementwise math --------------------------------------------------------------------------


@case(POS8)
def exp_log_sqrt_tanh_abs(x):
    return np.exp(x), np.log(x), np.sqrt(x), np.tanh(x), np.abs(x - 1.0)


@case(R45)
def trig_and_rounding(x):
    return (
        np.sin(x),
        np.cos(x),
        np.arctan2(x, 1.0),
        np.floor(x),
        np.ceil(x),
        np.round(x, 2),
        np.sign(x),
    )


@case(POS8, R8)
def more_ufuncs(x, y):
    return (
        np.log1p(x),
        np.expm1(y),
        np.exp2(y),
        np.hypot(x, y),
        np.power(x, 3),
        np.square(y),
        np.reciprocal(x),
    )


@case(R8)
def isnan_isfinite_logical(x):
    return np.isnan(x), np.isfinite(x / 0.5), np.logical_and(x > 0, x < 1), np.logical_not(x > 0)


@case(C8)
def complex_functions(c):
    return np.abs(c), np.angle(c), np.conj(c), np.real(c), np.imag(c), np.exp(c)


@case(I64_8)
def integer_ufuncs(i):
    return (
        np.mod(i, 3),
        np.floor_divide(i, 2),
        np.left_shift(i, 1),
        np.bitwise_and(i, 6),
        np.negative(i),
    )


# --- sorting and indexing functions ------------------------------------------------------------


@case(R8)
@case(R45)
def sort_and_argsort_are_functional(x):
    return (
        np.sort(x),
        np.argsort(x, kind="stable"),
        np.sort(x, axis=0),
        np.argsort(-x, axis=-1, kind="stable"),
    )


@case(R45)
def take_and_take_along_axis(x):
    idx = np.argsort(x, axis=1, kind="stable")
    return np.take(x, [0, 2, 4]), np.take(x, [1, 0], axis=0), np.take_along_axis(x, idx, axis=1)


# --- dtypes and typed constants ----------------------------------------------------------------


@case(R45)
def astype_and_asarray_conversions(x):
    return (
        x.astype(np.float32),
        x.astype(np.int32),
        np.asarray(x, dtype=np.float16),
        (x > 0).astype(np.uint8),
    )


@case(A8)
@case(F32_8)
def dtype_typed_constants(x):
    return x * np.float32(2.0), np.int8(3) + np.int8(4), np.float64(1.5) * 2, x + np.int16(1)


@case(I8_8)
def numpy_scalar_constructors_from_python(x):
    return x + np.int8(100), np.uint8(200) + np.uint8(100), np.float16(0.1) * 3, np.bool_(True) + x


@case(A8)
def result_type_and_dtype_objects(x):
    return (
        np.result_type(x, np.float32),
        np.dtype("float32"),
        np.promote_types(np.int8, np.uint8),
        x.dtype.itemsize,
    )


# --- ufunc methods -----------------------------------------------------------------------------


@case(M45, A8)
def ufunc_reduce_accumulate_outer(m, v):
    return (
        np.add.reduce(m, axis=0),
        np.maximum.accumulate(m, axis=1),
        np.multiply.outer(v[:3], v[:4]),
    )


@case(R45)
def more_ufunc_methods(x):
    return (
        np.minimum.reduce(x, axis=1),
        np.add.accumulate(x, axis=0),
        np.multiply.reduce(x[0]),
        np.subtract.outer(x[0], x[1]),
    )


# --- raising -----------------------------------------------------------------------------------


@raises(M45, R45)
def concatenate_shape_mismatch(a, b):
    return np.concatenate([a, b[:, :3]])


@raises(M45)
def matmul_shape_mismatch(a):
    return a @ a


@raises(B8)
def sort_bool_ok_then_bad_axis(b):
    return np.sort(b), np.sum(b, axis=1)
