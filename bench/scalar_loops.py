"""Per-element loops: NumPy code written a scalar at a time, as it is before anyone vectorizes it
(or where it cannot be: recurrences, escape loops, data-dependent row bounds).

Each kernel takes arrays and sizes from its ``setup(n)`` (a fixed seed), returns arrays or
numbers, and never updates its arguments. Every one is also valid numba source (``np`` a module
global): ``cpu_loops.py`` compiles the same functions with ``numba.njit`` to compare.
"""

from __future__ import annotations

import numpy as np
from loop_kernels import Kernel


def smooth3(v):
    """A three-point moving average, element by element."""
    out = np.empty_like(v)
    out[0] = v[0]
    out[-1] = v[-1]
    for i in range(1, v.shape[0] - 1):
        out[i] = (v[i - 1] + v[i] + v[i + 1]) / 3
    return out


def low_pass(x, alpha):
    """A first-order IIR filter: each output depends on the previous one."""
    y = np.empty_like(x)
    y[0] = x[0]
    for i in range(1, x.shape[0]):
        y[i] = alpha * y[i - 1] + (1.0 - alpha) * x[i]
    return y


def thomas(a, b, c, d):
    """A tridiagonal solve (Thomas' algorithm): a forward sweep, then back substitution."""
    n = d.shape[0]
    cp = np.empty(n)
    dp = np.empty(n)
    cp[0] = c[0] / b[0]
    dp[0] = d[0] / b[0]
    for i in range(1, n):
        m = b[i] - a[i] * cp[i - 1]
        cp[i] = c[i] / m
        dp[i] = (d[i] - a[i] * dp[i - 1]) / m
    x = np.empty(n)
    x[n - 1] = dp[n - 1]
    for i in range(n - 2, -1, -1):
        x[i] = dp[i] - cp[i] * x[i + 1]
    return x


def stencil_2d(u):
    """A five-point Laplacian, a grid point at a time (two nested loops)."""
    out = np.zeros_like(u)
    for i in range(1, u.shape[0] - 1):
        for j in range(1, u.shape[1] - 1):
            out[i, j] = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j]
    return out


def escape_counts(re, im, maxiter):
    """Mandelbrot escape time, one point at a time (a while loop per point)."""
    counts = np.zeros(re.shape[0], dtype=np.int64)
    for p in range(re.shape[0]):
        zr = 0.0
        zi = 0.0
        n = 0
        while zr * zr + zi * zi <= 4.0 and n < maxiter:
            zr, zi = zr * zr - zi * zi + re[p], 2.0 * zr * zi + im[p]
            n += 1
        counts[p] = n
    return counts


def escape_counted(re, im, maxiter):
    """The same escape time, its counter tested first (a comparison of the loop's ints)."""
    counts = np.zeros(re.shape[0], dtype=np.int64)
    for p in range(re.shape[0]):
        zr = 0.0
        zi = 0.0
        n = 0
        while n < maxiter and zr * zr + zi * zi <= 4.0:
            zr, zi = zr * zr - zi * zi + re[p], 2.0 * zr * zi + im[p]
            n += 1
        counts[p] = n
    return counts


def histogram(samples, weights, nbins):
    """A weighted histogram of values in [0, 1), a sample at a time."""
    hist = np.zeros(nbins)
    for i in range(samples.shape[0]):
        b = int(samples[i] * nbins)
        hist[b] += weights[i]
    return hist


def csr_matvec(indptr, indices, values, x):
    """``y = A @ x`` for A in CSR form, an element at a time."""
    y = np.zeros(indptr.shape[0] - 1)
    for i in range(indptr.shape[0] - 1):
        total = 0.0
        for j in range(indptr[i], indptr[i + 1]):
            total += values[j] * x[indices[j]]
        y[i] = total
    return y


def running_max(x):
    """The maximum so far, element by element (NaN-free data)."""
    out = np.empty_like(x)
    best = x[0]
    for i in range(x.shape[0]):
        if x[i] > best:
            best = x[i]
        out[i] = best
    return out


def crc16(data):
    """CRC-16 (the X.25 polynomial, reflected) of bytes: a branch on each bit (NPBench's crc16)."""
    crc = 0xFFFF
    for b in data:
        cur_byte = 0xFF & b
        for _ in range(8):
            if (crc & 0x0001) ^ (cur_byte & 0x0001):
                crc = (crc >> 1) ^ 0x8408
            else:
                crc >>= 1
            cur_byte >>= 1
    return crc


def count_above(x, threshold):
    """How many elements exceed ``threshold``, counted in a branch."""
    n = 0
    for i in range(x.shape[0]):
        if x[i] > threshold:
            n += 1
    return n


def soft_clip(x):
    """Values over 1 folded back, the others doubled: a branch per element, each side a store."""
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        if x[i] > 1.0:
            out[i] = 2.0 - x[i]
        else:
            out[i] = 2.0 * x[i]
    return out


def nussinov(seq):
    """NPBench's nussinov (RNA folding): an O(n^3) dynamic programme of Python ``max`` over its
    own table, behind branches on the indices; the inner loops run no iteration at first."""
    n = seq.shape[0]
    table = np.zeros((n, n), np.int32)
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n):
            if j - 1 >= 0:
                table[i, j] = max(table[i, j], table[i, j - 1])
            if i + 1 < n:
                table[i, j] = max(table[i, j], table[i + 1, j])
            if j - 1 >= 0 and i + 1 < n:
                if i < j - 1:
                    pair = 1 if seq[i] + seq[j] == 3 else 0
                    table[i, j] = max(table[i, j], table[i + 1, j - 1] + pair)
                else:
                    table[i, j] = max(table[i, j], table[i + 1, j - 1])
            for k in range(i + 1, j):
                table[i, j] = max(table[i, j], table[i, k] + table[k + 1, j])
    return table


def _rng(seed: int):
    return np.random.default_rng(seed)


def setup_vector(n: int) -> tuple:
    return (_rng(21).standard_normal(n),)


def setup_low_pass(n: int) -> tuple:
    return _rng(22).standard_normal(n), 0.9


def setup_thomas(n: int) -> tuple:
    """A diagonally dominant tridiagonal system of ``n`` unknowns."""
    rng = _rng(26)
    return rng.random(n), 4.0 + rng.random(n), rng.random(n), rng.standard_normal(n)


def setup_grid(n: int) -> tuple:
    return (_rng(27).standard_normal((n, n)),)


def setup_bytes(n: int) -> tuple:
    return (_rng(28).integers(0, 256, n).astype(np.uint8),)


def setup_bases(n: int) -> tuple:
    return (_rng(30).integers(0, 4, n).astype(np.int32),)


def setup_threshold(n: int) -> tuple:
    return _rng(29).standard_normal(n), 0.5


def setup_escape(n: int) -> tuple:
    rng = _rng(23)
    return rng.uniform(-2.0, 0.6, n), rng.uniform(-1.2, 1.2, n), 100


def setup_histogram(n: int) -> tuple:
    rng = _rng(24)
    return rng.random(n), rng.random(n), 64


def setup_csr(n: int) -> tuple:
    """An ``n`` x ``n`` matrix with eight non-zeros a row."""
    rng = _rng(25)
    indptr = np.arange(0, 8 * n + 1, 8, dtype=np.int64)
    indices = rng.integers(0, n, 8 * n).astype(np.int64)
    return indptr, indices, rng.random(8 * n), rng.random(n)


SCALAR_KERNELS = [
    Kernel("smooth3", smooth3, setup_vector, 100_000, 1000, "elements"),
    Kernel("low_pass", low_pass, setup_low_pass, 100_000, 1000, "elements"),
    Kernel("thomas", thomas, setup_thomas, 100_000, 1000, "unknowns"),
    Kernel("stencil_2d", stencil_2d, setup_grid, 300, 30, "rows (n x n grid)"),
    # a branch on data per element: a cond node in the loop's body (issue 23)
    Kernel("running_max", running_max, setup_vector, 100_000, 1000, "elements"),
    Kernel("crc16", crc16, setup_bytes, 10_000, 200, "bytes"),
    Kernel("count_above", count_above, setup_threshold, 100_000, 1000, "elements"),
    Kernel("soft_clip", soft_clip, setup_vector, 100_000, 1000, "elements"),
    Kernel("nussinov", nussinov, setup_bases, 200, 20, "bases (n^3 / 6 steps)"),
    # a while loop on `a and b` (issue 23), int() of data, a range bound from data
    Kernel("escape", escape_counts, setup_escape, 10_000, 200, "points (100 its)"),
    Kernel("escape_counted", escape_counted, setup_escape, 10_000, 200, "points (100 its)"),
    Kernel("histogram", histogram, setup_histogram, 100_000, 1000, "samples"),
    Kernel("csr_matvec", csr_matvec, setup_csr, 20_000, 200, "rows (8 nnz)"),
]
