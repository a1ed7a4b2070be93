"""Loop nodes (issue 11, part 1): a ``for`` loop over ``range(...)``, an array's first axis, or
``enumerate``/``zip`` of those, whose body traces the same way on every iteration, becomes ONE
``loop`` node (`tracer/loops/for_loops.py`); every other loop is unrolled as before.

Every case runs eagerly and compiled over fresh arguments (results bitwise, mutated inputs,
exceptions, warnings, aliasing), on the eager backend and on the default one, and every case
also pins whether its loop became a loop node: the number of `LoopSpec` targets in the graphs
(nested bodies included), that the printed graph calls its loops' functions, and a bound on the
graph's size, so that a captured loop of 1,000 iterations stays a graph of a handful of ops.

Bodies that raise or warn are in test_loop_nodes_raising.py, new trip counts, sizes and dtypes
across calls in test_loop_nodes_recompiles.py; what became of the loops, and the arguments the
cases build, in loop_shapes.py.

Loops that are unrolled today although they are of a captured form are in ``UNROLLED`` with the
reason `tracer/loops/for_loops.py` records; when one becomes a loop node, move it to ``CAPTURED`` (and
``CAPTURED_SHAPE``).
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from diffharness import C, case_id, check, on_every_backend
from loop_shapes import assert_loops, graph_shape, line, loop_targets, mat, positive, spd_matrix

import tcompile as tc

# Kernels of the benchmark corpus (plain NumPy), whose capture bench/loops.py measures.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from loop_kernels import csr_spmv  # noqa: E402

G_ARR = np.arange(4.0)


def set_global(letter):
    global G_ARR
    G_ARR = np.arange(4.0) * (1.0 if letter == "A" else -2.5)


# --- captured loops -------------------------------------------------------------------------


def stencil(u, c):
    for _ in range(50):
        u = u + c * (np.roll(u, 1) - 2 * u + np.roll(u, -1))
    return u


def stencil_1000(u):
    for _ in range(1000):
        u = u + 0.1 * (np.roll(u, 1) - 2 * u + np.roll(u, -1))
    return u


def enumerate_rows(m):
    acc = np.zeros(m.shape[1], m.dtype)
    for i, row in enumerate(m):
        acc = acc + row * i
    return acc


def enumerate_start(m):
    acc = np.zeros(m.shape[1], m.dtype)
    for i, row in enumerate(m, 5):
        acc = acc * 0.5 + row * i
    return acc


def rows(m):
    acc = np.zeros(m.shape[1])
    for row in m:
        acc = acc * 0.5 + np.sin(row)
    return acc


def rows_reversed_view(m):
    acc = np.zeros(m.shape[1] // 2)
    for row in m[::-1, ::2]:
        acc = acc * 0.5 + row
    return acc


def rows_of_product(m):
    acc = np.zeros(m.shape[1])
    for row in m * 2:
        acc = acc + row
    return acc


def rows_of_local_view(m):
    v = m[::-1, ::2]
    acc = np.zeros(v.shape[1])
    for row in v:
        acc = acc * 0.5 + row
    return acc


def elements_of_vector(x):
    acc = np.zeros(1)
    for v in x:
        acc = acc * 0.5 + np.full((), v)
    return acc


def zip_rows(a, b):
    acc = np.zeros(a.shape[1])
    for x, y in zip(a, b):
        acc = acc + x * y
    return acc


def zip_uneven(a, b):
    acc = np.zeros(a.shape[1])
    for x, y in zip(a, b):
        acc = acc - x / (1 + y * y)
    return acc


def zip_range_rows(m):
    acc = np.zeros(m.shape[1])
    for i, row in zip(range(3, 100), m):
        acc = acc + row * i
    return acc


def range_step_arith(x):
    acc = np.zeros_like(x)
    for i in range(2, 20, 3):
        acc = acc + x * i + x[i] - i
    return acc


def range_step_index_2d(m):
    acc = np.zeros(1)
    for i in range(1, 6, 2):
        acc = acc + m[i, :].sum() * m[i, i % 1] + m[:, i] @ m[:, 0]
    return acc


def float32_index(x):
    acc = np.zeros_like(x)
    for i in range(2, 40, 3):
        acc = acc + x * i - i
    return acc, acc.dtype.name


def float32_enumerate(m):
    acc = np.zeros(m.shape[1], np.float32)
    for i, row in enumerate(m, 7):
        acc = acc + row / i
    return acc


def int8_index(x):
    for i in range(3):
        x = x + i
    return x


def uint8_overflow(x):
    """NumPy 2: a Python int out of uint8's range raises OverflowError at i == 256."""
    for i in range(250, 260):
        x = x * 0 + i
    return x


def carried_numpy_scalar(m):
    s = m[0, 0] * 0.0
    for row in m:
        s = s + row.sum()
    return s, type(s).__name__


def swap_fib(a, b):
    for _ in range(20):
        a, b = b, a + b
    return a, b


def swap_only(a, b):
    for _ in range(3):
        a, b = b, a
    return a, b


def helper(v, w):
    return v * 0.75 + np.tanh(w)


def calls_helper(x, m):
    for row in m:
        x = helper(x, row)
    return x


def reads_global(x):
    for _ in range(6):
        x = x * 0.5 + G_ARR
    return x


def make_reads_closure():
    scale = np.float64(0.5)
    offset = np.arange(4.0)

    def reads_closure(x):
        for _ in range(6):
            x = x * scale + offset
        return x

    return reads_closure


reads_closure = make_reads_closure()


def make_reads_closure_early():
    scale = np.float64(0.5)
    offset = np.arange(4.0)

    def reads_closure_early(x):
        s, o = scale, offset
        for _ in range(6):
            x = x * s + o
        return x

    return reads_closure_early


reads_closure_early = make_reads_closure_early()


def nested(x):
    for i in range(4):
        for j in range(5):
            x = x * 0.9 + i * j
    return x


def nested_rows(m):
    acc = np.zeros(m.shape[1])
    for _ in range(3):
        for row in m:
            acc = acc * 0.5 + row
    return acc


def results_used_after(m):
    acc = np.zeros(m.shape[1])
    for row in m:
        acc = acc + row * row
    norm = np.sqrt(acc)
    return norm / norm.sum(), acc, row


def row_written_after(m):
    acc = np.zeros(m.shape[1])
    for row in m:
        acc = acc + row
    row[0] = -1.0  # the last row is a view of m: eager writes into the argument
    return acc


def body_temporaries_after(x):
    for i in range(4):
        t = x * i
        x = x + t
    return x, t


def input_passed_through(x):
    for i in range(3):
        y = x
        z = x + i
    return x, y, z


def iterated_and_rebound(m):
    for row in m:
        m = m * 2 + row
    return m


def inner_loop(x, n):
    for i in range(n):
        x = x * 0.9 + i
    return x


def calls_loop(x):
    y = inner_loop(x, 30)
    return y + 1


def errstate_outside(x):
    with np.errstate(invalid="ignore", divide="ignore"):
        for i in range(6):
            x = np.log(x - i) + x
    return x


def breaks_around(x):
    print("before", x.shape)
    for i in range(10):
        x = x * 0.5 + i
    print("after", x.min())  # exact in any summation order (the triton corpus runs it too)
    return x


def range_of_shape(x):
    acc = np.zeros(1)
    for i in range(x.shape[0]):
        acc = acc + x[i] * i
    return acc


def two_loops(x):
    for i in range(3):
        x = x + i
    for i in range(4):  # i was unbound after the first loop (it is not read after it)
        x = x * 0.5 + i
    return x


def tuple_carried(x):
    st = (x, x + 1)
    for _ in range(4):
        a, b = st
        st = (a + b, a)
    return st


def int_power_of_index(x):
    for i in range(4):
        x = x + 2**i
    return x


def fresh_array_written(x):
    for _ in range(4):
        t = x * 2
        t += 1  # t is made in the body, yet "the body writes into an array (t += 1)"
        x = t
    return x


def del_in_body(x):
    for i in range(4):
        t = x + i
        x = t * 0.5
        del t  # "the body runs DELETE_FAST"
    return x


def random_body(x):
    for _ in range(3):
        x = x + np.random.rand(3)  # a break inside the loop: the frame runs eagerly
    return x


def seed_random(letter):
    np.random.seed(ord(letter))


def while_counter(x):
    i = 0
    while i < 5:
        x = x * 0.5 + i
        i += 1
    return x


def zip_strict_uneven(a, b):
    acc = np.zeros(a.shape[1])
    for x, y in zip(a, b, strict=True):
        acc = acc + x * y
    return acc


class Model:
    def __init__(self, seed=0, size=3):
        self.w = line(size, seed)
        self.rate = 0.5

    def step(self, x):
        for _ in range(4):
            x = x * self.rate + self.w
        return x


MODEL = Model()


def method_loop(x):
    return MODEL.step(x)


def reads_attribute(x, obj):
    for _ in range(4):
        x = x * obj.rate + obj.w
    return x


def helper_reading_global(v):
    return v * 0.5 + G_ARR


def calls_helper_reading_global(x):
    for _ in range(4):
        x = helper_reading_global(x)
    return x


def enumerate_after_break(m):
    it = enumerate(m)
    for i, _ in it:
        if i == 1:
            break
    acc = np.zeros(m.shape[1])
    for i, row in it:  # the iterator's items were made by the first loop
        acc = acc + row * i
    return acc


def print_in_body(x):
    for i in range(3):
        x = x * 0.5 + i
        print("step", i)  # a break inside the loop: the frame runs eagerly
    return x


def graph_break_in_body(x):
    for i in range(3):
        x = x * 0.5 + i
        tc.graph_break()
    return x


def empty_body(x):
    for _ in range(4):
        pass
    return x + 1


def index_carried(x):
    for i in range(5):
        x = x + x[i]
    return x


def neg_index(x):
    acc = np.zeros(1)
    for i in range(5):
        acc = acc + x[i - 2]
    return acc


def matmul_stack(s):
    acc = np.eye(s.shape[1])
    for m in s:
        acc = acc @ m
    return acc


def complex_rows(z):
    acc = np.zeros(z.shape[1], np.complex128)
    for i, row in enumerate(z):
        acc = acc * 1j + row * i
    return acc


def float32_scalar_carried(x):
    s = x[0] * 0
    for i in range(6):
        s = s + i
    return s, type(s).__name__


def int_floor_div(x):
    acc = np.zeros_like(x)
    for i in range(1, 6):
        acc = acc + x // i + x % i
    return acc


def bool_rows(m):
    acc = np.zeros(m.shape[1], bool)
    for row in m:
        acc = acc | row
    return acc


def huge_index(x):
    for i in range(2**62, 2**62 + 3):
        x = x + (i - 2**62)
    return x


def cube_nested(c):
    acc = np.zeros(c.shape[2])
    for plane in c:
        for row in plane:  # the inner loop iterates a row of the outer one
            acc = acc * 0.5 + row
    return acc


def loop_twice(x):
    return inner_loop(x, 3) + inner_loop(x * 2, 5)


def zip_strict(a, b):
    acc = np.zeros(a.shape[1])
    for x, y in zip(a, b, strict=True):
        acc = acc + x * y
    return acc


def zip_three(a, b):
    acc = np.zeros(a.shape[1])
    for i, x, y in zip(range(10), a, b):
        acc = acc + x * y + i
    return acc


def zip_same_array(a):
    acc = np.zeros(a.shape[1])
    for x, y in zip(a, a[::-1]):
        acc = acc + x * y
    return acc


def where_body(x):
    for i in range(4):
        x = np.where(x > i, x - 1, x + 1)
    return x


def argsort_body(m):
    acc = np.zeros(m.shape[1])
    for row in m:
        acc = acc + row[np.argsort(row)]
    return acc


def reads_list_argument(x, lst):
    for _ in range(3):
        x = x + lst[0] * x.ndim
    return x


def comprehension_body(m):
    acc = np.zeros(m.shape[1])
    for row in m:
        acc = acc + np.stack([row * j for j in range(3)]).sum(0)
    return acc


def enumerate_after_next(m):
    it = enumerate(m)
    next(it)
    acc = np.zeros(m.shape[1])
    for i, row in it:  # the loop starts at position 1
        acc = acc + row * i
    return acc


def zip_after_next(a, b):
    z = zip(a, b)
    x0, y0 = next(z)
    acc = x0 * y0
    for x, y in z:
        acc = acc + x * y
    return acc


def index_arithmetic(x):
    acc = np.zeros(1)
    for i in range(-3, 3):
        acc = acc + x[i % 4] + x[-i] + x[i]
    return acc


def power_of_index(x):
    acc = np.zeros_like(x)
    for i in range(1, 5):
        acc = acc + x**i + i**x
    return acc


def reads_dict_argument(x, d):
    for _ in range(4):
        x = x * d["rate"] + d["w"]
    return x


G_SCALE = 0.5


def set_scale(letter):
    global G_SCALE
    G_SCALE = 0.5 if letter == "A" else 0.25


def reads_global_float(x):
    for _ in range(4):
        x = x * G_SCALE + 1
    return x


def make_rebound_cells():
    scale, arr = 0.5, np.ones(4)

    def rebind(letter):
        nonlocal scale, arr
        scale = 0.5 if letter == "A" else 0.25
        arr = np.arange(4.0) * (1.0 if letter == "A" else 3.0)

    def reads_rebound_cells(x):
        for _ in range(5):
            x = x * scale + arr
        return x

    return reads_rebound_cells, rebind


reads_rebound_cells, rebind_cells = make_rebound_cells()


def rows_then_row(m):
    acc = np.zeros(m.shape[1])
    for row in m:
        acc = acc + row
    return acc, row  # UnboundLocalError for 0 rows, as eagerly


def swap_then_inplace(a, b):
    for _ in range(3):
        a, b = b, a
    a += 1  # a is the argument b: eager writes into it once
    return a, b


def inplace_then_view_of_read(a, m):
    for _ in range(2):
        a += 1.0  # from the second iteration on, a is m[2]: the loop writes m
        a = m[2]
    return a, m


def swapped_buffers_written(u, v):
    for _ in range(3):
        v[1:-1] = 0.5 * (u[:-2] + u[2:])  # the second iteration writes u's first array
        u, v = v, u
    return u, v


def swapped_buffers_while(u, v):
    change = 1.0
    while change > 1e-3:
        v[1:-1] = 0.5 * (u[:-2] + u[2:])
        change = np.abs(v - u).max()
        u, v = v, u
    return u, v


def passed_through_then_inplace(x):
    for i in range(3):
        y = x
        z = x + i
    y += 1
    return z


def last_row_then_inplace(m):
    acc = np.zeros(m.shape[1])
    for row in m:
        acc = acc + row
    row += 100
    return acc


def carried_views_then_write(x):
    acc = x
    for _ in range(4):
        acc = acc.T[::-1]
    acc[0] = 7
    return acc


def enumerate_row_after(m):
    acc = np.zeros(m.shape[1])
    for i, row in enumerate(m):
        acc = acc + row * i
    flag = True  # a constant stored in the body, read after it
    return acc, row, flag


def helper_loop_then_print(x):
    for i in range(6):
        x = x * 0.5 + i
    print("helper", x.shape)
    return x


def calls_loop_with_break(x):
    y = helper_loop_then_print(x * 2)  # breaks: the helper is compiled as its own frame
    return y + 1


def dt_arg(u, dt):
    for _ in range(8):
        u = u - dt * u * u
    return u


def numpy_scalar_constant(m):
    s = np.float64(0.0)  # a constant: its kind changes to a graph value in the body
    for row in m:
        s = s + row.sum()
    return s


def float_from_index(x):
    for i in range(4):
        x = x * 0.5 + i / 3
    return x


def slice_prefix(x):
    acc = np.zeros(1)
    for i in range(1, 6):
        acc = acc + x[:i].sum() * 0.5
    return acc


def csr(rows, cols, seed=0, per_row=2.0):
    """A random CSR matrix (some rows empty) and a vector."""
    rng = np.random.default_rng(seed)
    counts = np.minimum(rng.poisson(per_row, rows), cols)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    indices = np.concatenate([rng.choice(cols, k, replace=False) for k in counts]).astype(np.int64)
    return indptr, indices, rng.standard_normal(indptr[-1]), rng.standard_normal(cols)


def segment_max(bounds, x):
    out = np.zeros(bounds.shape[0] - 1, dtype=np.int32)
    for k in range(bounds.shape[0] - 1):
        segment = x[bounds[k] : bounds[k + 1]]
        out[k] = segment.size + int32_bias(segment)
    return out


def int32_bias(segment):
    return np.int32(3) if segment.size else np.int32(0)  # the size as a number: not captured


def segment_sums_written(bounds, x):
    y = x.copy()
    for k in range(bounds.shape[0] - 1):
        y[bounds[k] : bounds[k + 1]] = x[bounds[k] : bounds[k + 1]].sum()  # writes a varying slice
    return y


def data_bound_negative(x, ends):
    acc = np.zeros(1)
    for k in range(ends.shape[0]):
        acc = acc + x[: ends[k]].sum()  # negative ends count from the end, as eager
    return acc


def data_bound_escapes(bounds, x):
    for k in range(bounds.shape[0] - 1):
        part = x[bounds[k] : bounds[k + 1]]
    return part  # a varying slice read after the loop: not captured


def slice_window(x):
    acc = np.zeros(2)
    for i in range(5):
        acc = acc + x[i : i + 2]
    return acc


def levinson(r):
    n = r.shape[0] - 1
    a = np.zeros(n + 1)
    a[0] = 1.0
    err = np.empty(n + 1)
    err[0] = r[0]
    for k in range(1, n + 1):  # slices as long as the index: shapes vary, results do not
        refl = -np.dot(a[:k], r[k:0:-1]) / err[k - 1]
        a[1 : k + 1] = a[1 : k + 1] + refl * a[k - 1 :: -1]
        err[k] = err[k - 1] * (1.0 - refl * refl)
    return a, err


def cholesky(spd):
    n = spd.shape[0]
    lower = np.zeros_like(spd)
    for i in range(n):
        for j in range(i):  # a trip count from the outer index: zero at i = 0
            lower[i, j] = (spd[i, j] - np.dot(lower[i, :j], lower[j, :j])) / lower[j, j]
        lower[i, i] = np.sqrt(spd[i, i] - np.dot(lower[i, :i], lower[i, :i]))
    return lower


def lu(a):
    lu = a.copy()
    n = lu.shape[0]
    for i in range(n):
        for j in range(i):  # bounds from the outer index, slices as long as it
            lu[i, j] = (lu[i, j] - lu[i, :j] @ lu[:j, j]) / lu[j, j]
        for j in range(i, n):
            lu[i, j] = lu[i, j] - lu[i, :i] @ lu[:i, j]
    return lu


def triangular_enumerate(m):
    out = np.zeros_like(m)
    for i in range(m.shape[0]):
        for n, j in enumerate(range(i)):  # may run zero times; gives back nothing
            out[i, j] = m[j, i] * n
    return out


def prefix_mean(x):
    acc = np.zeros(1)
    for i in range(1, x.shape[0]):
        acc = acc + x[:i].sum() / x[:i].shape[0]  # a size read in the graph, as a number
    return acc


def prefix_carried(x):
    acc = x[:1]
    for i in range(2, 5):
        acc = x[:i] * 2  # a value whose shape follows the index leaves the loop: unrolled
    return acc


def prefix_length_as_int(x):
    acc = np.zeros(3)
    for i in range(1, 4):
        acc = acc + np.ones(len(x[:i]))[:1] if len(x[:i]) > 1 else acc  # a branch on the size
    return acc


def triangular_with_output(m):
    acc = np.zeros(m.shape[1])
    for i in range(m.shape[0]):
        for j in range(i):  # runs zero times for i == 0: gives back acc as it was
            acc = acc + m[j]
    return acc


def dtype_changes(m):
    acc = 0
    for row in m:
        acc = acc + row
    return acc


def shape_changes(m):
    acc = np.zeros(())
    for row in m:
        acc = acc + row
    return acc


def zero_d_becomes_scalar(x):
    acc = np.zeros(())
    for i in range(2, 8, 2):
        acc = acc + x[i]
    return acc, type(acc).__name__


def errstate_inside(x):
    for i in range(5):
        with np.errstate(divide="ignore"):
            x = x / (x - i)
    return x


def errstate_in_body(a, b):
    out = np.zeros_like(a)
    for t in range(5):
        with np.errstate(divide="ignore", invalid="ignore"):
            r = a / (b - t)  # divides by zero in some iterations: silenced there
        out = out + np.nan_to_num(r) + np.log(b - t + 0.5)  # warns outside the block
    return out


def errstate_raise_in_body(a, b):
    out = np.zeros_like(a)
    for t in range(5):
        with np.errstate(divide="raise"):
            out = out + a / (b - t)  # FloatingPointError where b - t is 0
    return out


class Scale:
    def __init__(self, factor):
        self.factor = factor

    def __enter__(self):
        return self.factor

    def __exit__(self, *exc):
        return False


def user_with_in_body(x):
    for _ in range(4):
        with Scale(0.5) as f:
            x = x * f + 1
    return x


def index_as_float(m):
    acc = np.zeros(m.shape[1])
    for i, row in enumerate(m):
        acc = acc + row * (1.0 / (i + 1))  # Python float arithmetic on the index: in the graph
    return acc


def index_float_as_size(x):
    out = x
    for i in range(4):
        out = out + np.full(3, i / 2)  # a float value, not a size: stays in the loop node
    return out


CAPTURED = [
    C("errstate_inside", errstate_inside, lambda: positive(), lambda: positive(seed=1)),
    C(
        "errstate_in_body",
        errstate_in_body,
        lambda: (line(5), np.arange(5.0)),
        lambda: (line(5, seed=1), np.arange(5.0) + 10),
    ),  # fmt: skip
    C(
        "errstate_raise_in_body",
        errstate_raise_in_body,
        lambda: (line(5), np.arange(5.0) + 10),
        lambda: (line(5), np.arange(5.0)),
    ),  # fmt: skip
    C("user_with_in_body", user_with_in_body, lambda: line(3), lambda: line(3, seed=2)),
    # a carried value changes kind in the first iteration only: that one unrolls (peeled)
    C("dtype_changes", dtype_changes, lambda: mat(), lambda: mat(seed=1)),
    C("shape_changes", shape_changes, lambda: mat(), lambda: mat(seed=1)),
    C("zero_d_becomes_scalar", zero_d_becomes_scalar, lambda: line(8), lambda: line(8, seed=1)),
    C("slice_prefix", slice_prefix, lambda: line(8), lambda: line(8, seed=1)),
    C(
        "csr_rows",
        csr_spmv,
        lambda: csr(6, 9),
        lambda: csr(11, 4, seed=1),
        lambda: csr(3, 5, 2, 0.0),
    ),
    C(
        "segment_sums_written",
        segment_sums_written,
        lambda: (np.array([0, 2, 2, 5, 8]), line(8)),
        lambda: (np.array([0, 1, 3, 4, 6, 7]), line(7, seed=1)),
    ),
    C(
        "data_bound_negative",
        data_bound_negative,
        lambda: (line(8), np.array([3, -2, 0, 8, -8])),
        lambda: (line(5), np.array([1, 1, -1])),
    ),
    C(
        "levinson",
        levinson,
        lambda: positive(9) + np.r_[20.0, np.zeros(8)],
        lambda: positive(9, seed=3) + np.r_[30.0, np.zeros(8)],
    ),  # fmt: skip
    C("cholesky", cholesky, lambda: spd_matrix(6), lambda: spd_matrix(6, seed=2)),
    C("prefix_mean", prefix_mean, lambda: line(7), lambda: line(7, seed=4)),
    C("lu", lu, lambda: spd_matrix(6), lambda: spd_matrix(6, seed=3)),
    C("triangular_enumerate", triangular_enumerate, lambda: mat(5, 5), lambda: mat(5, 5, seed=1)),
    C("index_as_float", index_as_float, lambda: mat(), lambda: mat(seed=5)),
    C("float_from_index", float_from_index, lambda: line(3), lambda: line(3, seed=1)),
    C("index_float_as_size", index_float_as_size, lambda: line(3)),
    C("stencil", stencil, lambda: (line(), 0.1), lambda: (line(seed=1), 0.2)),
    # a NumPy scalar constant before the loop is carried like the graph value it becomes
    C("numpy_scalar_constant", numpy_scalar_constant, lambda: mat(), lambda: mat(seed=3)),
    C("enumerate_rows", enumerate_rows, lambda: mat(), lambda: mat(seed=3)),
    C("enumerate_start", enumerate_start, lambda: mat(), lambda: mat(seed=3)),
    C("rows", rows, lambda: mat(), lambda: mat(seed=2)),
    C("rows_reversed_view", rows_reversed_view, lambda: mat(cols=6), lambda: mat(cols=6, seed=4)),
    C("rows_of_product", rows_of_product, lambda: mat(), lambda: mat(seed=1)),
    C("rows_of_local_view", rows_of_local_view, lambda: mat(cols=6), lambda: mat(cols=6, seed=4)),
    C("zip_rows", zip_rows, lambda: (mat(), mat(seed=1)), lambda: (mat(seed=2), mat(seed=3))),
    C("zip_uneven", zip_uneven, lambda: (mat(), mat(rows=9, seed=1))),
    C("zip_range_rows", zip_range_rows, lambda: mat(), lambda: mat(seed=5)),
    C("range_step_arith", range_step_arith, lambda: line(20), lambda: line(20, seed=1)),
    C("range_step_index_2d", range_step_index_2d, lambda: mat(6, 6), lambda: mat(6, 6, 1)),
    C(
        "float32_index",
        float32_index,
        lambda: line(8, dtype=np.float32),
        lambda: line(8, seed=1, dtype=np.float32),
    ),
    C(
        "float32_enumerate",
        float32_enumerate,
        lambda: mat(dtype=np.float32),
        lambda: mat(seed=1, dtype=np.float32),
    ),
    C("int8_index", int8_index, lambda: np.arange(-5, 5, dtype=np.int8)),
    C("elements_of_vector", elements_of_vector, lambda: line(5), lambda: line(5, seed=1)),
    C("carried_numpy_scalar", carried_numpy_scalar, lambda: mat(), lambda: mat(seed=1)),
    C("swap_only", swap_only, lambda: (line(3), line(3, seed=1))),
    C("empty_body", empty_body, lambda: line(3)),
    C("two_loops", two_loops, lambda: line(3), lambda: line(3, seed=1)),
    C("swap_fib", swap_fib, lambda: (line(3), line(3, seed=1))),
    C("calls_helper", calls_helper, lambda: (line(4), mat()), lambda: (line(4, 1), mat(seed=1))),
    C("reads_global", reads_global, lambda: line(4), lambda: line(4, seed=1), setup=set_global),
    C("reads_closure", reads_closure, lambda: line(4), lambda: line(4, seed=1)),
    C("reads_closure_early", reads_closure_early, lambda: line(4), lambda: line(4, seed=1)),
    C("nested", nested, lambda: line(3), lambda: line(3, seed=1)),
    C("nested_rows", nested_rows, lambda: mat(), lambda: mat(seed=1)),
    C("results_used_after", results_used_after, lambda: mat(), lambda: mat(seed=1)),
    C("row_written_after", row_written_after, lambda: mat(), lambda: mat(seed=1)),
    C("body_temporaries_after", body_temporaries_after, lambda: line(5)),
    C("iterated_and_rebound", iterated_and_rebound, lambda: mat(4, 3), lambda: mat(4, 3, 1)),
    C("calls_loop", calls_loop, lambda: line(3), lambda: line(3, seed=1)),
    C("errstate_outside", errstate_outside, lambda: positive(), lambda: positive(seed=1)),
    C("breaks_around", breaks_around, lambda: line(3), lambda: line(3, seed=1)),
    C("range_of_shape", range_of_shape, lambda: line(6), lambda: line(6, seed=1)),
    C("index_carried", index_carried, lambda: line(6), lambda: line(6, seed=1)),
    C("neg_index", neg_index, lambda: line(5), lambda: line(5, seed=1)),
    C("matmul_stack", matmul_stack, lambda: mat(3, 4).reshape(3, 2, 2) + np.eye(2)),
    C("complex_rows", complex_rows, lambda: mat(3, 4) + 1j * mat(3, 4, seed=1)),
    C("float32_scalar_carried", float32_scalar_carried, lambda: line(3, dtype=np.float32)),
    C("int_floor_div", int_floor_div, lambda: np.arange(-6, 6), lambda: np.arange(6, 18)),
    C("bool_rows", bool_rows, lambda: mat() > 0.5, lambda: mat(seed=1) > 0.5),
    C("huge_index", huge_index, lambda: np.arange(3), lambda: np.arange(3) - 7),
    C("cube_nested", cube_nested, lambda: mat(6, 4).reshape(2, 3, 4)),
    C("loop_twice", loop_twice, lambda: line(3), lambda: line(3, seed=1)),
    C("zip_strict", zip_strict, lambda: (mat(), mat(seed=1))),
    C("zip_three", zip_three, lambda: (mat(), mat(8, seed=1))),
    C("zip_same_array", zip_same_array, lambda: mat(), lambda: mat(seed=1)),
    C("where_body", where_body, lambda: line(6), lambda: line(6, seed=1)),
    C("argsort_body", argsort_body, lambda: mat(), lambda: mat(seed=1)),
    C("reads_list_argument", reads_list_argument, lambda: (line(3), [line(3, seed=1)])),
    # On 3.11 the comprehension is a function of its own, reading ``row`` from a cell: "the body
    # runs STORE_DEREF", unrolled; inlined from 3.12 (PEP 709) and captured.
    C("comprehension_body", comprehension_body, lambda: mat(), lambda: mat(seed=1)),
    C("enumerate_after_next", enumerate_after_next, lambda: mat(), lambda: mat(seed=1)),
    C("zip_after_next", zip_after_next, lambda: (mat(), mat(seed=1))),
    C("index_arithmetic", index_arithmetic, lambda: line(4), lambda: line(4, seed=1)),
    C(
        "power_of_index",
        power_of_index,
        lambda: line(3),
        lambda: line(3, dtype=np.float32),
        lambda: np.arange(3),
    ),
    C(
        "reads_dict_argument",
        reads_dict_argument,
        lambda: (line(3), {"rate": 0.5, "w": line(3)}),
        lambda: (line(3), {"rate": 0.5, "w": line(3, seed=1)}),
    ),
    C("reads_global_float", reads_global_float, lambda: line(3), setup=set_scale),
    C("reads_rebound_cells", reads_rebound_cells, lambda: line(4), setup=rebind_cells),
    # 6 rows, 9 rows (a symbolic size), 1 and 0 rows (unrolled; UnboundLocalError), 6 rows.
    C(
        "rows_then_row",
        rows_then_row,
        lambda: mat(),
        lambda: mat(9, seed=1),
        lambda: mat(1, seed=2),
        lambda: mat(0),
        pattern="ABCDAB",
    ),
    C("swap_then_inplace", swap_then_inplace, lambda: (line(3), line(3, seed=1))),
    C("passed_through_then_inplace", passed_through_then_inplace, lambda: line(3)),
    C("last_row_then_inplace", last_row_then_inplace, lambda: mat(), lambda: mat(seed=1)),
    C("carried_views_then_write", carried_views_then_write, lambda: mat(3, 3)),
    C("enumerate_row_after", enumerate_row_after, lambda: mat(), lambda: mat(seed=1)),
    C("calls_loop_with_break", calls_loop_with_break, lambda: line(3), lambda: line(3, seed=1)),
    C("dt_arg", dt_arg, lambda: (line(4), 0.01), lambda: (line(4, 1), 0.02)),
    C("triangular_with_output", triangular_with_output, lambda: mat(), lambda: mat(seed=1)),
]

# Loop nodes per case (nested bodies included), and a bound on the ops of all graphs.
CAPTURED_SHAPE = {
    "triangular_with_output": (2, 3),
    "errstate_inside": (1, 2),
    "errstate_in_body": (1, 3),
    "errstate_raise_in_body": (1, 3),
    "user_with_in_body": (1, 2),
    "dtype_changes": (1, 4),
    "shape_changes": (1, 5),
    "zero_d_becomes_scalar": (1, 5),
    "slice_prefix": (1, 3),
    "csr_rows": (1, 3),
    "segment_sums_written": (1, 3),
    "data_bound_negative": (1, 3),
    "levinson": (1, 12),
    "cholesky": (2, 3),
    "prefix_mean": (1, 3),
    "triangular_enumerate": (2, 3),
    "lu": (3, 3),
    "index_as_float": (1, 3),
    "float_from_index": (1, 2),
    "index_float_as_size": (1, 2),
    "numpy_scalar_constant": (1, 2),
    "method_loop": (1, 2),
    "reads_attribute": (1, 2),
    "reads_attribute_resized": (1, 2),
    "calls_helper_reading_global": (1, 2),
    "inplace_body": (1, 2),
    "fresh_array_written": (1, 2),
    "setitem_body": (1, 1),
    "loop_variable_bound_before": (1, 2),
    "index_after": (1, 2),
    "stencil": (1, 4),
    "enumerate_rows": (1, 4),
    "enumerate_start": (1, 4),
    "rows": (1, 4),
    "rows_of_local_view": (1, 5),
    "rows_reversed_view": (1, 5),
    "rows_of_product": (1, 5),
    "reads_closure": (1, 3),
    "zip_rows": (1, 4),
    "zip_uneven": (1, 4),
    "zip_range_rows": (1, 4),
    "range_step_arith": (1, 4),
    "range_step_index_2d": (1, 4),
    "float32_index": (1, 4),
    "float32_enumerate": (1, 4),
    "int8_index": (1, 3),
    "elements_of_vector": (1, 3),
    "carried_numpy_scalar": (1, 5),
    "swap_only": (1, 3),
    "empty_body": (0, 1),  # a loop node with no outputs or effects is dead code: removed
    "two_loops": (2, 5),
    "swap_fib": (1, 4),
    "calls_helper": (1, 3),
    "reads_global": (1, 3),
    "reads_closure_early": (1, 3),
    "nested": (2, 3),
    "nested_rows": (2, 4),
    "results_used_after": (1, 10),
    "row_written_after": (1, 6),
    "body_temporaries_after": (1, 4),
    "iterated_and_rebound": (1, 4),
    "calls_loop": (1, 4),
    "errstate_outside": (1, 3),
    "breaks_around": (1, 3),
    "range_of_shape": (1, 4),
    "dt_arg": (1, 3),
    "swap_then_inplace": (1, 5),
    "passed_through_then_inplace": (1, 5),
    "last_row_then_inplace": (1, 6),
    "carried_views_then_write": (1, 5),
    "enumerate_row_after": (1, 5),
    "calls_loop_with_break": (1, 6),
    "enumerate_after_next": (1, 4),
    "zip_after_next": (1, 6),
    "index_arithmetic": (1, 4),
    "power_of_index": (1, 4),
    "reads_dict_argument": (1, 4),
    "reads_global_float": (1, 3),
    "reads_rebound_cells": (1, 3),
    "rows_then_row": (1, 5),
    "cube_nested": (2, 4),
    "loop_twice": (2, 6),
    "zip_strict": (1, 4),
    "zip_three": (1, 4),
    "zip_same_array": (1, 5),
    "where_body": (1, 3),
    "argsort_body": (1, 4),
    "reads_list_argument": (1, 3),
    "comprehension_body": (1, 4) if sys.version_info >= (3, 12) else (0, None),
    "index_carried": (1, 3),
    "neg_index": (1, 4),
    "matmul_stack": (1, 4),
    "complex_rows": (1, 4),
    "float32_scalar_carried": (1, 5),
    "int_floor_div": (1, 4),
    "bool_rows": (1, 4),
    "huge_index": (1, 3),
    "int_counter": (1, 3),
    "counter_step_down_as_size": (1, 5),
    "counter_read_in_body": (1, 3),
    "counter_as_index": (1, 4),
    "counter_doubling": (1, 3),
    "counter_doubling_as_size": (1, 3),
    "counter_over_argument_trips": (1, 6),
    "enumerate_zip": (1, 4),
    "python_float_carried": (1, 3),
    "time_as_size": (1, 6),
    "time_stepping": (1, 3),
}


# --- loops that are unrolled (and must stay right) ----------------------------------------------


def with_break(x):
    for i in range(10):
        x = x + 1
        if i == 5:
            break
    return x


def with_return(x):
    for i in range(10):
        x = x * 0.5 + 1
        if i == 4:
            return x, i
    return x, -1


def continue_on_index(x):
    for i in range(6):
        if i % 2:
            continue
        x = x * 0.5 + i
    return x


def branch_on_index(x):
    for i in range(6):
        if i % 2:
            x = x + i
        else:
            x = x * 0.5
    return x


def int_counter(x):
    n = 0
    for _ in range(10):
        x = x + 1
        n = n + 1
    return x, n


# Int counters are carried as ints of the graph; one moved by a constant step is a Python int
# after the loop (known from the trip count), usable as a size without a break.
def counter_step_down_as_size(x):
    n = 30
    for i in range(6):
        x = x * 0.5 + i
        n -= 3
    return x, n, np.zeros(n)


def counter_read_in_body(x):
    n = 1
    for _ in range(5):
        x = x + n  # an int of the graph inside the body
        n = 2 + n
    return x, n


def counter_as_index(x):
    out = np.zeros(6)
    n = 0
    for i in range(6):
        out[n] = x[i] * 2
        n += 1
    return out, n


def counter_doubling(x):
    n = 1
    for _ in range(5):
        x = x + 1
        n = n * 2  # not a constant step: after the loop an int known when it runs
    return x, n


def counter_doubling_as_size(x):
    n = 1
    for _ in range(4):
        x = x + 1
        n = n * 2
    return x, np.zeros(n)  # needed as a number: the graph breaks there


def time_stepping(u, steps):
    t = 0.0  # a Python float carried as a float of the graph
    for _ in range(steps):
        u = u + 0.01 * np.sin(t) * u
        t += 0.01
    return u, t


def time_as_size(u):
    t = 0.0
    for _ in range(10):
        u = u * 0.9
        t += 0.5
    return u * t, np.zeros(int(t))  # needed as a number: the graph breaks there


def counter_reset_to_constant(x):
    n = 0
    for _ in range(5):
        x = x + n
        n = 5  # read, then set to a constant: not carried (unrolled)
    return x, n


def counter_over_argument_trips(x, steps):
    n = 0
    for _ in range(steps):
        x = x * 0.5
        n += 2
    return x, n * 3  # n follows the trip count (a graph input from the second call)


def index_after(x):
    for i in range(5):
        x = x * 0.5 + i
    return x, i


def appends(x):
    out = []
    for i in range(5):
        out.append(x * i)
    return out


def setitem_body(a):
    for i in range(5):
        a[i] = a[i] * 2 + a[i + 1]
    return a


def inplace_body(a):
    for _ in range(4):
        a += 1
    return a


def next_outer(x):
    it = iter(x)
    acc = np.zeros(())
    for _ in range(3):
        acc = acc * 0.5 + next(it)
    return acc


def one_iteration(x):
    for i in range(1):
        x = x * 0.5 + i
    return x, i


def zero_iterations(x):
    for i in range(0):
        x = x * 0.5 + i
    return x


def zero_rows(m):
    acc = np.zeros(m.shape[1])
    for row in m:
        acc = acc + row
    return acc


def reversed_range(x):
    for i in reversed(range(5)):
        x = x * i + 1
    return x


def list_of_arrays(x):
    for a in [x, x + 1, x * 2]:
        x = x * a - 1
    return x


def enumerate_zip(a, b):
    acc = np.zeros(a.shape[1])
    for i, (x, y) in enumerate(zip(a, b)):
        acc = acc + x * y * i
    return acc


def inner_depends_on_outer(x):
    for i in range(4):
        for j in range(i):
            x = x * 0.5 + j
    return x


def python_float_carried(x):
    dt = 1.0
    for _ in range(5):
        x = x + dt
        dt = dt * 0.5
    return x, dt


def loop_variable_bound_before(x):
    i = -1
    for i in range(5):
        x = x * 0.5 + i
    return x


def cases(builders, *fns, **options) -> list:
    """One case per function, named after it, all called with the same builders."""
    return [C(fn.__name__, fn, *builders, **options) for fn in fns]


LINE3 = (lambda: line(3), lambda: line(3, seed=1))
LINE8 = (lambda: line(8), lambda: line(8, seed=1))
MAT = (lambda: mat(), lambda: mat(seed=1))

# Int counters (carried as ints of the graph), and enumerate of zip.
CAPTURED += [
    *cases(LINE3, int_counter, counter_step_down_as_size, counter_read_in_body,
           counter_doubling, counter_doubling_as_size),
    *cases((lambda: line(6), lambda: line(6, seed=1)), counter_as_index),
    C("counter_over_argument_trips", counter_over_argument_trips, lambda: (line(3), 5),
      lambda: (line(3), 7), lambda: (line(3), 9), pattern="ABCABC"),
    C("enumerate_zip", enumerate_zip, lambda: (mat(), mat(seed=1))),
    *cases(LINE3, python_float_carried, time_as_size),
    C("time_stepping", time_stepping, lambda: (line(3), 20), lambda: (line(3), 30),
      lambda: (line(3), 1), pattern="ABCAB"),
]  # fmt: skip

# The loop variable: bound before the loop, and read after it (it keeps the last item);
# bodies writing into arrays (the loop node writes them at run time, as eager code does).
CAPTURED += [
    C("loop_variable_bound_before", loop_variable_bound_before, lambda: line(3)),
    *cases(LINE3, index_after, inplace_body, fresh_array_written),
    *cases(LINE8, setitem_body),
    # Inputs first read in the body (attributes, a global read by an inlined helper): graph
    # inputs of the frame, passed to the loop node.
    *cases(LINE3, method_loop),
    C(
        "reads_attribute",
        reads_attribute,
        lambda: (line(3), Model()),
        lambda: (line(3, seed=1), Model(seed=1)),
    ),
    C(
        "calls_helper_reading_global",
        calls_helper_reading_global,
        lambda: line(4),
        lambda: line(4, seed=1),
        setup=set_global,
    ),
    # The attribute's size changes: its dims become symbolic, in the frame's graph.
    C(
        "reads_attribute_resized",
        reads_attribute,
        lambda: (line(3), Model()),
        lambda: (line(5, seed=1), Model(1, 5)),
        lambda: (line(7, seed=2), Model(2, 7)),
        pattern="ABCABC",
    ),
]

UNROLLED = [
    *cases(LINE3, with_break, with_return, continue_on_index, branch_on_index,
           appends, one_iteration, zero_iterations, reversed_range, list_of_arrays,
           del_in_body, counter_reset_to_constant,
           while_counter, print_in_body, graph_break_in_body),
    # a window's length follows its bound at the array's end: the sum carried varies
    *cases(LINE8, slice_window, next_outer, prefix_carried, prefix_length_as_int),
    C("segment_max", segment_max, lambda: (np.array([0, 2, 2, 5]), line(5)),
      lambda: (np.array([0, 1, 4]), line(4, seed=1))),
    C("data_bound_escapes", data_bound_escapes, lambda: (np.array([0, 2, 2, 5]), line(5)),
      lambda: (np.array([0, 3, 4]), line(4, seed=1))),
    *cases(MAT, enumerate_after_break),
    C("zero_rows", zero_rows, lambda: mat(0, 3), lambda: np.zeros((0, 3))),
    C("tuple_carried", tuple_carried, lambda: line(2), lambda: line(2, seed=1)),
    C("int_power_of_index", int_power_of_index, lambda: np.arange(3, dtype=np.int8)),
    # a carried array written in place whose next value is another argument's memory (these
    # were wrong: the loop node wrote memory it had not announced, and the trace's run of the
    # loop wrote the caller's array)
    C("inplace_then_view_of_read", inplace_then_view_of_read, lambda: (line(4), mat(3, 4))),
    C("swapped_buffers_written", swapped_buffers_written, lambda: (line(6), line(6, seed=1))),
    C("swapped_buffers_while", swapped_buffers_while, lambda: (line(6), line(6))),
    C("random_body", random_body, lambda: line(3), setup=seed_random),
    # The outer body uses i as a size: unrolled; its inner loops of 2 and 3 iterations are
    # loop nodes (see UNROLLED_LOOPS).
    *cases(LINE3, inner_depends_on_outer),
]  # fmt: skip

# Loop nodes expected where an unrolled loop sits beside or inside a captured one; and
# prefix_length_as_int's branch on a size (`len(x[:i]) > 1`, a bool of the graph) is a cond
# node of one loop node (it was unrolled while the branch pinned the index).
UNROLLED_LOOPS: dict[str, int] = {"inner_depends_on_outer": 2, "prefix_length_as_int": 1}


@pytest.mark.parametrize("case", CAPTURED, ids=case_id)
@pytest.mark.parametrize("backend", ["eager", "auto"])
def test_captured_is_one_loop_node(case, backend):
    loops, max_ops = CAPTURED_SHAPE[case.id]
    if case.setup is not None:
        case.setup("A")
    assert_loops(case.fn, case.builders[0], loops, max_ops, backend)


@pytest.mark.parametrize("case", UNROLLED, ids=case_id)
def test_unrolled_has_no_loop_node(case):
    if case.setup is not None:
        case.setup("A")
    assert_loops(case.fn, case.builders[0], UNROLLED_LOOPS.get(case.id, 0))


def test_cases_are_pinned():
    assert set(CAPTURED_SHAPE) == {case.id for case in CAPTURED}
    assert set(UNROLLED_LOOPS) <= {case.id for case in UNROLLED}


def test_thousand_iterations_is_a_handful_of_ops():
    targets, ops, code = graph_shape(stencil_1000, lambda: line())
    assert len(targets) == 1 and ops <= 4, code
    assert "1000 iterations" in tc.explain(stencil_1000)(line()).loops[0].describe()
    assert targets[0].body.op_count() <= 10, targets[0].body.python_code()
    check(stencil_1000, lambda: line(), lambda: line(seed=1))


def test_fullgraph_stencil():
    check(stencil, lambda: (line(), 0.1), lambda: (line(seed=1), 0.1), fullgraph=True)


# --- every case, eagerly and compiled -----------------------------------------------------------

ALL = CAPTURED + UNROLLED


test_eager_backend, test_default_backend, test_cpu_backend = on_every_backend(ALL)


# Loops whose trace run is not replayed on the first call: their bodies warn (the warnings
# belong to the real run), or give back a view of an argument (a copy would not share memory).
NOT_REPLAYED = {"errstate_inside", "errstate_in_body", "carried_views_then_write"}


@pytest.mark.parametrize("case", CAPTURED, ids=case_id)
def test_first_call_replays_the_trace_run(case, replays):
    case.run()
    if case.id in NOT_REPLAYED:
        assert True not in replays
    elif CAPTURED_SHAPE[case.id][0] and case.id != "empty_body":  # empty: the graph drops it
        assert replays and replays[0], "the first call ran the loop again"


def test_peeled_first_iteration_is_explained():
    explained = tc.explain(dtype_changes)(mat())
    (record,) = explained.loops
    assert record.captured and record.trip_count == 5, record
    assert "after its first iteration, unrolled: acc changes from 0" in record.describe()


def test_breaks_around_a_loop_node():
    explained = tc.explain(breaks_around)(line(3))
    assert explained.graph_break_count == 2, explained
    with_loop = [g for g in explained.graphs if loop_targets(g)]
    assert len(with_loop) == 1 and with_loop[0].op_count() <= 3, explained


CASES = ALL  # tests/triton runs them again on the triton backend
