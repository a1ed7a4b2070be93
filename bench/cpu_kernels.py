"""Fused CPU kernels (numba) against NumPy, side by side in one run: warm medians per call.

    python bench/cpu_kernels.py            # the full sizes (arrays of 16-48 MB)
    python bench/cpu_kernels.py --quick    # a tenth of the elements, fewer batches

Each kernel: its plain NumPy function, the same function compiled with
``tc.compile(fn, backend="cpu")`` (fused numba kernels), the eager backend as a bound, and,
where torch is installed (``--no-inductor`` leaves it out), ``torch.compile`` with Inductor on
``torch.compiler.wrap_numpy(fn)`` with CPU tensors, in the same run. The first call (trace,
lowering, numba's compile or disk cache; Inductor's compile) is timed once. Results are
checked against NumPy before timing. Threads: numba's and torch's default (every core).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from gpu_kernels import haversine, softmax  # noqa: E402 - the same kernels as on the GPU
from timing import per_call_us  # noqa: E402

import tcompile as tc  # noqa: E402


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
    parser.add_argument("--no-inductor", action="store_true", help="leave torch.compile out")
    options = parser.parse_args()
    scale = 0.1 if options.quick else 1.0
    repeat = 5 if options.quick else 9
    import numba

    if options.threads:
        numba.set_num_threads(options.threads)
    print(f"numba {numba.__version__}, {numba.get_num_threads()} threads, NumPy {np.__version__}")
    inductor = not options.no_inductor and importlib.util.find_spec("torch") is not None
    columns = ["numpy", "cpu", "eager"] + ["inductor"] * inductor
    print(f"{'kernel':22}" + "".join(f"{c + ' ms':>12}" for c in columns)
          + "".join(f"{c + '/np':>12}" for c in columns[1:]) + f"{'first s':>16}")  # fmt: skip
    ratios: dict[str, list] = {c: [] for c in columns[1:]}
    for name, fn, args in cases(scale):
        variants = {"numpy": fn, "cpu": tc.compile(fn, backend="cpu"),
                    "eager": tc.compile(fn, backend="eager")}  # fmt: skip
        firsts, ok = {}, True
        for label in columns[1:]:
            if label == "inductor":
                variants[label] = inductor_variant(fn, args)
            start = time.perf_counter()
            got = variants[label](*args)
            firsts[label] = time.perf_counter() - start
            ok = ok and _same(np.asarray(got), fn(*args))
        timings = per_call_us(variants, tuple(args), number=1, repeat=repeat)
        ms = {label: timings[label].us / 1e3 for label in columns}
        for label in columns[1:]:
            ratios[label].append(ms[label] / ms["numpy"])
        first = " / ".join(f"{firsts[c]:.1f}" for c in ("cpu", "inductor") if c in firsts)
        print(f"{name:22}" + "".join(f"{ms[c]:12.2f}" for c in columns)
              + "".join(f"{ms[c] / ms['numpy']:11.2f}x" for c in columns[1:])
              + f"{first:>16}" + ("" if ok else "  MISMATCH"))  # fmt: skip
    for label, found in ratios.items():
        print(f"geomean {label}/numpy: {np.exp(np.mean(np.log(found))):.2f}x "
              f"(median {statistics.median(found):.2f}x)")  # fmt: skip


def inductor_variant(fn, args):
    """``torch.compile(wrap_numpy(fn))`` on CPU tensors made once from ``args``, returning
    NumPy (its first call compiles)."""
    import torch

    tensors = [torch.from_numpy(a) for a in args]
    compiled = torch.compile(torch.compiler.wrap_numpy(fn))
    return lambda *_: compiled(*tensors).numpy()


if __name__ == "__main__":
    main()
