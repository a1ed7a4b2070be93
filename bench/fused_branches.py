"""Branches on data and selections by a mask in the fused kernels (issue 23): NumPy, the
eager backend and ``backend="cpu"`` side by side, on arrays of 4M float64.

Run: ``python bench/fused_branches.py``. Each function is checked against NumPy first (floats
to 1e-12, as the cpu backend's contract), then timed in interleaved batches
(`timing.per_call_us`, medians). Until session 19 the kernel backends ran any graph holding a
cond node, or an array whose size follows data, wholly in NumPy.

- ``either_side``: a reduction, an ``if`` on it whose sides are element-wise (a select inside
  the kernels: one kernel, the test never read on the host);
- ``writes_a_side``: a side that writes into the array (the test read on the host, the side
  taken a program of kernels);
- ``masked_reductions``: ``x[m].max()``, ``x[m].min()``, ``(x[m] > 1).any()``, masked
  reductions of the whole array;
- ``selection_sums``: float sums and a mean of selections, NumPy's bit for bit on the cpu
  kernels (the selected values summed pairwise in order: a compact reduction);
- ``selection_kept``: ``y[y > 2.5]`` returned (a compaction kernel since session 22; NumPy
  on the host before) next to a reduction of ``y``;
- ``compacted``: ``np.sqrt(x[m] ** 2 + 1.0) * 0.5`` returned: one compaction kernel computes
  the mask and the expression where it holds (NumPy makes the mask, two selections' worth of
  arrays and three temporaries).
"""

from __future__ import annotations

import numpy as np
from timing import per_call_us

import tcompile as tc

N = 4_000_000


def either_side(x):
    z = np.sin(x) * 2 + 1
    if (z - 1).sum() > 0:
        w = z * 3 + 1
    else:
        w = z - 1
    return np.cos(w) + x


def writes_a_side(x):
    y = np.sqrt(np.abs(x)) * 2
    if y.mean() > 1.0:
        y[:100] = 0.0
    return y * x


def masked_reductions(x):
    m = np.sin(x) > 0.5
    return x[m].max(), x[m].min(), (x[m] > 1).any()


def selection_sums(x):
    m = np.cos(x) > 0.2
    return x[m].sum(), np.mean(np.abs(x[m]) * 2.0), x[x < 0].sum()


def selection_kept(x):
    y = np.exp(-x * x) * 3 + np.cos(x)
    return y[y > 2.5], y.max()


def compacted(x):
    m = np.abs(x) > 1.0
    return np.sqrt(x[m] ** 2 + 1.0) * 0.5


FUNCTIONS = [either_side, writes_a_side, masked_reductions, selection_sums, selection_kept,
             compacted]  # fmt: skip


def _same(got, want) -> bool:
    if isinstance(want, tuple):
        return all(_same(g, w) for g, w in zip(got, want, strict=True))
    return np.shape(got) == np.shape(want) and np.allclose(got, want, rtol=1e-12, atol=1e-12)


def main() -> None:
    x = np.random.default_rng(0).standard_normal(N) + 0.01
    print(f"{'function':20}{'numpy ms':>10}{'eager ms':>10}{'cpu ms':>10}{'eager/np':>10}"
          f"{'cpu/np':>9}  cpu steps")  # fmt: skip
    for fn in FUNCTIONS:
        eager, cpu = tc.compile(fn, backend="eager"), tc.compile(fn, backend="cpu")
        for compiled in (eager, cpu):
            for _ in range(3):  # the cpu tiers measure kernels against NumPy on early calls
                assert _same(compiled(x.copy()), fn(x.copy())), fn.__name__
        timed = per_call_us({"numpy": fn, "eager": eager, "cpu": cpu}, (x,), number=5, repeat=9)
        ms = {name: timing.us / 1e3 for name, timing in timed.items()}
        report = cpu.__tc_compiled__.entries[-1].report.compiled
        kinds = [d.kind for d in report.details if hasattr(d, "kind")]
        steps = ", ".join(f"{kinds.count(k)} {k}" for k in dict.fromkeys(kinds)) or "NumPy"
        print(f"{fn.__name__:20}{ms['numpy']:10.1f}{ms['eager']:10.1f}{ms['cpu']:10.1f}"
              f"{ms['eager'] / ms['numpy']:9.2f}x{ms['cpu'] / ms['numpy']:8.2f}x  {steps}")  # fmt: skip


if __name__ == "__main__":
    main()
