"""Array indexing and slicing with indices known at trace time: ints, negative ints, stepped slices,
Ellipsis, None/np.newaxis, tuples, constant integer arrays (fancy indexing). Views stay views."""

import numpy as np

from . import case, raises
from .inputs import A8, I64_8, M45, R45, T234

IDX = np.array([3, 1, 2])
ROWS = np.array([[0, 1], [3, 2]])


@case(A8, M45)
def integer_indices(x, m):
    return x[0], x[-1], m[1], m[-1, 2], m[1][3], m[-2]


@case(A8, M45)
def stepped_and_negative_slices(x, m):
    return x[1:6:2], x[::-1], m[::2, 1:], x[-3:], x[6:1:-2], m[:, ::-2], x[5:100], x[:-10]


@case(T234)
def ellipsis_indexing(t):
    return t[..., 0], t[0, ...], t[..., 1:3], t[1, ..., ::2], t[...]


@case(A8, M45)
def newaxis_and_none(x, m):
    return (
        x[None],
        x[:, None],
        x[np.newaxis, :, np.newaxis],
        m[:, None, :].shape,
        m[None, ..., None],
    )


@case(M45)
def tuple_indices_and_slice_objects(m):
    idx = (1, 2)
    s = slice(1, 4)
    both = (slice(None), slice(None, None, 2))
    return m[idx], m[(0, -1)], m[s], m[1, s], m[both], m[s, ::2]


@case(A8, M45)
def fancy_index_with_constant_lists(x, m):
    return x[[0, 2, 4]], m[[0, 3], :], m[:, [1, 1, 4]], m[[0, 1], [2, 3]], x[[-1, -2]]


@case(A8, M45)
def fancy_index_with_global_index_arrays(x, m):
    return x[IDX], m[IDX], m[ROWS], m[IDX[:2], 1:3], x[np.array([0, 7])]


@case(T234)
def mixed_int_slice_and_fancy(t):
    return t[0, [1, 2], 1:3], t[1, :, ::2], t[:, 1, [0, 3]], t[[1, 0], ..., 0]


@case(A8, M45)
def index_computed_from_shapes(x, m):
    mid = x.shape[0] // 2
    return x[mid], x[mid:], m[m.shape[0] - 1], m[:, -m.shape[1] // 2 :]


@case(A8)
def index_with_numpy_integer_scalars(x):
    return x[np.int64(2)], x[np.int32(-1)], x[np.uint8(1) : np.int64(5)]


@case(M45)
def scalar_element_types(m):
    i = I64_8
    return m[1, 2], i[3], m[1, 2] * 2, i[0] + 1, m[0][0]


@case(A8)
def zero_dimensional_results(x):
    return x[3, ...], x[..., 3], x[None, 2], x[2:3].reshape(())


@case(R45)
def chained_indexing_on_views(x):
    v = x[1:, ::2]
    return v[0], v[:, -1], v.T[1], v[1:][::-1]


@case(A8)
def indexing_python_containers_with_constants(x):
    lst = [x, x * 2, x * 3]
    d = {(0, 1): "pair", "k": lst}
    return lst[-1], lst[0:2], d[(0, 1)], d["k"][1][2], "abcdef"[1::2]


@case(M45)
def take_diagonal_with_fancy_arange(m):
    r = np.arange(4)
    return m[r, r], m[r[::-1], r + 1]


@raises(A8)
def integer_index_out_of_bounds(x):
    return x[10]


@raises(M45)
def too_many_indices(m):
    return m[0, 1, 2]


@raises(A8)
def fancy_index_out_of_bounds(x):
    return x[[1, 9]]
