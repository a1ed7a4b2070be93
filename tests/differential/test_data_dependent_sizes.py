"""Sizes taken from array values, and in-place updates of arrays made inside the function.

A size read from an array's value (`np.arange(counts[0])`, `x[:k[0]]`, `np.repeat(x, counts)`)
differs between calls with different values: a graph that baked the first call's size in is
wrong. In-place updates of arrays created inside the function (`T = np.zeros(2); T += H`) must
reach every later read (sizes, views, linalg), also under fullgraph=True, where the function is
one graph or raises `tc.Unsupported`, never runs eagerly in silence.
"""

from __future__ import annotations

import numpy as np
import pytest
from diffharness import C, case_id


def i64(*v):
    return np.array(v, dtype=np.int64)


def f6():
    return np.array([0.5, -1.0, 2.0, 3.5, -0.25, 1.0])


# --- 3b: sizes from values -------------------------------------------------------------------


def arange_count(counts):
    return np.arange(counts[0])


def zeros_max(counts):
    return np.zeros(counts.max())


def empty_shape(n_arr):
    return np.empty((n_arr[0], 2)).shape


def ones_int(n):
    return np.ones(int(n[0]))


def slice_k(x, k):
    return x[: k[0]]


def slice_k_from(x, k):
    return x[k[0] :], x[:: k[0]]


def index_k(x, k):
    return x[k[0]]


def repeat_counts(x, counts):
    return np.repeat(x, counts)


def linspace_n(n):
    return np.linspace(0, 1, n[0])


def eye_n(n):
    return np.eye(n[0])


def reshape_n(x, n):
    return x.reshape(n[0], -1)


def tile_reps(x, reps):
    return np.tile(x, reps)


def len_of_arange(counts):
    return len(np.arange(counts[0])), len(np.zeros(counts.max()))


def len_of_slice(x, k):
    return len(x[: k[0]]) * 2


def range_loop(n):
    acc = 0
    for i in range(n[0]):
        acc += i
    return acc


def full_n(n):
    return np.full(n[0], 7.0)


def zeros_2d(n):
    return np.zeros((n[0], n[1]))


def arange_sum(counts):
    return np.arange(counts.sum())


def arange_max_value(x):
    return np.arange(int(x.max()))


def list_from_value(x):
    n = int(x[0])
    return [i * 2 for i in range(n)]


def mask_size(x):
    m = x[x > 0]
    return m, len(m), np.zeros(len(m))


def nonzero_size(x):
    idx = np.nonzero(x > 0)[0]
    return idx, idx.shape[0] + 1


def unique_size(x):
    u = np.unique(x)
    return u, u.size


def bincount_size(idx):
    return np.bincount(idx)


def histogram_bins(x, n):
    return np.histogram(x, bins=n[0])


def resize_n(x, n):
    return np.resize(x, n[0])


def pad_n(x, p):
    return np.pad(x, p[0])


def zeros_shape_arith(n):
    return np.zeros(n[0]).shape[0] * 2 + 1


def ones_item(n):
    return np.ones(n.item())


def arange_reshape(n):
    return np.arange(n[0]).reshape(-1, 2)


def tri_n(n):
    return np.tri(n[0])


def diag_slice(x, k):
    return np.diag(x[: k[0]])


def cumsum_last(counts):
    cs = np.cumsum(counts)
    return np.arange(cs[-1])


def argmax_slice(x):
    return x[: np.argmax(x)]


def searchsorted_slice(x, v):
    i = np.searchsorted(x, v)
    return x[:i]


def count_nonzero_size(x):
    return np.zeros(np.count_nonzero(x))


def array_split_n(x, n):
    return np.array_split(x, n[0])


# --- 3c: in-place updates of arrays made inside the function -------------------------------


def t_len_arange(H):
    T = np.zeros(2, dtype=np.int64)
    T += H
    return len(np.arange(T[0]))


def t_inv(H):
    T = np.zeros((4, 4))
    T += H
    return np.linalg.inv(T)


def t_view_sum(H):
    T = np.zeros(4)
    v = T[1:3]
    T += H
    return v.sum(), v


def setitem_then_shape_branch(x):
    x[0] = 5
    if x.shape[0] > 2:
        return x * 2
    return x


def t_setitem_arange(H):
    T = np.ones(3)
    T[1] = H[0]
    return np.arange(int(T[1]))


def t_copy_imul(H):
    T = H.copy()
    T *= 2
    return T, H


def t_out_zeros(H):
    T = np.zeros(3)
    np.add(T, H, out=T)
    return np.zeros(int(T[0]))


def t_slice_assign_slice(x, H):
    T = np.zeros(2)
    T[:] = H
    k = int(T.sum())
    return x[:k]


def t_fill(H):
    T = np.empty(3)
    T.fill(H[0])
    return T


def t_mask_assign(H):
    T = np.zeros(3)
    T[H > 0] = 1
    return T.sum(), np.ones(int(T.sum()))


def t_det(H):
    T = np.eye(3)
    T[0, 0] = H[0]
    return np.linalg.det(T)


def t_loop_accumulate(H):
    T = np.zeros(3)
    for i in range(3):
        T[i] += H[i]
    return T


def t_reshape_view_inplace(H):
    T = np.zeros(3)
    V = T.reshape(3, 1)
    V += H[:, None]
    return T


def t_transpose_view(H):
    T = np.zeros((2, 3))
    V = T.T
    V[0] += H[:2]
    return T


def t_matmul_then_write(H):
    A = np.zeros((2, 2))
    A += H
    B = A @ A
    A[0, 0] = 100.0
    return B, A


def t_int_iadd(H):
    T = np.zeros(2, dtype=np.int64)
    T += H
    return T


def t_sort(x):
    T = x.copy()
    T.sort()
    return T[0], T


def t_clip_inplace(H):
    T = np.zeros(3)
    T[...] = H
    T.clip(0, 1, out=T)
    return T


def t_solve(H, b):
    T = np.zeros((2, 2))
    T += H
    return np.linalg.solve(T, b)


def t_ravel_view(H):
    T = np.zeros((2, 2))
    flat = T.ravel()
    T += H
    return flat.copy(), np.arange(int(flat[0]))


H44_A = np.eye(4) * 2 + 0.5
H44_B = np.arange(16.0).reshape(4, 4) % 5 + np.eye(4) * 3

CASES = [
    C("arange_count", arange_count, lambda: i64(3, 1), lambda: i64(5, 1)),
    C("zeros_max", zeros_max, lambda: i64(3, 1), lambda: i64(2, 6)),
    C("empty_shape", empty_shape, lambda: i64(3), lambda: i64(7)),
    C("ones_int", ones_int, lambda: i64(2), lambda: i64(4)),
    C("slice_k", slice_k, lambda: (f6(), i64(2)), lambda: (f6(), i64(5))),
    C("slice_k_from", slice_k_from, lambda: (f6(), i64(2)), lambda: (f6(), i64(3))),
    C("index_k", index_k, lambda: (f6(), i64(1)), lambda: (f6(), i64(4))),
    C(
        "repeat_counts",
        repeat_counts,
        lambda: (np.arange(3.0), i64(1, 2, 0)),
        lambda: (np.arange(3.0), i64(3, 0, 2)),
    ),
    C("linspace_n", linspace_n, lambda: i64(3), lambda: i64(6)),
    C("eye_n", eye_n, lambda: i64(2), lambda: i64(3)),
    C("reshape_n", reshape_n, lambda: (f6(), i64(2)), lambda: (f6(), i64(3))),
    C(
        "tile_reps",
        tile_reps,
        lambda: (np.arange(2.0), i64(2, 1)),
        lambda: (np.arange(2.0), i64(1, 3)),
    ),
    C("len_of_arange", len_of_arange, lambda: i64(3, 1), lambda: i64(5, 8)),
    C("len_of_slice", len_of_slice, lambda: (f6(), i64(2)), lambda: (f6(), i64(4))),
    C("range_loop", range_loop, lambda: i64(3), lambda: i64(6)),
    C("full_n", full_n, lambda: i64(1), lambda: i64(4)),
    C("zeros_2d", zeros_2d, lambda: i64(2, 3), lambda: i64(3, 1)),
    C("arange_sum", arange_sum, lambda: i64(1, 2), lambda: i64(3, 3)),
    C(
        "arange_max_value",
        arange_max_value,
        lambda: np.array([1.0, 3.5]),
        lambda: np.array([6.0, 0.0]),
    ),
    C("list_from_value", list_from_value, lambda: np.array([2.0]), lambda: np.array([4.0])),
    C("mask_size", mask_size, lambda: f6(), lambda: -f6()),
    C("nonzero_size", nonzero_size, lambda: f6(), lambda: -f6()),
    C(
        "unique_size",
        unique_size,
        lambda: np.array([1.0, 1.0, 2.0]),
        lambda: np.array([1.0, 2.0, 3.0]),
    ),
    C("bincount_size", bincount_size, lambda: i64(0, 1, 1), lambda: i64(4, 0, 2)),
    C(
        "histogram_bins",
        histogram_bins,
        lambda: (f6(), i64(2)),
        lambda: (f6(), i64(4)),
    ),
    C("resize_n", resize_n, lambda: (np.arange(3.0), i64(2)), lambda: (np.arange(3.0), i64(7))),
    C("pad_n", pad_n, lambda: (np.arange(3.0), i64(1)), lambda: (np.arange(3.0), i64(3))),
    C("zeros_shape_arith", zeros_shape_arith, lambda: i64(2), lambda: i64(9)),
    C("ones_item", ones_item, lambda: i64(2), lambda: i64(5)),
    C("arange_reshape", arange_reshape, lambda: i64(4), lambda: i64(8)),
    C("tri_n", tri_n, lambda: i64(2), lambda: i64(3)),
    C("diag_slice", diag_slice, lambda: (f6(), i64(2)), lambda: (f6(), i64(3))),
    C("cumsum_last", cumsum_last, lambda: i64(1, 2), lambda: i64(2, 5)),
    C("argmax_slice", argmax_slice, lambda: f6(), lambda: -f6()),
    C(
        "searchsorted_slice",
        searchsorted_slice,
        lambda: (np.arange(6.0), 2.5),
        lambda: (np.arange(6.0), 4.5),
    ),
    C("count_nonzero_size", count_nonzero_size, lambda: i64(0, 1, 0), lambda: i64(3, 1, 2)),
    C("array_split_n", array_split_n, lambda: (f6(), i64(2)), lambda: (f6(), i64(4))),
    # 3c
    C("t_len_arange", t_len_arange, lambda: i64(3, 1), lambda: i64(6, 2)),
    C(
        "t_len_arange_fullgraph",
        t_len_arange,
        lambda: i64(3, 1),
        lambda: i64(6, 2),
        fullgraph=True,
        break_ok=True,
    ),
    C("t_inv", t_inv, lambda: H44_A.copy(), lambda: H44_B.copy()),
    C(
        "t_inv_fullgraph",
        t_inv,
        lambda: H44_A.copy(),
        lambda: H44_B.copy(),
        fullgraph=True,
        break_ok=True,
    ),
    C("t_view_sum", t_view_sum, lambda: np.arange(4.0), lambda: -np.arange(4.0)),
    C(
        "t_view_sum_fullgraph",
        t_view_sum,
        lambda: np.arange(4.0),
        lambda: -np.arange(4.0),
        fullgraph=True,
        break_ok=True,
    ),
    C(
        "setitem_then_shape_branch",
        setitem_then_shape_branch,
        lambda: np.arange(3.0),
        lambda: np.arange(2.0),
    ),
    C("t_setitem_arange", t_setitem_arange, lambda: np.array([3.0]), lambda: np.array([5.0])),
    C("t_copy_imul", t_copy_imul, lambda: np.arange(3.0), lambda: -np.arange(3.0)),
    C("t_out_zeros", t_out_zeros, lambda: np.array([2.0, 0, 0]), lambda: np.array([4.0, 0, 0])),
    C(
        "t_slice_assign_slice",
        t_slice_assign_slice,
        lambda: (f6(), np.array([1.0, 1.0])),
        lambda: (f6(), np.array([2.0, 2.0])),
    ),
    C("t_fill", t_fill, lambda: np.array([1.5]), lambda: np.array([-2.0])),
    C(
        "t_mask_assign",
        t_mask_assign,
        lambda: np.array([1.0, -1, 1]),
        lambda: np.array([1.0, 1, 1]),
    ),
    C("t_det", t_det, lambda: np.array([2.0]), lambda: np.array([-3.0])),
    C("t_loop_accumulate", t_loop_accumulate, lambda: np.arange(3.0), lambda: -np.arange(3.0)),
    C(
        "t_reshape_view_inplace",
        t_reshape_view_inplace,
        lambda: np.arange(3.0),
        lambda: np.arange(3.0) * 5,
    ),
    C("t_transpose_view", t_transpose_view, lambda: np.arange(3.0), lambda: np.arange(3.0) - 7),
    C(
        "t_matmul_then_write",
        t_matmul_then_write,
        lambda: np.eye(2),
        lambda: np.array([[1.0, 2.0], [3.0, 4.0]]),
    ),
    C("t_int_iadd", t_int_iadd, lambda: i64(1, 2), lambda: np.array([1.5, 2.0])),
    C("t_sort", t_sort, lambda: f6(), lambda: -f6()),
    C(
        "t_clip_inplace",
        t_clip_inplace,
        lambda: np.array([-1.0, 0.5, 2.0]),
        lambda: np.array([0.25, 3.0, -2.0]),
    ),
    C(
        "t_solve",
        t_solve,
        lambda: (np.eye(2), np.array([1.0, 2.0])),
        lambda: (np.array([[2.0, 1.0], [1.0, 3.0]]), np.array([1.0, 2.0])),
    ),
    C(
        "t_ravel_view",
        t_ravel_view,
        lambda: np.array([[2.0, 1.0], [0.0, 0.0]]),
        lambda: np.array([[5.0, 1.0], [0.0, 0.0]]),
    ),
    C(
        "t_ravel_view_fullgraph",
        t_ravel_view,
        lambda: np.array([[2.0, 1.0], [0.0, 0.0]]),
        lambda: np.array([[5.0, 1.0], [0.0, 0.0]]),
        fullgraph=True,
        break_ok=True,
    ),
    C(
        "slice_k_fullgraph",
        slice_k,
        lambda: (f6(), i64(2)),
        lambda: (f6(), i64(5)),
        fullgraph=True,
        break_ok=True,
    ),
    C(
        "repeat_counts_fullgraph",
        repeat_counts,
        lambda: (np.arange(3.0), i64(1, 2, 0)),
        lambda: (np.arange(3.0), i64(3, 0, 2)),
        fullgraph=True,
        break_ok=True,
    ),
]


# --- iterating, unpacking and measuring value-dependent slices --------------------------------


def for_over_slice(x, k):
    acc = 0.0
    for v in x[: k[0]]:
        acc += v
    return acc


def list_of_slice(x, k):
    return list(x[: k[0]])


def tuple_of_mask(x):
    return tuple(x[x > 0])


def builtin_max_of_slice(x, k):
    return max(x[: k[0]])


def builtin_sum_of_slice(x, k):
    return sum(x[: k[0]])


def enumerate_slice(x, k):
    return [(i, v) for i, v in enumerate(x[: k[0]])]


def zip_slice(x, k):
    return list(zip(x[: k[0]], x[::-1]))


def unpack_slice(x, k):
    a, b = x[: k[0]]
    return a - b


def star_unpack_slice(x, k):
    a, *rest = x[: k[0]]
    return a, len(rest)


def sorted_mask(x):
    return sorted(x[x > 0])


def any_of_slice(x, k):
    return any(x[: k[0]] > 3)


def len_nonzero_where(x):
    return len(np.nonzero(x)[0]), len(np.where(x > 0)[0])


def len_array_split(x, n):
    return len(np.array_split(x, n[0]))


def len_unique(x):
    return len(np.unique(x))


def slice_two_bounds(x, k):
    return x[k[0] : k[1]]


def slice_0d(x, k):
    return x[: int(k)]


def slice_item(x, k):
    return x[: k.item()]


def reshape_cols(x, n):
    return x.reshape(-1, n[0])


def zeros_tuple_shape(s):
    return np.zeros(tuple(s))


def ones_array_shape(s):
    return np.ones(s)


def broadcast_to_shape(x, s):
    return np.broadcast_to(x, s).copy()


def method_repeat(x, k):
    return x.repeat(k[0])


def split_at(x, idx):
    return np.split(x, idx)


def arange_bounds(a, b):
    return np.arange(a[0], b[0])


def step_slice(x, n):
    return x[:: n[0]]


def take_arange(x, n):
    return np.take(x, np.arange(n[0]))


def diag_offset(x, n):
    return np.diag(x, k=int(n[0]))


def pad_two(x, n):
    return np.pad(x, (n[0], n[1]))


def reshape_tuple(x, n):
    return x.reshape(tuple(n))


def eye_offset(n):
    return np.eye(3, k=int(n[0]))


def identity_n(n):
    return np.identity(n[0])


def negative_slice_of_size(x, y):
    k = y.shape[0]
    return x[-k:]


def t_int_slice(H, x):
    T = np.zeros(2)
    T[0] = H[0]
    n = int(T[0])
    return x[:n]


def t_copyto_arange(H):
    T = np.empty_like(H)
    np.copyto(T, H)
    return np.arange(int(T[0]))


def t_put_ones(H):
    T = np.zeros(3)
    np.put(T, [0], H[0])
    return np.ones(int(T[0]))


def t_add_at_arange(idx):
    T = np.zeros(3)
    np.add.at(T, idx, 1)
    return np.arange(int(T[0]))


def t_reshape_by_own_value(H):
    T = np.zeros(4)
    T[...] = H
    return T.reshape(int(T[0]), -1)


def t_int_array_as_shape(H, x):
    T = np.zeros(2, dtype=np.int64)
    T += H
    return x.reshape(T)


def t_view_write_len(H):
    T = np.zeros(3)
    v = T[:2]
    v[:] = H
    return len(np.arange(int(T[1])))


def t_loop_iadd_arange(H):
    T = np.zeros(1, dtype=np.int64)
    for _ in range(3):
        T += H
    return np.arange(T[0])


CASES += [
    C("for_over_slice", for_over_slice, lambda: (f6(), i64(2)), lambda: (f6(), i64(4))),
    C("list_of_slice", list_of_slice, lambda: (f6(), i64(2)), lambda: (f6(), i64(4))),
    C("tuple_of_mask", tuple_of_mask, lambda: f6(), lambda: -f6()),
    C("builtin_max_of_slice", builtin_max_of_slice, lambda: (f6(), i64(2)), lambda: (f6(), i64(4))),
    C("builtin_sum_of_slice", builtin_sum_of_slice, lambda: (f6(), i64(2)), lambda: (f6(), i64(4))),
    C("enumerate_slice", enumerate_slice, lambda: (f6(), i64(2)), lambda: (f6(), i64(4))),
    C("zip_slice", zip_slice, lambda: (f6(), i64(2)), lambda: (f6(), i64(4))),
    C("unpack_slice", unpack_slice, lambda: (f6(), i64(2)), lambda: (f6(), i64(3))),
    C("star_unpack_slice", star_unpack_slice, lambda: (f6(), i64(2)), lambda: (f6(), i64(4))),
    C("sorted_mask", sorted_mask, lambda: f6(), lambda: -f6()),
    C("any_of_slice", any_of_slice, lambda: (f6(), i64(2)), lambda: (f6(), i64(4))),
    C("len_nonzero_where", len_nonzero_where, lambda: f6(), lambda: -f6()),
    C("len_array_split", len_array_split, lambda: (f6(), i64(2)), lambda: (f6(), i64(4))),
    C(
        "len_unique",
        len_unique,
        lambda: np.array([1.0, 1.0, 2.0]),
        lambda: np.array([1.0, 2.0, 3.0]),
    ),
    C("slice_two_bounds", slice_two_bounds, lambda: (f6(), i64(1, 3)), lambda: (f6(), i64(0, 5))),
    C("slice_0d", slice_0d, lambda: (f6(), np.array(2)), lambda: (f6(), np.array(4))),
    C("slice_item", slice_item, lambda: (f6(), np.array(2)), lambda: (f6(), np.array(5))),
    C("reshape_cols", reshape_cols, lambda: (f6(), i64(2)), lambda: (f6(), i64(3))),
    C("zeros_tuple_shape", zeros_tuple_shape, lambda: i64(2, 3), lambda: i64(1, 4)),
    C("ones_array_shape", ones_array_shape, lambda: i64(2, 3), lambda: i64(3, 1)),
    C(
        "broadcast_to_shape",
        broadcast_to_shape,
        lambda: (np.arange(3.0), i64(2, 3)),
        lambda: (np.arange(3.0), i64(4, 3)),
    ),
    C(
        "method_repeat",
        method_repeat,
        lambda: (np.arange(3.0), i64(2)),
        lambda: (np.arange(3.0), i64(3)),
    ),
    C("split_at", split_at, lambda: (f6(), i64(2, 4)), lambda: (f6(), i64(1, 5))),
    C("arange_bounds", arange_bounds, lambda: (i64(1), i64(4)), lambda: (i64(2), i64(7))),
    C("step_slice", step_slice, lambda: (f6(), i64(2)), lambda: (f6(), i64(3))),
    C("take_arange", take_arange, lambda: (f6(), i64(2)), lambda: (f6(), i64(4))),
    C(
        "diag_offset",
        diag_offset,
        lambda: (np.arange(3.0), i64(0)),
        lambda: (np.arange(3.0), i64(2)),
    ),
    C("pad_two", pad_two, lambda: (np.arange(3.0), i64(1, 0)), lambda: (np.arange(3.0), i64(0, 2))),
    C("reshape_tuple", reshape_tuple, lambda: (f6(), i64(2, 3)), lambda: (f6(), i64(3, 2))),
    C("eye_offset", eye_offset, lambda: i64(0), lambda: i64(1)),
    C("identity_n", identity_n, lambda: i64(2), lambda: i64(3)),
    C(
        "negative_slice_of_size",
        negative_slice_of_size,
        lambda: (f6(), np.ones(2)),
        lambda: (f6(), np.ones(3)),
        lambda: (f6(), np.ones(0)),
        pattern="ABCABC",
    ),
    C("t_int_slice", t_int_slice, lambda: (np.array([2.0]), f6()), lambda: (np.array([4.0]), f6())),
    C(
        "t_copyto_arange",
        t_copyto_arange,
        lambda: np.array([2.0, 1.0]),
        lambda: np.array([5.0, 1.0]),
    ),
    C("t_put_ones", t_put_ones, lambda: np.array([2.0]), lambda: np.array([4.0])),
    C("t_add_at_arange", t_add_at_arange, lambda: i64(0, 0, 1), lambda: i64(0, 0, 0)),
    C(
        "t_reshape_by_own_value",
        t_reshape_by_own_value,
        lambda: np.array([2.0, 0, 0, 0]),
        lambda: np.array([4.0, 0, 0, 0]),
    ),
    C(
        "t_int_array_as_shape",
        t_int_array_as_shape,
        lambda: (i64(2, 3), f6()),
        lambda: (i64(3, 2), f6()),
    ),
    C(
        "t_view_write_len",
        t_view_write_len,
        lambda: np.array([1.0, 2.0]),
        lambda: np.array([1.0, 5.0]),
    ),
    C("t_loop_iadd_arange", t_loop_iadd_arange, lambda: i64(1), lambda: i64(2)),
    C(
        "for_over_slice_fullgraph",
        for_over_slice,
        lambda: (f6(), i64(2)),
        lambda: (f6(), i64(4)),
        fullgraph=True,
        break_ok=True,
    ),
    C(
        "t_loop_iadd_arange_fullgraph",
        t_loop_iadd_arange,
        lambda: i64(1),
        lambda: i64(2),
        fullgraph=True,
        break_ok=True,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_value_dependent_sizes_match_eager(case):
    case.run()


def test_inplace_updated_inverse_is_one_graph_or_unsupported():
    """`T = np.zeros((4, 4)); T += H; np.linalg.inv(T)` under fullgraph=True: either one graph
    that matches eager on every call, or tc.Unsupported; tc.explain reports what ran."""
    import tcompile as tc

    explained = tc.explain(t_inv)(H44_A.copy())
    if explained.graph_break_count == 0 and not explained.skipped_frames:
        assert explained.graph_count == 1, str(explained)
        f = tc.compile(t_inv, backend="eager", fullgraph=True)
        for h in (H44_A, H44_B, H44_A):
            got = f(h.copy())
            want = t_inv(h.copy())
            assert got.tobytes() == want.tobytes(), (want, got)
    else:
        with pytest.raises(tc.Unsupported):
            tc.compile(t_inv, backend="eager", fullgraph=True)(H44_A.copy())
