"""NumPy's pairwise summation (numpy/_core/src/umath/loops_utils.h.src) for the kernels' float
sums, bit for bit: blocks of at most 128 summed in 8 partial sums, halves (cut at a multiple
of 8) added as a tree, in the array's own float type.

One module for every kernel: numba compiles (and caches on disk) these functions once per
float type, where a copy in each kernel's source cost every new kernel 2 s of compile. The
tree is walked with a stack of our own (numba's disk cache breaks recursion); positions are
unsigned (no negative-index wrap-around: LLVM vectorizes the partial sums, 1.9x). NumPy's
reduction adds the pairwise sum to its start, +0.0 (so a sum of -0.0s is +0.0)::

    np.float32(0.0) + pairwise_sum(row, 0, n, np.float32(-0.0))  # np.sum(row[:n]), float32
"""

from __future__ import annotations

import numpy as np
from numba import njit

BLOCK = 128


@njit(cache=True, nogil=True)
def _block(a, start, n, zero):
    """``a[start:start + n]``'s sum as NumPy's pairwise loop adds a block (``zero``: -0.0 of
    ``a``'s type)."""
    if n < 8:
        res = zero
        for i in range(start, start + n):
            res = res + a[np.uint64(i)]
        return res
    r0, r1, r2, r3 = (
        a[np.uint64(start)],
        a[np.uint64(start + 1)],
        a[np.uint64(start + 2)],
        a[np.uint64(start + 3)],
    )
    r4, r5, r6, r7 = (
        a[np.uint64(start + 4)],
        a[np.uint64(start + 5)],
        a[np.uint64(start + 6)],
        a[np.uint64(start + 7)],
    )
    i = 8
    while i < n - n % 8:
        j = start + i
        r0, r1, r2, r3 = (
            r0 + a[np.uint64(j)],
            r1 + a[np.uint64(j + 1)],
            r2 + a[np.uint64(j + 2)],
            r3 + a[np.uint64(j + 3)],
        )
        r4, r5, r6, r7 = (
            r4 + a[np.uint64(j + 4)],
            r5 + a[np.uint64(j + 5)],
            r6 + a[np.uint64(j + 6)],
            r7 + a[np.uint64(j + 7)],
        )
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res = res + a[np.uint64(start + i)]
        i += 1
    return res


@njit(cache=True, nogil=True)
def pairwise_sum(a, start, n, zero):
    """``a[start:start + n]``'s sum in NumPy's pairwise order (``zero``: -0.0 of ``a``'s
    type, the sum of nothing)."""
    if n <= BLOCK:
        return _block(a, start, n, zero)
    starts = np.empty(64, np.int64)
    sizes = np.empty(64, np.int64)
    state = np.empty(64, np.int64)  # 0: new, 1: left half running, 2: right half running
    left = np.empty(64, a.dtype)
    top = 0
    starts[0], sizes[0], state[0] = start, n, 0
    while True:
        m = sizes[top]
        if m > BLOCK:  # descend into the left half
            half = m // 2
            half -= half % 8
            state[top] = 1
            top += 1
            starts[top], sizes[top], state[top] = starts[top - 1], half, 0
            continue
        value = _block(a, starts[top], m, zero)
        while True:  # hand the value up until a right half remains to be done
            if top == 0:
                return value
            top -= 1
            if state[top] == 1:
                left[top] = value
                state[top] = 2
                half = sizes[top] // 2
                half -= half % 8
                top += 1
                starts[top], sizes[top], state[top] = (
                    starts[top - 1] + half,
                    sizes[top - 1] - half,
                    0,
                )
                break
            value = left[top] + value
