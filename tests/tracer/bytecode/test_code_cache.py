"""Caches derived from code objects are bounded, forgotten with the code they came from, and
cleared by tc.reset(): a notebook that re-runs cells hundreds of times does not grow."""

from __future__ import annotations

import gc
import os
import tracemalloc

import numpy as np

import tcompile as tc
from tcompile.tracer.bytecode import code_cache

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
# What tcompile's own code allocates: a one-off resize of a standard library's table during
# the measured runs (3.13's pathlib, 1.9 MB at once, depending on the tests run before) is
# not a cell's memory kept.
OWN_CODE = [tracemalloc.Filter(True, os.path.join(ROOT, folder, "*"))
            for folder in ("tcompile", "tracer", "backend", "widgets", "jupyter_ext")]  # fmt: skip

CELL = """
def helper(x):
    return x * {k}

def f(x, log):
    y = helper(np.sin(x))
    print("break", file=log)          # a graph break: glue, a resume function, routing
    for i in range(2):
        y = y + i
    return y
"""


def run_cell(k: int):
    namespace = {"np": np}
    exec(compile(CELL.format(k=k), f"<cell {k}>", "exec"), namespace)  # fresh code objects
    compiled = tc.compile(namespace["f"])
    log = open("/dev/null", "w")  # noqa: SIM115 - closed below
    try:
        compiled(np.ones(3), log)
        compiled(np.ones(3), log)
    finally:
        log.close()
    return namespace


def traced_bytes_after(runs: int, between) -> int:
    for k in range(runs):
        namespace = run_cell(k)
        between(namespace)
    gc.collect()
    own = tracemalloc.take_snapshot().filter_traces(OWN_CODE)
    return sum(stat.size for stat in own.statistics("filename"))


def test_reset_clears_every_code_object_cache():
    run_cell(0)
    assert code_cache.size() > 0
    tc.reset()
    assert code_cache.size() == 0


def test_memory_does_not_grow_when_cells_are_rerun_with_reset():
    tracemalloc.start()
    try:
        traced_bytes_after(30, lambda ns: tc.reset())  # warm up: one-time imports and caches
        before = traced_bytes_after(30, lambda ns: tc.reset())
        after = traced_bytes_after(150, lambda ns: tc.reset())
    finally:
        tracemalloc.stop()
    assert after - before < 200_000, (before, after)


def test_forgetting_a_cells_code_drops_what_was_derived_from_it():
    namespace = run_cell(1)
    held = code_cache.size()
    code_cache.forget([namespace["f"].__code__, namespace["helper"].__code__])
    assert code_cache.size() < held
    ids = {id(namespace["f"].__code__), id(namespace["helper"].__code__)}
    for cache in code_cache._CACHES:
        assert not ids & set(cache._entries)


def test_caches_are_bounded_without_reset():
    small = code_cache.CodeCache(limit=4)
    codes = [compile(f"x = {i}", "<c>", "exec") for i in range(10)]
    for code in codes:
        small.get(code, lambda: 0)
    assert len(small) == 4 and small.lookup(codes[-1]) == 0 and small.lookup(codes[0]) is None
    code_cache._CACHES.remove(small)
