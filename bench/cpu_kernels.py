"""Fused CPU kernels (numba) against NumPy, side by side in one run: warm medians per call.

    python bench/cpu_kernels.py            # the full sizes (arrays of 16-48 MB)
    python bench/cpu_kernels.py --quick    # a tenth of the elements, fewer batches

Each kernel: its plain NumPy function, the same function compiled with
``tc.compile(fn, backend=fused_backend)``, and, as a bound, the eager backend. The first call
(trace, lowering, numba's compile or disk cache) is timed once. Results are checked against
NumPy before timing. Threads: numba's default (every core).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from gpu_kernels import haversine, softmax  # noqa: E402 - the same kernels as on the GPU
from timing import per_call_us  # noqa: E402

import tcompile as tc  # noqa: E402
from tcompile.backend.cpu.kernels import fused_backend  # noqa: E402


def int_clip(a, b):
    return np.clip(a * 3 - b, -1000, 1000) * 7 + (a & 15)


def stencil(u):
    return u[1:-1, 1:-1] + 0.1 * (
        u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1]
    )


def cases(scale: float) -> list:
    rng = np.random.default_rng(0)
    n = int(6_000_000 * scale)
    side = int(2000 * scale**0.5)
    grid = int(3000 * scale**0.5)
    return [
        ("haversine 6M f64", haversine, [rng.uniform(-1.5, 1.5, n) for _ in range(4)]),
        ("softmax rows f32", softmax, [rng.standard_normal((side, side)).astype(np.float32)]),
        (
            "int clip/multiply",
            int_clip,
            [rng.integers(-5000, 5000, n, dtype=np.int64) for _ in range(2)],
        ),  # fmt: skip
        ("5-point stencil", stencil, [rng.standard_normal((grid, grid))]),
    ]


def _same(got, want) -> bool:
    if want.dtype.kind == "f":
        return got.dtype == want.dtype and np.allclose(got, want, rtol=1e-5, atol=1e-12)
    return got.dtype == want.dtype and np.array_equal(got, want)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the elements")
    parser.add_argument("--threads", type=int, default=0, help="numba's threads (0: all cores)")
    options = parser.parse_args()
    scale = 0.1 if options.quick else 1.0
    repeat = 5 if options.quick else 9
    import numba

    if options.threads:
        numba.set_num_threads(options.threads)
    print(f"numba {numba.__version__}, {numba.get_num_threads()} threads, NumPy {np.__version__}")
    header = (f"{'kernel':22} {'numpy ms':>9} {'fused ms':>9} {'eager ms':>9} {'fused/np':>9} "
              f"{'eager/np':>9} {'first call s':>12}")  # fmt: skip
    print(header)
    ratios = []
    for name, fn, args in cases(scale):
        fused = tc.compile(fn, backend=fused_backend)
        eager = tc.compile(fn, backend="eager")
        start = time.perf_counter()
        got = fused(*args)
        first = time.perf_counter() - start
        eager(*args)
        ok = _same(got, fn(*args))
        timings = per_call_us({"numpy": fn, "fused": fused, "eager": eager}, tuple(args),
                              number=1, repeat=repeat)  # fmt: skip
        np_ms, fused_ms, eager_ms = (timings[k].us / 1e3 for k in ("numpy", "fused", "eager"))
        ratios.append(fused_ms / np_ms)
        print(f"{name:22} {np_ms:9.2f} {fused_ms:9.2f} {eager_ms:9.2f} {fused_ms / np_ms:8.2f}x "
              f"{eager_ms / np_ms:8.2f}x {first:12.2f}" + ("" if ok else "  MISMATCH"))  # fmt: skip
    geomean = float(np.exp(np.mean(np.log(ratios))))
    print(f"geomean fused/numpy: {geomean:.2f}x (median {statistics.median(ratios):.2f}x)")


if __name__ == "__main__":
    main()
