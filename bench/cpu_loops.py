"""Loops on the CPU backend: tcompile's ``backend="cpu"`` against numba's ``@njit`` on the same
source, the eager backend and plain NumPy, side by side in one run.

Run from the repository root::

    python bench/cpu_loops.py            # full sizes (a few minutes on 2 CPUs)
    python bench/cpu_loops.py --quick    # small sizes, fewer repeats
    python bench/cpu_loops.py --only smooth3,heat

The corpora: ``scalar_loops.py`` (loops written an element at a time: a moving average, an IIR
filter, Thomas' tridiagonal solve, a 2-D stencil by nested loops; a branch on data per element:
a running maximum, a CRC, a count, a clip, each a cond node in the loop; and three loops the
tracer does not capture yet) and ``loop_kernels.py`` (array statements in a loop: rows, time steps,
Levinson-Durbin...). For each kernel:

* numpy, eager, cpu, numba µs:  warm per-call medians of interleaved batches (``timing.py``):
                    the plain function, ``tc.compile(fn, backend="eager")``,
                    ``tc.compile(fn, backend="cpu")``, and ``numba.njit(fn)`` ("-" where numba
                    cannot compile the source);
* cpu/numba, eager/cpu:  ratios of those medians (targets of issue 22: cpu within 2x of numba,
                    at least 20x faster than eager on per-element loops);
* native:           how many of the graph's loop nodes run as machine code;
* first s, two s, cached s, two s:  the first call of ``tc.compile(fn, backend="cpu")`` in a
                    new process, and its first two calls (numba imported before the clock
                    starts: ``import numba`` is printed once below), with an empty cache and
                    again with the cache the first process left (median of 3 processes each).
                    A graph compiled while numba's start runs (its registries, 0.2-0.35 s)
                    makes its kernels at its second call: the first runs its NumPy code
                    (``backend/cpu/while_starting.py``), so "two s" is the time until the
                    machine code ran.

Every result is checked against NumPy's (within 16 ulps: libm's functions are not NumPy's);
a mismatch is printed loudly.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
from loop_kernels import KERNELS
from scalar_loops import SCALAR_KERNELS
from timing import per_call_us

import tcompile as tc

ALL = {k.name: k for k in [*SCALAR_KERNELS, *KERNELS]}


def close(got, want) -> bool:
    """Results equal within 16 ulps (ints and shapes exactly), NaN where NaN is."""
    if isinstance(want, tuple):
        return len(got) == len(want) and all(map(close, got, want))
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if want.dtype.kind not in "fc":
        return bool(np.array_equal(got, want))
    eps = 16 * np.finfo(want.dtype).eps
    return bool(np.allclose(got, want, rtol=eps, atol=eps, equal_nan=True))


def numba_variant(fn, args):
    """``numba.njit(fn)`` warmed on ``args``; None where numba cannot compile it."""
    import numba

    try:
        jitted = numba.njit(fn)
        jitted(*args)
    except Exception:  # noqa: BLE001 - any refusal means "no numba figure"
        return None
    return jitted


def native_share(fn, args) -> str:
    """ "native/loops" of the cpu backend's graphs for ``args``."""
    from tcompile.backend.cpu import native_loops

    made = []
    real = native_loops.NativeLoop.__init__

    def recording(self, *a, **k):
        real(self, *a, **k)
        made.append(self)

    native_loops.NativeLoop.__init__ = recording
    try:
        tc.reset()
        tc.compile(fn, backend="cpu")(*args)
    finally:
        native_loops.NativeLoop.__init__ = real
    return f"{sum(m.dispatcher is not None for m in made)}/{len(made)}"


def first_calls(name: str, trips: int, cache: str) -> tuple[float, float]:
    """Seconds of the first cpu call in a new process using ``cache``, and of its first two."""
    env = dict(os.environ, TCOMPILE_CACHE_DIR=cache)
    out = subprocess.run([sys.executable, __file__, "--child", name, "--trips", str(trips)],
                         env=env, capture_output=True, text=True, check=True)  # fmt: skip
    times = json.loads(out.stdout.strip().splitlines()[-1])
    return times["first_s"], times["two_s"]


def child(name: str, trips: int) -> None:
    import numba  # noqa: F401 - imported before the clock: a notebook imports it once

    kernel = ALL[name]
    args = kernel.setup(trips)
    start = time.perf_counter()
    compiled = tc.compile(kernel.fn, backend="cpu")
    compiled(*args)
    first = time.perf_counter() - start
    compiled(*args)  # makes the kernels where numba was still starting at the first
    print(json.dumps({"first_s": first, "two_s": time.perf_counter() - start}))


def measure(kernel, trips: int, repeat: int) -> dict:
    args = kernel.setup(trips)
    want = kernel.fn(*args)
    variants = {"numpy": kernel.fn, "eager": tc.compile(kernel.fn, backend="eager"),
                "cpu": tc.compile(kernel.fn, backend="cpu")}  # fmt: skip
    jitted = numba_variant(kernel.fn, args)
    if jitted is not None:
        variants["numba"] = jitted
    wrong = [name for name, fn in variants.items() if not close(fn(*args), want)]
    timings = per_call_us(variants, args, number=20, repeat=repeat)
    row = {name: t.us for name, t in timings.items()}
    row["wrong"] = wrong
    row["native"] = native_share(kernel.fn, args)
    with tempfile.TemporaryDirectory() as cache:
        cold = [first_calls(kernel.name, trips, tempfile.mkdtemp(dir=cache)) for _ in range(3)]
        first_calls(kernel.name, trips, cache)  # fills the cache
        warm = [first_calls(kernel.name, trips, cache) for _ in range(3)]
    for key, runs in (("first", cold), ("cached", warm)):
        row[f"{key}_s"] = statistics.median(first for first, _ in runs)
        row[f"{key}_two_s"] = statistics.median(two for _, two in runs)
    return row


def show(name: str, trips: int, row: dict) -> None:
    numba_us = row.get("numba")
    cells = [f"{row[v]:>11.1f}" if v in row else f"{'-':>11}" for v in ("numpy", "eager", "cpu")]
    cells.append(f"{numba_us:>11.1f}" if numba_us else f"{'-':>11}")
    ratio = f"{row['cpu'] / numba_us:>9.2f}x" if numba_us else f"{'-':>10}"
    speedup = f"{row['eager'] / row['cpu']:>9.1f}x"
    print(f"{name:<13}{trips:>8}{''.join(cells)}{ratio}{speedup}{row['native']:>8}"
          f"{row['first_s']:>9.2f}{row['first_two_s']:>9.2f}{row['cached_s']:>9.2f}"
          f"{row['cached_two_s']:>9.2f}", flush=True)  # fmt: skip
    if row["wrong"]:
        print(f"  !!! WRONG RESULT from {', '.join(row['wrong'])} (a bug)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default="")
    parser.add_argument("--child")
    parser.add_argument("--trips", type=int)
    options = parser.parse_args()
    if options.child:
        return child(options.child, options.trips)
    warnings.simplefilter("ignore")
    start = time.perf_counter()
    import numba

    print(f"numba {numba.__version__}; import numba: {time.perf_counter() - start:.2f} s; "
          f"{os.cpu_count()} CPUs; times in µs (medians)")  # fmt: skip
    names = [n for n in options.only.split(",") if n] or list(ALL)
    print(f"{'kernel':<13}{'size':>8}{'numpy':>11}{'eager':>11}{'cpu':>11}{'numba':>11}"
          f"{'cpu/numba':>10}{'eager/cpu':>10}{'native':>8}{'first s':>9}{'two s':>9}"
          f"{'cached s':>9}{'two s':>9}")  # fmt: skip
    for name in names:
        kernel = ALL[name]
        trips = kernel.quick_trips if options.quick else kernel.trips
        show(name, trips, measure(kernel, trips, repeat=3 if options.quick else 7))


if __name__ == "__main__":
    main()
