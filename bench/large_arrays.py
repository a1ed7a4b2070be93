"""Large arrays: tcompile's eager backend (its memory plan on, and off) next to plain NumPy.

Run from the repository root (``make bench`` runs it after ``overhead.py``)::

    python bench/large_arrays.py            # full run, about a minute (2 CPUs)
    python bench/large_arrays.py --quick    # fewer repeats, a rough look

Every array is at least 1 MB (float64, 2 MB for the 512 x 512 and 250 000-element ones), and
BLAS runs on one thread (``OPENBLAS_NUM_THREADS=1``, set before NumPy is imported). For each
function, warm calls of:

* numpy:     the plain function;
* tcompile:  ``tc.compile(fn, backend="eager")``: the graph's code with its memory plan
             (``del`` after each value's last use, element-wise ufuncs writing into an operand
             that dies there, see ``backend/memory_plan.py``);
* no plan:   the same graph's code without the plan (every intermediate kept until return),
             through a user backend, to show what the plan changes.

Times are medians of interleaved batches (see ``timing.py``), in milliseconds per call; "x np"
is the ratio to plain NumPy; "first ms" is a cold first call (``tc.reset()`` first: the
trace, the graph, the call's results), ratio to NumPy's warm call beside it. Peak memory is measured with ``tracemalloc`` around one call
(NumPy reports its array allocations to it), the inputs excluded. The run checks that every
result equals NumPy's bit for bit, and prints the targets: every function at most 1.02x NumPy's
time, a geometric mean of at most 0.85x, and peak memory at most NumPy's.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402 - the thread settings above must come before NumPy
import math  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from dataclasses import dataclass  # noqa: E402

import numpy as np  # noqa: E402
from gpu_kernels import haversine, layernorm, pointwise_chain, softmax  # noqa: E402
from timing import exactly_equal, per_call_us  # noqa: E402

import tcompile as tc  # noqa: E402

TARGET_EACH = 1.02  # compiled time / NumPy time, every function
TARGET_GEOMEAN = 0.85
NOISY = 0.25


# -- the benchmarked functions -------------------------------------------------------------------


def gelu(x):
    return 0.5 * x * (1.0 + np.tanh(0.7978845608 * (x + 0.044715 * x**3)))


def jacobi(u):
    """Twenty Jacobi sweeps of a 2-D stencil: a time loop (one loop node on the eager backend)."""
    for _ in range(20):
        v = u.copy()
        v[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
        u = v
    return u


def relax_in_place(u):
    """An in-place update loop: each step writes the caller's array."""
    for _ in range(10):
        u += 0.01 * (np.sin(u) - 0.5 * u)
    return u


def make_cases(rng) -> list[tuple]:
    n, side = 250_000, 512
    vec = lambda: rng.standard_normal(n)  # noqa: E731 - 2 MB each
    mat = lambda: rng.standard_normal((side, side))  # noqa: E731 - 2 MB each
    grid = rng.standard_normal((400, 400))  # 1.28 MB
    return [
        (pointwise_chain, (vec(), vec())),
        (haversine, tuple(rng.uniform(-90, 90, n) for _ in range(4))),
        (softmax, (mat(),)),
        (layernorm, (mat(), rng.standard_normal(side), rng.standard_normal(side))),
        (gelu, (vec(),)),
        (jacobi, (grid,)),
        (relax_in_place, (vec(),)),
    ]


# -- the variants --------------------------------------------------------------------------------


def without_plan(graph, example_inputs):
    """A backend running the graph's code as printed, without the memory plan."""
    del example_inputs
    namespace: dict = {}
    exec(graph.python_code(namespace), namespace)  # noqa: S102 - our own graph's code
    return namespace[graph.name]


def peak_mib(fn, args) -> float:
    """Peak traced memory of one call, in MiB, above what the arguments already hold."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        fn(*args)
        return (tracemalloc.get_traced_memory()[1] - base) / 2**20
    finally:
        tracemalloc.stop()


@dataclass
class Row:
    name: str
    numpy_ms: float
    tc_ms: float
    no_plan_ms: float
    numpy_mib: float
    tc_mib: float
    no_plan_mib: float
    noisy: bool
    exact: bool
    first_ms: float  # a cold first call: trace, graph, and the call's results

    @property
    def ratio(self) -> float:
        return self.tc_ms / self.numpy_ms


def measure(fn, args, number: int, repeat: int) -> Row:
    copies = lambda: tuple(np.array(a, copy=True) for a in args)  # noqa: E731 - fresh inputs
    variants = {
        "numpy": fn,
        "tcompile": tc.compile(fn, backend="eager", fullgraph=True),
        "no plan": tc.compile(fn, backend=without_plan, fullgraph=True),
    }
    want = fn(*copies())
    tc.reset()
    fresh = copies()
    start = time.perf_counter()
    tc.compile(fn, backend="eager", fullgraph=True)(*fresh)
    first_ms = (time.perf_counter() - start) * 1e3
    exact = all(exactly_equal(v(*copies()), want) for v in list(variants.values())[1:])
    times = per_call_us(variants, args, number, repeat)
    peaks = {name: peak_mib(v, copies()) for name, v in variants.items()}
    noisy = max(times["numpy"].spread, times["tcompile"].spread) > NOISY
    return Row(fn.__name__, times["numpy"].us / 1e3, times["tcompile"].us / 1e3,
               times["no plan"].us / 1e3, peaks["numpy"], peaks["tcompile"], peaks["no plan"],
               noisy, exact, first_ms)  # fmt: skip


def print_table(rows: list[Row]) -> None:
    header = (f"{'function':<16}| {'numpy ms':>8} | {'tcompile ms':>11} | {'x np':>5} | "
              f"{'no plan ms':>10} | {'x np':>5} | {'numpy MiB':>9} | {'tc MiB':>7} | "
              f"{'no plan MiB':>11} | {'first ms':>8} | {'x np':>5} | notes")  # fmt: skip
    print(header)
    print("-" * len(header))
    for r in rows:
        notes = ", ".join(n for n, on in (("noisy", r.noisy), ("NOT EXACT", not r.exact)) if on)
        print(f"{r.name:<16}| {r.numpy_ms:8.2f} | {r.tc_ms:11.2f} | {r.ratio:5.2f} | "
              f"{r.no_plan_ms:10.2f} | {r.no_plan_ms / r.numpy_ms:5.2f} | {r.numpy_mib:9.1f} | "
              f"{r.tc_mib:7.1f} | {r.no_plan_mib:11.1f} | {r.first_ms:8.2f} | "
              f"{r.first_ms / r.numpy_ms:5.2f} | {notes}")  # fmt: skip


def print_targets(rows: list[Row]) -> bool:
    geomean = math.exp(statistics.fmean(math.log(r.ratio) for r in rows))
    no_plan = math.exp(statistics.fmean(math.log(r.no_plan_ms / r.numpy_ms) for r in rows))
    worst = max(rows, key=lambda r: r.ratio)
    memory_ok = all(r.tc_mib <= r.numpy_mib * 1.001 + 0.01 for r in rows)
    checks = [
        (f"every function at most {TARGET_EACH}x NumPy's time (worst: {worst.name} "
         f"{worst.ratio:.2f}x)", worst.ratio <= TARGET_EACH),
        (f"geometric mean at most {TARGET_GEOMEAN}x: {geomean:.2f}x (without the plan: "
         f"{no_plan:.2f}x)", geomean <= TARGET_GEOMEAN),
        ("peak memory of a call at most NumPy's, every function", memory_ok),
        ("results bit for bit NumPy's", all(r.exact for r in rows)),
    ]  # fmt: skip
    print("\ntargets (tcompile, eager backend):")
    for text, met in checks:
        print(f"  {text} -> {'met' if met else 'NOT MET'}")
    return all(met for _, met in checks)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (a rough look)")
    args = parser.parse_args(argv)
    number, repeat = (3, 5) if args.quick else (5, 15)
    print(f"{number} calls a batch, {repeat} batches a variant, interleaved; NumPy "
          f"{np.__version__}, OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}\n")  # fmt: skip
    rows = [measure(fn, a, number, repeat) for fn, a in make_cases(np.random.default_rng(0))]
    print_table(rows)
    print_targets(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
