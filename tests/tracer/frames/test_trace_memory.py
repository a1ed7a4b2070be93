"""A trace holds the arrays eager code holds, and no more: a temporary the traced code no longer
holds lets go of its example (`examples.ExampleMemory` holds values weakly), and a finished
compile lets go of every example, though its state lives on in reference cycles until the
garbage collector runs. Measured with tracemalloc (NumPy reports its arrays' memory to it),
with the collector off: an array of the caller's size per temporary, held to the end of the
trace or after it, is what a first call on large arrays must not cost."""

from __future__ import annotations

import gc
import tracemalloc

import numpy as np

import tcompile as tc

N = 1_000_000  # 8 MB a float64 array


def chain(x):
    return (
        np.sqrt(np.sin(x) ** 2 + np.cos(x) ** 2 * 0.5)
        + np.arctan2(x, 1.5) * np.exp(-x)
        - np.tanh(x)
    )


def _peak_and_after(fn, x) -> tuple[int, int]:
    """Memory allocated at the peak of ``fn(x)`` and still held after it, over what was before
    (its result dropped)."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        result = fn(x)
        del result
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - before, current - before


def test_a_first_call_holds_what_eager_code_holds_and_nothing_after_it():
    x = np.random.default_rng(0).uniform(-4, 4, N)
    tc.reset()
    gc.collect()
    gc.disable()
    try:
        eager_peak, _ = _peak_and_after(chain, x)
        peak, after = _peak_and_after(tc.compile(chain), x)
    finally:
        gc.enable()
    # eager code holds a few temporaries at once (11 are made); the trace held all of them
    assert peak <= eager_peak + 3 * x.nbytes, (peak / x.nbytes, eager_peak / x.nbytes)
    assert after < x.nbytes, after / x.nbytes  # no example outlives the compile
