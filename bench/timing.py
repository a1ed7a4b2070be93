"""Timing shared by the benchmarks: interleaved batches, medians, and a spread per variant.

The machines are noisy: the batches of the variants being compared run one after the other in
rotating order, so noise falls on all of them alike, and each variant reports the median of its
batches and their interquartile range relative to that median.
"""

from __future__ import annotations

import gc
import itertools
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

BATCH_BUDGET_NS = 50e6  # a timed batch of a slow variant stops at about 50 ms


def batch_ns(fn: Callable, args: tuple, number: int) -> int:
    """Nanoseconds for ``number`` calls of ``fn(*args)`` (GC off, like ``timeit``)."""
    loop = itertools.repeat(None, number)
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter_ns()
        for _ in loop:
            fn(*args)
        return time.perf_counter_ns() - start
    finally:
        if gc_was_on:
            gc.enable()


@dataclass
class Timing:
    us: float  # median µs per call
    spread: float  # interquartile range of the batches / median (0.1: batches vary by ~10%)


def per_call_us(
    variants: dict[str, Callable],
    args: tuple,
    number: int,
    repeat: int,
    between: Callable[[], None] | None = None,
) -> dict:
    """``{name: Timing}``: batches of each variant interleaved, the order rotated each round.

    A batch has ``number`` calls, or fewer for a slow variant (torch.compile here), as many as
    fit in BATCH_BUDGET_NS, so that the batches of all variants stay close together in time.
    ``between``, if given, runs after every batch, untimed (the break rows empty SINK there).
    """
    between = between or (lambda: None)
    names = list(variants)
    calls = {}
    for name in names:  # warm-up (caches, lazy imports), which also sizes the batches
        per_call = batch_ns(variants[name], args, 20) / 20
        calls[name] = max(10, min(number, int(BATCH_BUDGET_NS / max(per_call, 1.0))))
        batch_ns(variants[name], args, calls[name] // 5)
        between()
    samples: dict[str, list[float]] = {name: [] for name in names}
    for rnd in range(repeat):
        k = rnd % len(names)
        for name in names[k:] + names[:k]:
            samples[name].append(batch_ns(variants[name], args, calls[name]) / calls[name] / 1e3)
            between()
    timings = {}
    for name, us in samples.items():
        q1, _, q3 = statistics.quantiles(us, n=4) if len(us) > 1 else (0, 0, 0)
        median = statistics.median(us)
        timings[name] = Timing(median, (q3 - q1) / median)
    return timings


def exactly_equal(got, want) -> bool:
    """Same shape and bit-for-bit equal values (NaNs in the same places count as equal)."""
    if np.shape(got) != np.shape(want):
        return False
    return bool(np.array_equal(np.asarray(got), np.asarray(want), equal_nan=True))
