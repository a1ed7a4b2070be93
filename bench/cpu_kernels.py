"""Fused CPU kernels (numba) against NumPy, side by side in one run: warm medians per call.

    python bench/cpu_kernels.py            # the full sizes (arrays of 16-48 MB)
    python bench/cpu_kernels.py --only soft,hav   # the kernels whose names start so
    python bench/cpu_kernels.py --quick    # a tenth of the elements, fewer batches

Each kernel: its plain NumPy function, the same function compiled with
``tc.compile(fn, backend="cpu")`` (fused numba kernels), the eager backend as a bound, and,
where torch is installed (``--no-inductor`` leaves it out), ``torch.compile`` with Inductor on
``torch.compiler.wrap_numpy(fn)`` with CPU tensors, in the same run. The first call (trace,
lowering, numba's compile or disk cache; Inductor's compile) is timed once: for the cpu backend
its first two calls (the trace's own results answer the first, the second runs the kernels
numba compiled). Results are
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

from gpu_kernels import (  # noqa: E402 - the same kernels as on the GPU
    column_stats,
    compute,
    gemver,
    haversine,
    hdiff,
    layernorm,
    mlp_step,
    softmax,
)
from timing import per_call_us  # noqa: E402

import tcompile as tc  # noqa: E402


def int_clip(a, b):
    return np.clip(a * 3 - b, -1000, 1000) * 7 + (a & 15)


def stencil(u):
    return u[1:-1, 1:-1] + 0.1 * (
        u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1]
    )


def cases(scale: float) -> list:
    """(name, function, arguments): arrays of 16-48 MB at scale 1 (mlp's and gemver's matrices
    16 MB), float64 unless named."""
    rng = np.random.default_rng(0)
    n = int(6_000_000 * scale)
    side = int(2000 * scale**0.5)
    grid = int(3000 * scale**0.5)
    hd = int(160 * scale ** (1 / 2))

    def mat(rows, cols, dtype=np.float64):
        return rng.standard_normal((rows, cols)).astype(dtype)

    return [
        ("haversine 6M", haversine, [rng.uniform(-1.5, 1.5, n) for _ in range(4)]),
        ("softmax rows f32", softmax, [mat(side, side, np.float32)]),
        (
            "layernorm rows f32",
            layernorm,
            [
                mat(2 * side, side, np.float32),
                mat(1, side, np.float32)[0],
                mat(1, side, np.float32)[0],
            ],
        ),  # fmt: skip
        (
            "int clip/multiply",
            int_clip,
            [rng.integers(-5000, 5000, n, dtype=np.int64) for _ in range(2)],
        ),
        (
            "int compute (npbench)",
            compute,
            [rng.integers(0, 1000, (side, side)) for _ in range(2)] + [4, 3, 9],
        ),
        ("5-point stencil", stencil, [mat(grid, grid)]),
        ("column stats", column_stats, [mat(n // 1000, 1000)]),
        (
            "hdiff (in place)",
            hdiff,
            [
                rng.standard_normal((hd + 4, hd + 4, 64)),
                np.zeros((hd, hd, 64)),
                rng.standard_normal((hd, hd, 64)),
            ],
        ),  # fmt: skip
        (
            "mlp step f32 (matmul)",
            mlp_step,
            [
                mat(side, side // 4, np.float32),
                mat(side // 4, side, np.float32),
                mat(1, side, np.float32)[0],
                mat(side, side // 4, np.float32),
            ],
        ),  # fmt: skip
        (
            "gemver (in place)",
            gemver,
            [1.5, 1.2, mat(side, side)] + [mat(1, side)[0] for _ in range(8)],
        ),
    ]


def _outcome(fn, args) -> list:
    """What calling ``fn`` on copies of ``args`` gives: its results, then the arrays it was
    passed (as it left them: in-place kernels)."""
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    result = fn(*copies)
    results = list(result) if isinstance(result, tuple) else [] if result is None else [result]
    return [np.asarray(r) for r in results] + [a for a in copies if isinstance(a, np.ndarray)]


def _same(fn, variant, args) -> bool:
    got, want = _outcome(variant, args), _outcome(fn, args)
    return len(got) == len(want) and all(_close(g, w) for g, w in zip(got, want))


def _close(got, want) -> bool:
    if want.dtype.kind == "f":
        return got.dtype == want.dtype and np.allclose(got, want, rtol=1e-4, atol=1e-6)
    return got.dtype == want.dtype and np.array_equal(got, want)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the elements")
    parser.add_argument(
        "--threads", type=int, default=0, help="the kernels' threads (0: all cores)"
    )
    parser.add_argument("--no-inductor", action="store_true", help="leave torch.compile out")
    parser.add_argument("--only", default="", help="kernels whose names start with these (a,b)")
    options = parser.parse_args()
    scale = 0.1 if options.quick else 1.0
    repeat = 5 if options.quick else 9
    import numba

    from tcompile.backend.cpu import numba_start
    from tcompile.backend.cpu.kernels import threads

    numba_start.start()  # over before the first kernel: each first call compiles its kernels
    numba_start.wait()  # (a graph compiled while numba starts makes them at its second call)

    if options.threads:
        os.environ["NUMBA_NUM_THREADS"] = str(options.threads)  # the kernels' threads
    print(f"numba {numba.__version__}, {threads()} threads, NumPy {np.__version__}")
    inductor = not options.no_inductor and importlib.util.find_spec("torch") is not None
    columns = ["numpy", "cpu", "eager"] + ["inductor"] * inductor
    print(f"{'kernel':22}" + "".join(f"{c + ' ms':>12}" for c in columns)
          + "".join(f"{c + '/np':>12}" for c in columns[1:]) + f"{'first s':>16}{'cpu GB/s':>10}  cpu ran")  # fmt: skip
    ratios: dict[str, list] = {c: [] for c in columns[1:]}
    prefixes = tuple(p for p in options.only.split(",") if p)
    for name, fn, args in cases(scale):
        if prefixes and not name.startswith(prefixes):
            continue
        variants = {"numpy": fn, "cpu": tc.compile(fn, backend="cpu"),
                    "eager": tc.compile(fn, backend="eager")}  # fmt: skip
        firsts, differ = {}, []
        for label in columns[1:]:
            if label == "inductor":
                variants[label] = inductor_variant(fn, args)
            start = time.perf_counter()
            variants[label](*args)
            if label == "cpu":  # the trace's results answer its first call: the second compiles
                variants[label](*args)
            firsts[label] = time.perf_counter() - start
            differ += [] if _same(fn, variants[label], args) else [label]
        timings = per_call_us(variants, tuple(args), number=1, repeat=repeat)
        ms = {label: timings[label].us / 1e3 for label in columns}
        for label in columns[1:]:
            ratios[label].append(ms[label] / ms["numpy"])
        first = " / ".join(f"{firsts[c]:.1f}" for c in ("cpu", "inductor") if c in firsts)
        print(f"{name:22}" + "".join(f"{ms[c]:12.2f}" for c in columns)
              + "".join(f"{ms[c] / ms['numpy']:11.2f}x" for c in columns[1:])
              + f"{first:>16}{_traffic(fn, args) / ms['cpu'] / 1e6:10.1f}  {_ran(variants['cpu'])}"
              + (f"  MISMATCH: {', '.join(differ)}" if differ else ""))  # fmt: skip
    for label, found in ratios.items():
        print(f"geomean {label}/numpy: {np.exp(np.mean(np.log(found))):.2f}x "
              f"(median {statistics.median(found):.2f}x)")  # fmt: skip
    print(f"copy bandwidth (48 MB, one thread, read + written): {_copy_gbps(False):.1f} GB/s into "
          f"an array made before (np.copyto), {_copy_gbps(True):.1f} GB/s into a new one (.copy())")  # fmt: skip


def _traffic(fn, args) -> int:
    """Bytes a kernel must move at least: its array arguments read once, its results written
    once (what the GB/s column divides by the time)."""
    results = _outcome(fn, args)[: -sum(isinstance(a, np.ndarray) for a in args) or None]
    return sum(a.nbytes for a in args if isinstance(a, np.ndarray)) + sum(r.nbytes for r in results)


def _copy_gbps(fresh: bool) -> float:
    """NumPy's copy of 48 MB on one thread, read + written: into an array made before, or into
    a new one (``src.copy()``: what a kernel returning a new array pays, the OS mapping and
    zeroing its pages)."""
    src = np.ones(6_000_000)
    dst = np.empty_like(src)
    times = []
    for _ in range(15):
        start = time.perf_counter()
        src.copy() if fresh else np.copyto(dst, src)
        times.append(time.perf_counter() - start)
    return 2 * src.nbytes / statistics.median(times) / 1e9


def _ran(compiled) -> str:
    """What the cpu backend chose to run for the benchmark's inputs (`backend/cpu/tiers.py`)."""
    choices = [
        e.report.compiled.sources.get("choice", "") for e in compiled.__tc_compiled__.entries
    ]
    return ", ".join("kernels" if ": kernels;" in c else "numpy code" for c in choices if c) or "?"


def inductor_variant(fn, args):
    """``torch.compile(wrap_numpy(fn))`` on CPU tensors sharing the arguments' memory,
    returning NumPy (its first call compiles)."""
    import torch

    # every kernel's wrapper is one code object (``wrap``) to dynamo: without a reset, the ninth
    # kernel passes its recompile limit and runs uncompiled
    torch._dynamo.reset()
    compiled = torch.compile(torch.compiler.wrap_numpy(fn))

    def run(*arguments):
        out = compiled(
            *[torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in arguments]
        )
        if isinstance(out, tuple):
            return tuple(t.numpy() for t in out)
        return None if out is None else out.numpy()

    return run


if __name__ == "__main__":
    main()
