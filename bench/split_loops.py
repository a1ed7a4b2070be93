"""Loops with a graph break inside: tcompile splits them (the loop runs in Python, its body is
a compiled function of its own), where TorchDynamo skips the whole frame.

Run from the repository root::

    python bench/split_loops.py            # about a minute on 2 CPUs
    python bench/split_loops.py --quick    # fewer repeats
    python bench/split_loops.py --no-torch
    python bench/split_loops.py --points 131072   # bigger arrays: the per-iteration cost amortised

Three NumPy time loops, each with something no graph can hold inside the loop: a residual
logged as a Python float every step (``float(...)``), a progress print every 25 steps (a branch
on the step number, then ``print``), and a Newton iteration whose ``while`` test reads
``.item()``. For each, side by side in one run:

* numpy µs, tc µs, torch µs:  warm per-call time of the plain function, ``tc.compile(fn,
                    backend="eager")`` and ``torch.compile(fn, backend="eager")`` (which traces
                    NumPy code too), medians of interleaved batches (``timing.py``), and the
                    ratios to NumPy;
* first ms:         tcompile's first call after ``tc.reset()`` (median of 5) at T and at 4 T,
                    and their ratio (compiling the body does not grow with the trip count; the
                    run does);
* frames:           tcompile's compiled / skipped frames and graphs for one call (before loops
                    were split: 0 compiled, 1 skipped), and TorchDynamo's frames.

Results are checked bit for bit against NumPy's on the eager backend (printed output too).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import sys
import time
import warnings

import numpy as np
from overhead import fmt, load_torch, render_table, tcompile_eager, torch_eager
from timing import exactly_equal, per_call_us

import tcompile as tc


def heat_logged(u, steps, c):
    """Explicit heat steps; the max change of each step is kept as a Python float."""
    residuals = []
    for _ in range(steps):
        v = u.copy()
        v[1:-1] = u[1:-1] + c * (u[:-2] - 2.0 * u[1:-1] + u[2:])
        residuals.append(float(np.abs(v - u).max()))  # float(): the value leaves the graph
        u = v
    return u, residuals


def jacobi_progress(u, steps):
    """Weighted Jacobi sweeps that print their progress every 25 steps."""
    for t in range(steps):
        u = 0.5 * u + 0.25 * (np.roll(u, 1) + np.roll(u, -1))
        if t % 25 == 0:
            print("step", t, u.sum())
    return u


def newton_sqrt(a, tol):
    """Newton's iteration for sqrt(a) from x = a, until the largest relative error (read with
    .item()) is below ``tol``: about log2(max a) / 2 sweeps."""
    x = a.copy()
    err = 1.0
    sweeps = 0
    while err > tol:
        x = 0.5 * (x + a / x)
        err = (np.abs(x * x - a) / a).max().item()
        sweeps += 1
    return x, sweeps


def kernels(trips: int, points: int):
    """(name, function, args builder at a trip count)."""
    grid = np.linspace(0.0, 1.0, points)
    hot = np.exp(-200.0 * (grid - 0.5) ** 2)
    return [
        ("heat_logged", heat_logged, lambda k: (hot.copy(), trips * k, 0.2)),
        ("jacobi_progress", jacobi_progress, lambda k: (hot.copy(), trips * k)),
        # sweeps follow log2 of the largest value: about k T / 4 + 4 of them
        ("newton_sqrt", newton_sqrt, lambda k: (grid * 10.0 ** (0.6 * trips * k / 4) + 1.0, 1e-12)),
    ]


def quiet(fn):
    """``fn`` with its printed output captured (compared, not shown)."""

    def run(*args):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            return fn(*args), out.getvalue()

    return run


def same(got, want) -> bool:
    if isinstance(want, tuple | list):
        return len(got) == len(want) and all(same(g, w) for g, w in zip(got, want))
    if isinstance(want, np.ndarray):
        return exactly_equal(got, want)
    return got == want


def first_call_ms(fn, args, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        tc.reset()
        compiled = quiet(tcompile_eager(fn))
        start = time.perf_counter()
        compiled(*args)
        samples.append((time.perf_counter() - start) * 1e3)
    return statistics.median(samples)


def frames(fn, args) -> tuple[int, int, int]:
    tc.reset()
    with contextlib.redirect_stdout(io.StringIO()):
        out = tc.explain(fn)(*args)
    return len(out.compiled_frames), len(out.skipped_frames), out.graph_count


def torch_frames(torch, fn, args) -> int:
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    quiet(torch.compile(fn, backend="eager"))(*args)
    return counters["frames"]["ok"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--no-torch", action="store_true", help="skip torch.compile")
    parser.add_argument("--trips", type=int, default=100, help="trip count T (default 100)")
    parser.add_argument("--points", type=int, default=4096,
                        help="grid points (default 4096: a few µs of NumPy work per operation)")  # fmt: skip
    args = parser.parse_args(argv)
    torch, why = load_torch(args.no_torch)
    repeat = 5 if args.quick else 11
    warnings.simplefilter("error")  # a tcompile warning (cache limit, internal error) is a bug
    rows, bad = [], []
    for name, fn, build in kernels(args.trips, args.points):
        at_t = build(1)
        want = quiet(fn)(*at_t)
        variants = {"numpy": quiet(fn), "tc": quiet(tcompile_eager(fn))}
        if torch is not None:
            variants["torch"] = quiet(torch_eager(torch)(fn))
        for tool, run in variants.items():
            if not same(run(*build(1)), want):
                bad.append(f"{name}: {tool} differs from NumPy")
        timings = per_call_us(variants, at_t, number=20, repeat=repeat)
        first_t = first_call_ms(fn, at_t, 5)
        first_4t = first_call_ms(fn, build(4), 5)
        compiled, skipped, graphs = frames(fn, at_t)
        tc_us, np_us = timings["tc"].us, timings["numpy"].us
        row = {"kernel": name, "numpy µs": fmt(np_us, 0), "tc µs": fmt(tc_us, 0),
               "tc/np": fmt(tc_us / np_us), "first ms T": fmt(first_t, 1),
               "first ms 4T": fmt(first_4t, 1), "4T/T": fmt(first_4t / first_t),
               "tc frames ok/skipped/graphs": f"{compiled}/{skipped}/{graphs}"}  # fmt: skip
        if torch is not None:
            torch_us = timings["torch"].us
            row.update({"torch µs": fmt(torch_us, 0), "torch/np": fmt(torch_us / np_us),
                        "torch frames": str(torch_frames(torch, fn, at_t))})  # fmt: skip
        rows.append(row)
    torch_columns = {"torch µs", "torch/np", "torch frames"}
    order = ["kernel", "numpy µs", "tc µs", "tc/np", "torch µs", "torch/np", "first ms T",
             "first ms 4T", "4T/T", "torch frames", "tc frames ok/skipped/graphs"]  # fmt: skip
    columns = [(h, lambda r, h=h: r.get(h, ""), h in torch_columns) for h in order]
    print(f"T = {args.trips}, {args.points} points, medians of {repeat} interleaved batches")
    if why:
        print(f"(torch columns skipped: {why})")
    render_table(columns, rows, torch is not None)
    for line in bad:
        print("MISMATCH:", line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
