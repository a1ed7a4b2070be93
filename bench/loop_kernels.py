"""The corpus of ``loops.py``: scientific NumPy loops, written as a user writes them.

Each kernel is a plain NumPy function (``np`` a module global) whose loop runs a trip count
that a ``setup(trips)`` function chooses: the rows of a matrix, the steps of a recursion or of a
time loop, the iterations a ``while`` loop needs to converge. Kernels return arrays (or tuples
of arrays and numbers) and never update their arguments, so that repeated calls compute the
same thing; every input comes from a fixed seed.

``KERNELS`` lists them with their trip count in the full run (``trips``, the sizes of issue 11
and NPBench's "S" presets) and in a smoke run (``quick_trips``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

# -- (a) a loop over a matrix's rows -------------------------------------------------------------


def row_normalise(mat):
    """``for i, row in enumerate(mat)``: standardise each row, and accumulate a weighted sum."""
    out = np.empty_like(mat)
    total = np.zeros(mat.shape[1])
    for i, row in enumerate(mat):
        centred = row - row.mean()
        scaled = centred / (np.sqrt(np.mean(centred * centred)) + 1e-8)
        out[i] = scaled
        total = total + scaled * (1.0 / (i + 1))
    return out, total


def setup_rows(trips: int) -> tuple:
    return (np.random.default_rng(11).standard_normal((trips, 8)),)


# -- (b) Levinson-Durbin: a slice that grows with the step ---------------------------------------


def levinson_durbin(r):
    """Solve the Yule-Walker (symmetric Toeplitz) system for the autocorrelation ``r[0..n]``.

    Step k reads the first k coefficients (a slice as long as the step: the body's shapes
    change every iteration). Returns the prediction polynomial ``a`` (``a[0] == 1``) and the
    error of each order.
    """
    n = r.shape[0] - 1
    a = np.zeros(n + 1)
    a[0] = 1.0
    errors = np.empty(n + 1)
    errors[0] = r[0]
    for k in range(1, n + 1):
        reflection = -np.dot(a[:k], r[k:0:-1]) / errors[k - 1]
        a[1 : k + 1] = a[1 : k + 1] + reflection * a[k - 1 :: -1]
        errors[k] = errors[k - 1] * (1.0 - reflection * reflection)
    return a, errors


def setup_levinson(trips: int) -> tuple:
    """The biased autocorrelation of a random AR(2) signal (positive definite), lags 0..trips."""
    rng = np.random.default_rng(12)
    noise = rng.standard_normal(4 * trips + 64)
    signal = np.empty_like(noise)
    signal[:2] = noise[:2]
    for t in range(2, signal.size):
        signal[t] = 0.6 * signal[t - 1] - 0.2 * signal[t - 2] + noise[t]
    spectrum = np.fft.rfft(signal, 2 * signal.size)
    r = np.fft.irfft(spectrum * spectrum.conj())[: trips + 1] / signal.size
    return (r,)


# -- (c) a time-stepping stencil: a carried array of fixed shape ---------------------------------


def heat_steps(u, steps):
    """``steps`` explicit heat-equation steps (5-point Laplacian) on a grid, edges held fixed."""
    for _ in range(steps):
        v = u.copy()
        v[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.2 * (
            u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * u[1:-1, 1:-1]
        )
        u = v
    return u


def setup_heat(trips: int) -> tuple:
    return np.random.default_rng(13).random((20, 10)), trips


# -- (d) a while loop whose condition is a reduction ---------------------------------------------


def jacobi_until(f, diag, tol):
    """Jacobi sweeps for ``diag * u - (sum of the 4 neighbours) = f`` (zero edges) until the
    largest change of a sweep is at most ``tol``. Returns the solution and the sweeps taken."""
    u = np.zeros_like(f)
    change = np.inf
    sweeps = 0
    while change > tol:
        v = u.copy()
        v[1:-1, 1:-1] = (
            f[1:-1, 1:-1] + u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
        ) / diag
        change = np.max(np.abs(v - u))
        u = v
        sweeps += 1
    return u, sweeps


JACOBI_TOL = 1e-6


def setup_jacobi(trips: int) -> tuple:
    """A 20x10 grid, and a diagonal for which the loop takes ``trips`` sweeps: the sweeps shrink
    the change by the spectral radius ``neighbours / diag``, found here by bisection."""
    rows, cols = 20, 10
    neighbours = 2 * np.cos(np.pi / (rows - 1)) + 2 * np.cos(np.pi / (cols - 1))  # of the stencil
    rhs = np.random.default_rng(14).random((rows, cols))
    low, high = 0.0, 1.0  # spectral radius: fewer sweeps than ``trips`` at low, more at high
    for _ in range(60):
        radius = (low + high) / 2
        diag = neighbours / radius
        sweeps = jacobi_until(rhs * (diag - neighbours), diag, JACOBI_TOL)[1]
        if sweeps == trips:
            break
        low, high = (radius, high) if sweeps < trips else (low, radius)
    return rhs * (diag - neighbours), float(diag), JACOBI_TOL


# -- (d2) a time loop carrying Python numbers: the time ``t`` and a step counter ----------------


def forced_chain(x, v, steps):
    """``steps`` symplectic-Euler steps of a chain of springs whose first mass is driven by a
    force that follows the time ``t`` (a Python float), counting the steps taken."""
    dt = 0.01
    t = 0.0
    taken = 0
    for _ in range(steps):
        force = np.zeros_like(x)
        force[1:-1] = x[:-2] - 2.0 * x[1:-1] + x[2:]
        force[0] = np.sin(3.0 * t)
        v = v + dt * force
        x = x + dt * v
        t += dt
        taken += 1
    return x, v, t, taken


def setup_chain(trips: int) -> tuple:
    return np.random.default_rng(16).random(64), np.zeros(64), trips


# -- (e) NPBench-style kernels at their small presets --------------------------------------------


def seidel_2d(grid, tsteps):
    """Gauss-Seidel sweeps of a 9-point average, in place on a copy: each row is updated from
    the rows above (already swept) and below, then scanned left to right element by element."""
    a = grid.copy()
    n = a.shape[0]
    for _ in range(tsteps):
        for i in range(1, n - 1):
            a[i, 1:-1] += (
                a[i - 1, :-2] + a[i - 1, 1:-1] + a[i - 1, 2:] + a[i, 2:]
                + a[i + 1, :-2] + a[i + 1, 1:-1] + a[i + 1, 2:]
            )  # fmt: skip
            for j in range(1, n - 1):
                a[i, j] = (a[i, j] + a[i, j - 1]) / 9.0
    return a


def setup_seidel(trips: int) -> tuple:
    n = 50
    grid = np.fromfunction(lambda i, j: (i * (j + 2) + 2) / n, (n, n))
    return grid, trips


def cholesky_rows(spd):
    """The lower Cholesky factor, row by row: entry (i, j) from a dot product of row prefixes."""
    n = spd.shape[0]
    lower = np.zeros_like(spd)
    for i in range(n):
        for j in range(i):
            lower[i, j] = (spd[i, j] - np.dot(lower[i, :j], lower[j, :j])) / lower[j, j]
        lower[i, i] = np.sqrt(spd[i, i] - np.dot(lower[i, :i], lower[i, :i]))
    return lower


def setup_cholesky(trips: int) -> tuple:
    m = np.random.default_rng(15).random((trips, trips))
    return (m @ m.T + trips * np.eye(trips),)


def lu_rows(mat):
    """Doolittle LU without pivoting, row by row, L and U packed in one matrix (unit diagonal
    of L implied): L's part of row i, then U's, each entry a dot product of growing slices."""
    lu = mat.copy()
    n = lu.shape[0]
    for i in range(n):
        for j in range(i):
            lu[i, j] = (lu[i, j] - lu[i, :j] @ lu[:j, j]) / lu[j, j]
        for j in range(i, n):
            lu[i, j] = lu[i, j] - lu[i, :i] @ lu[:i, j]
    return lu


def setup_lu(trips: int) -> tuple:
    m = np.random.default_rng(16).random((trips, trips))
    return (m + trips * np.eye(trips),)  # diagonally dominant: no pivoting needed


def csr_spmv(indptr, indices, values, x):
    """``y = A @ x`` for A in CSR form, a row at a time (the row's bounds come from data)."""
    y = np.zeros(indptr.shape[0] - 1)
    for i in range(indptr.shape[0] - 1):
        start, stop = indptr[i], indptr[i + 1]
        y[i] = values[start:stop] @ x[indices[start:stop]]
    return y


def setup_spmv(trips: int) -> tuple:
    """A random ``trips`` x 4096 matrix with two non-zeros a row on average (some rows empty)."""
    rng = np.random.default_rng(17)
    cols = 4096
    per_row = rng.poisson(2.0, trips)
    indptr = np.concatenate([[0], np.cumsum(per_row)]).astype(np.int64)
    indices = np.concatenate([np.sort(rng.choice(cols, k, replace=False)) for k in per_row])
    return indptr, indices.astype(np.int64), rng.random(indptr[-1]), rng.random(cols)


# -- (f) escape time: masked stores --------------------------------------------------------------


def mandelbrot(c, maxiter):
    """Escape-time iteration: points still bounded are iterated (masked stores), the others
    keep their last value; ``counts`` is the iterations each point stayed bounded."""
    z = np.zeros_like(c)
    counts = np.zeros(c.shape, dtype=np.int64)
    for _ in range(maxiter):
        bounded = np.abs(z) <= 2.0
        z[bounded] = z[bounded] ** 2 + c[bounded]
        counts[bounded] = counts[bounded] + 1
    return z, counts


def setup_mandelbrot(trips: int) -> tuple:
    real, imag = np.meshgrid(np.linspace(-2.0, 0.6, 48), np.linspace(-1.2, 1.2, 32))
    return real + 1j * imag, trips


# -- (g) np.add.at: a histogram, a batch at a time -----------------------------------------------


def histogram_add_at(samples, nbins):
    """A weighted histogram of values in [0, 1): ``np.add.at`` per batch (row) of samples."""
    hist = np.zeros(nbins)
    for batch in samples:
        bins = np.minimum((batch * nbins).astype(np.int64), nbins - 1)
        np.add.at(hist, bins, batch * batch)
    return hist


def setup_histogram(trips: int) -> tuple:
    return np.random.default_rng(18).random((trips, 256)), 64


# -- the list --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Kernel:
    name: str
    fn: Callable
    setup: Callable[[int], tuple]  # trip count -> the arguments
    trips: int  # the trip count of the full run ("T"; loops.py also runs 10 T)
    quick_trips: int  # the trip count of a smoke run (--quick)
    trip: str  # what the trip count counts


KERNELS = [
    Kernel("rows", row_normalise, setup_rows, 2000, 50, "rows"),
    Kernel("levinson", levinson_durbin, setup_levinson, 1000, 40, "steps"),
    Kernel("heat", heat_steps, setup_heat, 100, 10, "time steps"),
    Kernel("jacobi_while", jacobi_until, setup_jacobi, 100, 10, "sweeps"),
    Kernel("forced_chain", forced_chain, setup_chain, 200, 20, "time steps"),
    Kernel("seidel_2d", seidel_2d, setup_seidel, 8, 1, "time steps (N=50)"),
    Kernel("cholesky", cholesky_rows, setup_cholesky, 100, 8, "rows (N)"),
    Kernel("lu", lu_rows, setup_lu, 60, 8, "rows (N)"),
    Kernel("spmv", csr_spmv, setup_spmv, 4096, 64, "rows"),
    Kernel("mandelbrot", mandelbrot, setup_mandelbrot, 30, 5, "iterations (48x32)"),
    Kernel("add_at", histogram_add_at, setup_histogram, 100, 8, "batches of 256"),
]
