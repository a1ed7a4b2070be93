"""The corpus of ``gpu.py``: NumPy functions as a user writes them, plain NumPy code only.

Every function reads the module global ``np``; ``gpu.py`` runs the same code with CuPy by
rebinding that global (``rebind(cupy)``), and compiles the NumPy version with tcompile and with
``torch.compile`` (through ``torch.compiler.wrap_numpy``). Functions that update an argument in
place say so in their docstring: the benchmark checks that the update is visible to the caller.

``CASES`` lists each function with a maker of its inputs (NumPy arrays) at a size scale, and
what it is bound by. Sizes: ``"large"`` (the default, memory-bound on an H100: 2^24-2^26
elements), ``"small"`` (a quick run on a GPU) and ``"smoke"`` (tiny: CPU and Triton's
interpreter).
"""

from __future__ import annotations

import types
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

# -- the functions -------------------------------------------------------------------------------


def pointwise_chain(a, b):
    return np.sin(a) * np.cos(b) + np.exp(-a * b) - np.sqrt(np.abs(a) + 1.0)


def haversine(lat1, lon1, lat2, lon2):
    dlat = np.radians(lat2 - lat1)
    dlon = np.radians(lon2 - lon1)
    a = (
        np.sin(dlat / 2) ** 2
        + np.cos(np.radians(lat1)) * np.cos(np.radians(lat2)) * np.sin(dlon / 2) ** 2
    )
    return 6371.0 * 2 * np.arcsin(np.sqrt(a))


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def layernorm(x, gamma, beta):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * gamma + beta


def jacobi_2d(u):
    """Five Jacobi sweeps of a 2-D stencil: a time loop (each step a new array)."""
    for _ in range(5):
        v = u.copy()
        v[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
        u = v
    return u


def column_stats(x):
    """Reductions over the first (non-last) axis: each column standardised by its own stats."""
    mean = x.mean(axis=0)
    std = np.sqrt(((x - mean) ** 2).mean(axis=0))
    return mean, std


def mlp_step(x, w1, b1, w2):
    h = np.maximum(x @ w1 + b1, 0.0)
    return h @ w2


def gather_scale(x, idx, w):
    return x[idx] * w


def scatter_add(counts, idx, w):
    """In place: ``counts[idx[i]] += w[i]`` for every i, repeated indices accumulating."""
    np.add.at(counts, idx, w)


def compute(array_1, array_2, a, b, c):
    """NPBench ``compute`` (integers): clip, scale, add."""
    return np.clip(array_1, 2, 10) * a + array_2 * b + c


def jacobi_1d(A, B):
    """PolyBench/NPBench ``jacobi_1d``, four steps: updates both arguments in place."""
    for _ in range(4):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])


def gemver(alpha, beta, A, u1, v1, u2, v2, w, x, y, z):
    """PolyBench/NPBench ``gemver``: updates ``A``, ``x`` and ``w`` in place."""
    A += np.outer(u1, v1) + np.outer(u2, v2)
    x += beta * y @ A + z
    w += alpha * A @ x


def hdiff(in_field, out_field, coeff):
    """NPBench ``hdiff`` (horizontal diffusion, a 3-D stencil with flux limiters): writes
    ``out_field`` in place."""
    I, J = out_field.shape[0], out_field.shape[1]  # noqa: N806, E741
    lap_field = 4.0 * in_field[1 : I + 3, 1 : J + 3, :] - (
        in_field[2 : I + 4, 1 : J + 3, :]
        + in_field[0 : I + 2, 1 : J + 3, :]
        + in_field[1 : I + 3, 2 : J + 4, :]
        + in_field[1 : I + 3, 0 : J + 2, :]
    )
    res = lap_field[1:, 1 : J + 1, :] - lap_field[:-1, 1 : J + 1, :]
    flx_field = np.where(
        (res * (in_field[2 : I + 3, 2 : J + 2, :] - in_field[1 : I + 2, 2 : J + 2, :])) > 0,
        0,
        res,
    )
    res = lap_field[1 : I + 1, 1:, :] - lap_field[1 : I + 1, :-1, :]
    fly_field = np.where(
        (res * (in_field[2 : I + 2, 2 : J + 3, :] - in_field[2 : I + 2, 1 : J + 2, :])) > 0,
        0,
        res,
    )
    out_field[:, :, :] = in_field[2 : I + 2, 2 : J + 2, :] - coeff[:, :, :] * (
        flx_field[1:, :, :] - flx_field[:-1, :, :] + fly_field[:, 1:, :] - fly_field[:, :-1, :]
    )


def conv3x3(x, k):
    """A 3x3 'valid' convolution written as nine shifted slices, weights read from an array."""
    h, w = x.shape[0] - 2, x.shape[1] - 2
    out = np.zeros((h, w), dtype=x.dtype)
    for i in range(3):
        for j in range(3):
            out += k[i, j] * x[i : i + h, j : j + w]
    return out


def mvt(x1, x2, y_1, y_2, A):
    """PolyBench/NPBench ``mvt``: two matrix-vector products, updating ``x1`` and ``x2`` in
    place."""
    x1 += A @ y_1
    x2 += y_2 @ A


def gemm(alpha, beta, C, A, B):
    """PolyBench/NPBench ``gemm``: writes ``C`` in place."""
    C[:] = alpha * A @ B + beta * C


# -- the cases -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    fn: Callable
    make: Callable  # (rng, size) -> tuple of arguments (NumPy arrays and Python scalars)
    bound: str  # "memory" (a fused kernel can reach the copy bandwidth), "multi-pass" (memory
    # bound but needs several passes: a time loop, two products of one matrix), "compute",
    # "atomic" (scattered read-modify-writes)

    @property
    def name(self) -> str:
        return self.fn.__name__


# Elements of the largest array, by size: "large" is memory-bound on an H100 (2^24-2^26
# elements), "small" a quick look on a GPU, "smoke" tiny enough for Triton's CPU interpreter.
ELEMENTS = {"large": 2**25, "small": 2**20, "smoke": 2**10}


def _side(size: str, dims: int = 2) -> int:
    return round(ELEMENTS[size] ** (1 / dims))


def _vec(rng, n, dtype=np.float64):
    return rng.standard_normal(n).astype(dtype)


def _mat(rng, rows, cols, dtype=np.float64):
    return rng.standard_normal((rows, cols)).astype(dtype)


def _pointwise(rng, size):
    n = ELEMENTS[size]
    return _vec(rng, n), _vec(rng, n)


def _haversine(rng, size):
    n = ELEMENTS[size] // 2  # four inputs
    return tuple(rng.uniform(-90.0, 90.0, n) for _ in range(4))


def _rows(size, cols=1024):
    cols = min(cols, ELEMENTS[size] // 4)
    return ELEMENTS[size] // cols, cols


def _softmax(rng, size):
    return (_mat(rng, *_rows(size), dtype=np.float32),)


def _layernorm(rng, size):
    rows, cols = _rows(size)
    return (_mat(rng, rows, cols, np.float32), _vec(rng, cols, np.float32),
            _vec(rng, cols, np.float32))  # fmt: skip


def _jacobi_2d(rng, size):
    side = _side(size)
    return (_mat(rng, side, side),)


def _column_stats(rng, size):
    cols = min(4096, ELEMENTS[size] // 8)
    return (_mat(rng, ELEMENTS[size] // cols, cols),)


def _mlp_step(rng, size):
    batch, hidden = {"large": (8192, 1024), "small": (2048, 512), "smoke": (16, 8)}[size]
    return (_mat(rng, batch, hidden, np.float32), _mat(rng, hidden, 4 * hidden, np.float32),
            _vec(rng, 4 * hidden, np.float32), _mat(rng, 4 * hidden, hidden, np.float32))  # fmt: skip


def _gather_scale(rng, size):
    n = ELEMENTS[size]
    return _vec(rng, n), rng.integers(0, n, n), _vec(rng, n)


def _scatter_add(rng, size):
    n = ELEMENTS[size]
    bins = max(16, n // 64)
    return np.zeros(bins), rng.integers(0, bins, n), _vec(rng, n)


def _compute(rng, size):
    n = _side(size)
    return (rng.integers(0, 1000, (n, n)), rng.integers(0, 1000, (n, n)), 4, 3, 9)


def _jacobi_1d(rng, size):
    n = ELEMENTS[size]
    return _vec(rng, n), _vec(rng, n)


def _gemver(rng, size):
    n = _side(size)
    return (1.5, 1.2, _mat(rng, n, n)) + tuple(_vec(rng, n) for _ in range(8))


def _hdiff(rng, size):
    k = {"large": 64, "small": 32, "smoke": 4}[size]
    side = _side(size) // 8 if size != "smoke" else 8
    i = j = side
    return (_vec(rng, (i + 4) * (j + 4) * k).reshape(i + 4, j + 4, k),
            np.zeros((i, j, k)), _vec(rng, i * j * k).reshape(i, j, k))  # fmt: skip


def _conv3x3(rng, size):
    side = _side(size)
    return _mat(rng, side, side), _mat(rng, 3, 3)


def _mvt(rng, size):
    n = _side(size)
    return _vec(rng, n), _vec(rng, n), _vec(rng, n), _vec(rng, n), _mat(rng, n, n)


def _gemm(rng, size):
    n = {"large": 4096, "small": 1024, "smoke": 16}[size]
    return 1.5, 1.2, _mat(rng, n, n), _mat(rng, n, n), _mat(rng, n, n)


CASES = [
    Case(pointwise_chain, _pointwise, "memory"),
    Case(haversine, _haversine, "memory"),
    Case(softmax, _softmax, "memory"),
    Case(layernorm, _layernorm, "memory"),
    Case(jacobi_2d, _jacobi_2d, "multi-pass"),
    Case(column_stats, _column_stats, "memory"),
    Case(mlp_step, _mlp_step, "compute"),
    Case(gather_scale, _gather_scale, "memory"),
    Case(scatter_add, _scatter_add, "atomic"),
    Case(compute, _compute, "memory"),
    Case(jacobi_1d, _jacobi_1d, "multi-pass"),
    Case(gemver, _gemver, "multi-pass"),
    Case(hdiff, _hdiff, "memory"),
    Case(conv3x3, _conv3x3, "memory"),
    Case(mvt, _mvt, "multi-pass"),
    Case(gemm, _gemm, "compute"),
]


def rebind(module) -> dict[str, Callable]:
    """Every function of the corpus with ``np`` bound to ``module`` (e.g. ``cupy``): the same
    code objects, new globals, so the functions call each other's rebound versions."""
    namespace = dict(globals())
    namespace["np"] = module
    functions = {}
    for case in CASES:
        fn = case.fn
        functions[fn.__name__] = namespace[fn.__name__] = types.FunctionType(
            fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__
        )
    return functions
