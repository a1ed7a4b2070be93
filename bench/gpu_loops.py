"""Loop kernels on the triton backend: loop nodes (the body's kernels compiled once, launched per
iteration) against the unrolled graph (one copy of the body per iteration) and NumPy.

Run from the repository root::

    python bench/gpu_loops.py                  # on a CUDA GPU
    python bench/gpu_loops.py --steps 50,500   # trip counts (default 20,200)
    TRITON_INTERPRET=1 python bench/gpu_loops.py --smoke   # tiny sizes on the CPU: checks only

For each kernel and trip count T, side by side in one run:

* first s:    the first call after ``tc.reset()`` (trace + lowering + kernel compiles + one run)
              with loop nodes, and unrolled (the triton backend wrapped in a function without
              its ``loop_nodes`` flag); unrolled runs stop at ``--limit`` seconds;
* kernels:    the Triton kernels the plan launches per call (a loop node's body counted once);
* warm µs:    medians of interleaved batches of warm calls (``timing.py``): NumPy on the CPU,
              loop nodes (a counted loop replays a CUDA graph of its iterations:
              ``loop_graphs``), loop nodes without CUDA graphs ("no graph": the body's kernels
              launched per iteration), unrolled; "x" is NumPy's time over the variant's;
              "µs/iter" a loop node's time per call over T (with small ``--n``, its host cost
              per iteration).

Results are checked against NumPy (allclose, rtol 1e-9): a mismatch is printed loudly.
"""

from __future__ import annotations

import argparse
import functools
import multiprocessing
import os
import time

import numpy as np
from loop_kernels import heat_steps
from timing import per_call_us

import tcompile as tc
from tcompile.backend.triton import triton_backend


def jacobi_1d(a, b, steps):
    for _ in range(steps):
        b[1:-1] = 0.33333 * (a[:-2] + a[1:-1] + a[2:])
        a[1:-1] = 0.33333 * (b[:-2] + b[1:-1] + b[2:])
    return a, b


def damped(x, steps):
    v = np.zeros_like(x)
    for _ in range(steps):
        v = 0.9 * v - 0.01 * x
        x = x + 0.01 * v
    return x, v


def scatter_steps(hist, idx, w, steps):
    """A weighted histogram accumulated over time steps: ``np.add.at`` (a scatter-add kernel
    on the device) per step."""
    for _ in range(steps):
        np.add.at(hist, idx, w)
        w = 0.5 * w + 0.25
    return hist, w


KERNELS = {
    "jacobi_1d": (jacobi_1d, lambda n: (np.linspace(0, 1, n * n), np.linspace(1, 0, n * n))),
    "heat_2d": (heat_steps, lambda n: (np.random.default_rng(0).random((n, n)),)),
    "damped": (damped, lambda n: (np.random.default_rng(1).random(n * n),)),
    "scatter": (
        scatter_steps,
        lambda n: (
            np.zeros(n),
            np.random.default_rng(2).integers(0, n, n * n),
            np.random.default_rng(3).random(n * n),
        ),
    ),
}


def without_cuda_graphs(fn, *args):
    """A call with loop_graphs' CUDA-graph recording and replays off (the loop launches its
    body's kernels per iteration)."""
    os.environ["TCOMPILE_CUDA_GRAPHS"] = "0"
    try:
        return fn(*args)
    finally:
        del os.environ["TCOMPILE_CUDA_GRAPHS"]


def unrolled(graph, example_inputs):
    """The triton backend as a plain function: no ``loop_nodes``, so loops unroll."""
    return triton_backend(graph, example_inputs)


def fresh(args):
    return tuple(a.copy() for a in args)


def first_call(fn, args, steps, backend) -> tuple:
    """(seconds, result, Triton kernels compiled, the compiled function) of a first call."""
    tc.reset()
    compiled = tc.compile(fn, backend=backend)
    start = time.perf_counter()
    result = compiled(*fresh(args), steps)
    seconds = time.perf_counter() - start
    runners = [e.report.compiled.fn for e in compiled.__tc_compiled__.entries if e.report.compiled]
    return seconds, result, sum(map(kernel_count, runners)), compiled


def kernel_count(runner) -> int:
    """The kernels of a runner's programs, loop bodies' included (each body counted once)."""
    programs = [p for p in getattr(runner, "programs", {}).values() if p is not None]
    return sum(len(p.compiled) + sum(map(kernel_count, p.bodies.values())) for p in programs)


def _first_unrolled(queue, name, n, steps):
    fn, make = KERNELS[name]
    seconds, _, kernels, _ = first_call(fn, make(n), steps, unrolled)
    queue.put((seconds, kernels))


def close(got, want) -> bool:
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    return all(np.allclose(g, w, rtol=1e-9, atol=1e-12) for g, w in zip(got, want, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", default="20,200")
    parser.add_argument("--n", type=int, default=1024, help="arrays of n*n elements")
    parser.add_argument("--limit", type=float, default=120.0)
    parser.add_argument("--smoke", action="store_true")
    options = parser.parse_args()
    n = 8 if options.smoke else options.n
    steps_list = [3] if options.smoke else [int(s) for s in options.steps.split(",")]
    print(f"arrays of {n}x{n} float64; medians; x = NumPy time / variant time")
    header = (f"{'kernel':10} {'T':>5} | {'first s loop':>12} {'unrolled':>9} | {'kernels':>7} "
              f"{'unrolled':>8} | {'numpy µs':>9} {'loop µs':>9} {'x':>5} {'no graph':>9} "
              f"{'µs/iter':>8} {'no graph':>8} {'unrolled µs':>11} {'x':>5}")  # fmt: skip
    print(header)
    context = multiprocessing.get_context("spawn")
    for name, (fn, make) in KERNELS.items():
        args = make(n)
        for steps in steps_list:
            want = fn(*fresh(args), steps)
            first, got, kernels, loop_fn = first_call(fn, args, steps, "triton")
            if not close(got, want):
                print(f"!!! {name} T={steps}: loop nodes differ from NumPy")
            queue = context.Queue()
            child = context.Process(target=_first_unrolled, args=(queue, name, n, steps))
            child.start()
            child.join(options.limit)
            if child.is_alive():
                child.kill()
                unrolled_first, unrolled_kernels = f"> {options.limit:.0f}", "-"
            else:
                seconds, count = queue.get()
                unrolled_first, unrolled_kernels = f"{seconds:.2f}", str(count)
            variants = {"numpy": lambda *a, fn=fn: fn(*a), "loop": loop_fn,
                        "no graphs": functools.partial(without_cuda_graphs, loop_fn)}  # fmt: skip
            unrolled_fn = None
            if not unrolled_first.startswith(">"):
                unrolled_fn = tc.compile(fn, backend=unrolled)
                got = unrolled_fn(*fresh(args), steps)
                if not close(got, want):
                    print(f"!!! {name} T={steps}: the unrolled graph differs from NumPy")
                variants["unrolled"] = unrolled_fn
            timed = per_call_us(variants, (*fresh(args), steps), number=5, repeat=5)
            base = timed["numpy"].us
            un = timed.get("unrolled")
            loop, plain = timed["loop"].us, timed["no graphs"].us
            print(f"{name:10} {steps:>5} | {first:>12.2f} {unrolled_first:>9} | {kernels:>7} "
                  f"{unrolled_kernels:>8} | {base:>9.0f} {loop:>9.0f} {base / loop:>5.2f} "
                  f"{plain:>9.0f} {loop / steps:>8.1f} {plain / steps:>8.1f} "
                  f"{(f'{un.us:.0f}' if un else '-'):>11} "
                  f"{(f'{base / un.us:.2f}' if un else '-'):>5}")  # fmt: skip


if __name__ == "__main__":
    main()
