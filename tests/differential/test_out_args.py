"""`out=` arguments: ndarray methods, ufuncs (positional and keyword out), NumPy functions.

The out array is an argument, a view of one, an input itself, or made inside the function; it is
read between several writes; the value returned is the out array (identity). Compiled must write
the same bytes into the same arrays and return the same objects as eager.
"""

from __future__ import annotations

import numpy as np
import pytest
from diffharness import C, case_id


def m34a():
    return np.arange(12.0).reshape(3, 4) - 5.5


def m34b():
    return np.linspace(-3.0, 7.0, 12).reshape(3, 4)[::-1]


def m56():
    return (np.arange(30.0).reshape(5, 6) * 0.37) % 2.1 - 1.0


def v6a():
    return np.array([0.25, -1.5, 2.75, 0.0, 3.5, -0.75])


def v6b():
    return np.array([-2.25, 1.5, -0.0, 4.0, -3.5, 0.5])


# --- ndarray methods with out= -------------------------------------------------------------


def sum_axis0_out(x, o):
    x.sum(axis=0, out=o)
    return o


def sum_out_returns_out(x, o):
    r = x.sum(axis=0, out=o)
    return r is o, r


def clip_inplace(x):
    x.clip(0, 1, out=x)
    return x.sum()


def clip_inplace_then_reuse(x):
    r = x.clip(-1.0, 1.0, out=x)
    return r is x, (x * 2).sum(axis=0)


def take_out(x, i, o):
    x.take(i, out=o)
    return o.sum(), o


def mean_axis1_out(x, o):
    x.mean(axis=1, out=o)
    return o * 1


def max_min_out(x, o1, o2):
    x.max(axis=0, out=o1)
    x.min(axis=1, out=o2)
    return o1 - o1.mean(), o2


def cumsum_out(x, o):
    x.cumsum(out=o)
    return o[-1]


def cumsum_axis_out(x, o):
    x.cumsum(axis=0, out=o)
    return o[-1].sum()


def round_out(x, o):
    x.round(1, out=o)
    return o


def argmax_out(x, oi):
    r = x.argmax(axis=0, out=oi)
    return r is oi, oi + 0


def prod_out(x, o):
    x.prod(axis=0, out=o)
    return o.sum()


def std_var_out(x, o1, o2):
    x.std(axis=0, out=o1)
    x.var(axis=1, out=o2)
    return o1.sum(), o2.sum()


def any_all_out(x, ob1, ob2):
    (x > 0).any(axis=0, out=ob1)
    (x > -3).all(axis=1, out=ob2)
    return ob1.sum(), ob2.sum()


def sum_keepdims_out(x, o):
    x.sum(axis=0, out=o, keepdims=True)
    return o


def sum_0d_out(x, o0):
    r = x.sum(out=o0)
    return r, r is o0, type(r).__name__


def cumprod_out(x, o):
    x.cumprod(axis=1, out=o)
    return o


# --- ufuncs: positional and keyword out ------------------------------------------------------


def add_positional_out(x, o):
    np.add(x, 1, o)
    return o.sum()


def add_out_identity(x, o):
    r = np.add(x, 1, out=o)
    return r is o


def add_out_tuple(x, o):
    r = np.add(x, 2.5, out=(o,))
    return r is o, o


def modf_positional(x, a, b):
    r = np.modf(x, a, b)
    return r[0] is a, r[1] is b, a.sum(), b.sum()


def divmod_positional(x, q, r):
    res = np.divmod(x, 3, q, r)
    return res[0] is q, q * 1, r * 1


def ufunc_out_alias_input(x):
    np.multiply(x, 2, out=x)
    return x


def ufunc_out_overlap_reversed(x):
    np.add(x, x[::-1], out=x)
    return x.sum()


def ufunc_out_view_of_arg(x, big):
    np.sin(x, out=big[1])
    return big.sum(axis=1)


def ufunc_out_where(x, o):
    np.add(x, 1, out=o, where=x > 0)
    return o


def divide_where(x, y, o):
    np.divide(x, y, out=o, where=y != 0)
    return o


def negative_out_reversed_self(x):
    np.negative(x, out=x[::-1])
    return x


def accumulate_out(x, o):
    np.maximum.accumulate(x, out=o)
    return o


def add_reduce_out(x, o):
    np.add.reduce(x, out=o)
    return o * 1


def ufunc_out_dtype_cast(x, o32):
    np.multiply(x, 3, out=o32)
    return o32


# --- numpy functions with out= ---------------------------------------------------------------


def np_sum_out(x, o):
    np.sum(x, axis=0, out=o)
    return o.max()


def np_matmul_out(a, b, c):
    np.matmul(a, b, out=c)
    return c.sum()


def np_dot_out(a, b, c):
    r = np.dot(a, b, out=c)
    return r is c, c * 1


def np_cumsum_out(x, o):
    np.cumsum(x, out=o)
    return o


def np_clip_out(x, o):
    np.clip(x, -0.5, 0.5, out=o)
    return o.sum()


def np_take_out(x, i, o):
    np.take(x, i, out=o, mode="clip")
    return o


def np_round_out(x, o):
    np.round(x, 2, out=o)
    return o


def np_mean_out_float32(x, o32):
    np.mean(x, axis=0, out=o32)
    return o32


# --- out read between writes, out made inside -----------------------------------------------


def out_reused_with_copy(x, o):
    x.mean(axis=1, out=o)
    a = o.copy()
    x.max(axis=1, out=o)
    return a


def out_reused_with_reads(x, o):
    x.mean(axis=1, out=o)
    s = o.sum()
    x.min(axis=1, out=o)
    t = o.sum()
    return s, t


def out_reused_view_kept(x, o):
    v = o[:2]
    np.exp(x[0, :3], out=o)
    a = v.sum()
    np.cos(x[1, :3], out=o)
    return a, v.sum(), v


def out_made_inside(x):
    o = np.empty(x.shape[1])
    x.sum(axis=0, out=o)
    return o * 2


def out_made_inside_reused(x):
    o = np.zeros(x.shape[0])
    x.max(axis=1, out=o)
    first = o.copy()
    np.add(o, 1, out=o)
    return first, o


def out_accumulate_loop(x, o):
    for i in range(3):
        np.add(o, x[i], out=o)
    return o


def out_then_input_read(x, o):
    np.add(x, 1, out=o)
    return x + o


def out_is_second_arg_alias(x, o):
    # the builder passes one array twice: o is x
    np.multiply(x, -1, out=o)
    return x.sum(), o is x


def out_slice_then_whole(x, big):
    x.sum(axis=0, out=big[0])
    x.min(axis=0, out=big[2])
    return big


def exp_out_then_write(x, o):
    np.exp(x, out=o)
    o[0] = 0
    return o.sum()


def out_kw_after_branch(x, o, flag):
    if flag:
        np.sqrt(np.abs(x), out=o)
    else:
        np.square(x, out=o)
    return o.mean()


CASES = [
    C(
        "sum_axis0_out",
        sum_axis0_out,
        lambda: (m34a(), np.zeros(4)),
        lambda: (m34b(), np.full(4, 9.0)),
        lambda: (m56(), np.zeros(6)),
    ),
    C(
        "sum_out_returns_out",
        sum_out_returns_out,
        lambda: (m34a(), np.zeros(4)),
        lambda: (m34b(), np.ones(4)),
    ),
    C("clip_inplace", clip_inplace, lambda: (m34a(),), lambda: (m34b() / 3,)),
    C("clip_inplace_then_reuse", clip_inplace_then_reuse, lambda: (m34a(),), lambda: (m56(),)),
    C(
        "take_out",
        take_out,
        lambda: (m34a(), np.array([0, 5, 11]), np.zeros(3)),
        lambda: (m34b(), np.array([1, 1, 2]), np.ones(3)),
    ),
    C(
        "mean_axis1_out",
        mean_axis1_out,
        lambda: (m34a(), np.zeros(3)),
        lambda: (m34b(), np.ones(3)),
    ),
    C(
        "max_min_out",
        max_min_out,
        lambda: (m34a(), np.zeros(4), np.zeros(3)),
        lambda: (m34b(), np.ones(4), np.ones(3)),
    ),
    C("cumsum_out", cumsum_out, lambda: (m34a(), np.zeros(12)), lambda: (m34b(), np.ones(12))),
    C(
        "cumsum_axis_out",
        cumsum_axis_out,
        lambda: (m34a(), np.zeros((3, 4))),
        lambda: (m34b(), np.ones((3, 4))),
    ),
    C(
        "round_out",
        round_out,
        lambda: (m34a() / 7, np.zeros((3, 4))),
        lambda: (m34b() / 3, np.ones((3, 4))),
    ),
    C(
        "argmax_out",
        argmax_out,
        lambda: (m34a(), np.zeros(4, dtype=np.int64)),
        lambda: (m34b(), np.ones(4, dtype=np.int64)),
    ),
    C("prod_out", prod_out, lambda: (m34a(), np.zeros(4)), lambda: (m34b(), np.ones(4))),
    C(
        "std_var_out",
        std_var_out,
        lambda: (m34a(), np.zeros(4), np.zeros(3)),
        lambda: (m34b(), np.ones(4), np.ones(3)),
    ),
    C(
        "any_all_out",
        any_all_out,
        lambda: (m34a(), np.zeros(4, bool), np.zeros(3, bool)),
        lambda: (m34b(), np.ones(4, bool), np.ones(3, bool)),
    ),
    C(
        "sum_keepdims_out",
        sum_keepdims_out,
        lambda: (m34a(), np.zeros((1, 4))),
        lambda: (m34b(), np.ones((1, 4))),
    ),
    C("sum_0d_out", sum_0d_out, lambda: (m34a(), np.zeros(())), lambda: (m34b(), np.ones(()))),
    C(
        "cumprod_out",
        cumprod_out,
        lambda: (m34a() / 4, np.zeros((3, 4))),
        lambda: (m34b() / 4, np.ones((3, 4))),
    ),
    C(
        "add_positional_out",
        add_positional_out,
        lambda: (m34a(), np.zeros((3, 4))),
        lambda: (m34b(), np.ones((3, 4))),
    ),
    C(
        "add_out_identity",
        add_out_identity,
        lambda: (v6a(), np.zeros(6)),
        lambda: (v6b(), np.ones(6)),
    ),
    C("add_out_tuple", add_out_tuple, lambda: (v6a(), np.zeros(6)), lambda: (v6b(), np.ones(6))),
    C(
        "modf_positional",
        modf_positional,
        lambda: (v6a(), np.zeros(6), np.zeros(6)),
        lambda: (v6b(), np.ones(6), np.ones(6)),
    ),
    C(
        "divmod_positional",
        divmod_positional,
        lambda: (v6a() * 3, np.zeros(6), np.zeros(6)),
        lambda: (v6b() * 5, np.ones(6), np.ones(6)),
    ),
    C("ufunc_out_alias_input", ufunc_out_alias_input, lambda: (v6a(),), lambda: (v6b(),)),
    C("ufunc_out_overlap_reversed", ufunc_out_overlap_reversed, lambda: (v6a(),), lambda: (v6b(),)),
    C(
        "ufunc_out_view_of_arg",
        ufunc_out_view_of_arg,
        lambda: (v6a(), np.zeros((3, 6))),
        lambda: (v6b(), np.ones((3, 6))),
    ),
    C(
        "ufunc_out_where",
        ufunc_out_where,
        lambda: (v6a(), np.full(6, 7.0)),
        lambda: (v6b(), np.full(6, -7.0)),
    ),
    C(
        "divide_where",
        divide_where,
        lambda: (v6a(), np.array([1.0, 0, 2, 0, 4, 0]), np.full(6, 5.0)),
        lambda: (v6b(), np.array([0.0, 3, 0, 1, 0, 2]), np.full(6, -5.0)),
    ),
    C("negative_out_reversed_self", negative_out_reversed_self, lambda: (v6a(),), lambda: (v6b(),)),
    C("accumulate_out", accumulate_out, lambda: (v6a(), np.zeros(6)), lambda: (v6b(), np.ones(6))),
    C(
        "add_reduce_out",
        add_reduce_out,
        lambda: (m34a(), np.zeros(4)),
        lambda: (m34b(), np.ones(4)),
    ),
    C(
        "ufunc_out_dtype_cast",
        ufunc_out_dtype_cast,
        lambda: (v6a(), np.zeros(6, np.float32)),
        lambda: (v6b(), np.ones(6, np.float32)),
    ),
    C("np_sum_out", np_sum_out, lambda: (m34a(), np.zeros(4)), lambda: (m34b(), np.ones(4))),
    C(
        "np_matmul_out",
        np_matmul_out,
        lambda: (m34a(), m34a().T.copy(), np.zeros((3, 3))),
        lambda: (m34b(), m34b().T.copy(), np.ones((3, 3))),
    ),
    C(
        "np_dot_out",
        np_dot_out,
        lambda: (m34a(), np.arange(4.0), np.zeros(3)),
        lambda: (m34b(), np.arange(4.0) - 2, np.ones(3)),
    ),
    C("np_cumsum_out", np_cumsum_out, lambda: (v6a(), np.zeros(6)), lambda: (v6b(), np.ones(6))),
    C("np_clip_out", np_clip_out, lambda: (v6a(), np.zeros(6)), lambda: (v6b(), np.ones(6))),
    C(
        "np_take_out",
        np_take_out,
        lambda: (v6a(), np.array([0, 9, -9]), np.zeros(3)),
        lambda: (v6b(), np.array([5, 2, 1]), np.ones(3)),
    ),
    C(
        "np_round_out",
        np_round_out,
        lambda: (v6a() / 3, np.zeros(6)),
        lambda: (v6b() / 7, np.ones(6)),
    ),
    C(
        "np_mean_out_float32",
        np_mean_out_float32,
        lambda: (m34a() / 3, np.zeros(4, np.float32)),
        lambda: (m34b() / 7, np.ones(4, np.float32)),
    ),
    C(
        "out_reused_with_copy",
        out_reused_with_copy,
        lambda: (m34a(), np.zeros(3)),
        lambda: (m34b(), np.ones(3)),
    ),
    C(
        "out_reused_with_reads",
        out_reused_with_reads,
        lambda: (m34a(), np.zeros(3)),
        lambda: (m34b(), np.ones(3)),
    ),
    C(
        "out_reused_view_kept",
        out_reused_view_kept,
        lambda: (m34a(), np.zeros(3)),
        lambda: (m34b(), np.ones(3)),
    ),
    C("out_made_inside", out_made_inside, lambda: (m34a(),), lambda: (m34b(),), lambda: (m56(),)),
    C("out_made_inside_reused", out_made_inside_reused, lambda: (m34a(),), lambda: (m34b(),)),
    C(
        "out_accumulate_loop",
        out_accumulate_loop,
        lambda: (m34a(), np.zeros(4)),
        lambda: (m34b(), np.ones(4)),
    ),
    C(
        "out_then_input_read",
        out_then_input_read,
        lambda: (v6a(), np.zeros(6)),
        lambda: (v6b(), np.ones(6)),
    ),
    C(
        "out_is_second_arg_alias",
        out_is_second_arg_alias,
        lambda: (lambda x: (x, x))(v6a()),
        lambda: (lambda x: (x, x))(v6b()),
    ),
    C(
        "out_slice_then_whole",
        out_slice_then_whole,
        lambda: (m34a(), np.zeros((3, 4))),
        lambda: (m34b(), np.ones((3, 4))),
    ),
    C(
        "exp_out_then_write",
        exp_out_then_write,
        lambda: (v6a(), np.zeros(6)),
        lambda: (v6b(), np.ones(6)),
    ),
    C(
        "out_kw_after_branch",
        out_kw_after_branch,
        lambda: (v6a(), np.zeros(6), True),
        lambda: (v6b(), np.ones(6), False),
    ),
    # The same kernels where the whole function is expected in one graph.
    C(
        "fullgraph_sum_axis0_out",
        sum_axis0_out,
        lambda: (m34a(), np.zeros(4)),
        lambda: (m34b(), np.ones(4)),
        fullgraph=True,
    ),
    C(
        "fullgraph_out_reused_with_copy",
        out_reused_with_copy,
        lambda: (m34a(), np.zeros(3)),
        lambda: (m34b(), np.ones(3)),
        fullgraph=True,
    ),
    C(
        "fullgraph_add_out_identity",
        add_out_identity,
        lambda: (v6a(), np.zeros(6)),
        lambda: (v6b(), np.ones(6)),
        fullgraph=True,
    ),
    C(
        "fullgraph_clip_inplace",
        clip_inplace,
        lambda: (m34a(),),
        lambda: (m34b() / 3,),
        fullgraph=True,
    ),
    C(
        "fullgraph_np_matmul_out",
        np_matmul_out,
        lambda: (m34a(), m34a().T.copy(), np.zeros((3, 3))),
        lambda: (m34b(), m34b().T.copy(), np.ones((3, 3))),
        fullgraph=True,
    ),
    C(
        "fullgraph_out_made_inside_reused",
        out_made_inside_reused,
        lambda: (m34a(),),
        lambda: (m34b(),),
        fullgraph=True,
    ),
]


# --- positional out= of ndarray methods and NumPy functions, ufunc methods, in-place functions


def mean_pos_out(x, o):
    x.mean(0, None, o)
    return o


def sum_pos_out(x, o):
    r = x.sum(0, None, o)
    return r is o, o


def max_pos_out(x, o):
    x.max(0, o)
    return o


def clip_pos_out(x, o):
    x.clip(0, 1, o)
    return o


def round_pos_out(x, o):
    x.round(1, o)
    return o


def take_pos_out(x, i, o):
    x.take(i, 0, o)
    return o


def cumsum_pos_out(x, o):
    x.cumsum(0, None, o)
    return o


def argmax_pos_out(x, o):
    x.argmax(0, o)
    return o


def std_pos_out(x, o):
    x.std(0, None, o)
    return o


def any_pos_out(x, o):
    (x > 0).any(0, o)
    return o


def np_clip_pos(x, o):
    np.clip(x, 0, 1, o)
    return o


def np_around_pos(x, o):
    np.around(x, 1, o)
    return o


def np_cumsum_pos(x, o):
    np.cumsum(x, 0, None, o)
    return o


def np_mean_pos(x, o):
    np.mean(x, 0, None, o)
    return o


def add_at(x, idx):
    np.add.at(x, idx, 1.0)
    return x


def ufunc_accumulate_out(x, o):
    np.add.accumulate(x, out=o)
    return o


def reduceat_out(x, o):
    np.add.reduceat(x, [0, 2], out=o)
    return o


def outer_out(a, b, o):
    np.multiply.outer(a, b, out=o)
    return o


def out_reversed_view(x, o):
    x.sum(axis=0, out=o[::-1])
    return o


def divmod_out_tuple(x, q, r):
    np.divmod(x, 3, out=(q, r))
    return q, r


def frexp_pos(x, m, e):
    np.frexp(x, m, e)
    return m, e


def out_int_casting(x, oi):
    np.add(x, 1.5, out=oi)
    return oi


def out_readonly(x, o):
    np.negative(x, out=o)
    return o


def einsum_out(x, o):
    np.einsum("ij->j", x, out=o)
    return o


def out_view_read(x):
    v = x[1:]
    np.maximum(x, 0, out=x)
    return v.sum(), v


class BufHolder:
    def __init__(self, n):
        self.buf = np.zeros(n)


def out_attr(x, obj):
    np.sin(x, out=obj.buf)
    return obj.buf.sum()


def out_list(x, bufs):
    np.cos(x, out=bufs[0])
    return bufs


def put_inplace(x):
    np.put(x, [0, 2], [9.0, 8.0])
    return x


def putmask_inplace(x):
    np.putmask(x, x < 0, 0.0)
    return x


def fill_diag(m):
    np.fill_diagonal(m, -1.0)
    return m


def copyto_where(d, s):
    np.copyto(d, s, where=s > 0)
    return d


def place_inplace(x):
    np.place(x, x > 1, [7.0])
    return x


def partition_inplace(x):
    x.partition(2)
    return x[2]


def method_put(x):
    x.put([1], [5.0])
    return x


def ro(a):
    a.flags.writeable = False
    return a


CASES += [
    C("mean_pos_out", mean_pos_out, lambda: (m34a(), np.zeros(4)), lambda: (m34b(), np.ones(4))),
    C("sum_pos_out", sum_pos_out, lambda: (m34a(), np.zeros(4)), lambda: (m34b(), np.ones(4))),
    C("max_pos_out", max_pos_out, lambda: (m34a(), np.zeros(4)), lambda: (m34b(), np.ones(4))),
    C(
        "clip_pos_out",
        clip_pos_out,
        lambda: (m34a(), np.zeros((3, 4))),
        lambda: (m34b(), np.ones((3, 4))),
    ),
    C(
        "round_pos_out",
        round_pos_out,
        lambda: (m34a() / 7, np.zeros((3, 4))),
        lambda: (m34b() / 3, np.ones((3, 4))),
    ),
    C(
        "take_pos_out",
        take_pos_out,
        lambda: (m34a(), np.array([0, 2]), np.zeros((2, 4))),
        lambda: (m34b(), np.array([1, 1]), np.ones((2, 4))),
    ),
    C(
        "cumsum_pos_out",
        cumsum_pos_out,
        lambda: (m34a(), np.zeros((3, 4))),
        lambda: (m34b(), np.ones((3, 4))),
    ),
    C(
        "argmax_pos_out",
        argmax_pos_out,
        lambda: (m34a(), np.zeros(4, np.int64)),
        lambda: (m34b(), np.ones(4, np.int64)),
    ),
    C("std_pos_out", std_pos_out, lambda: (m34a(), np.zeros(4)), lambda: (m34b(), np.ones(4))),
    C(
        "any_pos_out",
        any_pos_out,
        lambda: (m34a(), np.zeros(4, bool)),
        lambda: (m34b(), np.ones(4, bool)),
    ),
    C(
        "np_clip_pos",
        np_clip_pos,
        lambda: (m34a(), np.zeros((3, 4))),
        lambda: (m34b(), np.ones((3, 4))),
    ),
    C(
        "np_around_pos",
        np_around_pos,
        lambda: (m34a() / 7, np.zeros((3, 4))),
        lambda: (m34b() / 3, np.ones((3, 4))),
    ),
    C(
        "np_cumsum_pos",
        np_cumsum_pos,
        lambda: (m34a(), np.zeros((3, 4))),
        lambda: (m34b(), np.ones((3, 4))),
    ),
    C("np_mean_pos", np_mean_pos, lambda: (m34a(), np.zeros(4)), lambda: (m34b(), np.ones(4))),
    C("add_at", add_at, lambda: (v6a(), np.array([0, 0, 2])), lambda: (v6b(), np.array([5, 1, 5]))),
    C(
        "ufunc_accumulate_out",
        ufunc_accumulate_out,
        lambda: (v6a(), np.zeros(6)),
        lambda: (v6b(), np.ones(6)),
    ),
    C("reduceat_out", reduceat_out, lambda: (v6a(), np.zeros(2)), lambda: (v6b(), np.ones(2))),
    C(
        "outer_out",
        outer_out,
        lambda: (v6a()[:2], v6a()[:3], np.zeros((2, 3))),
        lambda: (v6b()[:2], v6b()[3:], np.ones((2, 3))),
    ),
    C(
        "out_reversed_view",
        out_reversed_view,
        lambda: (m34a(), np.zeros(4)),
        lambda: (m34b(), np.ones(4)),
    ),
    C(
        "divmod_out_tuple",
        divmod_out_tuple,
        lambda: (v6a() * 3, np.zeros(6), np.zeros(6)),
        lambda: (v6b() * 5, np.ones(6), np.ones(6)),
    ),
    C(
        "frexp_pos",
        frexp_pos,
        lambda: (v6a(), np.zeros(6), np.zeros(6, np.int32)),
        lambda: (v6b() * 5, np.ones(6), np.ones(6, np.int32)),
    ),
    C(
        "out_int_casting",
        out_int_casting,
        lambda: (np.arange(3), np.zeros(3, np.int64)),
        lambda: (np.arange(3.0), np.zeros(3)),
    ),
    C("out_readonly", out_readonly, lambda: (v6a(), np.zeros(6)), lambda: (v6b(), ro(np.zeros(6)))),
    C("einsum_out", einsum_out, lambda: (m34a(), np.zeros(4)), lambda: (m34b(), np.ones(4))),
    C("out_view_read", out_view_read, lambda: (v6a(),), lambda: (v6b(),)),
    C("out_attr", out_attr, lambda: (v6a(), BufHolder(6)), lambda: (v6b(), BufHolder(6))),
    C("out_list", out_list, lambda: (v6a(), [np.zeros(6)]), lambda: (v6b(), [np.ones(6)])),
    C("put_inplace", put_inplace, lambda: (v6a(),), lambda: (v6b(),)),
    C("putmask_inplace", putmask_inplace, lambda: (v6a(),), lambda: (v6b(),)),
    C("fill_diag", fill_diag, lambda: (np.ones((3, 3)),), lambda: (np.zeros((3, 3)),)),
    C("copyto_where", copyto_where, lambda: (np.zeros(6), v6a()), lambda: (np.ones(6), v6b())),
    C("place_inplace", place_inplace, lambda: (v6a(),), lambda: (v6b(),)),
    C("partition_inplace", partition_inplace, lambda: (v6a(),), lambda: (v6b(),)),
    C("method_put", method_put, lambda: (v6a(),), lambda: (v6b(),)),
    C(
        "fullgraph_mean_pos_out",
        mean_pos_out,
        lambda: (m34a(), np.zeros(4)),
        lambda: (m34b(), np.ones(4)),
        fullgraph=True,
    ),
    C(
        "fullgraph_divmod_positional",
        divmod_positional,
        lambda: (v6a() * 3, np.zeros(6), np.zeros(6)),
        lambda: (v6b() * 5, np.ones(6), np.ones(6)),
        fullgraph=True,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_out_argument_matches_eager(case):
    case.run()
