"""The helpers every module of native loops defines before its loop functions: what numba
would do otherwise than Python and NumPy (Python's ZeroDivisionError, which numba with NumPy's
error model would not raise; a Python int past 64 bits; ``int()`` of a float; an index read
from data; a float converted to an integer type), and NumPy's calls numba lacks or runs otherwise (``np.add.at``, float dot
products, slices assigned). A text, formatted with numba's options (``{options}``: its disk
cache) into each module (`native_loops`).
"""

PRELUDE = """\
import numba
import numpy as np

from tcompile.backend.cpu.pairwise import pairwise_sum


@numba.njit(inline="always", {options})
def _nonzero(divisor):
    if divisor == 0:
        raise ZeroDivisionError("division by zero")
    return divisor


# Checked in floating point: LLVM may assume an int64 product or sum never overflows and fold
# an integer check away. A result near 2**63 is refused a little early (the loop then runs as
# Python, exactly).
@numba.njit(inline="always", {options})
def _int_add(a, b):
    if abs(float(a) + float(b)) >= 9.2e18:
        raise OverflowError("a Python int outgrew 64 bits")
    return a + b


@numba.njit(inline="always", {options})
def _int_sub(a, b):
    if abs(float(a) - float(b)) >= 9.2e18:
        raise OverflowError("a Python int outgrew 64 bits")
    return a - b


@numba.njit(inline="always", {options})
def _int_mul(a, b):
    if abs(float(a) * float(b)) >= 9.2e18:
        raise OverflowError("a Python int outgrew 64 bits")
    return a * b


# int() of a float as Python's: NaN raises ValueError, infinity OverflowError; a value past
# int64 raises OverflowError too (Python's int would grow: the loop then runs as Python). One
# comparison on the way through (NaN fails it too): two made a histogram's loop 1.2x slower.
@numba.njit(inline="always", {options})
def _int_of(x):
    if not abs(x) < 9.2e18:
        if x != x:
            raise ValueError("cannot convert float NaN to integer")
        raise OverflowError("a float past int64 converted to int")
    return int(x)


# A float converted to an integer type: NumPy's value past the bounds (NaN, infinities, 1e30)
# is the machine's, numba's undefined: there the loop runs as Python (`scalar_ops.cast_bounds`).
@numba.njit(inline="always", {options})
def _within(x, low, high):
    if not (x > low and x < high):
        raise OverflowError("a float outside the integer type it is converted to")
    return x


# ... each element of an array, where numba's astype converts (the bounds of the type itself).
@numba.njit({options})
def _all_within(a, low, high):
    for x in a.flat:
        if not (x > low and x < high):
            raise OverflowError("a float outside the integer type it is converted to")
    return a


# An index read from data (or a while loop's), checked where it is used: numba's boundscheck
# would check every access of the function, those checked once per call (`index_checks`) too.
@numba.njit(inline="always", {options})
def _at(index, size):
    if index < -size or index >= size:
        raise IndexError("index out of bounds")
    return index


# The indices ``c * k + m * term + offset`` (offset in [low, high]) of a loop inside the loop,
# for each of its counters ``k``: checked before it runs (`index_checks.SpanCheck`). Values
# past 2**48 index no array, and keep the int64 arithmetic here exact.
@numba.njit(inline="always", {options})
def _span_at(c, first, count, m, term, low, high, size):
    if count > 0:
        if abs(first) >= 2**48 or count >= 2**48 or abs(term) >= 2**48:
            raise IndexError("index out of bounds")
        a, b = c * first + m * term, c * (first + count - 1) + m * term
        if a > b:
            a, b = b, a
        if a + low < -size or b + high >= size:
            raise IndexError("index out of bounds")


# np.add.at on a vector, as NumPy runs it: each value added where its index points, in order
# (a repeated index adds up), an index out of range raising IndexError.
@numba.njit({options})
def _add_at(target, indices, values):
    size = target.shape[0]
    for j in range(indices.shape[0]):
        i = indices[j]
        if i < -size or i >= size:
            raise IndexError("index out of bounds")
        target[i] += values[j]


# np.dot, @, np.inner, np.vdot of two float vectors of one dtype. NumPy calls BLAS, whose order
# of additions no loop reproduces bit for bit (it differs between BLAS builds and CPUs): these
# are floats within tolerance, added in 8 partial sums as BLAS kernels do (unsigned positions:
# no negative-index wrap-around; 1.5x an in-order loop on 1000 floats). numba's np.dot needs
# SciPy. Lengths that differ raise, and the frame runs as NumPy, which raises its own error.
@numba.njit({options})
def _dot(a, b):
    n = a.shape[0]
    if b.shape[0] != n:
        raise ValueError("shapes not aligned")
    r0 = r1 = r2 = r3 = r4 = r5 = r6 = r7 = a.dtype.type(0)
    i, m = 0, n - n % 8
    while i < m:
        r0, r1, r2, r3 = (
            r0 + a[np.uint64(i)] * b[np.uint64(i)],
            r1 + a[np.uint64(i + 1)] * b[np.uint64(i + 1)],
            r2 + a[np.uint64(i + 2)] * b[np.uint64(i + 2)],
            r3 + a[np.uint64(i + 3)] * b[np.uint64(i + 3)],
        )
        r4, r5, r6, r7 = (
            r4 + a[np.uint64(i + 4)] * b[np.uint64(i + 4)],
            r5 + a[np.uint64(i + 5)] * b[np.uint64(i + 5)],
            r6 + a[np.uint64(i + 6)] * b[np.uint64(i + 6)],
            r7 + a[np.uint64(i + 7)] * b[np.uint64(i + 7)],
        )
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res = res + a[np.uint64(i)] * b[np.uint64(i)]
        i += 1
    return res


# np.sum of a float vector, bit for bit: NumPy adds its pairwise sum (`pairwise`) to the
# reduction's start, +0.0 (a sum of -0.0s is +0.0). np.mean divides it by the length as
# NumPy's does, in float64 (a float32 mean is rounded twice), then casts it back.
@numba.njit(inline="always", {options})
def _sum(v):
    zero = v.dtype.type(0)
    return zero + pairwise_sum(v, 0, v.shape[0], -zero)


@numba.njit(inline="always", {options})
def _mean(v):
    n = v.shape[0]
    if n == 0:  # NumPy warns and gives NaN: the frame runs as NumPy
        raise ZeroDivisionError("the mean of an empty vector")
    return v.dtype.type(_sum(v) / n)


# a[slices] = array of a's dtype: element by element from the value broadcast to the slice's
# shape, copied first where the two overlap (``a[1:] = a[:-1]``). numba's own slice assignment
# compiles its broadcasting error messages (unicode joins): 3.4 s of a fresh machine's first
# call, against 0.6 s for this.
@numba.njit({options})
def _span(a):
    low = high = a.ctypes.data
    for k in range(a.ndim):
        step = (a.shape[k] - 1) * a.strides[k]
        if step < 0:
            low += step
        else:
            high += step
    return low, high + a.itemsize


@numba.njit({options})
def _assign(target, value):
    source = np.broadcast_to(value, target.shape)
    if target.size == 0:
        return
    low, high = _span(target)
    start, stop = _span(source)
    if start < high and low < stop:
        source = source.copy()
    for i in np.ndindex(target.shape):
        target[i] = source[i]


# A fused nest's fresh array stored into a view of its dims (`native_source`): it shares no
# memory with the view; shapes that differ (NumPy would broadcast or raise) make the frame run
# as NumPy. 1/4 of `_assign`'s compile time (its np.broadcast_to).
@numba.njit({options})
def _copy_into(target, value):
    if target.shape != value.shape:
        raise ValueError("shapes differ")
    for i in np.ndindex(target.shape):
        target[i] = value[i]


# ... into a row: a loop over positions (np.ndindex's tuples cost a row of 8 as much again).
@numba.njit({options})
def _copy_into1(target, value):
    if target.shape != value.shape:
        raise ValueError("shapes differ")
    for i in range(target.shape[0]):
        target[i] = value[i]


# An array a masked store's helper (`native_masked`) reads while it writes ``out``: itself where
# it is ``out`` element for element or shares no memory with it, else a copy (NumPy's ufuncs read
# overlapping operands as if copied first).
@numba.njit({options})
def _apart(a, out):
    if a.size == 0 or out.size == 0:
        return a
    low, high = _span(out)
    start, stop = _span(a)
    if start < high and low < stop:
        if a.ndim != out.ndim or a.ctypes.data != out.ctypes.data:
            return a.copy()
        for k in range(a.ndim):
            if a.shape[k] != out.shape[k] or a.strides[k] != out.strides[k]:
                return a.copy()
    return a
"""
